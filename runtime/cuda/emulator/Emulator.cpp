// The CUDA emulation's threads, barriers and warps (Emulator.h): the threads
// of a block run on fibers (StackSwitch.h) that one host thread resumes in
// turn. A thread that arrives at a barrier before the rest of its group (its
// warp, its block) waits: its fiber yields and is not resumed until the last
// to arrive wakes it.
#include "runtime/cuda/emulator/Emulator.h"
#include "runtime/core/Errors.h"
#include "runtime/cuda/emulator/StackSwitch.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>
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
  unsigned index = 0;
  bool done = false;
  const char *waitsAt = nullptr; // the barrier it waits at, for a deadlock's message
};

/// A fiber runs threads one after another until one waits at a barrier;
/// then the scheduler starts another fiber for the threads not yet started.
/// A kernel without barriers so runs a whole block on one fiber.
struct Fiber {
  void *sp = nullptr; // its stack pointer while switched away
  char *stack = nullptr;
  Thread *thread = nullptr; // the one it runs now
  bool finished = false;
  bool waiting = false; // at a barrier not yet complete: not resumed until woken
  void *fakeStack = nullptr; // AddressSanitizer's, while switched away
};

/// A barrier's state for a group of threads (a warp, the block): how many
/// times it completed, and how many threads have arrived since. No thread
/// passes a barrier before every one has arrived, so each arriving thread
/// arrives for the next completion.
struct Group {
  uint64_t completed = 0;
  unsigned arrived = 0;
};

struct Warp {
  Group barrier;
  float scratch[kScratch];
  float shuffled[32];
  uint64_t uniform[32];
};

struct Block {
  const std::function<void()> *body = nullptr;
  std::vector<Thread> threads;
  std::vector<unsigned> order; // the order threads start in
  size_t started = 0;          // threads of `order` started
  std::vector<Fiber> fibers;   // reserved for one a thread: never moved
  std::vector<Fiber *> fiberOf; // by thread, once started
  std::vector<Warp> warps;
  Group blockBarrier;
  void *scheduler = nullptr; // the scheduler's stack pointer while a fiber runs
  Fiber *running = nullptr;
  std::string fault;     // the first fault: the launch stops there
  std::vector<int> accumulator; // lane * 8 + slot -> row * 16 + column
  const void *schedulerStack = nullptr;
  size_t schedulerStackBytes = 0;
};

Block *current = nullptr;
uint64_t blocksRun = 0; // the running block's serial number
std::unordered_map<void *, uint64_t> filledIn; // static shared variable -> the block that filled it

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

Thread &me() { return *current->running->thread; }

/// Back to the scheduler until it resumes this fiber.
void yield() {
  Block &b = *current;
  Fiber &f = *b.running;
  startSwitch(&f.fakeStack, b.schedulerStack, b.schedulerStackBytes);
  ampcEmulatorSwitch(&f.sp, b.scheduler);
  finishSwitch(f.fakeStack, &b.schedulerStack, &b.schedulerStackBytes);
}

/// A fiber's life: threads not yet started, each to its end, then back to
/// the scheduler for good.
void enter() {
  Block &b = *current;
  Fiber &f = *b.running;
  finishSwitch(nullptr, &b.schedulerStack, &b.schedulerStackBytes);
  while (b.fault.empty() && b.started < b.order.size()) {
    Thread &t = b.threads[b.order[b.started++]];
    f.thread = &t;
    b.fiberOf[t.index] = &f;
    threadIdx = {t.index, 0, 0};
    try {
      (*b.body)();
    } catch (const std::exception &e) {
      if (b.fault.empty())
        b.fault = "thread " + std::to_string(t.index) + " of block (" +
                  std::to_string(blockIdx.x) + ", " + std::to_string(blockIdx.y) + ", " +
                  std::to_string(blockIdx.z) + "): " + e.what();
    }
    t.done = true;
    for (Fiber &g : b.fibers) // whoever waits for it looks again (and faults)
      g.waiting = false;
  }
  f.finished = true;
  startSwitch(nullptr, b.schedulerStack, b.schedulerStackBytes);
  ampcEmulatorSwitch(&f.sp, b.scheduler);
  __builtin_unreachable(); // a finished fiber is never resumed
}

/// Arrives at `g`, the barrier of the threads [first, first + count), and
/// waits until all have arrived; the last to arrive wakes the others. No
/// thread passes before all have arrived, so every thread arrives for the
/// next completion, and a thread of the group that has exited meanwhile
/// never will.
void barrier(Group &g, unsigned first, unsigned count, const char *what) {
  Block &b = *current;
  uint64_t mine = g.completed + 1;
  if (++g.arrived == count) {
    g.completed = mine;
    g.arrived = 0;
    for (unsigned i = first; i < first + count; ++i)
      if (Fiber *f = b.fiberOf[i])
        f->waiting = false;
    return;
  }
  me().waitsAt = what;
  for (;;) {
    b.running->waiting = true;
    yield();
    if (g.completed >= mine)
      break;
    for (unsigned i = first; i < first + count; ++i) // woken by a thread's exit
      if (b.threads[i].done)
        throw Fault(std::string(what) + ": thread " + std::to_string(i) +
                    " exited without reaching it");
  }
  me().waitsAt = nullptr;
}

Warp &myWarp() { return current->warps[me().index / 32]; }

/// The lanes of the running thread's warp: 32, fewer in a block's last
/// warp when the block is no multiple of 32.
void warpBarrier(const char *what) {
  unsigned first = me().index / 32 * 32;
  unsigned lanes = std::min<unsigned>(32, (unsigned)current->threads.size() - first);
  barrier(current->warps[first / 32].barrier, first, lanes, what);
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
  std::string what = "deadlock: every thread left waits at a barrier that others never reach (";
  for (const Thread &t : b.threads)
    if (t.waitsAt)
      what += "thread " + std::to_string(t.index) + " at " + t.waitsAt + "; ";
  return what.substr(0, what.size() - 2) + ")";
}

void resume(Block &b, Fiber &f) {
  b.running = &f;
  if (f.thread)
    threadIdx = {f.thread->index, 0, 0};
  void *fake = nullptr;
  startSwitch(&fake, f.stack, kStackBytes);
  ampcEmulatorSwitch(&b.scheduler, f.sp);
  finishSwitch(fake, nullptr, nullptr);
  if (!b.fault.empty())
    throw Fault(b.fault);
}

/// Each round resumes every fiber that can go on, then starts fibers for
/// the threads not yet started (each runs threads until one waits); a
/// round in which nothing can run is a deadlock.
void runBlock(Block &b) {
  for (Thread &t : b.threads)
    t = Thread{t.index};
  b.started = 0;
  b.fibers.clear();
  b.fiberOf.assign(b.threads.size(), nullptr);
  b.blockBarrier = {};
  for (Warp &w : b.warps)
    w.barrier = {};
  for (;;) {
    bool ran = false;
    for (Fiber &f : b.fibers)
      if (!f.finished && !f.waiting) {
        resume(b, f);
        ran = true;
      }
    while (b.started < b.order.size()) {
      Fiber &f = b.fibers.emplace_back();
      f.stack = stacks[b.fibers.size() - 1].get();
      f.sp = prepareStack(f.stack, kStackBytes, enter);
      resume(b, f);
      ran = true;
    }
    if (std::all_of(b.threads.begin(), b.threads.end(), [](const Thread &t) { return t.done; }))
      return;
    if (!ran)
      throw Fault(deadlock(b));
  }
}

} // namespace

void staleShared(void *variable, size_t bytes) {
  uint64_t &block = filledIn[variable];
  if (block != blocksRun) {
    block = blocksRun;
    std::memset(variable, 0xff, bytes);
  }
}

bool switchedOn(const char *name, const char *on, const char *off) {
  const char *value = std::getenv(name);
  if (!value || std::string(value) == off)
    return false;
  if (std::string(value) == on)
    return true;
  throw ampc::rt::RuntimeError(std::string(name) + "=" + value + ": expected " + on + " or " +
                               off);
}

const Options &launchOptions() {
  static const Options options = [] {
    bool reverse = switchedOn("AMPC_EMULATED_ORDER", "reverse", "forward");
    return Options{reverse, reverse};
  }();
  return options;
}

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
  b.order.resize(threads);
  for (unsigned i = 0; i < threads; ++i) {
    b.threads[i].index = i;
    b.order[i] = options.reverseOrder ? threads - 1 - i : i;
  }
  b.fibers.reserve(threads);
  while (stacks.size() < threads)
    stacks.emplace_back(new char[kStackBytes]);
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
  auto nth = [&](unsigned i, unsigned count) { return options.reverseOrder ? count - 1 - i : i; };
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        blockIdx = {nth(x, grid.x), nth(y, grid.y), nth(z, grid.z)};
#ifdef AMPC_EMULATOR_ASAN
        ASAN_UNPOISON_MEMORY_REGION(sharedMemory, kSharedCapacity);
        ASAN_POISON_MEMORY_REGION(sharedMemory + sharedBytes, kSharedCapacity - sharedBytes);
#endif
        std::memset(sharedMemory, 0xff, sharedBytes);
        ++blocksRun;
        runBlock(b);
      }
}

char *dynamicShared() { return sharedMemory; }

uint64_t globalTimer() {
  return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
bool capturingNow = false;
std::vector<std::function<void()>> captured;
} // namespace

void submit(std::function<void()> work) {
  if (capturingNow)
    captured.push_back(std::move(work));
  else
    work();
}

void beginCapture() {
  if (capturingNow)
    throw Fault("a capture inside a capture");
  capturingNow = true;
  captured.clear();
}

std::vector<std::function<void()>> endCapture() {
  capturingNow = false;
  return std::move(captured);
}

bool capturing() { return capturingNow; }

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
  barrier(current->blockBarrier, 0, (unsigned)current->threads.size(), "__syncthreads");
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
