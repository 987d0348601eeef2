// An elementwise chain (the `elementwise_chain` kernel, docs/runtime.md): a
// short program of elementwise ops that one kernel evaluates per output
// element, so a chain between two GEMMs reads its operands once and writes
// its result, and the values the backward keeps, in the same pass. The CPU and the CUDA kernels both call evalChain, with the
// functors of Activations.h, so each element is computed alike on both.
// Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_ELEMENTCHAIN_H
#define AMPC_RUNTIME_NUMERICS_ELEMENTCHAIN_H

#include "runtime/numerics/ElementFns.h"
#include "runtime/numerics/Half.h"

namespace ampc::num {

/// Bounds of a chain: its operands, its ops (each one value) and the values
/// it stores (its result, and values that later steps read too).
constexpr int kChainInputs = 8, kChainOps = 16, kChainOutputs = 8;

enum class ChainKind : uint8_t {
  Binary,     // fn: BinaryFn of args 0 and 1
  Value,      // fn: UnaryFn of arg 0
  Derivative, // fn: UnaryFn; arg 2 * f'(arg 0, arg 1) (unary_backward: x, y, dy)
};

/// What an op's value is rounded to before later ops read it: the dtype of
/// the tensor it stood for in the unfused plan.
enum class ChainRound : uint8_t { None, F16, BF16 };

struct ChainOp {
  ChainKind kind;
  uint8_t fn;
  ChainRound round;
  /// Value slots: operand k is slot k, op j's value slot inputs + j; -1 none.
  int8_t arg[3];
  float p0, p1;
};

struct Chain {
  int inputs, ops, outputs;
  ChainOp op[kChainOps];
  /// The slot that output k stores (an op's value).
  int8_t result[kChainOutputs];
};

AMPC_HD float roundChainValue(float v, ChainRound r) {
  if (r == ChainRound::F16)
    return f16ToF32(f32ToF16(v));
  if (r == ChainRound::BF16)
    return bf16ToF32(f32ToBf16(v));
  return v;
}

/// Evaluates the chain for W elements at once: slots[s][w] is slot s of
/// element w; slots[0, c.inputs) hold the operands widened to f32, the ops'
/// values fill the slots after them, and output k stores slots[c.result[k]].
/// Each op is dispatched once for the W elements, which the GPU then
/// computes as W independent instructions (docs/cuda.md, "Elementwise
/// chains"); each element's value is the same as on its own.
template <int W> AMPC_HD void evalChainLanes(const Chain &c, float (*slots)[W]) {
  for (int j = 0; j < c.ops; ++j) {
    const ChainOp &o = c.op[j];
    const float *a = slots[o.arg[0]];
    float *v = slots[c.inputs + j];
    if (o.kind == ChainKind::Binary) {
      const float *b = slots[o.arg[1]];
      withBinary(BinaryFn(o.fn), [a, b, v](auto f) {
        for (int w = 0; w < W; ++w)
          v[w] = f(a[w], b[w]);
      });
    } else if (o.kind == ChainKind::Value) {
      withUnary(UnaryFn(o.fn), o.p0, o.p1, [a, v](auto f) {
        for (int w = 0; w < W; ++w)
          v[w] = f.value(a[w]);
      });
    } else {
      const float *y = slots[o.arg[1]], *dy = slots[o.arg[2]];
      withUnary(UnaryFn(o.fn), o.p0, o.p1, [a, y, dy, v](auto f) {
        for (int w = 0; w < W; ++w)
          v[w] = dy[w] * f.derivative(a[w], y[w]);
      });
    }
    if (o.round != ChainRound::None)
      for (int w = 0; w < W; ++w)
        v[w] = roundChainValue(v[w], o.round);
  }
}

/// The chain for one element: slots[0, c.inputs) hold its operands.
AMPC_HD void evalChain(const Chain &c, float *slots) {
  evalChainLanes<1>(c, reinterpret_cast<float(*)[1]>(slots));
}

} // namespace ampc::num

#endif
