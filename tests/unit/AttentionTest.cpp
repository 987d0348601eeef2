// The fused attention op on the CPU runtime (the reference): against a
// direct f64 computation (forward and gradients), causality, the unfused
// graph (matmul, scale, softmax, matmul) at O0, and O1 in f16 and bf16
// against O0. The gradients against finite differences are in
// GradCheckTest ("attention").
#include <cmath>

#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/Probes.h"
#include "runtime/driver/Doctor.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

constexpr int64_t kDropoutSeed = 11;

struct Shape4 {
  int64_t b, sq, sk, h, d, dv;
};

/// softmax(q k^T scale [+ causal mask]) v in f64, and its gradients for dy:
/// [y, dq, dk, dv], each in the [b, seq, h, width] layout.
std::vector<std::vector<double>> direct(const Shape4 &s, const std::vector<double> &q,
                                        const std::vector<double> &k,
                                        const std::vector<double> &v,
                                        const std::vector<double> &dy, bool causal,
                                        double scale) {
  auto at = [&](int64_t b, int64_t pos, int64_t seq, int64_t h, int64_t w) {
    return ((b * seq + pos) * s.h + h) * w;
  };
  std::vector<double> y(s.b * s.sq * s.h * s.dv), dq(q.size()), dk(k.size()), dv(v.size());
  for (int64_t b = 0; b < s.b; ++b)
    for (int64_t h = 0; h < s.h; ++h)
      for (int64_t i = 0; i < s.sq; ++i) {
        int64_t n = causal ? std::min(i + 1, s.sk) : s.sk;
        std::vector<double> p(n), dp(n);
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t x = 0; x < s.d; ++x)
            dot += q[at(b, i, s.sq, h, s.d) + x] * k[at(b, j, s.sk, h, s.d) + x];
          p[j] = dot * scale;
          mx = std::max(mx, p[j]);
        }
        for (double &e : p)
          sum += e = std::exp(e - mx);
        for (double &e : p)
          e /= sum;
        double D = 0;
        for (int64_t j = 0; j < n; ++j)
          for (int64_t x = 0; x < s.dv; ++x) {
            y[at(b, i, s.sq, h, s.dv) + x] += p[j] * v[at(b, j, s.sk, h, s.dv) + x];
            dp[j] += dy[at(b, i, s.sq, h, s.dv) + x] * v[at(b, j, s.sk, h, s.dv) + x];
          }
        for (int64_t j = 0; j < n; ++j)
          D += p[j] * dp[j];
        for (int64_t j = 0; j < n; ++j) {
          double ds = p[j] * (dp[j] - D) * scale;
          for (int64_t x = 0; x < s.dv; ++x)
            dv[at(b, j, s.sk, h, s.dv) + x] += p[j] * dy[at(b, i, s.sq, h, s.dv) + x];
          for (int64_t x = 0; x < s.d; ++x) {
            dq[at(b, i, s.sq, h, s.d) + x] += ds * k[at(b, j, s.sk, h, s.d) + x];
            dk[at(b, j, s.sk, h, s.d) + x] += ds * q[at(b, i, s.sq, h, s.d) + x];
          }
        }
      }
  return {y, dq, dk, dv};
}

/// The largest |got - want| over the largest |want| (absolute where every
/// value is 0: one key's softmax is constant, so its dq and dk are).
double relativeError(const std::vector<float> &got, const std::vector<double> &want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::fabs(got[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  return scale > 0 ? err / scale : err;
}

/// The attention step and its backward as plan steps on inputs q, k, v, dy.
test::Compiled attentionPlan(const Shape4 &s, bool causal, double scale) {
  return test::compile([&](GraphBuilder &b) {
    Tensor q = b.input("q", {s.b, s.sq, s.h, s.d}), k = b.input("k", {s.b, s.sk, s.h, s.d}),
           v = b.input("v", {s.b, s.sk, s.h, s.dv}), dy = b.input("dy", {s.b, s.sq, s.h, s.dv});
    Tensor y = b.attention(q, k, v, causal, scale, "attn");
    Tensor grads = b.node("attention_backward", {q, k, v, y, dy}, [&] {
      mlir::NamedAttrList a;
      a.set("causal", b.opBuilder().getBoolAttr(causal));
      a.set("scale", b.opBuilder().getF64FloatAttr(scale));
      auto &o = b.opBuilder();
      a.set("outs", o.getArrayAttr({o.getStringAttr("dq"), o.getStringAttr("dk"),
                                    o.getStringAttr("dv")}));
      return a;
    }(), "attn_grad", {});
    b.output(y);
    for (mlir::Value g : grads.value().getDefiningOp()->getResults())
      b.output(Tensor(g));
  });
}

class AttentionShapes : public ::testing::TestWithParam<std::tuple<Shape4, bool>> {};

TEST_P(AttentionShapes, MatchesF64) {
  auto [s, causal] = GetParam();
  double scale = 1.0 / std::sqrt(double(s.d));
  test::Compiled c = attentionPlan(s, causal, scale);
  auto q = test::randomValues(s.b * s.sq * s.h * s.d, "f32", 1),
       k = test::randomValues(s.b * s.sk * s.h * s.d, "f32", 2),
       v = test::randomValues(s.b * s.sk * s.h * s.dv, "f32", 3),
       dy = test::randomValues(s.b * s.sq * s.h * s.dv, "f32", 4);
  for (double &x : q)
    x *= 3; // scores of a few units: a softmax far from uniform
  for (auto [name, values] : {std::pair{"q", &q}, {"k", &k}, {"v", &v}, {"dy", &dy}})
    test::setValues(*c.ex, name, *values);
  c.ex->run();
  auto want = direct(s, q, k, v, dy, causal, scale);
  ASSERT_EQ(c.plan.outputs.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    int id = c.plan.outputs[i];
    EXPECT_LT(relativeError(c.ex->readF32(id), want[i]), 2e-5) << c.plan.buffers[id].name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Attention, AttentionShapes,
    ::testing::Combine(
        ::testing::Values(Shape4{2, 70, 70, 2, 16, 16},   // two key tiles, the second partial
                          Shape4{1, 33, 130, 3, 64, 32},  // seq_q != seq_k, three tiles
                          Shape4{1, 65, 65, 1, 128, 128}, // head_dim 128
                          Shape4{1, 1, 1, 1, 1, 1}),
        ::testing::Bool()));

/// What `run` varies beyond the shape: attention dropout, training or not,
/// an additive bias of the scores (its shape and values; none if empty).
struct Variant {
  double dropout = 0;
  bool training = true;
  std::vector<int64_t> biasShape = {};
  std::vector<double> bias = {};
  bool causal = false; // the fused op only
  /// Dumps its CUDA plan for the GPU check even without dropout or bias.
  bool gpuPlan = false;
};

/// Attention written out: transposes to [b, h, s, d], q k^T, the scale, the
/// bias added, softmax, dropout of the [b, h, sq, sk] probabilities, times
/// v, and back.
Tensor unfused(GraphBuilder &b, Tensor q, Tensor k, Tensor v, double scale, double dropout,
               std::optional<Tensor> bias) {
  std::vector<int64_t> heads{0, 2, 1, 3};
  Tensor scores = b.scale(b.matmul(b.transpose(q, heads), b.transpose(k, heads), false, true),
                          scale);
  if (bias)
    scores = b.add(scores, *bias);
  Tensor p = b.softmax(scores);
  if (dropout > 0)
    p = b.dropout(p, dropout, kDropoutSeed);
  return b.transpose(b.matmul(p, b.transpose(v, heads)), heads);
}

/// y and the gradients of sum(y * R) for q, k and v (params), through the
/// autodiff pass; the graph at `level` (AMP off at O0) in `dtype`, with
/// `variant`'s dropout and bias, run in training or not.
std::vector<std::vector<float>> run(const Shape4 &s, bool fused, const char *level = "O0",
                                    const char *dtype = "f16", const Variant &variant = {}) {
  double dropout = variant.dropout;
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "attention");
  double scale = 1.0 / std::sqrt(double(s.d));
  Tensor q = b.param("q", {s.b, s.sq, s.h, s.d}, Init::normal(1.0)),
         k = b.param("k", {s.b, s.sk, s.h, s.d}, Init::normal(1.0)),
         v = b.param("v", {s.b, s.sk, s.h, s.dv}, Init::normal(1.0));
  std::optional<Tensor> bias;
  if (!variant.bias.empty())
    bias = b.constValue("bias", variant.biasShape, variant.bias);
  Tensor y = fused ? b.attention(q, k, v, variant.causal, std::nullopt, "y", dropout, kDropoutSeed,
                                 bias)
                   : unfused(b, q, k, v, scale, dropout, bias);
  Tensor r = b.constValue("R", y.shape(), test::randomValues(s.b * s.sq * s.h * s.dv, "f32", 9));
  b.setLoss(b.reduceSum(b.mul(b.cast(y, "f32"), r), {}, false, "loss"));
  b.output(y);
  auto module = b.finish();
  AmpSettings amp;
  amp.level = level;
  amp.dtype = dtype;
  if (std::string(level) != "O0")
    runAmpPipeline(*module, amp);
  test::differentiateWithGradOutputs(*module);
  if (dropout > 0 || bias || variant.gpuPlan)
    test::dumpCudaPlan(*module);
  rt::Plan plan = lowerToPlan(*module);
  rt::Executor ex(plan, {variant.training, 7});
  ex.run();
  std::vector<std::vector<float>> out;
  for (int id : plan.outputs)
    if (plan.buffers[id].name != "loss")
      out.push_back(ex.readF32(id));
  return out;
}

double relativeError(const std::vector<float> &got, const std::vector<float> &want) {
  return relativeError(got, std::vector<double>(want.begin(), want.end()));
}

TEST(Attention, MatchesTheUnfusedGraphAtO0) {
  Shape4 s{2, 70, 70, 2, 16, 16};
  auto fused = run(s, true), written = run(s, false);
  ASSERT_EQ(fused.size(), 4u); // y, dq, dk, dv
  ASSERT_EQ(written.size(), 4u);
  for (size_t i = 0; i < fused.size(); ++i)
    EXPECT_LT(relativeError(fused[i], written[i]), 1e-5) << "output " << i;
}

TEST(Attention, DropoutDropsWhatDropoutDrops) {
  // The fused op's dropout takes the bits `dropout` draws for the
  // [b, h, sq, sk] probabilities with the same seed: the unfused graph with
  // a dropout op between softmax and V is the same function, forward and
  // backward. Out of training it is the identity.
  Shape4 s{2, 70, 70, 2, 16, 16};
  auto fused = run(s, true, "O0", "f16", {0.3}), written = run(s, false, "O0", "f16", {0.3});
  auto none = run(s, true);
  ASSERT_EQ(fused.size(), 4u);
  for (size_t i = 0; i < fused.size(); ++i) {
    EXPECT_LT(relativeError(fused[i], written[i]), 1e-5) << "output " << i;
    EXPECT_GT(relativeError(fused[i], none[i]), 0.05) << "output " << i << ": nothing dropped";
  }
  EXPECT_EQ(run(s, true, "O0", "f16", {0.3, false})[0], run(s, true, "O0", "f16", {0, false})[0]);
}

TEST(Attention, ABiasIsAddedToTheScores) {
  // An additive mask of keys ([b, 1, 1, sk]: 0, -1e9 or -inf) and a
  // positional bias ([1, h, sq, sk]): the fused op is the unfused graph
  // with the bias added to the scaled scores, forward and backward, at O0;
  // at O1 the bias stays f32.
  Shape4 s{2, 70, 70, 2, 16, 16};
  std::vector<double> keys(s.b * s.sk, 0.0);
  for (int64_t j = 0; j + 1 < s.sk; j += 3)
    keys[j] = -1e9, keys[s.sk + j + 1] = -INFINITY;
  std::vector<double> positions = test::randomValues(s.h * s.sq * s.sk, "f32", 5);
  for (const Variant &v : {Variant{0, true, {s.b, 1, 1, s.sk}, keys},
                           Variant{0, true, {1, s.h, s.sq, s.sk}, positions},
                           Variant{0.2, true, {s.b, 1, 1, s.sk}, keys}}) {
    auto fused = run(s, true, "O0", "f16", v), written = run(s, false, "O0", "f16", v);
    ASSERT_EQ(fused.size(), 4u);
    for (size_t i = 0; i < fused.size(); ++i)
      EXPECT_LT(relativeError(fused[i], written[i]), 1e-5)
          << "output " << i << ", bias of rank " << v.biasShape.size() << " dropout " << v.dropout;
    auto o1 = run(s, true, "O1", "f16", v);
    for (size_t i = 0; i < fused.size(); ++i)
      EXPECT_LT(relativeError(o1[i], fused[i]), 5e-3) << "O1 output " << i;
  }
}

TEST(Attention, ARowWithEveryKeyMaskedIsZero) {
  // softmax of all -inf has no probabilities: the fused op gives 0 (and
  // gradients of 0) where the unfused softmax gives NaN.
  Shape4 s{1, 5, 5, 1, 8, 8};
  std::vector<double> bias(s.sq * s.sk, 0.0);
  for (int64_t j = 0; j < s.sk; ++j)
    bias[2 * s.sk + j] = -INFINITY; // query 2 sees nothing
  auto out = run(s, true, "O0", "f16", {0, true, {1, 1, s.sq, s.sk}, bias});
  for (int64_t x = 0; x < s.dv; ++x)
    EXPECT_EQ(out[0][2 * s.dv + x], 0.0f);
  for (const std::vector<float> &t : out)
    for (float e : t)
      ASSERT_TRUE(std::isfinite(e));
  for (int64_t x = 0; x < s.d; ++x)
    EXPECT_EQ(out[1][2 * s.d + x], 0.0f) << "dq of the masked row";
}

TEST(Attention, ABiasOfAnotherShapeIsRefused) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "bad");
  Tensor q = b.input("q", {2, 4, 3, 8});
  EXPECT_THROW(b.attention(q, q, q, false, std::nullopt, "y", 0, 0, b.input("m", {2, 4, 4})),
               GraphError);
  EXPECT_THROW(b.attention(q, q, q, false, std::nullopt, "y", 0, 0, b.input("m", {2, 3, 4, 2})),
               GraphError);
}

TEST(Attention, ABiasFromAParamHasNoGradient) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "learned");
  Tensor q = b.param("q", {1, 4, 1, 8}, Init::normal(1.0));
  Tensor bias = b.param("bias", {1, 1, 4, 4}, Init::normal(1.0));
  Tensor y = b.attention(q, q, q, false, std::nullopt, "y", 0, 0, bias);
  b.setLoss(b.reduceSum(y, {}, false, "loss"));
  auto m = b.finish();
  try {
    runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
    ADD_FAILURE() << "a gradient of the bias was made";
  } catch (const GraphError &e) {
    EXPECT_NE(std::string(e.what()).find("the bias of attention 'y' has no gradient"),
              std::string::npos)
        << e.what();
  }
}

TEST(Attention, ARateOutsideItsRangeIsRefused) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "bad");
  Tensor q = b.input("q", {1, 4, 1, 8});
  EXPECT_THROW(b.attention(q, q, q, false, std::nullopt, "y", 1.0), GraphError);
}

TEST(Attention, O1StaysNearO0) {
  Shape4 s{1, 40, 40, 2, 32, 32};
  auto o0 = run(s, true);
  for (auto [dtype, tolerance] : {std::pair{"f16", 5e-3}, {"bf16", 4e-2}}) {
    auto o1 = run(s, true, "O1", dtype);
    for (size_t i = 0; i < o0.size(); ++i)
      EXPECT_LT(relativeError(o1[i], o0[i]), tolerance) << dtype << " output " << i;
  }
}

TEST(Attention, TensorCoreShapesStayNearO0) {
  // The shapes the CUDA tensor-core kernels take (f16 and bf16, head_dim 64
  // and 128): partial tiles, seq_q != seq_k, causal, a key mask with
  // dropout. O1 stays near O0 here; their CUDA plans, dumped, hold those
  // kernels to this CPU on a GPU (scripts/gpu-check.sh).
  std::vector<double> mask(96, 0.0);
  for (int64_t j = 86; j < 96; ++j)
    mask[j] = -INFINITY;
  std::vector<std::pair<Shape4, Variant>> cases = {
      {{2, 130, 130, 2, 64, 64}, {0, true, {}, {}, true, true}},
      {{1, 70, 200, 2, 128, 128}, {0, true, {}, {}, false, true}},
      {{1, 96, 96, 2, 64, 64}, {0.1, true, {1, 1, 1, 96}, mask, false, true}},
  };
  for (const auto &[s, v] : cases) {
    auto o0 = run(s, true, "O0", "f16", v);
    for (auto [dtype, tolerance] : {std::pair{"f16", 5e-3}, {"bf16", 4e-2}}) {
      auto o1 = run(s, true, "O1", dtype, v);
      ASSERT_EQ(o1.size(), o0.size());
      for (size_t i = 0; i < o0.size(); ++i)
        EXPECT_LT(relativeError(o1[i], o0[i]), tolerance)
            << dtype << " head_dim " << s.d << " output " << i;
    }
  }
}

TEST(Attention, IsCausal) {
  // Keys and values after position t never change outputs at or before t.
  Shape4 s{1, 50, 50, 2, 8, 8};
  test::Compiled c = test::compile([&](GraphBuilder &b) {
    b.output(b.attention(b.input("q", {s.b, s.sq, s.h, s.d}), b.input("k", {s.b, s.sk, s.h, s.d}),
                         b.input("v", {s.b, s.sk, s.h, s.dv}), true, std::nullopt, "y"));
  });
  auto k = test::randomValues(s.sk * s.h * s.d, "f32", 2),
       v = test::randomValues(s.sk * s.h * s.dv, "f32", 3);
  test::setValues(*c.ex, "q", test::randomValues(s.sq * s.h * s.d, "f32", 1));
  test::setValues(*c.ex, "k", k);
  test::setValues(*c.ex, "v", v);
  c.ex->run();
  std::vector<float> before = test::valuesOf(*c.ex, "y");
  int64_t t = 20;
  for (size_t i = (t + 1) * s.h * s.d; i < k.size(); ++i)
    k[i] += 1.5, v[i] -= 2.0;
  test::setValues(*c.ex, "k", k);
  test::setValues(*c.ex, "v", v);
  c.ex->run();
  std::vector<float> after = test::valuesOf(*c.ex, "y");
  int64_t kept = (t + 1) * s.h * s.dv;
  EXPECT_TRUE(std::equal(before.begin(), before.begin() + kept, after.begin()));
  EXPECT_FALSE(std::equal(before.begin() + kept, before.end(), after.begin() + kept));
}

TEST(Attention, DoctorRecordsTheScoresRange) {
  // The doctor's probe of the scores the fused op never stores: the largest
  // |q k^T scale| as f64 computes it, one element per score the causal
  // mask keeps, and those above half f16's largest counted. Its CUDA plan
  // is dumped for the GPU check.
  Shape4 s{2, 37, 37, 2, 16, 16};
  double scale = 0.3;
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "scores");
  b.output(b.attention(b.input("q", {s.b, s.sq, s.h, s.d}), b.input("k", {s.b, s.sk, s.h, s.d}),
                       b.input("v", {s.b, s.sk, s.h, s.dv}), true, scale, "y"));
  auto module = b.finish();
  ProbeOptions probes{ProbeOptions::Mode::Ranges, "f16"};
  test::dumpCudaPlan(*module, probes);
  rt::Plan plan = lowerToPlan(*module, rt::cpuTarget(), probes);
  rt::Executor ex(plan, {});
  auto q = test::randomValues(s.b * s.sq * s.h * s.d, "f32", 1),
       k = test::randomValues(s.b * s.sk * s.h * s.d, "f32", 2);
  for (double &x : q)
    x *= 30000; // some scores above f16's largest
  test::setValues(ex, "q", q);
  test::setValues(ex, "k", k);
  test::setValues(ex, "v", test::randomValues(s.b * s.sk * s.h * s.dv, "f32", 3));
  ex.run();
  double maxAbs = 0, kept = 0, near = 0;
  for (int64_t bh = 0; bh < s.b * s.h; ++bh)
    for (int64_t i = 0; i < s.sq; ++i)
      for (int64_t j = 0; j <= i; ++j, ++kept) {
        int64_t bi = bh / s.h, h = bh % s.h;
        double dot = 0;
        for (int64_t x = 0; x < s.d; ++x)
          dot += q[((bi * s.sq + i) * s.h + h) * s.d + x] * k[((bi * s.sk + j) * s.h + h) * s.d + x];
        maxAbs = std::max(maxAbs, std::fabs(dot * scale));
        near += std::fabs(dot * scale) > 65504.0 / 2;
      }
  std::vector<std::byte> bytes = ex.readBytes(ex.id(rt::kRanges));
  std::vector<double> ranges(bytes.size() / sizeof(double));
  std::memcpy(ranges.data(), bytes.data(), bytes.size());
  const rt::ValueRange *scores = nullptr;
  std::vector<rt::ValueRange> values = rt::valueRanges(plan, ranges, "f16");
  for (const rt::ValueRange &v : values)
    if (v.scores)
      scores = &v;
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->name, "y.scores");
  EXPECT_EQ(scores->kernel, "attention");
  EXPECT_NEAR(scores->maxAbs, maxAbs, 1e-5 * maxAbs);
  EXPECT_EQ(scores->elements, kept);
  EXPECT_GT(near, 0);
  EXPECT_EQ(scores->nearMaxFraction * kept, near);
  EXPECT_EQ(rt::diagnose(values, "f16").scoresBeyondLow, std::vector<std::string>{"y.scores"});
}

} // namespace
