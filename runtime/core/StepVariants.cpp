#include "runtime/core/StepVariants.h"

#include <algorithm>
#include <iterator>
#include <string>

#include "runtime/core/History.h"

namespace ampc::rt {

const char *activationName(Activation a) {
  switch (a) {
  case Activation::None: return "none";
  case Activation::Relu: return "relu";
  case Activation::GeluTanh: return "gelu_tanh";
  }
  return "none";
}

namespace {

[[noreturn]] void refuse(const Step &step, const std::string &what) {
  throw PlanError("step '" + step.name + "' (" + kernelName(step.kernel) + "): " + what);
}

/// The step's `activation` (absent: None), one of `allowed`, else refused
/// with `choices`, the names allowed.
Activation activationOf(const Step &step, const StepAttrs &attrs,
                        std::initializer_list<Activation> allowed, const char *choices) {
  std::string name = attrs.getStr(attr::kActivation, "none");
  for (Activation a : allowed)
    if (name == activationName(a))
      return a;
  refuse(step, std::string("activation must be ") + choices);
}

} // namespace

GemmEpilogue gemmEpilogueOf(const Step &step, const StepAttrs &attrs) {
  GemmEpilogue e;
  if (step.kernel == Kernel::MatmulActGrad) {
    e.activation = activationOf(step, attrs, {Activation::Relu, Activation::GeluTanh},
                                "relu or gelu_tanh");
    return e;
  }
  e.activation = activationOf(step, attrs,
                              {Activation::None, Activation::Relu, Activation::GeluTanh},
                              "none, relu or gelu_tanh");
  e.keepsAux = step.kernel == Kernel::MatmulBias && step.outputs.size() == 2;
  if (e.keepsAux && e.activation == Activation::None)
    refuse(step, "only an activation keeps a second result");
  return e;
}

NormRelu normReluOf(const Step &step, const StepAttrs &attrs) {
  NormRelu r;
  r.relu = activationOf(step, attrs, {Activation::None, Activation::Relu}, "none or relu") ==
           Activation::Relu;
  size_t plain = step.kernel == Kernel::BatchNorm ? 5 : 3;
  if (step.inputs.size() > plain)
    r.operand = (int)plain;
  if (r.operand >= 0 && !r.relu)
    refuse(step, "only a relu takes a residual or mask operand");
  if (step.kernel == Kernel::BatchNormBackward && r.relu && r.operand < 0)
    refuse(step, "a relu's backward takes the relu's result");
  return r;
}

DyAddend dyAddendOf(const Step &step, const StepAttrs &attrs) {
  DyAddend d;
  if (step.inputs.size() < 4)
    return d;
  d.operand = 3;
  std::optional<DType> t = parseDType(attrs.getStr(attr::kDyDtype, ""));
  if (!t || !isComputeFloat(*t))
    refuse(step, "dy_dtype must be f32, f16 or bf16");
  d.dtype = *t;
  return d;
}

UpdateOperands updateOperandsOf(const Step &step, const StepAttrs &attrs) {
  UpdateOperands u;
  bool adam = step.kernel == Kernel::Adam || step.kernel == Kernel::Lamb;
  bool one = step.kernel == Kernel::Momentum || step.kernel == Kernel::Lion ||
             step.kernel == Kernel::Adagrad || step.kernel == Kernel::Rmsprop;
  u.moments = adam ? 2 : one ? 1 : 0;
  if (step.kernel == Kernel::Rmsprop) {
    if (attrs.getF64("momentum", 0.0) > 0.0)
      u.momentumBuffer = UpdateOperands::firstMoment + u.moments++;
    if (attrs.getBool("centered", false))
      u.gradAverage = UpdateOperands::firstMoment + u.moments++;
  }
  if (adam)
    u.stepCount = UpdateOperands::firstMoment + u.moments;
  int inputs = (int)step.inputs.size(), required = u.required();
  if (attrs.getBool(attr::kWritesCopy, false))
    u.copy = --inputs;
  if (inputs < required || inputs > required + 1)
    refuse(step, "the update has too many or too few operands");
  if (inputs == required + 1)
    u.gradScale = required;
  return u;
}

UpdateConfig updateConfigOf(const Step &step, const StepAttrs &attrs) {
  UpdateConfig c;
  c.weightDecay = attrs.getF64("weight_decay", 0.0);
  c.decoupled = step.kernel == Kernel::Adam && attrs.getBool("decoupled", true);
  c.momentum = attrs.getF64("momentum", step.kernel == Kernel::Rmsprop ? 0.0 : 0.9);
  c.nesterov = attrs.getBool("nesterov", false);
  c.beta1 = attrs.getF64("beta1", 0.9);
  c.beta2 = attrs.getF64("beta2", step.kernel == Kernel::Lion ? 0.99 : 0.999);
  c.epsilon = attrs.getF64("epsilon", step.kernel == Kernel::Lamb      ? 1e-6
                                      : step.kernel == Kernel::Adagrad ? 1e-10
                                                                       : 1e-8);
  c.adapt = attrs.getBool("adapt", true);
  c.alpha = attrs.getF64("alpha", 0.99);
  c.centered = attrs.getBool("centered", false);
  return c;
}

AttentionOperands attentionOperandsOf(const Step &step, const StepAttrs &attrs) {
  AttentionOperands a;
  a.dropout = attrs.getF64("dropout", 0.0);
  if (!(a.dropout >= 0.0 && a.dropout < 1.0))
    refuse(step, "dropout must be in [0, 1)");
  bool backward = step.kernel == Kernel::AttentionBackward;
  int next = backward ? 5 : 3, n = (int)step.inputs.size();
  if (a.dropout > 0) {
    if (n <= next)
      refuse(step, "attention with dropout reads the run counter as its last input");
    a.counter = --n;
  }
  if (backward && attrs.getBool("saved_lse", false)) {
    if (n <= next)
      refuse(step, "saved_lse names a log-sum-exp input it does not have");
    a.lse = --n;
  }
  if (n > next)
    a.bias = next++;
  if (n != next)
    refuse(step, "has " + std::to_string(step.inputs.size()) + " inputs: q, k, v" +
                     (backward ? ", y, dy" : "") + ", an optional bias" +
                     (a.lse >= 0 ? ", the log-sum-exp" : "") +
                     (a.dropout > 0 ? ", the run counter" : "") + " were expected");
  return a;
}

HistoryOperands historyOperandsOf(const Step &step, const StepAttrs &attrs) {
  HistoryOperands h;
  int next = 5;
  for (const std::string &field : attrs.getStrs("fields")) {
    if (field == kFieldLossScale && h.lossScale < 0)
      h.lossScale = next++;
    else if (field == kFieldGradNorm && h.gradNorm < 0)
      h.gradNorm = next++;
    else
      refuse(step, "fields names loss_scale and grad_norm, each once; got '" + field + "'");
  }
  if ((size_t)next != step.inputs.size())
    refuse(step, "fields names " + std::to_string(next - 5) + " inputs after the lr; it has " +
                     std::to_string((int)step.inputs.size() - 5));
  return h;
}

num::LrSchedule lrScheduleOf(const Step &step, const StepAttrs &attrs) {
  std::string name = attrs.getStr("kind", "");
  num::LrSchedule s;
  if (!num::scheduleKindOf(name.c_str(), s.kind))
    refuse(step, std::string("kind must be ") + num::kScheduleList + ", got '" + name + "'");
  s.warmup = (double)attrs.getInt("warmup_steps", 0);
  s.minLr = attrs.getF64("min_lr", 0.0);
  s.stepEvery = (double)attrs.getInt("step_every", 1);
  s.gamma = attrs.getF64("gamma", 0.1);
  s.power = attrs.getF64("power", 1.0);
  s.cycles = (double)attrs.getInt("cycles", 1);
  s.decaySteps = (double)attrs.getInt("decay_steps", 0);
  if (s.warmup < 0 || s.stepEvery < 1 || !(s.minLr >= 0) || !(s.gamma > 0) || !(s.power > 0) ||
      s.cycles < 1 || s.decaySteps < 0)
    refuse(step, "needs warmup_steps >= 0, step_every >= 1, min_lr >= 0, gamma > 0, power > 0, "
                 "cycles >= 1 and decay_steps >= 0");
  return s;
}

namespace {

using num::BinaryFn;
using num::UnaryFn;

constexpr const char *kUnaryNames[] = {"neg",  "abs", "relu", "tanh",  "sigmoid",
                                       "erf",  "gelu", "gelu_tanh", "exp", "log",
                                       "sqrt", "rsqrt", "square", "pow", "scale",
                                       "sin",  "cos"};
constexpr const char *kBinaryNames[] = {"add", "sub", "mul", "div", "maximum", "minimum"};

template <typename Fn, size_t N>
std::optional<Fn> named(const char *const (&names)[N], std::string_view name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<Fn>(i);
  return std::nullopt;
}

} // namespace

const char *unaryFnName(UnaryFn fn) { return kUnaryNames[static_cast<size_t>(fn)]; }
std::optional<UnaryFn> unaryFnNamed(std::string_view name) {
  return named<UnaryFn>(kUnaryNames, name);
}
const char *binaryFnName(BinaryFn fn) { return kBinaryNames[static_cast<size_t>(fn)]; }
std::optional<BinaryFn> binaryFnNamed(std::string_view name) {
  return named<BinaryFn>(kBinaryNames, name);
}

std::optional<BinaryFn> binaryFnOf(Kernel kernel) {
  switch (kernel) {
  case Kernel::Add: return BinaryFn::Add;
  case Kernel::Sub: return BinaryFn::Sub;
  case Kernel::Mul: return BinaryFn::Mul;
  case Kernel::Div: return BinaryFn::Div;
  case Kernel::Maximum: return BinaryFn::Maximum;
  case Kernel::Minimum: return BinaryFn::Minimum;
  default: return std::nullopt;
  }
}

/// The function of a unary kernel, gelu's exact form.
static std::optional<UnaryFn> unaryFnOf(Kernel kernel) {
  switch (kernel) {
  case Kernel::Neg: return UnaryFn::Neg;
  case Kernel::Abs: return UnaryFn::Abs;
  case Kernel::Relu: return UnaryFn::Relu;
  case Kernel::Tanh: return UnaryFn::Tanh;
  case Kernel::Sigmoid: return UnaryFn::Sigmoid;
  case Kernel::Erf: return UnaryFn::Erf;
  case Kernel::Gelu: return UnaryFn::Gelu;
  case Kernel::Exp: return UnaryFn::Exp;
  case Kernel::Log: return UnaryFn::Log;
  case Kernel::Sqrt: return UnaryFn::Sqrt;
  case Kernel::Rsqrt: return UnaryFn::Rsqrt;
  case Kernel::Square: return UnaryFn::Square;
  case Kernel::Pow: return UnaryFn::Pow;
  case Kernel::Scale: return UnaryFn::Scale;
  case Kernel::Sin: return UnaryFn::Sin;
  case Kernel::Cos: return UnaryFn::Cos;
  default: return std::nullopt;
  }
}

bool isUnaryKernel(Kernel kernel) { return unaryFnOf(kernel).has_value(); }

UnaryCall unaryCallOf(const Step &step, const StepAttrs &attrs) {
  UnaryCall call;
  if (step.kernel == Kernel::UnaryBackward) {
    std::string name = attrs.getStr("fn", "");
    std::optional<UnaryFn> fn = unaryFnNamed(name);
    if (!fn || *fn == UnaryFn::Neg || *fn == UnaryFn::Scale) // no op's gradient rule makes them
      refuse(step, "unknown function '" + name + "'");
    call.fn = *fn;
  } else {
    std::optional<UnaryFn> fn = unaryFnOf(step.kernel);
    if (!fn)
      refuse(step, "not a unary kernel");
    call.fn = *fn == UnaryFn::Gelu && attrs.getBool("approximate", false) ? UnaryFn::GeluTanh : *fn;
  }
  if (call.fn == UnaryFn::Pow)
    call.p0 = attrs.getF64("exponent", 1.0);
  if (call.fn == UnaryFn::Scale)
    call.p0 = attrs.getF64("scale", 1.0), call.p1 = attrs.getF64("bias", 0.0);
  return call;
}

bool minmaxTakesMax(const StepAttrs &attrs) { return attrs.getStr("fn", "max") == "max"; }

} // namespace ampc::rt
