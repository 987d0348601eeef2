// CUDA kernels on the host, for tests without a GPU: the part of CUDA that
// our tensor-core kernels use (threadIdx and the other launch built-ins,
// __syncthreads, __syncwarp, __shfl_xor_sync, WMMA's 16 x 16 x 16
// fragments), enough to compile a kernel header with the host compiler and
// run it block by block. Include it before the kernel's header.
//
// Each CUDA thread of a block is a fiber (ucontext) of one host thread; a
// fiber runs until it waits at a barrier, so a thread that reads what
// another has not yet written (a missing __syncwarp or __syncthreads) reads
// the stale fill that every block's shared memory starts with (0xff bytes:
// NaN in f32, f16 and bf16). The emulation fails loudly instead of hanging
// or guessing: a barrier that some threads never reach (a deadlock), a
// thread that exits before a warp operation, a warp operation whose lanes
// disagree on its arguments, a WMMA pointer that is not 32-byte aligned or
// a leading dimension that is not 16 bytes a step: each is an
// ampc::emu::Fault.
//
// WMMA: a fragment holds 8 elements a lane. The accumulator's layout is
// mma.sync's m16n8 layout (two of them side by side) or a fixed shuffle of
// it, so that a kernel that assumes one layout shows; products are exact
// and summed in f32, as tensor cores sum.
#ifndef AMPC_TESTS_CUDA_EMULATOR_EMULATOR_H
#define AMPC_TESTS_CUDA_EMULATOR_EMULATOR_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>

// Host compilers know no launch bounds.
#define __launch_bounds__(...)

// The launch built-ins of the thread running now.
extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

void __syncthreads();
void __syncwarp(unsigned mask = 0xffffffffu);
float __shfl_xor_sync(unsigned mask, float value, int laneMask, int width = 32);
// One host thread runs every CUDA thread: an atomic is a plain update.
inline int atomicCAS(int *address, int compare, int value) {
  int old = *address;
  if (old == compare)
    *address = value;
  return old;
}

namespace ampc::emu {

/// A kernel did what CUDA leaves undefined or would hang on.
struct Fault : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// How the emulation runs a block: the accumulator's layout, and the order
/// in which it resumes the threads (a missing barrier shows in one order or
/// the other).
struct Options {
  bool shuffledAccumulator = false;
  bool reverseOrder = false;
};

/// Runs `body` as every thread of every block of `grid` (blocks one after
/// another, `threads` threads each). Before each block the first
/// `sharedBytes` of `shared` (the kernel's dynamic shared memory) are filled
/// with 0xff; under AddressSanitizer the rest of its `capacity` is poisoned.
/// Throws Fault.
void launch(dim3 grid, unsigned threads, char *shared, size_t sharedBytes, size_t capacity,
            const std::function<void()> &body, const Options &options = {});

/// What the WMMA emulation needs of the running warp.
namespace warp {
int lane();
/// Every lane of the warp passes `value` (a pointer, a leading dimension)
/// and gets back whether all passed the same; a warp barrier.
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
