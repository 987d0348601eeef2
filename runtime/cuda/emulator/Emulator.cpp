// The CUDA emulation's threads, barriers and warps (Emulator.h): the threads
// of a block are fibers that one host thread resumes in turn; a barrier is a
// count each thread raises when it arrives, and a thread waits (yields)
// until every thread of its block, or of its warp, has raised it as far.
#include "runtime/cuda/emulator/Emulator.h"

#include <ucontext.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define AMPC_EMULATOR_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMPC_EMULATOR_ASAN 1
#endif
#endif
#ifdef AMPC_EMULATOR_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace ampc::emu {
namespace {

constexpr size_t kStackBytes = 256 * 1024;
constexpr int kScratch = 3 * 256; // mma_sync's A, B and C

struct Thread {
  ucontext_t context;
  char *stack = nullptr;
  unsigned index = 0;
  bool done = false;
  uint64_t blockArrivals = 0, warpArrivals = 0;
  void *fakeStack = nullptr; // AddressSanitizer's, while switched away
};

struct Warp {
  float scratch[kScratch];
  float shuffled[32];
  uint64_t uniform[32];
};

struct Block {
  const std::function<void()> *body = nullptr;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  ucontext_t scheduler;
  Thread *running = nullptr;
  uint64_t progress = 0; // arrivals and exits: a round without any is a deadlock
  std::string fault;     // the first fault: the launch stops there
  std::vector<int> accumulator; // lane * 8 + slot -> row * 16 + column
  const void *schedulerStack = nullptr;
  size_t schedulerStackBytes = 0;
};

Block *current = nullptr;

/// The dynamic shared memory, and the fibers' stacks, kept from launch to
/// launch.
alignas(128) char sharedMemory[kSharedCapacity];
std::vector<std::unique_ptr<char[]>> stacks;

// AddressSanitizer must know when a fiber's stack becomes the running one.
void startSwitch(void **fakeStack, const void *bottom, size_t bytes) {
#ifdef AMPC_EMULATOR_ASAN
  __sanitizer_start_switch_fiber(fakeStack, bottom, bytes);
#else
  (void)fakeStack, (void)bottom, (void)bytes;
#endif
}
void finishSwitch(void *fakeStack, const void **bottom, size_t *bytes) {
#ifdef AMPC_EMULATOR_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, bottom, bytes);
#else
  (void)fakeStack, (void)bottom, (void)bytes;
#endif
}

Thread &me() { return *current->running; }

/// Back to the scheduler until it resumes this thread.
void yield() {
  Block &b = *current;
  Thread &t = me();
  startSwitch(&t.fakeStack, b.schedulerStack, b.schedulerStackBytes);
  swapcontext(&t.context, &b.scheduler);
  finishSwitch(t.fakeStack, &b.schedulerStack, &b.schedulerStackBytes);
}

/// A fiber's life: the kernel, then back to the scheduler (uc_link).
void enter() {
  Block &b = *current;
  Thread &t = me();
  finishSwitch(nullptr, &b.schedulerStack, &b.schedulerStackBytes);
  try {
    (*b.body)();
  } catch (const std::exception &e) {
    if (b.fault.empty())
      b.fault = "thread " + std::to_string(t.index) + " of block (" +
                std::to_string(blockIdx.x) + ", " + std::to_string(blockIdx.y) + ", " +
                std::to_string(blockIdx.z) + "): " + e.what();
  }
  t.done = true;
  ++b.progress;
  startSwitch(nullptr, b.schedulerStack, b.schedulerStackBytes);
}

/// Raises `arrivals` and waits until every thread in [first, first + count)
/// has raised its own as far.
void barrier(uint64_t Thread::*arrivals, unsigned first, unsigned count, const char *what) {
  Block &b = *current;
  uint64_t mine = ++(me().*arrivals);
  ++b.progress;
  for (;;) {
    bool all = true;
    for (unsigned i = first; i < first + count; ++i) {
      const Thread &t = b.threads[i];
      if (t.*arrivals >= mine)
        continue;
      if (t.done)
        throw Fault(std::string(what) + ": thread " + std::to_string(i) +
                    " exited without reaching it");
      all = false;
    }
    if (all)
      return;
    yield();
  }
}

Warp &myWarp() { return current->warps[me().index / 32]; }

/// The lanes of the running thread's warp: 32, fewer in a block's last
/// warp when the block is no multiple of 32.
void warpBarrier(const char *what) {
  unsigned first = me().index / 32 * 32;
  unsigned lanes = std::min<unsigned>(32, (unsigned)current->threads.size() - first);
  barrier(&Thread::warpArrivals, first, lanes, what);
}

void requireFullMask(unsigned mask, const char *what) {
  if (mask != 0xffffffffu)
    throw Fault(std::string(what) + ": the emulation takes full-warp masks only");
}

/// mma.sync's m16n8 accumulator layout twice (columns 0-7, then 8-15): lane
/// l holds rows l/4 and l/4 + 8, columns 2 (l%4) and the next; shuffled,
/// the same cells dealt to other (lane, slot) places.
std::vector<int> accumulatorLayout(bool shuffled) {
  std::vector<int> layout(256);
  for (int lane = 0; lane < 32; ++lane)
    for (int slot = 0; slot < 8; ++slot) {
      int g = lane / 4, q = lane % 4, half = slot / 4, u = slot % 4;
      int row = g + 8 * (u / 2), col = 8 * half + 2 * q + u % 2;
      layout[lane * 8 + slot] = row * 16 + col;
    }
  if (shuffled)
    std::shuffle(layout.begin(), layout.end(), std::mt19937(2026));
  return layout;
}

std::string deadlock(const Block &b) {
  std::string what = "deadlock: every thread left waits at a barrier (arrivals at __syncthreads "
                     "and at warp barriers, by thread:";
  for (const Thread &t : b.threads)
    if (!t.done)
      what += " " + std::to_string(t.index) + ":" + std::to_string(t.blockArrivals) + "/" +
              std::to_string(t.warpArrivals);
  return what + ")";
}

void runBlock(Block &b, const Options &options) {
  for (Thread &t : b.threads) {
    t.done = false;
    t.blockArrivals = t.warpArrivals = 0;
    getcontext(&t.context);
    t.context.uc_stack.ss_sp = t.stack;
    t.context.uc_stack.ss_size = kStackBytes;
    t.context.uc_link = &b.scheduler;
    makecontext(&t.context, enter, 0);
  }
  std::vector<unsigned> order(b.threads.size());
  std::iota(order.begin(), order.end(), 0u);
  if (options.reverseOrder)
    std::reverse(order.begin(), order.end());
  for (;;) {
    uint64_t before = b.progress;
    bool left = false;
    for (unsigned i : order) {
      Thread &t = b.threads[i];
      if (t.done)
        continue;
      left = true;
      b.running = &t;
      threadIdx = {t.index, 0, 0};
      void *fake = nullptr;
      startSwitch(&fake, t.stack, kStackBytes);
      swapcontext(&b.scheduler, &t.context);
      finishSwitch(fake, nullptr, nullptr);
      if (!b.fault.empty())
        throw Fault(b.fault);
    }
    if (!left)
      return;
    if (b.progress == before)
      throw Fault(deadlock(b));
  }
}

} // namespace

void launch(dim3 grid, dim3 block, size_t sharedBytes, const std::function<void()> &body,
            const Options &options) {
  unsigned threads = block.x;
  if (threads == 0 || threads > 1024 || block.y != 1 || block.z != 1)
    throw Fault("the emulation runs 1-D blocks of 1 to 1024 threads");
  if (sharedBytes > kSharedCapacity)
    throw Fault("the kernel asks for " + std::to_string(sharedBytes) +
                " bytes of shared memory; the emulation has " + std::to_string(kSharedCapacity));
  if (current)
    throw Fault("a launch from inside a kernel");
  Block b;
  b.body = &body;
  b.threads.resize(threads);
  while (stacks.size() < threads)
    stacks.emplace_back(new char[kStackBytes]);
  for (unsigned i = 0; i < threads; ++i) {
    b.threads[i].index = i;
    b.threads[i].stack = stacks[i].get();
  }
  b.warps.resize((threads + 31) / 32);
  b.accumulator = accumulatorLayout(options.shuffledAccumulator);
  gridDim = grid;
  blockDim = dim3(threads);
  current = &b;
  struct Restore { // the shared memory usable again, and no block running
    ~Restore() {
#ifdef AMPC_EMULATOR_ASAN
      ASAN_UNPOISON_MEMORY_REGION(sharedMemory, kSharedCapacity);
#endif
      current = nullptr;
    }
  } restore;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {x, y, z};
#ifdef AMPC_EMULATOR_ASAN
        ASAN_UNPOISON_MEMORY_REGION(sharedMemory, kSharedCapacity);
        ASAN_POISON_MEMORY_REGION(sharedMemory + sharedBytes, kSharedCapacity - sharedBytes);
#endif
        std::memset(sharedMemory, 0xff, sharedBytes);
        runBlock(b, options);
      }
}

char *dynamicShared() { return sharedMemory; }

uint64_t globalTimer() {
  return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
bool capturing = false;
std::vector<std::function<void()>> captured;
} // namespace

void submit(std::function<void()> work) {
  if (capturing)
    captured.push_back(std::move(work));
  else
    work();
}

void beginCapture() {
  if (capturing)
    throw Fault("a capture inside a capture");
  capturing = true;
  captured.clear();
}

std::vector<std::function<void()>> endCapture() {
  capturing = false;
  return std::move(captured);
}

namespace warp {

int lane() { return int(me().index % 32); }

void requireUniform(uint64_t value, const char *what) {
  Warp &w = myWarp();
  w.uniform[lane()] = value;
  warpBarrier(what);
  unsigned lanes = std::min<unsigned>(32, (unsigned)current->threads.size() - me().index / 32 * 32);
  bool same = std::all_of(w.uniform, w.uniform + lanes, [&](uint64_t v) { return v == w.uniform[0]; });
  warpBarrier(what);
  if (!same)
    throw Fault(std::string(what) + " differs between the lanes of a warp");
}

float *scratch(int count) {
  if (count > kScratch)
    throw Fault("the warp's scratch is " + std::to_string(kScratch) + " f32");
  return myWarp().scratch;
}

void exchange() { warpBarrier("a WMMA operation"); }

int accumulatorElement(int lane, int slot) { return current->accumulator[lane * 8 + slot]; }

} // namespace warp

} // namespace ampc::emu

void __syncthreads() {
  using namespace ampc::emu;
  barrier(&Thread::blockArrivals, 0, (unsigned)current->threads.size(), "__syncthreads");
}

void __syncwarp(unsigned mask) {
  ampc::emu::requireFullMask(mask, "__syncwarp");
  ampc::emu::warpBarrier("__syncwarp");
}

/// Lane l + delta's value, or l's own where that lane is past the warp.
float __shfl_down_sync(unsigned mask, float value, unsigned delta, int width) {
  using namespace ampc::emu;
  requireFullMask(mask, "__shfl_down_sync");
  if (width != 32)
    throw Fault("__shfl_down_sync: the emulation takes width 32");
  Warp &w = myWarp();
  unsigned lane = (unsigned)warp::lane();
  w.shuffled[lane] = value;
  warpBarrier("__shfl_down_sync");
  unsigned from = lane + delta;
  if (from < 32 && me().index - lane + from >= current->threads.size())
    throw Fault("__shfl_down_sync: a lane the block does not have");
  float got = from < 32 ? w.shuffled[from] : value;
  warpBarrier("__shfl_down_sync");
  return got;
}

float __shfl_xor_sync(unsigned mask, float value, int laneMask, int width) {
  using namespace ampc::emu;
  requireFullMask(mask, "__shfl_xor_sync");
  if (width != 32 || laneMask < 0 || laneMask > 31)
    throw Fault("__shfl_xor_sync: the emulation takes width 32 and lane masks in [0, 32)");
  Warp &w = myWarp();
  int lane = warp::lane();
  w.shuffled[lane] = value;
  warpBarrier("__shfl_xor_sync");
  if (me().index - lane + (lane ^ laneMask) >= current->threads.size())
    throw Fault("__shfl_xor_sync: a lane the block does not have");
  float got = w.shuffled[lane ^ laneMask];
  warpBarrier("__shfl_xor_sync");
  return got;
}
