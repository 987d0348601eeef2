// The CUDA emulation itself (Emulator.h): its barriers, shuffles and WMMA
// products compute what CUDA's do, and what CUDA leaves undefined (a
// missing barrier, a divergent one, a misaligned WMMA pointer) shows.
#include "runtime/cuda/emulator/Emulator.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace ampc::emu {
namespace {

namespace wmma = nvcuda::wmma;

void run(unsigned threads, size_t bytes, const std::function<void()> &body, Options options = {}) {
  launch(dim3(1), dim3(threads), bytes, body, options);
}

TEST(EmulatorTest, ShufflesExchangeLanePairs) {
  std::vector<float> got(64);
  run(64, 0, [&] { got[threadIdx.x] = __shfl_xor_sync(0xffffffffu, float(threadIdx.x), 1); });
  for (int i = 0; i < 64; ++i)
    EXPECT_EQ(got[i], float(i ^ 1));
}

// Each thread writes its slot and reads its neighbour's: with the barrier it
// sees the value, without it the stale fill (NaN), in either order.
void neighbours(bool barrier, bool reverse, std::vector<float> &got) {
  run(32, 128, [&] {
    float *cells = reinterpret_cast<float *>(dynamicShared());
    cells[threadIdx.x] = float(threadIdx.x);
    if (barrier)
      __syncwarp();
    got[threadIdx.x] = cells[(threadIdx.x + 1) % 32];
  }, {.reverseOrder = reverse});
}

TEST(EmulatorTest, AMissingBarrierReadsTheStaleFill) {
  std::vector<float> got(32);
  neighbours(true, false, got);
  EXPECT_EQ(got[0], 1.0f);
  neighbours(false, false, got);
  EXPECT_TRUE(std::isnan(got[0]));
  neighbours(false, true, got);
  EXPECT_TRUE(std::isnan(got[31]));
}

// A static __shared__ array (hostify.py: staleShared) starts each block as
// the fill, not as the last block left it.
TEST(EmulatorTest, StaticSharedStartsEachBlockStale) {
  static float cells[32];
  std::vector<float> got(64);
  launch(dim3(2), dim3(32), 0, [&] {
    staleShared(&cells, sizeof cells);
    cells[threadIdx.x] = float(blockIdx.x * 32 + threadIdx.x);
    got[blockIdx.x * 32 + threadIdx.x] = cells[(threadIdx.x + 1) % 32]; // no barrier
  });
  EXPECT_TRUE(std::isnan(got[0]));
  EXPECT_TRUE(std::isnan(got[32])); // not block 0's 1
  EXPECT_EQ(got[31], 0.0f);         // thread 0 wrote before thread 31 ran
  EXPECT_EQ(got[63], 32.0f);
}

// A kernel that leans on the blocks' order (block 0 first, say) gives
// another result in reverse (AMPC_EMULATED_ORDER=reverse for every launch).
TEST(EmulatorTest, ReverseOrderRunsTheLastBlockFirst) {
  for (bool reverse : {false, true}) {
    std::vector<unsigned> blocks;
    launch(dim3(3, 2), dim3(2), 0, [&] {
      if (threadIdx.x == 0)
        blocks.push_back(blockIdx.y * 3 + blockIdx.x);
    }, {.reverseOrder = reverse});
    std::vector<unsigned> forward{0, 1, 2, 3, 4, 5}, backward{5, 4, 3, 2, 1, 0};
    EXPECT_EQ(blocks, reverse ? backward : forward);
  }
}

TEST(EmulatorTest, ADivergentSyncthreadsIsADeadlock) {
  EXPECT_THROW(run(64, 0, [] {
    if (threadIdx.x < 32)
      __syncthreads();
  }), Fault);
  EXPECT_THROW(run(64, 0, [] {
    if (threadIdx.x == 0)
      __syncthreads();
    __syncthreads();
  }), Fault);
  // Every thread waits, each at a barrier another never reaches.
  try {
    run(64, 0, [] {
      if (threadIdx.x == 0)
        __syncwarp();
      else
        __syncthreads();
    });
    ADD_FAILURE() << "no fault";
  } catch (const Fault &f) {
    EXPECT_NE(std::string(f.what()).find("deadlock"), std::string::npos) << f.what();
    EXPECT_NE(std::string(f.what()).find("thread 0 at __syncwarp"), std::string::npos);
  }
}

TEST(EmulatorTest, KernelFaultsStopTheLaunch) {
  EXPECT_THROW(run(32, 0, [] { __syncwarp(0xffffu); }), Fault);
  EXPECT_THROW(run(32, kSharedCapacity + 1, [] {}), Fault); // more than there is
}

// A 16 x 16 x 16 product through WMMA equals the direct one, in every
// accumulator layout, B given row- or column-major.
void product(bool shuffled) {
  __half *a = reinterpret_cast<__half *>(dynamicShared()), *b = a + 256;
  float *c = reinterpret_cast<float *>(b + 256);
  std::vector<float> want(256);
  run(32, 2048, [&] {
    for (int e = threadIdx.x; e < 256; e += 32) {
      a[e] = __float2half(float(e % 7) - 3);
      b[e] = __float2half(float(e % 5) * 0.5f);
    }
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 1.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16); // column-major: B(k, n) = b[n * 16 + k]
    wmma::mma_sync(acc, fa, fb, acc);
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
  }, {.shuffledAccumulator = shuffled});
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 16; ++n) {
      float sum = 1;
      for (int k = 0; k < 16; ++k)
        sum += (float((r * 16 + k) % 7) - 3) * (float((n * 16 + k) % 5) * 0.5f);
      EXPECT_EQ(c[r * 16 + n], sum) << r << ", " << n;
    }
}

TEST(EmulatorTest, WmmaProductsAreDirectProducts) {
  product(false);
  product(true);
}

TEST(EmulatorTest, WmmaRefusesMisalignedMatrices) {
  EXPECT_THROW(run(32, 2048, [] {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::store_matrix_sync(reinterpret_cast<float *>(dynamicShared()) + 4, acc, 16, wmma::mem_row_major);
  }), Fault);
  EXPECT_THROW(run(32, 2048, [] {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    wmma::store_matrix_sync(reinterpret_cast<float *>(dynamicShared()), acc, 18, wmma::mem_row_major);
  }), Fault);
}

} // namespace
} // namespace ampc::emu
