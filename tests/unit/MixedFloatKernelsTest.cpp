// The CPU's mixed-float kernels (f16, bf16 and f32 operands in one step)
// widen and round a chunk or a row at a time (runtime/cpu/kernels/F32Chunks.h):
// each must give the bits of the same kernel on f32 copies of its operands,
// with its result rounded once, whatever the chunk boundaries (tensors past
// the parallel grain, bias rows longer than a chunk and not dividing one).
// Layer norm's backward, its parameter gradients summed over column blocks
// on the threads, must give the bits of one loop over the rows.
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "runtime/core/MemoryPlanner.h"
#include "runtime/numerics/Activations.h"
#include "runtime/numerics/Random.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

struct Operand {
  rt::DType dtype;
  std::vector<int64_t> shape;
  unsigned seed;
};

std::vector<double> valuesFor(const Operand &o) {
  std::mt19937 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 2.0);
  std::vector<double> v(rt::numElements(o.shape));
  for (double &x : v)
    x = normal(rng);
  return v;
}

/// Element i of the result from the operands' f32 values, computed here.
using Reference = std::function<float(const std::vector<std::vector<float>> &, int64_t)>;

/// The step's result: one plan with the operands' dtypes, and the same
/// step on f32 operands holding the values the first one reads (rounded as
/// its `round_inputs` says), whose result is then rounded to `out.dtype`.
/// With a reference, the f32 step's result is also checked against it, bit
/// for bit, so that a fault both steps share shows.
void expectSameAsOnF32(rt::Kernel kernel, const std::vector<Operand> &ins, const Operand &out,
                       rt::Json attrs = rt::Json::object(), Reference reference = nullptr) {
  std::vector<std::vector<float>> read(ins.size());
  std::vector<std::vector<double>> values;
  for (const Operand &o : ins)
    values.push_back(valuesFor(o));
  auto run = [&](bool mixed) {
    rt::Plan plan;
    std::vector<int> inputs;
    for (size_t k = 0; k < ins.size(); ++k) {
      std::string name = "in" + std::to_string(k);
      inputs.push_back(test::addBuffer(plan, name.c_str(), rt::BufferKind::Input,
                                       mixed ? ins[k].dtype : rt::DType::F32, ins[k].shape));
    }
    int result = test::addBuffer(plan, "out", rt::BufferKind::Temp,
                                 mixed ? out.dtype : rt::DType::F32, out.shape);
    plan.inputs = inputs;
    plan.outputs = {result};
    rt::Json stepAttrs = attrs;
    if (!mixed)
      stepAttrs.erase("round_inputs");
    plan.steps.push_back({"step", kernel, inputs, {result}, stepAttrs});
    rt::planMemory(plan);
    rt::Executor ex(plan);
    for (size_t k = 0; k < ins.size(); ++k) {
      std::vector<double> v = values[k];
      std::string roundTo =
          attrs.contains("round_inputs") ? attrs["round_inputs"][k].get<std::string>() : "";
      for (double &x : v) { // what the mixed step reads
        if (mixed)
          continue;
        std::byte narrow[4];
        rt::storeElement(narrow, ins[k].dtype, 0, x);
        x = rt::loadElement(narrow, ins[k].dtype, 0);
        if (!roundTo.empty()) {
          rt::storeElement(narrow, *rt::parseDType(roundTo), 0, x);
          x = rt::loadElement(narrow, *rt::parseDType(roundTo), 0);
        }
      }
      test::setValues(ex, "in" + std::to_string(k), v);
      if (!mixed)
        read[k].assign(v.begin(), v.end());
    }
    ex.run();
    return ex.readF32(result);
  };
  std::vector<float> got = run(true), want = run(false);
  ASSERT_EQ(got.size(), want.size());
  int failures = 0;
  for (int64_t i = 0; reference && i < (int64_t)want.size(); ++i) {
    float expected = reference(read, i);
    if (std::memcmp(&want[i], &expected, 4) != 0 && ++failures <= 3)
      ADD_FAILURE() << "element " << i << " on f32: " << want[i] << ", computed here " << expected;
  }
  for (size_t i = 0; i < got.size(); ++i) {
    std::byte narrow[4];
    rt::storeElement(narrow, out.dtype, 0, want[i]);
    float expected = (float)rt::loadElement(narrow, out.dtype, 0);
    if (std::memcmp(&got[i], &expected, 4) != 0 && ++failures <= 3)
      ADD_FAILURE() << "element " << i << ": " << got[i] << ", on f32 " << expected;
  }
  EXPECT_EQ(failures, 0);
}

using rt::DType;

TEST(MixedFloatKernels, UnaryAndItsBackwardInChunks) {
  num::Gelu gelu;
  Reference value = [&](const auto &in, int64_t i) { return gelu.value(in[0][i]); };
  const rt::Json none = rt::Json::object();
  expectSameAsOnF32(rt::Kernel::Gelu, {{DType::F16, {70001}, 1}}, {DType::F16, {70001}, 0}, none,
                    value);
  expectSameAsOnF32(rt::Kernel::Gelu, {{DType::BF16, {3, 5}, 1}}, {DType::F32, {3, 5}, 0}, none,
                    value);
  expectSameAsOnF32(
      rt::Kernel::UnaryBackward,
      {{DType::F16, {50001}, 1}, {DType::BF16, {50001}, 2}, {DType::F32, {50001}, 3}},
      {DType::F16, {50001}, 0}, {{"fn", "gelu"}}, [&](const auto &in, int64_t i) {
        return in[2][i] * gelu.derivative(in[0][i], in[1][i]);
      });
}

/// a op b, with b one row that repeats (or, with `column`, one value a row).
Reference binaryReference(float (*op)(float, float), int64_t width, bool column = false) {
  return [=](const auto &in, int64_t i) {
    return op(in[0][i], in[1][column ? i / width : i % width]);
  };
}

TEST(MixedFloatKernels, BinaryOfOneShapeAndWithARepeatedRow) {
  auto sub = [](float a, float b) { return a - b; };
  auto add = [](float a, float b) { return a + b; };
  auto div = [](float a, float b) { return a / b; };
  auto mul = [](float a, float b) { return a * b; };
  // Same shapes, one operand read rounded to f16 (a fused weight cast).
  expectSameAsOnF32(rt::Kernel::Sub, {{DType::F16, {41, 1000}, 1}, {DType::F32, {41, 1000}, 2}},
                    {DType::BF16, {41, 1000}, 0}, {{"round_inputs", {"", "f16"}}},
                    binaryReference(sub, 41 * 1000));
  // A bias row longer than a chunk, not dividing one, read rounded to f16.
  expectSameAsOnF32(rt::Kernel::Add, {{DType::F16, {37, 3001}, 1}, {DType::F32, {3001}, 2}},
                    {DType::F16, {37, 3001}, 0}, {{"round_inputs", {"", "f16"}}},
                    binaryReference(add, 3001));
  // A row with leading ones, shorter than a chunk and not dividing it.
  expectSameAsOnF32(rt::Kernel::Div,
                    {{DType::BF16, {2, 40, 999}, 1}, {DType::F16, {1, 1, 999}, 2}},
                    {DType::F32, {2, 40, 999}, 0}, rt::Json::object(), binaryReference(div, 999));
  // A column broadcast is the general loop's.
  expectSameAsOnF32(rt::Kernel::Mul, {{DType::F16, {300, 130}, 1}, {DType::F16, {300, 1}, 2}},
                    {DType::F16, {300, 130}, 0}, rt::Json::object(), binaryReference(mul, 130, true));
}

TEST(MixedFloatKernels, SoftmaxAndItsBackwardByRows) {
  expectSameAsOnF32(rt::Kernel::Softmax, {{DType::F16, {300, 129}, 1}}, {DType::F16, {300, 129}, 0},
                    {{"axis", -1}});
  expectSameAsOnF32(rt::Kernel::LogSoftmax, {{DType::BF16, {300, 129}, 1}},
                    {DType::F16, {300, 129}, 0}, {{"axis", -1}});
  expectSameAsOnF32(rt::Kernel::SoftmaxBackward,
                    {{DType::F16, {300, 129}, 1}, {DType::F32, {300, 129}, 2}},
                    {DType::F16, {300, 129}, 0}, {{"axis", -1}});
  expectSameAsOnF32(rt::Kernel::SoftmaxBackward,
                    {{DType::F16, {300, 129}, 1}, {DType::BF16, {300, 129}, 2}},
                    {DType::BF16, {300, 129}, 0}, {{"axis", -1}, {"log", true}});
}

/// A row's mean and 1/sqrt(variance + 1e-5), each sum one f64 loop in
/// element order (layer norm's documented arithmetic).
std::pair<double, double> meanAndInverse(const float *row, int64_t width) {
  double mean = 0, var = 0;
  for (int64_t k = 0; k < width; ++k)
    mean += row[k];
  mean /= width;
  for (int64_t k = 0; k < width; ++k)
    var += (row[k] - mean) * (row[k] - mean);
  var /= width;
  return {mean, 1.0 / std::sqrt(var + 1e-5)};
}

TEST(MixedFloatKernels, LayerNormBackwardSumsEachColumnInRowOrder) {
  const int64_t rows = 257, width = 300; // column blocks of 64 and a remainder
  rt::Plan plan;
  auto buffer = [&](const char *name, rt::BufferKind kind, std::vector<int64_t> shape) {
    return test::addBuffer(plan, name, kind, DType::F32, shape);
  };
  int x = buffer("x", rt::BufferKind::Input, {rows, width});
  int dy = buffer("dy", rt::BufferKind::Input, {rows, width});
  int scale = buffer("scale", rt::BufferKind::Input, {width});
  int dx = buffer("dx", rt::BufferKind::Temp, {rows, width});
  int dscale = buffer("dscale", rt::BufferKind::Temp, {width});
  int dbias = buffer("dbias", rt::BufferKind::Temp, {width});
  plan.inputs = {x, dy, scale};
  plan.outputs = {dx, dscale, dbias};
  plan.steps.push_back({"ln_backward", rt::Kernel::LayerNormBackward, {x, dy, scale},
                        {dx, dscale, dbias}, {{"axis", -1}, {"epsilon", 1e-5}}});
  rt::planMemory(plan);
  rt::Executor ex(plan);
  std::vector<float> xs(rows * width), dys(rows * width), ss(width);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float &v : xs)
    v = normal(rng) + 5.0f;
  for (float &v : dys)
    v = normal(rng);
  for (float &v : ss)
    v = normal(rng);
  // Gradients whose sum in double depends on the order: 1 + 2^60 - 2^60.
  for (int64_t k = 0; k < width; ++k) {
    dys[k] = 1.0f;
    dys[width + k] = 0x1p60f;
    dys[2 * width + k] = -0x1p60f;
  }
  ex.writeF32(x, xs);
  ex.writeF32(dy, dys);
  ex.writeF32(scale, ss);
  ex.run();

  // One loop over the rows, accumulating all three as the kernel documents.
  std::vector<float> wantDx(rows * width);
  std::vector<double> wantScale(width, 0.0), wantBias(width, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = &xs[r * width], *dyr = &dys[r * width];
    auto [mean, inv] = meanAndInverse(xr, width);
    double sumD = 0, sumDX = 0;
    for (int64_t k = 0; k < width; ++k) {
      double xhat = (xr[k] - mean) * inv, d = dyr[k];
      sumD += d * double(ss[k]);
      sumDX += d * double(ss[k]) * xhat;
      wantScale[k] += d * xhat;
      wantBias[k] += d;
    }
    for (int64_t k = 0; k < width; ++k) {
      double xhat = (xr[k] - mean) * inv;
      wantDx[r * width + k] =
          float(inv * (dyr[k] * double(ss[k]) - sumD / width - xhat * sumDX / width));
    }
  }
  std::vector<float> gotDx = ex.readF32(dx), gotScale = ex.readF32(dscale),
                     gotBias = ex.readF32(dbias);
  for (int64_t i = 0; i < rows * width; ++i)
    ASSERT_EQ(gotDx[i], wantDx[i]) << "dx " << i;
  for (int64_t k = 0; k < width; ++k) {
    EXPECT_EQ(gotScale[k], float(wantScale[k])) << "dscale " << k;
    EXPECT_EQ(gotBias[k], float(wantBias[k])) << "dbias " << k;
  }
}

TEST(MixedFloatKernels, LayerNormRowsInGroupsGetTheBitsOfTheirOwnLoops) {
  const int64_t rows = 7, width = 300; // a group of four and a partial one
  rt::Plan plan;
  int x = test::addBuffer(plan, "x", rt::BufferKind::Input, DType::F32, {rows, width});
  int scale = test::addBuffer(plan, "scale", rt::BufferKind::Input, DType::F32, {width});
  int bias = test::addBuffer(plan, "bias", rt::BufferKind::Input, DType::F32, {width});
  int y = test::addBuffer(plan, "y", rt::BufferKind::Temp, DType::F32, {rows, width});
  plan.inputs = {x, scale, bias};
  plan.outputs = {y};
  plan.steps.push_back(
      {"ln", rt::Kernel::LayerNorm, {x, scale, bias}, {y}, {{"axis", -1}, {"epsilon", 1e-5}}});
  rt::planMemory(plan);
  rt::Executor ex(plan);
  std::vector<float> xs(rows * width), ss(width), bs(width);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (float &v : xs)
    v = normal(rng) + 1000.0f; // a large mean: the sums' order shows
  xs[0] = 0x1p40f;
  xs[1] = -0x1p40f;
  for (float &v : ss)
    v = normal(rng);
  for (float &v : bs)
    v = normal(rng);
  ex.writeF32(x, xs);
  ex.writeF32(scale, ss);
  ex.writeF32(bias, bs);
  ex.run();
  std::vector<float> got = ex.readF32(y);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = &xs[r * width];
    auto [mean, inv] = meanAndInverse(row, width);
    for (int64_t i = 0; i < width; ++i)
      ASSERT_EQ(got[r * width + i], float((row[i] - mean) * inv * ss[i] + bs[i]))
          << "row " << r << ", element " << i;
  }
}

} // namespace

TEST(MixedFloatKernels, DropoutInChunksDropsTheStreamsElements) {
  // f16 in and out past the parallel grain: element i is the stream's i,
  // whichever chunk and thread it falls in.
  const int64_t n = 70001;
  const double rate = 0.3;
  rt::Plan plan;
  int x = test::addBuffer(plan, "x", rt::BufferKind::Input, DType::F16, {n});
  int y = test::addBuffer(plan, "y", rt::BufferKind::Temp, DType::F16, {n});
  plan.inputs = {x};
  plan.outputs = {y};
  plan.steps.push_back({"drop", rt::Kernel::Dropout, {x}, {y}, {{"rate", rate}, {"seed", 5}}});
  rt::planMemory(plan);
  rt::Executor ex(plan, {/*training=*/true, /*seed=*/11});
  std::vector<double> xs = valuesFor({DType::F16, {n}, 3});
  test::setValues(ex, "x", xs);
  ex.run();
  std::vector<float> got = ex.readF32(y), read = ex.readF32(x);
  uint64_t stream = num::dropoutStream(11, 5, 0);
  float keep = 1.0f / float(1.0 - rate);
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::byte narrow[2];
    rt::storeElement(narrow, DType::F16, 0, num::dropoutAt(read[i], stream, i, rate, keep));
    ASSERT_EQ(got[i], (float)rt::loadElement(narrow, DType::F16, 0)) << "element " << i;
    dropped += got[i] == 0.0f;
  }
  EXPECT_NEAR(double(dropped) / n, rate, 0.01);
}
