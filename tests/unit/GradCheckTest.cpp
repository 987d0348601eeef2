// Every gradient rule against central finite differences on the CPU runtime
// (f32). Each case builds one op on params; the loss is sum(out * R) with a
// fixed random R (or the op's own scalar loss), differentiated by the
// autodiff pass; a sample of every param's elements is perturbed by ±h.
#include <cmath>

#include "compiler/Lowering.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

struct GradCase {
  std::string name;
  std::function<Tensor(GraphBuilder &)> build;
};

Init positive() { return Init::uniform(0.5, 2.0); }

int64_t numElementsOf(const Tensor &t) {
  int64_t n = 1;
  for (int64_t d : t.shape())
    n *= d;
  return n;
}

/// Builds the case with loss = sum(out * R), runs autodiff and lowers; the
/// params' gradients become graph outputs.
rt::Plan compileCase(mlir::MLIRContext &ctx, const GradCase &c) {
  GraphBuilder b(ctx, "gradcheck");
  Tensor out = c.build(b);
  Tensor loss = out;
  if (out.rank() != 0) {
    std::vector<double> r = test::randomValues(numElementsOf(out), "f32", 99);
    Tensor weights = b.constValue("R", out.shape(), r);
    loss = b.reduceSum(b.mul(b.cast(out, "f32"), weights), {}, false, "loss");
  } else if (out.dtype() != "f32") {
    loss = b.cast(out, "f32", "loss");
  }
  b.setLoss(loss);
  auto module = b.finish();
  test::differentiateWithGradOutputs(*module);
  test::dumpCudaPlan(*module);
  return lowerToPlan(*module);
}

double lossOf(const rt::Plan &plan, const std::map<std::string, std::vector<float>> &params) {
  rt::Executor ex(plan, {/*training=*/true, /*seed=*/7});
  for (const auto &[name, values] : params)
    ex.writeF32(ex.id(name), values);
  ex.run();
  return (float)ex.readScalar(plan.loss);
}

class GradCheck : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradCheck, MatchesFiniteDifferences) {
  mlir::MLIRContext ctx;
  rt::Plan plan = compileCase(ctx, GetParam());
  std::map<std::string, std::vector<float>> params;
  rt::Executor ex(plan, {true, 7});
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param && b.trainable) {
      params[b.name] = ex.readF32(b.id);
    }
  ex.run();
  int checked = 0;
  for (auto &[name, values] : params) {
    int id = plan.find(name + ".grad");
    ASSERT_GE(id, 0) << "no gradient for " << name;
    std::vector<float> grad = ex.readF32(id);
    std::mt19937 rng(3);
    for (int sample = 0; sample < 6; ++sample) {
      size_t i = values.size() <= 6 ? sample % values.size() : rng() % values.size();
      float x = values[i], h = 1e-2f * std::max(1.0f, std::fabs(x));
      auto perturbed = params;
      perturbed[name][i] = x + h;
      double up = lossOf(plan, perturbed);
      perturbed[name][i] = x - h;
      double down = lossOf(plan, perturbed);
      double numeric = (up - down) / (2.0 * h);
      EXPECT_NEAR(grad[i], numeric, 2e-2 * std::max(1.0, std::fabs(numeric)))
          << name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

Conv2dAttrs convAttrs(int64_t stride, int64_t pad, int64_t dil, int64_t groups,
                      std::string layout = "NHWC") {
  Conv2dAttrs a;
  a.strides = {stride, stride};
  a.padding = {pad, pad};
  a.dilations = {dil, dil};
  a.groups = groups;
  a.layout = layout;
  return a;
}

void PrintTo(const GradCase &c, std::ostream *os) { *os << c.name; }

std::vector<GradCase> cases() {
  auto p = [](GraphBuilder &b, const char *name, std::vector<int64_t> shape,
              Init init = Init::normal(1.0)) { return b.param(name, shape, init); };
  std::vector<GradCase> c;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      c.push_back({std::string("matmul_") + (ta ? "T" : "N") + (tb ? "T" : "N"),
                   [=](GraphBuilder &b) {
                     return b.matmul(p(b, "a", ta ? std::vector<int64_t>{2, 4, 3} : std::vector<int64_t>{2, 3, 4}),
                                     p(b, "b", tb ? std::vector<int64_t>{2, 5, 4} : std::vector<int64_t>{2, 4, 5}), ta, tb);
                   }});
  c.push_back({"matmul_fold", [=](GraphBuilder &b) { return b.matmul(p(b, "a", {2, 3, 4}), p(b, "w", {4, 5})); }});
  c.push_back({"matmul_fold_tb", [=](GraphBuilder &b) { return b.matmul(p(b, "a", {2, 3, 4}), p(b, "w", {5, 4}), false, true); }});
  c.push_back({"matmul_broadcast", [=](GraphBuilder &b) { return b.matmul(p(b, "a", {3, 4}), p(b, "w", {2, 4, 5})); }});
  c.push_back({"conv2d", [=](GraphBuilder &b) { return b.conv2d(p(b, "x", {2, 5, 5, 2}), p(b, "f", {3, 3, 3, 2}), convAttrs(1, 1, 1, 1)); }});
  c.push_back({"conv2d_strided", [=](GraphBuilder &b) { return b.conv2d(p(b, "x", {1, 6, 6, 2}), p(b, "f", {2, 3, 3, 2}), convAttrs(2, 1, 1, 1)); }});
  c.push_back({"conv2d_dilated_grouped", [=](GraphBuilder &b) { return b.conv2d(p(b, "x", {1, 6, 6, 4}), p(b, "f", {4, 3, 3, 2}), convAttrs(1, 2, 2, 2)); }});
  c.push_back({"conv2d_nchw", [=](GraphBuilder &b) { return b.conv2d(p(b, "x", {1, 2, 5, 5}), p(b, "f", {3, 2, 3, 3}), convAttrs(1, 1, 1, 1, "NCHW")); }});
  c.push_back({"add_broadcast", [=](GraphBuilder &b) { return b.add(p(b, "a", {2, 3}), p(b, "b", {3})); }});
  c.push_back({"sub_broadcast", [=](GraphBuilder &b) { return b.sub(p(b, "a", {2, 1}), p(b, "b", {2, 3})); }});
  c.push_back({"mul_broadcast", [=](GraphBuilder &b) { return b.mul(p(b, "a", {2, 3}), p(b, "b", {1, 3})); }});
  // The bias gradient sums 70 rows onto [3, 5]: more than one chunk of the
  // CUDA column sums (64 rows at 15 columns).
  c.push_back({"add_bias_rows", [=](GraphBuilder &b) { return b.add(p(b, "x", {70, 3, 5}), p(b, "bias", {3, 5})); }});
  c.push_back({"div", [=](GraphBuilder &b) { return b.div(p(b, "a", {2, 3}), p(b, "b", {3}, positive())); }});
  c.push_back({"maximum", [=](GraphBuilder &b) { return b.maximum(p(b, "a", {2, 3}), p(b, "b", {2, 3})); }});
  c.push_back({"minimum", [=](GraphBuilder &b) { return b.minimum(p(b, "a", {2, 3}), p(b, "b", {3})); }});
  for (const char *op : {"neg", "abs", "relu", "tanh", "sigmoid", "erf", "exp", "square", "identity",
                         "sin", "cos"})
    c.push_back({op, [=](GraphBuilder &b) { return b.unary(op, p(b, "x", {3, 4})); }});
  for (const char *op : {"log", "sqrt", "rsqrt"})
    c.push_back({op, [=](GraphBuilder &b) { return b.unary(op, p(b, "x", {3, 4}, positive())); }});
  c.push_back({"gelu", [=](GraphBuilder &b) { return b.gelu(p(b, "x", {3, 4})); }});
  c.push_back({"gelu_tanh", [=](GraphBuilder &b) { return b.gelu(p(b, "x", {3, 4}), true); }});
  c.push_back({"scale", [=](GraphBuilder &b) { return b.scale(p(b, "x", {3, 4}), -1.5, 2.0); }});
  c.push_back({"pow", [=](GraphBuilder &b) { return b.pow(p(b, "x", {3, 4}, positive()), 2.5); }});
  c.push_back({"dropout", [=](GraphBuilder &b) { return b.dropout(p(b, "x", {4, 8}), 0.3, 5); }});
  c.push_back({"reshape", [=](GraphBuilder &b) { return b.reshape(p(b, "x", {2, 6}), {3, 4}); }});
  c.push_back({"flatten", [=](GraphBuilder &b) { return b.flatten(p(b, "x", {2, 2, 3})); }});
  c.push_back({"transpose", [=](GraphBuilder &b) { return b.transpose(p(b, "x", {2, 3, 4}), {2, 0, 1}); }});
  c.push_back({"concat", [=](GraphBuilder &b) { return b.concat({p(b, "a", {2, 3}), p(b, "b", {2, 2})}, 1); }});
  c.push_back({"slice", [=](GraphBuilder &b) { return b.slice(p(b, "x", {4, 5}), {1, 0}, {1, -3}, {4, 3}); }});
  Pool2dAttrs pool;
  pool.kernel = {3, 3};
  pool.strides = {2, 2};
  pool.padding = {1, 1};
  c.push_back({"max_pool2d", [=](GraphBuilder &b) { return b.maxPool2d(p(b, "x", {1, 5, 5, 2}), pool); }});
  // Overlapping windows over more channels than a warp's lanes.
  c.push_back({"max_pool2d_channels", [=](GraphBuilder &b) { return b.maxPool2d(p(b, "x", {2, 7, 7, 40}), pool); }});
  c.push_back({"avg_pool2d", [=](GraphBuilder &b) { return b.avgPool2d(p(b, "x", {1, 5, 5, 2}), pool); }});
  c.push_back({"global_avg_pool", [=](GraphBuilder &b) { return b.globalAvgPool(p(b, "x", {2, 3, 3, 4})); }});
  c.push_back({"batch_norm", [=](GraphBuilder &b) {
                 Tensor x = p(b, "x", {4, 2, 2, 3});
                 Tensor mean = b.param("mean", {3}, Init::zeros(), "f32", false);
                 Tensor var = b.param("var", {3}, Init::ones(), "f32", false);
                 return b.batchNorm(x, p(b, "scale", {3}), p(b, "bias", {3}), mean, var);
               }});
  // More rows (N*H*W = 338) than one chunk of the CUDA column sums (256 at
  // 3 channels, runtime/cuda/kernels/Columns.h).
  c.push_back({"batch_norm_rows", [=](GraphBuilder &b) {
                 Tensor x = p(b, "x", {2, 13, 13, 3});
                 Tensor mean = b.param("mean", {3}, Init::zeros(), "f32", false);
                 Tensor var = b.param("var", {3}, Init::ones(), "f32", false);
                 return b.batchNorm(x, p(b, "scale", {3}), p(b, "bias", {3}), mean, var);
               }});
  // 40 channels: a block of 32 and a block with 8 of its 32 lanes, 4
  // chunks of 32 rows; a mean far from 0, for the moments about the first
  // element (runtime/cuda/kernels/Norm.cu).
  c.push_back({"batch_norm_channels", [=](GraphBuilder &b) {
                 Tensor x = p(b, "x", {2, 7, 7, 40}, Init::uniform(2.0, 4.0));
                 Tensor mean = b.param("mean", {40}, Init::zeros(), "f32", false);
                 Tensor var = b.param("var", {40}, Init::ones(), "f32", false);
                 return b.batchNorm(x, p(b, "scale", {40}), p(b, "bias", {40}), mean, var);
               }});
  c.push_back({"layer_norm", [=](GraphBuilder &b) { return b.layerNorm(p(b, "x", {3, 6}), p(b, "scale", {6}), p(b, "bias", {6})); }});
  // Rows wider than the CUDA row kernels keep in registers (128), and more
  // rows than one chunk of their column sums (32 at 40 columns), not a
  // multiple of a block's 8 rows.
  c.push_back({"layer_norm_wide", [=](GraphBuilder &b) { return b.layerNorm(p(b, "x", {3, 1100}), p(b, "scale", {1100}), p(b, "bias", {1100})); }});
  // Rows the CUDA kernels hold 4 elements a load (6 chunks a lane at 768).
  c.push_back({"layer_norm_held", [=](GraphBuilder &b) { return b.layerNorm(p(b, "x", {5, 768}), p(b, "scale", {768}), p(b, "bias", {768})); }});
  c.push_back({"layer_norm_rows", [=](GraphBuilder &b) { return b.layerNorm(p(b, "x", {70, 2, 20}), p(b, "scale", {2, 20}), p(b, "bias", {2, 20}), 1e-5, 1); }});
  c.push_back({"reduce_sum", [=](GraphBuilder &b) { return b.reduceSum(p(b, "x", {2, 3, 4}), {1}, false); }});
  c.push_back({"reduce_mean_keepdims", [=](GraphBuilder &b) { return b.reduceMean(p(b, "x", {2, 3, 4}), {0, 2}, true); }});
  c.push_back({"softmax", [=](GraphBuilder &b) { return b.softmax(p(b, "x", {2, 3, 4}), 1); }});
  c.push_back({"log_softmax", [=](GraphBuilder &b) { return b.logSoftmax(p(b, "x", {3, 5})); }});
  // Fused attention: 70 keys span two of the CPU's key tiles; head_dim 16,
  // head_dim_v 8.
  c.push_back({"attention", [=](GraphBuilder &b) { return b.attention(p(b, "q", {2, 70, 2, 16}), p(b, "k", {2, 70, 2, 16}), p(b, "v", {2, 70, 2, 8})); }});
  c.push_back({"attention_causal_scaled", [=](GraphBuilder &b) { return b.attention(p(b, "q", {1, 5, 2, 4}), p(b, "k", {1, 7, 2, 4}), p(b, "v", {1, 7, 2, 3}), true, 0.7); }});
  c.push_back({"softmax_wide", [=](GraphBuilder &b) { return b.softmax(p(b, "x", {3, 1100})); }});
  c.push_back({"log_softmax_rows", [=](GraphBuilder &b) { return b.logSoftmax(p(b, "x", {17, 40})); }});
  c.push_back({"embedding", [=](GraphBuilder &b) {
                 return b.embedding(b.constValue("ids", {4}, {2, 0, 2, 5}, "i64"), p(b, "w", {6, 3}));
               }});
  c.push_back({"softmax_cross_entropy", [=](GraphBuilder &b) {
                 return b.softmaxCrossEntropy(p(b, "logits", {4, 5}), b.constValue("labels", {4}, {1, 4, 0, 1}, "i64"));
               }});
  // PyTorch's label smoothing and an ignored row (the second); six logits,
  // so that every one is checked.
  c.push_back({"softmax_cross_entropy_smoothed", [=](GraphBuilder &b) {
                 return b.softmaxCrossEntropy(p(b, "logits", {1, 2, 3}), b.constValue("labels", {1, 2}, {1, -100}, "i64"), "", 0.2, -100);
               }});
  // Class weights, with smoothing and an ignored row.
  c.push_back({"softmax_cross_entropy_weighted", [=](GraphBuilder &b) {
                 return b.softmaxCrossEntropy(p(b, "logits", {3, 4}), b.constValue("labels", {3}, {3, -100, 0}, "i64"), "", 0.3, -100,
                                              b.constValue("weights", {4}, {0.5, 2.0, 1.0, 3.0}));
               }});
  c.push_back({"softmax_cross_entropy_weighted_unsmoothed", [=](GraphBuilder &b) {
                 return b.softmaxCrossEntropy(p(b, "logits", {3, 4}), b.constValue("labels", {3}, {3, 1, 0}, "i64"), "", 0.0, std::nullopt,
                                              b.constValue("weights", {4}, {0.5, 2.0, 1.0, 3.0}));
               }});
  // Reduction "none": each row's loss weighed by its own factor, then
  // summed, so every row's dloss differs; smoothing, weights, an ignored row.
  c.push_back({"softmax_cross_entropy_per_row", [=](GraphBuilder &b) {
                 Tensor rows = b.softmaxCrossEntropy(p(b, "logits", {2, 2, 3}), b.constValue("labels", {2, 2}, {2, -100, 0, 1}, "i64"), "", 0.3, -100,
                                                     b.constValue("weights", {3}, {0.5, 2.0, 3.0}), "none");
                 return b.reduceSum(b.mul(rows, b.constValue("factors", {2, 2}, {1.5, -2.0, 0.25, 3.0})));
               }});
  c.push_back({"mse_loss", [=](GraphBuilder &b) { return b.mseLoss(p(b, "a", {3, 4}), p(b, "t", {3, 4})); }});
  c.push_back({"cast", [=](GraphBuilder &b) { return b.cast(b.cast(p(b, "x", {3, 4}), "f64"), "f32"); }});
  c.push_back({"shared_value", [=](GraphBuilder &b) {
                 Tensor x = p(b, "x", {3, 4});
                 return b.mul(b.unary("tanh", x), b.unary("sigmoid", x));
               }});
  return c;
}

INSTANTIATE_TEST_SUITE_P(Rules, GradCheck, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.name; });

} // namespace
