// Helpers of the kernel signature checks (KernelSignatures.h).
#ifndef AMPC_RUNTIME_CORE_SIGNATUREUTIL_H
#define AMPC_RUNTIME_CORE_SIGNATUREUTIL_H

#include <optional>
#include <string>
#include <vector>

#include "runtime/core/KernelSignatures.h"
#include "runtime/core/StepVariants.h"

namespace ampc::rt::signature {

using Shape = std::vector<int64_t>;

std::string shapeText(const Shape &shape);
inline bool isIndex(const Buffer &b) { return b.dtype == DType::I32 || b.dtype == DType::I64; }
inline bool isScalar(const Buffer &b) { return numElements(b.shape) == 1; }
inline bool isFlag(const Buffer &b) { return b.dtype == DType::I1 && isScalar(b); }
inline bool isFloatScalar(const Buffer &b) { return isFloat(b.dtype) && isScalar(b); }

/// Every input and output is a float tensor.
void requireFloats(const StepView &s);
/// `b` has `shape`; `what` names it in the message.
void requireShape(const StepView &s, const Buffer &b, const Shape &shape);
/// Two buffers hold the same number of elements.
void requireSameSize(const StepView &s, const Buffer &a, const Buffer &b);
/// numpy broadcasting of two shapes, or nullopt.
std::optional<Shape> broadcastShape(const Shape &a, const Shape &b);
/// A possibly negative axis of a `rank`-dimensional tensor, checked.
int64_t axisOf(const StepView &s, int64_t axis, int64_t rank);
/// An integer list attribute of `count` values, each at least `least`.
Shape intsAttr(const StepView &s, const char *name, Shape dflt, size_t count, int64_t least);
/// `padding` ([h, w] or [top, bottom, left, right]) as four values.
Shape padsAttr(const StepView &s);
/// The layout attribute: true for NHWC; NCHW gives false; anything else fails.
bool nhwcAttr(const StepView &s);

} // namespace ampc::rt::signature

#endif
