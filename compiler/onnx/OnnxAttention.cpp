// The attention the pattern matcher found (OnnxPatterns.cpp) as one fused
// `attention` op (docs/onnx.md, "Attention"): nanoGPT's causal masked_fill
// as `causal`, an additive mask or fixed bias, or a masked_fill known at
// import, as its `bias`; any other form node by node, as it is.
#include "compiler/onnx/OnnxImporter.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::onnx_import {
namespace {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

/// The fill of a masked_fill Where(c, fill, x) or Where(c, x, fill) known at
/// import, and whether it is the first branch (hiding where c holds).
struct MaskFill {
  const HostTensor *value = nullptr;
  bool first = false;
};
MaskFill maskFillOf(Importer &im, const NodeProto &mask) {
  const HostTensor *first = im.constantInput(mask, 1);
  bool isFirst = first && first->data.size() == 1 && first->data[0] < -65504.0;
  return {isFirst ? first : im.constantInput(mask, 2), isFirst};
}

/// Whether the masked_fill `mask` (Where) hides exactly the keys after each
/// query of a square [.., T, T] score block: nanoGPT's causal mask.
bool isCausalMask(Importer &im, const NodeProto &mask, int64_t queries, int64_t keys) {
  const HostTensor *cond = im.constantInput(mask, 0);
  if (!cond || queries != keys || cond->shape.size() < 2 || cond->shape.size() > 4)
    return false;
  size_t rank = cond->shape.size();
  if (cond->shape[rank - 2] != queries || cond->shape[rank - 1] != keys)
    return false;
  for (size_t d = 0; d + 2 < rank; ++d)
    if (cond->shape[d] != 1)
      return false;
  bool fillFirst = maskFillOf(im, mask).first;
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j)
      if (((cond->data[i * keys + j] != 0) == fillFirst) != (j > i))
        return false;
  return true;
}

/// The shape of the fused op's bias for an additive mask or bias `b` of
/// scores of rank `rank` ([batch, heads, seq_q, seq_k], or [batch·heads,
/// seq_q, seq_k] as heads of 1): numpy's broadcast, each dimension that of
/// the scores (`scores`, in the op's order) or 1; nullopt when it is not.
std::optional<std::vector<int64_t>> biasShape(const std::vector<int64_t> &b, int rank,
                                              const std::vector<int64_t> &scores) {
  if ((int)b.size() > rank)
    return std::nullopt;
  std::vector<int64_t> shape(rank - b.size(), 1);
  shape.insert(shape.end(), b.begin(), b.end());
  if (rank == 3)
    shape.insert(shape.begin() + 1, 1);
  for (int d = 0; d < 4; ++d)
    if (shape[d] != 1 && shape[d] != scores[d])
      return std::nullopt;
  return shape;
}

/// A masked_fill whose condition is known at import as an additive bias of
/// the condition's shape: the fill where it hides a score, else 0 (the
/// fill's exp is 0 either way); nullopt for a condition known only at run
/// time.
std::optional<HostTensor> maskAsBias(Importer &im, const NodeProto &mask) {
  const HostTensor *cond = im.constantInput(mask, 0);
  MaskFill fill = maskFillOf(im, mask);
  if (!cond || !fill.value || fill.value->data.size() != 1)
    return std::nullopt;
  HostTensor bias{"f32", cond->shape, std::vector<double>(cond->data.size())};
  for (size_t e = 0; e < bias.data.size(); ++e)
    bias.data[e] = ((cond->data[e] != 0) == fill.first) ? fill.value->data[0] : 0.0;
  return bias;
}

/// The matched nodes as they are: a mask the fused op does not take.
void replay(Importer &im, const Importer::AttentionMatch &m) {
  for (const NodeProto *node : m.nodes)
    if (!fold(im, *node))
      mappings().at(node->op_type())(im, *node);
}

} // namespace

/// q [N, s, d] (PyTorch's heads folded into the batch) viewed as [N, s, 1, d]
/// by a reshape, or [b, h, s, d] transposed to the fused op's [b, s, h, d];
/// the result back the same way, written as `n`'s output.
void fusedAttention(Importer &im, const NodeProto &n, const Importer::AttentionMatch &m) {
  Tensor q = im.tensor(m.q), k = im.tensor(m.k), v = im.tensor(m.v);
  bool causal = false;
  std::optional<HostTensor> maskBias; // a masked_fill that is not causal
  if (m.mask) {
    causal = q.rank() == m.rank && v.rank() == m.rank &&
             isCausalMask(im, *m.mask, q.dim(-2), v.dim(-2));
    if (!causal && !(maskBias = maskAsBias(im, *m.mask))) // known at run time only
      return replay(im, m);
  }
  std::optional<Tensor> bias = m.bias.empty() ? std::nullopt : std::optional(im.tensor(m.bias));
  std::optional<std::vector<int64_t>> biasDims;
  if (bias || maskBias) {
    if (q.rank() != m.rank || v.rank() != m.rank ||
        // A learned bias (swin's relative positions) needs a gradient the
        // fused op's bias does not have.
        (bias && (!graph::isFloatTensor(bias->value().getType()) || dependsOnParam(bias->value()))))
      return replay(im, m);
    // The scores [batch, heads, seq_q, seq_k] in the fused op's terms.
    std::vector<int64_t> scores = m.rank == 4
                                      ? std::vector<int64_t>{q.dim(0), q.dim(1), q.dim(2), v.dim(2)}
                                      : std::vector<int64_t>{q.dim(0), 1, q.dim(1), v.dim(1)};
    biasDims = biasShape(bias ? std::vector<int64_t>(bias->shape()) : maskBias->shape, m.rank,
                         scores);
    if (!biasDims)
      return replay(im, m);
    if (maskBias)
      bias = im.b.constValue(im.nodeName(*m.mask) + ".bias", maskBias->shape, maskBias->data);
  }
  for (Tensor t : {q, k, v})
    requireRank(im, n, t, m.rank);
  std::vector<int64_t> identity(m.rank);
  for (int d = 0; d < m.rank; ++d)
    identity[d] = d;
  if (m.kPerm != identity) {
    Attrs a;
    a.set("perm", ints(im, m.kPerm));
    k = im.emit(n, "transpose", {k}, a, n.output(0) + ".k_order", "k_order");
  }
  auto toHeads = [&](Tensor t, const char *which) {
    std::string out = n.output(0) + "." + which;
    Attrs a;
    if (m.rank == 3) {
      a.set("shape", ints(im, {t.dim(0), t.dim(1), 1, t.dim(2)}));
      return im.emit(n, "reshape", {t}, a, out, which);
    }
    a.set("perm", ints(im, {0, 2, 1, 3}));
    return im.emit(n, "transpose", {t}, a, out, which);
  };
  Tensor q4 = toHeads(q, "q"), k4 = toHeads(k, "k"), v4 = toHeads(v, "v");
  Attrs a;
  a.set("scale", B(im).getF64FloatAttr(m.scale));
  if (causal)
    a.set("causal", B(im).getBoolAttr(true));
  std::vector<Tensor> operands = {q4, k4, v4};
  if (biasDims) {
    Attrs shape;
    shape.set("shape", ints(im, *biasDims));
    operands.push_back(im.emit(n, "reshape", {*bias}, shape, n.output(0) + ".bias", "bias"));
  }
  Tensor y = im.emit(n, "attention", operands, a, n.output(0) + ".attention", "attention");
  Attrs back;
  if (m.rank == 3) {
    back.set("shape", ints(im, {y.dim(0), y.dim(1), y.dim(3)}));
    im.emit(n, "reshape", {y}, back);
  } else {
    back.set("perm", ints(im, {0, 2, 1, 3}));
    im.emit(n, "transpose", {y}, back);
  }
}


} // namespace ampc::onnx_import
