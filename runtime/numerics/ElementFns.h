// The element functions of the elementwise kernels by identifier: the
// binary ops (their NaN rules included) and the unary functors of
// Activations.h, with one dispatch from identifier to functor. The CPU and
// CUDA kernels and the elementwise chains all compute through it, and the
// kernel traits name each elementwise kernel's function
// (runtime/core/KernelTraits.h), so no kernel picks its math by name.
// Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_ELEMENTFNS_H
#define AMPC_RUNTIME_NUMERICS_ELEMENTFNS_H

#include "runtime/numerics/Activations.h"

namespace ampc::num {

enum class BinaryFn : uint8_t { Add, Sub, Mul, Div, Maximum, Minimum };

enum class UnaryFn : uint8_t {
  Neg, Abs, Relu, Tanh, Sigmoid, Erf, Gelu, GeluTanh, Exp, Log, Sqrt, Rsqrt, Square,
  Pow,   // p0: the exponent
  Scale, // p0 * x + p1
  Sin, Cos,
};

/// a op b, in f32 or in the integer types of the integer kernels.
/// maximum and minimum let a NaN win, either side (numpy's maximum).
template <BinaryFn Fn> struct Binary {
  static constexpr BinaryFn kFn = Fn;
  template <typename T> AMPC_HD T operator()(T a, T b) const {
    if constexpr (Fn == BinaryFn::Add)
      return a + b;
    else if constexpr (Fn == BinaryFn::Sub)
      return a - b;
    else if constexpr (Fn == BinaryFn::Mul)
      return a * b;
    else if constexpr (Fn == BinaryFn::Div)
      return a / b;
    else if constexpr (Fn == BinaryFn::Maximum)
      return a > b || a != a ? a : b;
    else
      return a < b || a != a ? a : b;
  }
};

/// f(Binary<fn>{}): a kernel's loop compiled once per function, chosen at
/// run time.
AMPC_HD_DISPATCH template <typename F> AMPC_HD auto withBinary(BinaryFn fn, F f) {
  switch (fn) {
  case BinaryFn::Add: return f(Binary<BinaryFn::Add>{});
  case BinaryFn::Sub: return f(Binary<BinaryFn::Sub>{});
  case BinaryFn::Mul: return f(Binary<BinaryFn::Mul>{});
  case BinaryFn::Div: return f(Binary<BinaryFn::Div>{});
  case BinaryFn::Maximum: return f(Binary<BinaryFn::Maximum>{});
  default: return f(Binary<BinaryFn::Minimum>{});
  }
}

/// f(functor) for the functor of `fn` (Activations.h), p0 and p1 its
/// parameters.
AMPC_HD_DISPATCH template <typename F>
AMPC_HD auto withUnary(UnaryFn fn, float p0, float p1, F f) {
  switch (fn) {
  case UnaryFn::Neg: return f(Neg{});
  case UnaryFn::Abs: return f(Abs{});
  case UnaryFn::Relu: return f(Relu{});
  case UnaryFn::Tanh: return f(Tanh{});
  case UnaryFn::Sigmoid: return f(Sigmoid{});
  case UnaryFn::Erf: return f(Erf{});
  case UnaryFn::Gelu: return f(Gelu{});
  case UnaryFn::GeluTanh: return f(GeluTanh{});
  case UnaryFn::Exp: return f(Exp{});
  case UnaryFn::Log: return f(Log{});
  case UnaryFn::Sqrt: return f(Sqrt{});
  case UnaryFn::Rsqrt: return f(Rsqrt{});
  case UnaryFn::Square: return f(Square{});
  case UnaryFn::Pow: return f(Pow{p0});
  case UnaryFn::Sin: return f(Sin{});
  case UnaryFn::Cos: return f(Cos{});
  default: return f(Scale{p0, p1});
  }
}

} // namespace ampc::num

#endif
