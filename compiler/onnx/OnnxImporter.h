// The importer's state, shared by the driver (OnnxImport.cpp), the op
// mappings (OnnxOps.cpp) and the import-time evaluation of constants
// (OnnxFold.cpp).
#ifndef AMPC_COMPILER_ONNX_ONNXIMPORTER_H
#define AMPC_COMPILER_ONNX_ONNXIMPORTER_H

#include <functional>
#include <map>
#include <optional>
#include <set>

#include "compiler/GraphBuilder.h"
#include "compiler/onnx/OnnxImport.h"
#include "compiler/onnx/OnnxTensor.h"

namespace ampc::onnx_import {

class Importer;

/// Finds the multi-node forms that import as one op (OnnxPatterns.cpp):
/// fills the importer's `skipped` and `gelus`.
void findPatterns(Importer &im, const onnx::GraphProto &g);
using Mapping = std::function<void(Importer &, const onnx::NodeProto &)>;

/// The ops the importer maps, by ONNX op type.
const std::map<std::string, Mapping> &mappings();
/// Evaluates `node` on the host when all its inputs are known constants and
/// its op is one the importer folds (shape arithmetic); false otherwise.
bool fold(Importer &im, const onnx::NodeProto &node);

class Importer {
public:
  Importer(mlir::MLIRContext &ctx, const std::string &graphName, int64_t opset)
      : b(ctx, graphName), opset(opset) {}

  GraphBuilder b;
  const int64_t opset;

  /// Initializers, by name (made params or consts when first used).
  std::map<std::string, const onnx::TensorProto *> initializers;
  /// Graph values made so far, by ONNX name.
  std::map<std::string, Tensor> tensors;
  /// Values known at import time: Constant outputs, folded results, int
  /// initializers.
  std::map<std::string, HostTensor> known;
  /// Params that hold statistics (batch norm), not trained.
  std::set<std::string> statistics;

  /// The graph value of ONNX value `name`, making a param (float
  /// initializer) or const (a known value) on first use.
  Tensor tensor(const std::string &name);
  /// The value of `name` when it is known at import time.
  const HostTensor *constant(const std::string &name);
  /// The ampc dtype of ONNX value `name` (a graph value, a known value or an
  /// initializer), without making it; nullopt when `name` is unknown.
  std::optional<std::string> dtypeOfValue(const std::string &name);
  /// Input `i` of `node`; throws naming the node when it is absent.
  Tensor input(const onnx::NodeProto &node, int i);
  /// The same, or an empty handle when absent or "" (optional inputs).
  Tensor optionalInput(const onnx::NodeProto &node, int i);
  const HostTensor *constantInput(const onnx::NodeProto &node, int i);
  /// The known integers of input `i` (such as a shape); throws if unknown.
  std::vector<int64_t> intsInput(const onnx::NodeProto &node, int i);

  /// Creates `graph.<op>` named after the node, writing ONNX value `out`.
  Tensor emit(const onnx::NodeProto &node, llvm::StringRef op, llvm::ArrayRef<Tensor> inputs,
              mlir::NamedAttrList attrs, const std::string &out, llvm::StringRef suffix = "",
              mlir::TypeRange resultTypes = {});
  /// The same for the node's output 0, named as ONNX names it.
  Tensor emit(const onnx::NodeProto &node, llvm::StringRef op, llvm::ArrayRef<Tensor> inputs,
              mlir::NamedAttrList attrs = {});
  /// A `fill` of `value` shaped `shape`, of `like`'s dtype, named after
  /// `node` and `suffix` (pads, clamp bounds, broadcasts).
  Tensor fill(const onnx::NodeProto &node, llvm::ArrayRef<int64_t> shape, double value,
              Tensor like, llvm::StringRef suffix);
  /// Makes `name` stand for `t` (Identity, Dropout): no node unless `name`
  /// is a graph output.
  void alias(const onnx::NodeProto &node, Tensor t);

  /// Attribute readers; `fallback` when absent.
  int64_t attrInt(const onnx::NodeProto &node, const char *key, int64_t fallback) const;
  double attrFloat(const onnx::NodeProto &node, const char *key, double fallback) const;
  std::string attrString(const onnx::NodeProto &node, const char *key,
                         const std::string &fallback) const;
  std::optional<std::vector<int64_t>> attrInts(const onnx::NodeProto &node,
                                               const char *key) const;
  const onnx::AttributeProto *attr(const onnx::NodeProto &node, const char *key) const;

  /// An error naming the node.
  GraphError fail(const onnx::NodeProto &node, const std::string &what) const;
  std::string nodeName(const onnx::NodeProto &node) const;

  std::set<std::string> graphOutputs;
  /// The values some node reads.
  std::set<std::string> read;
  /// Nodes folded into a pattern's last node, which maps the whole form;
  /// gelus: such last nodes, the GELU's input and whether it is the tanh form.
  std::set<const onnx::NodeProto *> skipped;
  std::map<const onnx::NodeProto *, std::pair<std::string, bool>> gelus;
  /// Attention found by findPatterns (with fuseAttention): the last MatMul
  /// of each, its q, v, scale and rank (3 or 4), and k as the Transpose
  /// before the product reads it, with the perm that makes it k.
  struct AttentionMatch {
    std::string q, k, v;
    double scale;
    int rank;
    std::vector<int64_t> kPerm;
    /// A masked_fill of the scores (Where with a -inf fill), fused as
    /// `causal` when its condition turns out causal at import, as a bias
    /// when it is otherwise known at import; else the matched nodes are
    /// imported one by one (`nodes`, in graph order, the last MatMul last).
    const onnx::NodeProto *mask = nullptr;
    /// An additive mask or bias of the scores (an Add): the fused op's bias
    /// where its shape broadcasts as the op's does; "" for none.
    std::string bias;
    std::vector<const onnx::NodeProto *> nodes;
  };
  std::map<const onnx::NodeProto *, AttentionMatch> attentions;
  bool fuseAttention = false;
  /// Volumes [N, C, D, H, W] also held depth first ([N, D, C, H, W]) by the
  /// ops between 3-D convolutions, by ONNX name: the name of that form
  /// (OnnxVolume.cpp).
  std::map<std::string, std::string> depthMajor;
  /// The transposes of those forms back to [N, C, D, H, W], erased after
  /// the import where nothing reads them.
  std::vector<mlir::Operation *> removable;
  /// A loss the model computes (SoftmaxCrossEntropyLoss as a graph output,
  /// or its only float scalar output computed from params).
  std::string lossOutput;
  std::map<const onnx::NodeProto *, std::string> names; // unique node names

private:
  std::set<std::string> usedNodeNames_;
  friend class Driver;
};

/// The product of `dims`, saturating at INT64_MAX instead of overflowing
/// (a size that large is refused wherever it is used).
inline int64_t product(llvm::ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, d, &n))
      return INT64_MAX;
  return n;
}

/// Shape rules shared by the folding and the mappings.
/// Reshape's target: 0 copies the input's dim (unless `allowzero`), -1 is inferred.
std::vector<int64_t> reshapeTarget(Importer &im, const onnx::NodeProto &node,
                                   llvm::ArrayRef<int64_t> in, std::vector<int64_t> target);
/// Unsqueeze's and Squeeze's results (axes from the attribute or input 1).
std::vector<int64_t> unsqueezed(Importer &im, const onnx::NodeProto &node,
                                llvm::ArrayRef<int64_t> in);
std::vector<int64_t> squeezed(Importer &im, const onnx::NodeProto &node,
                              llvm::ArrayRef<int64_t> in);
/// Slice's ranges as (axes, starts, ends, steps), clamped to `in` as ONNX
/// clamps them; throws on a step of 0.
struct SliceRanges {
  std::vector<int64_t> axes, starts, ends, steps;
  /// The length of range `i`: every steps[i]-th element from starts[i].
  int64_t size(size_t i) const {
    int64_t s = steps[i] < 0 ? -steps[i] : steps[i];
    return (std::abs(ends[i] - starts[i]) + s - 1) / s;
  }
};
SliceRanges sliceRanges(Importer &im, const onnx::NodeProto &node, llvm::ArrayRef<int64_t> in);

/// Helpers of the mappings.
inline mlir::Builder &B(Importer &im) { return im.b.opBuilder(); }
inline mlir::Attribute ints(Importer &im, llvm::ArrayRef<int64_t> v) {
  return B(im).getDenseI64ArrayAttr(v);
}
/// `scores` with its (normalised) axis `classes` moved last, as
/// softmax_cross_entropy reads classes: a transpose named `name`, or
/// `scores` itself when they are last already.
Tensor classesLast(Importer &im, Tensor scores, int64_t classes, const std::string &name);
/// Whether `v` is computed from a param.
bool dependsOnParam(mlir::Value v);
/// Throws unless `t` has rank `rank`.
void requireRank(Importer &im, const onnx::NodeProto &n, Tensor t, int64_t rank);
/// Throws when attribute `key` is given with a value other than `allowed`.
void refuseAttr(Importer &im, const onnx::NodeProto &n, const char *key, int64_t allowed);

/// The mappings of the neural-network ops (OnnxNnOps.cpp).
void conv(Importer &im, const onnx::NodeProto &n);
void gemm(Importer &im, const onnx::NodeProto &n);
void batchNorm(Importer &im, const onnx::NodeProto &n);
void layerNorm(Importer &im, const onnx::NodeProto &n);
void globalAvgPool(Importer &im, const onnx::NodeProto &n);
void clip(Importer &im, const onnx::NodeProto &n);
void hardSigmoidOp(Importer &im, const onnx::NodeProto &n);
void hardSwish(Importer &im, const onnx::NodeProto &n);
void instanceNorm(Importer &im, const onnx::NodeProto &n);
/// Activations and reductions composed of graph ops (OnnxComposed.cpp).
void leakyRelu(Importer &im, const onnx::NodeProto &n);
void prelu(Importer &im, const onnx::NodeProto &n);
void elu(Importer &im, const onnx::NodeProto &n);
void selu(Importer &im, const onnx::NodeProto &n);
void celu(Importer &im, const onnx::NodeProto &n);
void softplus(Importer &im, const onnx::NodeProto &n);
void logOf(Importer &im, const onnx::NodeProto &n);
void reciprocal(Importer &im, const onnx::NodeProto &n);
void softsign(Importer &im, const onnx::NodeProto &n);
void mean(Importer &im, const onnx::NodeProto &n);
void globalMaxPool(Importer &im, const onnx::NodeProto &n);
/// DepthToSpace, SpaceToDepth and Tile (OnnxRearrange.cpp).
/// `x` reshaped to `shape`, written as `<output>.<suffix>` (the node's
/// output itself for an empty suffix).
Tensor reshaped(Importer &im, const onnx::NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> shape,
                const std::string &suffix);
/// Copies by broadcast: `x` reshaped to `split` (size-1 axes where copies
/// go), an `add` of a zero `fill` shaped `copies`, reshaped to `result` as
/// the node's output. The gradient sums the copies (Tile, Resize).
void broadcastCopies(Importer &im, const onnx::NodeProto &n, Tensor x,
                     llvm::ArrayRef<int64_t> split, llvm::ArrayRef<int64_t> copies,
                     llvm::ArrayRef<int64_t> result);
/// The chain op(op(x0, x1), x2)... of a node's inputs, the last written as
/// `out` (Max, Min, Sum, Mean); the one input itself when there is one.
Tensor chained(Importer &im, const onnx::NodeProto &n, const char *op, const std::string &out);
void depthToSpace(Importer &im, const onnx::NodeProto &n);
void spaceToDepth(Importer &im, const onnx::NodeProto &n);
void tile(Importer &im, const onnx::NodeProto &n);
void reduceSum(Importer &im, const onnx::NodeProto &n);
void reduceSumSquare(Importer &im, const onnx::NodeProto &n);
void reduceL2(Importer &im, const onnx::NodeProto &n);
void reduceMax(Importer &im, const onnx::NodeProto &n);
void reduceMin(Importer &im, const onnx::NodeProto &n);
/// A reduction's axes, normalised: the attribute, or input 1 from opset
/// `inputFrom`; empty for all; nullopt where noop_with_empty_axes makes the
/// reduction the identity.
std::optional<std::vector<int64_t>> reduceAxes(Importer &im, const onnx::NodeProto &n, Tensor x,
                                               int64_t inputFrom);
/// Resize and Upsample (OnnxResize.cpp); ConvTranspose (OnnxConvTranspose.cpp).
void resize(Importer &im, const onnx::NodeProto &n);
void convTranspose(Importer &im, const onnx::NodeProto &n);
/// `x` [N, C, spatial...] with s[i] - 1 zeros after each element of
/// spatial axis i, and `w` reversed along `axis` (OnnxConvTranspose.cpp).
Tensor zerosBetween(Importer &im, const onnx::NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> s);
Tensor flipped(Importer &im, const onnx::NodeProto &n, Tensor w, int64_t axis,
               const std::string &name);
/// LSTM, GRU and RNN unrolled over the sequence (OnnxRecurrent.cpp).
void lstm(Importer &im, const onnx::NodeProto &n);
void gru(Importer &im, const onnx::NodeProto &n);
void rnn(Importer &im, const onnx::NodeProto &n);
/// Einsum (OnnxEinsum.cpp), Pad (OnnxPad.cpp) and Expand (OnnxOps.cpp).
void einsum(Importer &im, const onnx::NodeProto &n);
/// A matched attention (findPatterns) as the fused op, written as node
/// `n`'s output (OnnxAttention.cpp).
void fusedAttention(Importer &im, const onnx::NodeProto &n, const Importer::AttentionMatch &m);
void pad(Importer &im, const onnx::NodeProto &n);
/// `x` with `begins[d]`/`ends[d]` elements of `value` added before/after
/// axis d (negative: removed); the last node writes ONNX value `out`.
/// Returns `x` when every count is 0.
Tensor padded(Importer &im, const onnx::NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> begins,
              llvm::ArrayRef<int64_t> ends, double value, const std::string &out);
/// Every `step`-th element of `x` along axis `d` from the first (a strided
/// Slice): the axis padded to a multiple of `step`, split into [size, step]
/// and the first of each kept; the steps' values are `base`_whole, _groups,
/// _firsts, the result `out`.
Tensor everyStep(Importer &im, const onnx::NodeProto &n, Tensor x, int64_t d, int64_t step,
                 const std::string &base, const std::string &out);
void expand(Importer &im, const onnx::NodeProto &n);
/// Split as slices, and Where on a graph value as a masked_fill
/// (OnnxSelect.cpp).
void split(Importer &im, const onnx::NodeProto &n);
void where(Importer &im, const onnx::NodeProto &n);
/// What liftedToImage lifts: a 1-D window's input [N, C, L] (pools), its
/// input and filter [O, I, K] (Conv, ConvTranspose); an op whose result has
/// its input's shape (batch norm: [N, C], [N, C, L], [N, C, D, H, W]); or a
/// global pool ([N, C, L], [N, C, D, H, W] to [N, C, 1, ...]).
enum class Lift { Window1d, WindowAndFilter1d, SameShape, GlobalPool };
/// A 3-D window ([N, C, D, H, W]) as the 2-D op `twoD` maps (OnnxVolume.cpp).
using Volume = void (*)(Importer &, const onnx::NodeProto &, const Mapping &twoD);
void convVolume(Importer &im, const onnx::NodeProto &n, const Mapping &conv2d);
void poolVolume(Importer &im, const onnx::NodeProto &n, const Mapping &pool2d);
void convTransposeVolume(Importer &im, const onnx::NodeProto &n, const Mapping &);
/// What keptDepthFirst keeps depth first: an element-wise op of one input
/// or of two of one shape, a batch norm, or a concat (inception branches).
enum class DepthFirst { Unary, Binary, BatchNorm, Concat };
/// `canonical`, applied to the depth-first forms of its inputs where they
/// all have one, its result kept depth first too (OnnxVolume.cpp).
Mapping keptDepthFirst(Mapping canonical, DepthFirst kind);
/// `twoD`, which maps the node's form over images [N, C, H, W], extended to
/// the other ranks `lift` names through reshapes, and to 3-D windows by
/// `volume` where given (OnnxLiftToImage.cpp).
Mapping liftedToImage(Mapping twoD, Lift lift, Volume volume = nullptr);
/// Softmax/LogSoftmax and MaxPool/AveragePool, for the graph op `op`.
Mapping softmax(const char *op);
Mapping pool(const char *op);

/// Axis `axis` of a rank-`rank` tensor, negative from the end; throws if out
/// of range.
int64_t normalizeAxis(Importer &im, const onnx::NodeProto &node, int64_t axis, int64_t rank);

} // namespace ampc::onnx_import

#endif
