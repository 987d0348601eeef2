// The part of CUDA that the CUDA backend's kernels use, on the host
// (docs/cuda.md, "The CUDA emulation"): the launch built-ins, __syncthreads,
// __syncwarp, the warp shuffles, the atomics, WMMA's 16 x 16 x 16 fragments,
// and launches; hostify.py puts it first in every rewritten CUDA source.
//
// The threads of a block run on fibers of one host thread, one
// block after another; a thread runs until it waits at a barrier, so a
// thread that reads what another has not yet written (a missing __syncwarp
// or __syncthreads) reads the fill that every block's dynamic shared memory
// starts with (0xff bytes: NaN in f32, f16 and bf16). What CUDA leaves
// undefined or would hang on is an ampc::emu::Fault naming the thread and
// block: a barrier some threads never reach (a deadlock), a thread that
// exits before a warp operation, a warp operation whose lanes disagree on a
// pointer, a WMMA pointer not 32-byte aligned or a leading dimension not a
// multiple of 16 bytes.
//
// WMMA: a fragment holds 8 elements a lane. The accumulator's layout is
// mma.sync's m16n8 layout (two of them side by side) or a fixed shuffle of
// it, so that a kernel that assumes one layout shows; products are exact
// and summed in f32.
#ifndef AMPC_RUNTIME_CUDA_EMULATOR_EMULATOR_H
#define AMPC_RUNTIME_CUDA_EMULATOR_EMULATOR_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

// Host compilers know no launch bounds.
#define __launch_bounds__(...)

// The launch built-ins of the thread running now.
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
float __shfl_xor_sync(unsigned mask, float value, int laneMask, int width = 32);
float __shfl_down_sync(unsigned mask, float value, unsigned delta, int width = 32);
inline unsigned __float_as_uint(float v) {
  unsigned u;
  std::memcpy(&u, &v, sizeof u);
  return u;
}
// Device code's min and max (CUDA declares them for every arithmetic type).
template <typename T> inline T min(T a, T b) { return b < a ? b : a; }
template <typename T> inline T max(T a, T b) { return a < b ? b : a; }
// cuda_runtime.h's overload for a kernel, which it declares for nvcc only.
template <typename T> cudaError_t cudaFuncSetAttribute(T *kernel, cudaFuncAttribute attr, int value) {
  return ::cudaFuncSetAttribute(reinterpret_cast<const void *>(kernel), attr, value);
}
// One host thread runs every CUDA thread: an atomic is a plain update.
inline int atomicCAS(int *address, int compare, int value) {
  int old = *address;
  if (old == compare)
    *address = value;
  return old;
}
inline unsigned atomicMax(unsigned *address, unsigned value) {
  unsigned old = *address;
  *address = old < value ? value : old;
  return old;
}

namespace ampc::emu {

/// A kernel did what CUDA leaves undefined or would hang on.
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How the emulation runs a launch: the accumulator's layout, and the order
/// in which it runs the blocks and resumes the threads (a missing barrier
/// shows in one order or the other).
struct Options {
  bool shuffledAccumulator = false;
  bool reverseOrder = false;
};

/// The options of the kernels' launches: the defaults, or with
/// AMPC_EMULATED_ORDER=reverse set, both switches on.
const Options &launchOptions();

/// Whether the emulation's switch `name` (an environment variable) is set
/// to `on`; unset or set to `off` is false. Any other value is an
/// ampc::rt::RuntimeError naming both, so that a mistyped switch is never
/// silently off.
bool switchedOn(const char *name, const char *on, const char *off);

/// The most dynamic shared memory a block may take (sm_90's 227 KiB).
constexpr size_t kSharedCapacity = 227 * 1024;

/// Runs `body` as every thread of every block of `grid` (blocks one after
/// another, `block.x` threads each; 1-D blocks). Before each block the
/// first `sharedBytes` of the dynamic shared memory are filled with 0xff;
/// under AddressSanitizer the rest is poisoned. Throws Fault.
void launch(dim3 grid, dim3 block, size_t sharedBytes, const std::function<void()> &body,
            const Options &options = {});

/// The running block's dynamic shared memory (`extern __shared__`), 128-byte
/// aligned.
char *dynamicShared();

/// A static `__shared__` variable (hostify.py) as the running block's first
/// thread reaches it: filled with 0xff bytes, as dynamic shared memory
/// starts, so that a read before the write it waits for reads NaN rather
/// than the last block's value.
void staleShared(void *variable, size_t bytes);

/// %globaltimer: nanoseconds of the host's steady clock.
uint64_t globalTimer();

/// Runs `work` now, or, while a stream is being captured into a CUDA graph,
/// records it for the graph (Runtime.cpp).
void submit(std::function<void()> work);
void beginCapture();
std::vector<std::function<void()>> endCapture();
bool capturing();

/// `kernel<<<grid, block, shared, stream>>>(args)` as hostify.py writes it:
/// launchKernel(grid, block, shared, stream)(a lambda calling kernel, args).
/// The arguments are taken when the launch is queued, as CUDA takes them;
/// every stream is the host's one order of work.
struct KernelLaunch {
  dim3 grid, block;
  size_t shared;
  template <typename Kernel, typename... Args> void operator()(Kernel kernel, Args... args) const {
    submit([grid = grid, block = block, shared = shared, kernel, args...] {
      launch(grid, block, shared, [&] { kernel(args...); }, launchOptions());
    });
  }
};
inline KernelLaunch launchKernel(dim3 grid, dim3 block, size_t shared = 0,
                                 cudaStream_t stream = nullptr) {
  (void)stream;
  return {grid, block, shared};
}

/// What the WMMA emulation needs of the running warp.
namespace warp {
int lane();
/// Every lane of the warp passes `value` (a pointer, a leading dimension);
/// a Fault unless all passed the same. A warp barrier.
void requireUniform(uint64_t value, const char *what);
/// The warp's shared scratch: `count` f32 that the lanes fill before
/// `exchange()` and read after it.
float *scratch(int count);
void exchange();
/// The element (row * 16 + column) of a 16 x 16 accumulator that lane
/// `lane` holds at `slot`, and likewise of an A or B operand.
int accumulatorElement(int lane, int slot);
inline int operandElement(int lane, int slot) { return lane * 8 + slot; }
} // namespace warp

} // namespace ampc::emu

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <typename Use, int M, int N, int K, typename T, typename Layout = void> struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulation has WMMA's 16 x 16 x 16 alone");
  static constexpr int num_elements = 8;
  T x[8];
};

namespace detail {
inline float widen(float v) { return v; }
inline float widen(__half v) { return __half2float(v); }
inline float widen(__nv_bfloat16 v) { return __bfloat162float(v); }

/// WMMA's rules on a pointer and leading dimension (`ldm`, in elements).
template <typename E> void checkAddress(const E *p, unsigned ldm) {
  if (reinterpret_cast<uintptr_t>(p) % 32 != 0)
    throw ampc::emu::Fault("wmma: a matrix pointer that is not 32-byte aligned");
  if (ldm * sizeof(E) % 16 != 0)
    throw ampc::emu::Fault("wmma: a leading dimension that is not a multiple of 16 bytes");
  ampc::emu::warp::requireUniform(reinterpret_cast<uintptr_t>(p), "a WMMA matrix pointer");
  ampc::emu::warp::requireUniform(ldm, "a WMMA leading dimension");
}

/// Element (r, c) of a 16 x 16 matrix at `p`, row- or column-major.
inline int64_t at(int r, int c, unsigned ldm, bool rowMajor) {
  return rowMajor ? int64_t(r) * ldm + c : int64_t(c) * ldm + r;
}
} // namespace detail

template <typename Use, typename T, typename L>
void fill_fragment(fragment<Use, 16, 16, 16, T, L> &f, T value) {
  for (T &x : f.x)
    x = value;
}

/// A: (m, k) at row m, column k; B: (k, n) at row k, column n.
template <typename Use, typename T, typename L>
void load_matrix_sync(fragment<Use, 16, 16, 16, T, L> &f, const T *p, unsigned ldm) {
  static_assert(!std::is_same_v<Use, accumulator>, "an accumulator's load names its layout");
  detail::checkAddress(p, ldm);
  int lane = ampc::emu::warp::lane();
  for (int t = 0; t < 8; ++t) {
    int e = ampc::emu::warp::operandElement(lane, t);
    f.x[t] = p[detail::at(e / 16, e % 16, ldm, std::is_same_v<L, row_major>)];
  }
}

template <typename T>
void load_matrix_sync(fragment<accumulator, 16, 16, 16, T> &f, const T *p, unsigned ldm,
                      layout_t layout) {
  detail::checkAddress(p, ldm);
  int lane = ampc::emu::warp::lane();
  for (int t = 0; t < 8; ++t) {
    int e = ampc::emu::warp::accumulatorElement(lane, t);
    f.x[t] = p[detail::at(e / 16, e % 16, ldm, layout == mem_row_major)];
  }
}

template <typename T>
void store_matrix_sync(T *p, const fragment<accumulator, 16, 16, 16, T> &f, unsigned ldm,
                       layout_t layout) {
  detail::checkAddress(p, ldm);
  int lane = ampc::emu::warp::lane();
  for (int t = 0; t < 8; ++t) {
    int e = ampc::emu::warp::accumulatorElement(lane, t);
    p[detail::at(e / 16, e % 16, ldm, layout == mem_row_major)] = f.x[t];
  }
}

/// d = a b + c: the lanes pool their elements, then each computes its own.
template <typename T, typename LA, typename LB>
void mma_sync(fragment<accumulator, 16, 16, 16, float> &d,
              const fragment<matrix_a, 16, 16, 16, T, LA> &a,
              const fragment<matrix_b, 16, 16, 16, T, LB> &b,
              const fragment<accumulator, 16, 16, 16, float> &c) {
  namespace warp = ampc::emu::warp;
  float *all = warp::scratch(3 * 256), *A = all, *B = all + 256, *C = all + 512;
  int lane = warp::lane();
  for (int t = 0; t < 8; ++t) {
    A[warp::operandElement(lane, t)] = detail::widen(a.x[t]);
    B[warp::operandElement(lane, t)] = detail::widen(b.x[t]);
    C[warp::accumulatorElement(lane, t)] = c.x[t];
  }
  warp::exchange();
  float out[8];
  for (int t = 0; t < 8; ++t) {
    int e = warp::accumulatorElement(lane, t), r = e / 16, col = e % 16;
    float sum = C[e];
    for (int k = 0; k < 16; ++k)
      sum += A[r * 16 + k] * B[k * 16 + col];
    out[t] = sum;
  }
  warp::exchange(); // every lane has read the pool before the next fills it
  for (int t = 0; t < 8; ++t)
    d.x[t] = out[t];
}

} // namespace nvcuda::wmma

#endif
