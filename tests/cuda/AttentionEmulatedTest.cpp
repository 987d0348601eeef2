// The tensor-core attention's kernels (runtime/cuda/kernels/AttentionTcKernels.h)
// run on the host by the CUDA emulation and held to the CPU reference within
// the `attention` agreement class, as ampc-backend-check holds them on a GPU:
// head_dim 64 and 128, f16 and bf16, causal or not, sequences that are no
// multiple of the tile, seq_q != seq_k, a bias with masked keys and a row
// masked whole, dropout, the backward with and without the forward's
// log-sum-exp, and the accumulator in another layout with the threads
// resumed in the other order.
#include "runtime/cuda/emulator/Emulator.h"

#include "runtime/cuda/kernels/AttentionTcKernels.h"

#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "runtime/cpu/Kernels.h"
#include "runtime/driver/BackendCheck.h"

namespace ampc::rt {
namespace {

namespace tc = cuda::attention;

struct Case {
  int64_t batch, sq, sk, heads, d;
  bool causal = false, bf16 = false;
  bool bias = false;    // [batch, 1, sq, sk]: values in [-1, 1], masked keys and a masked row
  double dropout = 0;   // with the run counter at 3
  bool savedLse = true; // the backward reads the forward's log-sum-exp
  emu::Options options;
};

/// A tensor on the host and its bytes.
struct Tensor {
  std::vector<std::byte> bytes;
  TensorRef ref;
  Tensor(DType dtype, std::vector<int64_t> shape) {
    ref.dtype = dtype;
    ref.shape = std::move(shape);
    bytes.assign(ref.bytes(), std::byte{0});
    ref.data = bytes.data();
  }
  Tensor(const Tensor &) = delete;
};

void fillNormal(Tensor &t, std::mt19937 &rng) {
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < t.ref.size(); ++i)
    storeElement(t.ref.data, t.ref.dtype, i, normal(rng));
}

void expectNear(const Tensor &ref, const Tensor &got, const char *what) {
  BufferDiff diff = compareBuffer(ref.bytes, got.bytes, ref.ref.dtype, Agreement::Attention);
  EXPECT_TRUE(diff.ok()) << what << ": " << diff.outside << " of " << diff.elements
                         << " outside; worst at " << diff.worstIndex << ": " << diff.worstGot
                         << " for " << diff.worstRef << " (" << diff.worstShare
                         << " of the tolerance)";
}

/// Runs the CPU kernel `kernel` on `in`, writing `out`.
void runCpu(Kernel kernel, const Json &attrs, std::vector<Tensor *> in, std::vector<Tensor *> out,
            bool training) {
  Step step{"attention", kernel, {}, {}, attrs};
  for (size_t i = 0; i < in.size(); ++i)
    step.inputs.push_back((int)i);
  for (size_t i = 0; i < out.size(); ++i)
    step.outputs.push_back((int)(in.size() + i));
  KernelContext c{step, StepAttrs(step), {}, {}, training, /*seed=*/11, 0, nullptr};
  for (Tensor *t : in)
    c.in.push_back(t->ref);
  for (Tensor *t : out)
    c.out.push_back(t->ref);
  kernels().find(kernel)(c);
}

template <typename T, int D> void checkCase(const Case &k) {
  DType dtype = k.bf16 ? DType::BF16 : DType::F16;
  std::mt19937 rng(k.sq * 1000 + k.sk);
  Tensor q(dtype, {k.batch, k.sq, k.heads, D}), key(dtype, {k.batch, k.sk, k.heads, D}),
      v(dtype, {k.batch, k.sk, k.heads, D}), dy(dtype, {k.batch, k.sq, k.heads, D});
  for (Tensor *t : {&q, &key, &v, &dy})
    fillNormal(*t, rng);
  Tensor bias(DType::F32, {k.batch, 1, k.sq, k.sk}), counter(DType::I64, {});
  if (k.bias) {
    std::uniform_real_distribution<float> uniform(-1, 1);
    float *b = bias.ref.as<float>();
    for (int64_t i = 0; i < bias.ref.size(); ++i)
      b[i] = uniform(rng);
    for (int64_t j = k.sk - k.sk / 4; j < k.sk; ++j) // the last keys of the last batch masked
      for (int64_t i = 0; i < k.sq; ++i)
        b[((k.batch - 1) * k.sq + i) * k.sk + j] = -INFINITY;
    std::fill_n(b + 5 * k.sk, k.sk, -INFINITY); // row 5 of batch 0 sees nothing
  }
  *counter.ref.as<int64_t>() = 3;

  Json attrs = {{"causal", k.causal}};
  if (k.dropout > 0) {
    attrs["dropout"] = k.dropout;
    attrs["seed"] = 7;
  }
  std::vector<Tensor *> forwardIn = {&q, &key, &v};
  if (k.bias)
    forwardIn.push_back(&bias);
  if (k.dropout > 0)
    forwardIn.push_back(&counter);
  Tensor y(dtype, {k.batch, k.sq, k.heads, D}), lse(DType::F32, {k.batch, k.sq, k.heads});
  runCpu(Kernel::Attention, attrs, forwardIn, {&y, &lse}, true);

  tc::Dims m{k.batch, k.sq, k.sk, k.heads, D, D, float(1 / std::sqrt(double(D))), k.causal};
  if (k.bias) {
    m.bias = cuda::viewOf(bias.ref);
    cuda::alignedStrides(bias.ref.shape, bias.ref.shape, m.biasStride);
  }
  if (k.dropout > 0) {
    m.iteration = reinterpret_cast<const uint64_t *>(counter.ref.data);
    m.seed = 11;
    m.opSeed = 7;
    m.rate = k.dropout;
    m.keep = 1.0f / float(1.0 - k.dropout);
  }
  using cuda::viewOf;
  Tensor gotY(dtype, y.ref.shape), gotLse(DType::F32, lse.ref.shape);
  emu::launch(dim3(unsigned((k.sq + 63) / 64), unsigned(k.heads), unsigned(k.batch)),
              dim3(tc::kTileThreads), tc::ForwardLayout<T, D>(0).bytes, [&] {
                tc::forwardTiles<T, D>(viewOf(q.ref), viewOf(key.ref), viewOf(v.ref),
                                       viewOf(gotY.ref), gotLse.ref.as<float>(), m);
              }, k.options);
  expectNear(y, gotY, "y");
  expectNear(lse, gotLse, "log-sum-exp");

  attrs["saved_lse"] = k.savedLse;
  std::vector<Tensor *> backwardIn = {&q, &key, &v, &y, &dy};
  if (k.bias)
    backwardIn.push_back(&bias);
  if (k.savedLse)
    backwardIn.push_back(&lse);
  if (k.dropout > 0)
    backwardIn.push_back(&counter);
  Tensor dq(dtype, q.ref.shape), dk(dtype, key.ref.shape), dv(dtype, v.ref.shape);
  runCpu(Kernel::AttentionBackward, attrs, backwardIn, {&dq, &dk, &dv}, true);

  Tensor gotDq(dtype, q.ref.shape), gotDk(dtype, key.ref.shape), gotDv(dtype, v.ref.shape),
      rowLse(DType::F32, lse.ref.shape), rowDot(DType::F32, lse.ref.shape);
  const float *saved = k.savedLse ? lse.ref.as<float>() : nullptr;
  size_t bytes = tc::BackwardLayout<T, D>(0).bytes;
  emu::launch(dim3(unsigned((k.sq + 63) / 64), unsigned(k.heads), unsigned(k.batch)),
              dim3(tc::kTileThreads), bytes, [&] {
                tc::queryGradTiles<T, D>(viewOf(q.ref), viewOf(key.ref), viewOf(v.ref),
                                         viewOf(y.ref), viewOf(dy.ref), viewOf(gotDq.ref), saved,
                                         rowLse.ref.as<float>(), rowDot.ref.as<float>(), m);
              }, k.options);
  emu::launch(dim3(unsigned((k.sk + 63) / 64), unsigned(k.heads), unsigned(k.batch)),
              dim3(tc::kTileThreads), bytes, [&] {
                tc::keyGradTiles<T, D>(viewOf(q.ref), viewOf(key.ref), viewOf(v.ref),
                                       viewOf(dy.ref), viewOf(gotDk.ref), viewOf(gotDv.ref),
                                       saved ? saved : rowLse.ref.as<float>(),
                                       rowDot.ref.as<float>(), m);
              }, k.options);
  if (!k.savedLse)
    expectNear(lse, rowLse, "the backward's log-sum-exp");
  expectNear(dq, gotDq, "dq");
  expectNear(dk, gotDk, "dk");
  expectNear(dv, gotDv, "dv");
}

void check(const Case &k) {
  if (k.d == 64)
    k.bf16 ? checkCase<__nv_bfloat16, 64>(k) : checkCase<__half, 64>(k);
  else
    k.bf16 ? checkCase<__nv_bfloat16, 128>(k) : checkCase<__half, 128>(k);
}

TEST(AttentionEmulatedTest, F16Head64CausalPartialTiles) {
  check({.batch = 1, .sq = 130, .sk = 130, .heads = 2, .d = 64, .causal = true});
}

TEST(AttentionEmulatedTest, Bf16Head128MoreKeysLseRecomputed) {
  check({.batch = 1, .sq = 70, .sk = 200, .heads = 1, .d = 128, .bf16 = true, .savedLse = false});
}

TEST(AttentionEmulatedTest, F16Head64BiasMaskedRowDropout) {
  check({.batch = 2, .sq = 96, .sk = 80, .heads = 1, .d = 64, .bias = true, .dropout = 0.2});
}

TEST(AttentionEmulatedTest, Bf16Head64CausalMoreQueries) {
  check({.batch = 1, .sq = 100, .sk = 70, .heads = 1, .d = 64, .causal = true, .bf16 = true,
         .savedLse = false});
}

TEST(AttentionEmulatedTest, F16Head128OtherLayoutOtherOrder) {
  check({.batch = 1, .sq = 80, .sk = 80, .heads = 1, .d = 128, .causal = true, .bias = true,
         .options = {.shuffledAccumulator = true, .reverseOrder = true}});
}

} // namespace
} // namespace ampc::rt
