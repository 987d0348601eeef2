// The CPU's element kernels run a copy compiled for the processor's widest
// vectors (AMPC_VECTOR_CLONES: AVX-512, AVX2 or the baseline); each must give
// the bits of the shared functor evaluated one element at a time here (this
// file is built for the baseline), forward and backward, threads and tails
// included, so that the reference does not depend on the machine; and
// bias gradients (reduce_to, its column sums vectorised and on the threads)
// keep the f64 sums in the order of the elements.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "compiler/Lowering.h"
#include "runtime/numerics/Activations.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

/// Normal values at several scales, then the edges: zeros, infinities, NaN,
/// subnormals, the largest finite values and the tails' clamps.
std::vector<float> inputs(int64_t n) {
  std::vector<float> x(n);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  for (int64_t i = 0; i < n; ++i)
    x[i] = normal(rng) * std::ldexp(1.0f, int(i % 9) - 4); // sigma 1/16 to 16
  const float inf = std::numeric_limits<float>::infinity();
  const float edges[] = {0.0f, -0.0f, inf, -inf, std::nanf(""), 1e-40f, -1e-40f,
                         3.4e38f, -3.4e38f, 16.0f, -16.0f, 13.2f, -13.2f, 0.5f, -0.5f,
                         0.70710678f, -0.70710678f, 87.3f, -87.3f, -88.5f};
  for (size_t k = 0; k < std::size(edges); ++k)
    x[k * 997] = edges[k];
  return x;
}

bool sameBits(float a, float b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

template <typename F>
void expectBitForBit(const char *what, F f, const std::vector<float> &x,
                     const std::vector<float> &r, const std::vector<float> &y,
                     const std::vector<float> &dx) {
  int failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    float value = f.value(x[i]), gradient = r[i] * f.derivative(x[i], value);
    if (sameBits(y[i], value) && sameBits(dx[i], gradient))
      continue;
    if (++failures <= 3)
      ADD_FAILURE() << what << " at x = " << x[i] << ": kernel " << y[i] << ", " << dx[i]
                    << "; functor " << value << ", " << gradient;
  }
  EXPECT_EQ(failures, 0) << what;
}

TEST(ElementClones, UnaryKernelsAndTheirBackwardGiveTheScalarFunctorsBits) {
  // Past the parallel grain, and not a multiple of any vector or chunk.
  const int64_t n = 70001;
  const char *ops[] = {"gelu", "gelu_tanh", "erf", "sigmoid", "tanh"};
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "clones");
  Tensor loss;
  std::vector<float> r = test::updatePattern(n, 1.0f, 3);
  for (const char *op : ops) {
    Tensor x = b.param(std::string("x_") + op, {n}, Init::zeros());
    std::string name = op;
    Tensor y = name == "gelu"        ? b.gelu(x, false, name)
               : name == "gelu_tanh" ? b.gelu(x, true, name)
                                     : b.unary(op, x, name);
    b.output(y);
    Tensor weighted = b.reduceSum(
        b.mul(y, b.constValue(std::string("r_") + op, {n}, std::vector<double>(r.begin(), r.end()))));
    loss = loss ? b.add(loss, weighted) : weighted;
  }
  b.setLoss(loss);
  auto module = b.finish();
  test::differentiateWithGradOutputs(*module);
  rt::Plan plan = lowerToPlan(*module);
  rt::Executor ex(plan, {/*training=*/true, /*seed=*/7});
  std::vector<float> x = inputs(n);
  for (const char *op : ops)
    ex.writeF32(ex.id(std::string("x_") + op), x);
  ex.run();
  auto results = [&](const char *op) {
    return std::make_pair(ex.readF32(ex.id(op)), ex.readF32(ex.id(std::string("x_") + op + ".grad")));
  };
  auto [gelu, dGelu] = results("gelu");
  expectBitForBit("gelu", num::Gelu{}, x, r, gelu, dGelu);
  auto [geluTanh, dGeluTanh] = results("gelu_tanh");
  expectBitForBit("gelu_tanh", num::GeluTanh{}, x, r, geluTanh, dGeluTanh);
  auto [erf, dErf] = results("erf");
  expectBitForBit("erf", num::Erf{}, x, r, erf, dErf);
  auto [sigmoid, dSigmoid] = results("sigmoid");
  expectBitForBit("sigmoid", num::Sigmoid{}, x, r, sigmoid, dSigmoid);
  auto [tanh, dTanh] = results("tanh");
  expectBitForBit("tanh", num::Tanh{}, x, r, tanh, dTanh);
}

/// d(sum(R * (x + b)))/db for a bias b of x's trailing dims (or those with
/// leading 1s): reduce_to of R onto b's shape, which must be each element's
/// f64 sum in the order of R's elements, rounded once.
void expectBiasGradientSums(const std::vector<int64_t> &shape,
                            const std::vector<int64_t> &biasShape) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "bias");
  int64_t n = 1, width = 1;
  for (int64_t d : shape)
    n *= d;
  for (int64_t d : biasShape)
    width *= d;
  std::vector<float> r = test::updatePattern(n, 3.0f, 1);
  Tensor bias = b.param("bias", biasShape, Init::zeros());
  Tensor y = b.add(b.input("x", shape), bias);
  b.setLoss(b.reduceSum(b.mul(y, b.constValue("r", shape, std::vector<double>(r.begin(), r.end())))));
  auto module = b.finish();
  test::differentiateWithGradOutputs(*module);
  rt::Plan plan = lowerToPlan(*module);
  rt::Executor ex(plan, {/*training=*/true, /*seed=*/7});
  ex.writeF32(ex.id("x"), std::vector<float>(n, 1.0f));
  ex.run();
  std::vector<float> got = ex.readF32(ex.id("bias.grad"));
  // The bias is x's trailing dims: element i of R adds to element i % width.
  std::vector<double> want(width, 0.0);
  for (int64_t i = 0; i < n; ++i)
    want[i % width] += r[i];
  ASSERT_EQ(got.size(), want.size());
  for (int64_t j = 0; j < width; ++j)
    ASSERT_EQ(got[j], float(want[j])) << "bias element " << j;
}

TEST(ElementClones, BiasGradientsSumEachColumnInRowOrderInDouble) {
  expectBiasGradientSums({3, 37, 1000}, {1000});   // column blocks and a tail
  expectBiasGradientSums({3, 37, 1000}, {37, 1000}); // two trailing dims
  expectBiasGradientSums({5, 7, 3}, {1, 7, 3});    // a leading 1
  expectBiasGradientSums({2, 300, 130}, {130});    // past the parallel grain
}

} // namespace

TEST(ElementClones, SoftmaxRowsGiveTheBaselinesBits) {
  // Rows longer than any vector and not a multiple of one, the edges among
  // them (a row with an infinity, one with NaN).
  const int64_t rows = 70, width = 1001;
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "softmax");
  b.output(b.softmax(b.input("x", {rows, width}), -1, "y"));
  auto module = b.finish();
  rt::Plan plan = lowerToPlan(*module);
  rt::Executor ex(plan);
  std::vector<float> x = inputs(rows * width);
  ex.writeF32(ex.id("x"), x);
  ex.run();
  std::vector<float> got = ex.readF32(ex.id("y"));
  // The kernel's arithmetic one element at a time (this file is built for
  // the baseline), the sum in the baseline's lanes as the kernel sums.
  int failures = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = &x[r * width];
    float max = row[0];
    for (int64_t k = 1; k < width; ++k)
      max = row[k] > max ? row[k] : max;
    std::vector<float> e(width);
    for (int64_t k = 0; k < width; ++k)
      e[k] = num::vectorExp(row[k] - max);
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t k = 0; k < width; ++k)
      sum += e[k];
    float inverse = float(1.0 / sum);
    for (int64_t k = 0; k < width; ++k)
      if (!sameBits(got[r * width + k], e[k] * inverse) && ++failures <= 3)
        ADD_FAILURE() << "row " << r << ", element " << k << ": " << got[r * width + k]
                      << ", one at a time " << e[k] * inverse;
  }
  EXPECT_EQ(failures, 0);
}
