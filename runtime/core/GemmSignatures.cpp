// Kernel signatures of the GEMM kernels (KernelSignatures.h): matmul, and
// the fused epilogues matmul_bias, matmul_act_grad and matmul_bias_grad
// (docs/runtime.md, "GEMM epilogues").
#include "runtime/core/ReluMask.h"
#include "runtime/core/SignatureUtil.h"

namespace ampc::rt::signature {
namespace {

void requireFloat(const StepView &s, const Buffer &b) {
  s.require(isFloat(b.dtype), "'" + b.name + "' must be a float tensor");
}

/// y = a · b (transposed as the attributes say, batches broadcast).
void matmulShapes(const StepView &s, const Buffer &a, const Buffer &b, const Buffer &y) {
  s.require(a.shape.size() >= 2 && b.shape.size() >= 2, "matmul takes operands of rank 2 or more");
  bool ta = s.attrs.getBool("transpose_a", false), tb = s.attrs.getBool("transpose_b", false);
  const Shape &as = a.shape, &bs = b.shape;
  int64_t m = ta ? as.end()[-1] : as.end()[-2], k = ta ? as.end()[-2] : as.end()[-1];
  int64_t kb = tb ? bs.end()[-1] : bs.end()[-2], n = tb ? bs.end()[-2] : bs.end()[-1];
  s.require(k == kb, "contracting dimensions differ: " + shapeText(as) + " x " + shapeText(bs));
  std::optional<Shape> batch =
      broadcastShape(Shape(as.begin(), as.end() - 2), Shape(bs.begin(), bs.end() - 2));
  s.require(batch.has_value(), "batch dimensions do not broadcast");
  batch->push_back(m);
  batch->push_back(n);
  requireShape(s, y, *batch);
}

/// One GEMM whose result's rows are a's rows: b a matrix, a untransposed.
void oneGemm(const StepView &s, const char *kernel) {
  s.require(s.in(1).shape.size() == 2 && !s.attrs.getBool("transpose_a", false),
            std::string(kernel) + " takes a matrix b and an untransposed a");
}

/// What the backward of `act` reads about the forward's result `y`: the
/// relu mask, or the tanh GELU's input (the result's dtype and shape).
void auxOf(const StepView &s, Activation act, const Buffer &aux, const Buffer &y) {
  int64_t cols = y.shape.back(), rows = cols > 0 ? numElements(y.shape) / cols : 0;
  if (act == Activation::Relu) {
    s.require(maskableColumns(cols), "a relu mask needs a multiple of 128 columns");
    s.require(aux.dtype == DType::I32, "the relu mask '" + aux.name + "' must be i32");
    requireShape(s, aux, reluMaskShape(rows, cols));
  } else {
    s.require(aux.dtype == y.dtype, "the GELU input '" + aux.name + "' needs the result's dtype");
    requireShape(s, aux, y.shape);
  }
}

/// The bias gradient: a vector of `y`'s columns.
void biasGradOf(const StepView &s, const Buffer &db, const Buffer &y) {
  requireFloat(s, db);
  requireShape(s, db, {y.shape.back()});
}

} // namespace

void matmul(const StepView &s) {
  requireFloats(s);
  matmulShapes(s, s.in(0), s.in(1), s.out(0));
}

void fp8Quantize(const StepView &s) {
  const Buffer &x = s.in(0), &scale = s.in(1), &y = s.out(0), &amax = s.out(1);
  s.require(isFloat(x.dtype), "the value must be a float tensor");
  s.require(scale.dtype == DType::F32 && isScalar(scale), "the scale must be an f32 scalar");
  s.require(isFp8(y.dtype) && y.shape == x.shape, "the result is the value's shape in FP8");
  s.require(amax.dtype == DType::F32 && isScalar(amax), "the amax must be an f32 scalar");
}

void fp8Matmul(const StepView &s) {
  const Buffer &a = s.in(0), &b = s.in(1), &y = s.out(0);
  s.require(isFp8(a.dtype) && isFp8(b.dtype), "the operands must be FP8");
  s.require(!(a.dtype == DType::F8E5M2 && b.dtype == DType::F8E5M2),
            "at most one operand may be f8e5m2");
  for (size_t i : {2, 3})
    s.require(s.in(i).dtype == DType::F32 && isScalar(s.in(i)),
              "the scale inverses must be f32 scalars");
  s.require(isFloat(y.dtype) && y.dtype != DType::F64, "the result must be f32, f16 or bf16");
  matmulShapes(s, a, b, y);
}

/// a [.., K] · b [K, N] + bias [N], then `activation`; a second result keeps
/// what the activation's backward reads (relu mask or GELU input).
void matmulBias(const StepView &s) {
  const Buffer &bias = s.in(2), &y = s.out(0);
  for (size_t i = 0; i < 3; ++i)
    requireFloat(s, s.in(i));
  requireFloat(s, y);
  matmulShapes(s, s.in(0), s.in(1), y);
  oneGemm(s, "matmul_bias");
  s.require(bias.shape == Shape{y.shape.back()} &&
                (bias.dtype == y.dtype || s.attrs.roundedInput(2) == y.dtype),
            "the bias is a vector of the result's columns, in its dtype (or read rounded to it)");
  GemmEpilogue e = gemmEpilogueOf(s.step, s.attrs);
  if (e.keepsAux)
    auxOf(s, e.activation, s.out(1), y);
}

/// dz = act'(aux) · (a · b), and its column sums (the bias gradient).
void matmulActGrad(const StepView &s) {
  const Buffer &dz = s.out(0);
  for (const Buffer *b : {&s.in(0), &s.in(1), &dz})
    requireFloat(s, *b);
  matmulShapes(s, s.in(0), s.in(1), dz);
  oneGemm(s, "matmul_act_grad");
  auxOf(s, gemmEpilogueOf(s.step, s.attrs).activation, s.in(2), dz);
  biasGradOf(s, s.out(1), dz);
}

/// c = aᵀ · b (a weight gradient), and b's column sums (the bias gradient).
void matmulBiasGrad(const StepView &s) {
  requireFloats(s);
  const Buffer &a = s.in(0), &b = s.in(1);
  matmulShapes(s, a, b, s.out(0));
  s.require(a.shape.size() == 2 && b.shape.size() == 2 && s.attrs.getBool("transpose_a", false) &&
                !s.attrs.getBool("transpose_b", false),
            "matmul_bias_grad takes matrices, a transposed");
  biasGradOf(s, s.out(1), b);
}

} // namespace ampc::rt::signature
