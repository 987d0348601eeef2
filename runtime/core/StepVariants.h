// The variants that fusions add to a kernel's contract, as typed data
// decoded in one place (docs/runtime.md, "Kernel variants"): an optional
// operand, an activation, a dtype a sum is rounded to, a copy an update
// rewrites. The signature checks, both backends and the backend check read
// these structs; the plan passes that make a variant write the attributes
// named here. None of them reads an attribute name of its own.
#ifndef AMPC_RUNTIME_CORE_STEPVARIANTS_H
#define AMPC_RUNTIME_CORE_STEPVARIANTS_H

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/core/Convert.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/numerics/ElementFns.h"
#include "runtime/numerics/LrSchedule.h"

namespace ampc::rt {

/// The attributes that spell the variants in a plan.
namespace attr {
/// none, relu or gelu_tanh: a GEMM epilogue's or a batch norm's.
constexpr const char *kActivation = "activation";
/// An optimizer update also rewrites the param's low-precision copy, its
/// last input (docs/runtime.md, "Weight copies").
constexpr const char *kWritesCopy = "writes_copy";
/// layer_norm_backward's fourth input: dy is input 1 plus it, rounded to
/// this dtype as the add stored the sum (docs/runtime.md, "Residual
/// gradients").
constexpr const char *kDyDtype = "dy_dtype";
} // namespace attr

/// The activation a GEMM epilogue or a batch norm applies.
enum class Activation : uint8_t { None, Relu, GeluTanh };

/// "none", "relu" or "gelu_tanh".
const char *activationName(Activation a);

// Each decoder below validates the variant it reads and throws PlanError
// naming the step and its kernel where the step spells none its kernel has.

/// matmul_bias: y = act(a·b + bias), and with a second result what act's
/// backward reads (relu: a bit mask of y > 0; tanh GELU: its input).
/// matmul_act_grad: dz = act'(aux) · (a·b), aux its third input.
struct GemmEpilogue {
  Activation activation = Activation::None;
  /// matmul_bias keeps act's aux as its second result.
  bool keepsAux = false;
  /// The aux is a relu mask (bits, not values).
  bool reluMask() const { return keepsAux && activation == Activation::Relu; }
};
GemmEpilogue gemmEpilogueOf(const Step &step, const StepAttrs &attrs);

/// A relu fused into a batch norm (docs/runtime.md, "Batch norm
/// activations"). batch_norm: y = relu(bn(x) + residual), `operand` the
/// residual's input (5) or -1 without one; batch_norm_backward: dy is
/// masked where the relu's result, input `operand` (3), is not positive.
struct NormRelu {
  bool relu = false;
  int operand = -1;
};
NormRelu normReluOf(const Step &step, const StepAttrs &attrs);

/// layer_norm_backward's dy as the sum of input 1 and input `operand` (3),
/// rounded to `dtype`; `operand` -1: dy is input 1.
struct DyAddend {
  int operand = -1;
  DType dtype = DType::F32;
};
DyAddend dyAddendOf(const Step &step, const StepAttrs &attrs);

/// An optimizer update's operands (sgd, momentum, adam, lamb, lion, rmsprop,
/// adagrad): param, grad, lr, found_inf, its f32 moments, adam's and lamb's
/// step count, an optional grad_scale (the gradient is divided by it first)
/// and an optional low-precision copy of the param that the update
/// rewrites. rmsprop's moments are v, then the momentum buffer where
/// `momentum` is above 0, then the gradient's average where `centered`.
/// -1: absent.
struct UpdateOperands {
  static constexpr int param = 0, grad = 1, lr = 2, foundInf = 3, firstMoment = 4;
  int moments = 0;
  int stepCount = -1, gradScale = -1, copy = -1;
  int momentumBuffer = -1, gradAverage = -1; // rmsprop's optional states
  /// The operands before the optional ones.
  int required() const { return firstMoment + moments + (stepCount >= 0 ? 1 : 0); }
};
UpdateOperands updateOperandsOf(const Step &step, const StepAttrs &attrs);

/// An optimizer update's settings (sgd, momentum, adam, lamb, lion, rmsprop,
/// adagrad), as PyTorch's optimizers take them: weight decay is L2 (added
/// to the gradient) but for a decoupled Adam (AdamW), LAMB and Lion;
/// momentum may be Nesterov's; LAMB scales a tensor's step by its trust
/// ratio where `adapt`; RMSprop averages the squares with `alpha`, and may
/// be `centered` and take momentum (0 by default).
struct UpdateConfig {
  double weightDecay = 0;
  bool decoupled = false;
  double momentum = 0.9;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  bool adapt = true;
  double alpha = 0.99;
  bool centered = false;
};
UpdateConfig updateConfigOf(const Step &step, const StepAttrs &attrs);

/// attention's and attention_backward's optional inputs after q, k, v (and
/// y, dy), in this order: the additive bias; the backward's saved
/// log-sum-exp (attribute `saved_lse`, attention-lse); the run counter,
/// which a step with `dropout` reads last. -1: absent.
struct AttentionOperands {
  double dropout = 0;
  int bias = -1, lse = -1, counter = -1;
};
AttentionOperands attentionOperandsOf(const Step &step, const StepAttrs &attrs);

/// record_step's optional inputs (runtime/core/History.h): their indices,
/// -1 where absent.
struct HistoryOperands {
  int lossScale = -1, gradNorm = -1;
};
HistoryOperands historyOperandsOf(const Step &step, const StepAttrs &attrs);

/// An lr_schedule step's schedule (attribute `kind` and its settings).
num::LrSchedule lrScheduleOf(const Step &step, const StepAttrs &attrs);

/// The element function of a binary elementwise kernel (add ... minimum),
/// or nullopt for any other kernel.
std::optional<num::BinaryFn> binaryFnOf(Kernel kernel);
inline bool isBinaryKernel(Kernel kernel) { return binaryFnOf(kernel).has_value(); }

/// A unary element function with its parameters (the exponent of pow; the
/// scale and bias of scale), kept as the plan spells them.
struct UnaryCall {
  num::UnaryFn fn = num::UnaryFn::Neg;
  double p0 = 0, p1 = 0;
};
/// f(the functor of `call`), its parameters narrowed to f32 as the kernels
/// compute with them.
template <typename F> auto withFunctor(const UnaryCall &call, F f) {
  return num::withUnary(call.fn, narrow(call.p0), narrow(call.p1), f);
}
/// Whether `kernel` is a unary elementwise kernel (neg ... scale: one
/// operand, one element function; gelu's `approximate` picks its form).
bool isUnaryKernel(Kernel kernel);
/// The function a unary kernel computes, or whose derivative
/// unary_backward computes (its `fn`); PlanError naming the step for an
/// unknown `fn`.
UnaryCall unaryCallOf(const Step &step, const StepAttrs &attrs);

/// Element functions by the names plans spell them in (unary_backward's
/// `fn`, an elementwise chain's ops), and back.
std::optional<num::UnaryFn> unaryFnNamed(std::string_view name);
const char *unaryFnName(num::UnaryFn fn);
std::optional<num::BinaryFn> binaryFnNamed(std::string_view name);
const char *binaryFnName(num::BinaryFn fn);

/// minmax_backward's side: the gradient goes to the larger operand
/// (attribute `fn` "max", the default) or the smaller ("min").
bool minmaxTakesMax(const StepAttrs &attrs);

} // namespace ampc::rt

#endif
