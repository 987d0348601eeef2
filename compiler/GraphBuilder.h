// The C++ builder API: write a model as a static graph, then save it.
//
//   mlir::MLIRContext ctx;  ampc::loadDialects(ctx);
//   ampc::GraphBuilder b(ctx, "tiny");
//   ampc::Tensor x = b.input("x", {32, 64});
//   ampc::Tensor y = b.input("y", {32}, "i64");
//   ampc::Tensor logits = ampc::linear(b, x, 10, "fc");
//   b.setLoss(b.softmaxCrossEntropy(logits, y, "loss"));
//   ampc::saveGraph(b.finish().get(), "tiny.json");
//
// Every function throws ampc::GraphError, naming the node, on invalid input.
#ifndef AMPC_COMPILER_GRAPHBUILDER_H
#define AMPC_COMPILER_GRAPHBUILDER_H

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/Diagnostics.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

/// Registers the dialects ampc uses in a context.
void loadDialects(mlir::MLIRContext &ctx);

/// How training initialises a parameter.
struct Init {
  std::string kind;
  std::vector<std::pair<std::string, double>> fields;
  std::vector<double> data; // kind "data": the values, row-major
  static Init zeros() { return {"zeros", {}}; }
  static Init ones() { return {"ones", {}}; }
  static Init constant(double v) { return {"constant", {{"value", v}}}; }
  static Init normal(double std, double mean = 0.0) {
    return {"normal", {{"mean", mean}, {"std", std}}};
  }
  static Init uniform(double low, double high) {
    return {"uniform", {{"low", low}, {"high", high}}};
  }
  static Init xavierUniform() { return {"xavier_uniform", {}}; }
  static Init kaimingNormal() { return {"kaiming_normal", {}}; }
  /// Given values, such as pretrained weights (stored as f32).
  static Init values(std::vector<double> v) { return {"data", {}, std::move(v)}; }
};

/// A typed handle to a value of the graph being built.
class Tensor {
public:
  Tensor() = default;
  explicit Tensor(mlir::Value v) : value_(v) {}
  mlir::Value value() const { return value_; }
  explicit operator bool() const { return static_cast<bool>(value_); }
  llvm::ArrayRef<int64_t> shape() const;
  int64_t rank() const { return shape().size(); }
  /// Dimension `i`; negative counts from the end.
  int64_t dim(int64_t i) const;
  std::string dtype() const;
  llvm::StringRef name() const;

private:
  mlir::Value value_;
};

struct Conv2dAttrs {
  std::vector<int64_t> strides{1, 1};
  std::vector<int64_t> padding{0, 0};
  std::vector<int64_t> dilations{1, 1};
  int64_t groups = 1;
  std::string layout = "NHWC";
};

struct Pool2dAttrs {
  std::vector<int64_t> kernel{2, 2};
  std::vector<int64_t> strides; // empty: the kernel
  std::vector<int64_t> padding{0, 0};
  std::string layout = "NHWC";
};

class GraphBuilder {
public:
  GraphBuilder(mlir::MLIRContext &ctx, llvm::StringRef graphName);
  mlir::MLIRContext &context() { return *module_->getContext(); }

  /// While the returned scope lives, new names get the prefix `name.`.
  class Scope {
  public:
    Scope(GraphBuilder *b) : b_(b) {}
    Scope(Scope &&o) : b_(o.b_) { o.b_ = nullptr; }
    ~Scope() { if (b_) b_->scopes_.pop_back(); }

  private:
    GraphBuilder *b_;
  };
  [[nodiscard]] Scope scope(llvm::StringRef name);
  /// `local` prefixed with the open scopes.
  std::string qualify(llvm::StringRef local) const;

  // Values: names are qualified with the open scopes and must be unique.
  Tensor input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
               llvm::StringRef dtype = "f32");
  Tensor param(llvm::StringRef name, llvm::ArrayRef<int64_t> shape, const Init &init,
               llvm::StringRef dtype = "f32", bool trainable = true);
  Tensor constValue(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                    llvm::ArrayRef<double> data, llvm::StringRef dtype = "f32");

  // Nodes: `name` is the local node name (default: the op's name); a taken
  // name gets a `_1`, `_2`, ... suffix. The result is named like the node.
  Tensor matmul(Tensor a, Tensor b, bool transposeA = false, bool transposeB = false,
                llvm::StringRef name = "");
  Tensor conv2d(Tensor x, Tensor filter, const Conv2dAttrs &attrs = {},
                llvm::StringRef name = "");
  Tensor add(Tensor a, Tensor b, llvm::StringRef name = "");
  Tensor sub(Tensor a, Tensor b, llvm::StringRef name = "");
  Tensor mul(Tensor a, Tensor b, llvm::StringRef name = "");
  Tensor div(Tensor a, Tensor b, llvm::StringRef name = "");
  Tensor maximum(Tensor a, Tensor b, llvm::StringRef name = "");
  Tensor minimum(Tensor a, Tensor b, llvm::StringRef name = "");
  /// One-operand ops without attributes: neg abs relu tanh sigmoid erf identity
  /// exp log sqrt rsqrt square.
  Tensor unary(llvm::StringRef op, Tensor x, llvm::StringRef name = "");
  Tensor relu(Tensor x, llvm::StringRef name = "") { return unary("relu", x, name); }
  Tensor gelu(Tensor x, bool approximate = false, llvm::StringRef name = "");
  Tensor scale(Tensor x, double scale, double bias = 0.0, llvm::StringRef name = "");
  Tensor dropout(Tensor x, double rate, int64_t seed = 0, llvm::StringRef name = "");
  Tensor pow(Tensor x, double exponent, llvm::StringRef name = "");
  Tensor reshape(Tensor x, llvm::ArrayRef<int64_t> shape, llvm::StringRef name = "");
  Tensor transpose(Tensor x, llvm::ArrayRef<int64_t> perm, llvm::StringRef name = "");
  Tensor flatten(Tensor x, int64_t axis = 1, llvm::StringRef name = "");
  Tensor concat(llvm::ArrayRef<Tensor> xs, int64_t axis, llvm::StringRef name = "");
  Tensor slice(Tensor x, llvm::ArrayRef<int64_t> axes, llvm::ArrayRef<int64_t> starts,
               llvm::ArrayRef<int64_t> ends, llvm::StringRef name = "");
  Tensor maxPool2d(Tensor x, const Pool2dAttrs &attrs, llvm::StringRef name = "");
  Tensor avgPool2d(Tensor x, const Pool2dAttrs &attrs, llvm::StringRef name = "");
  Tensor globalAvgPool(Tensor x, llvm::StringRef layout = "NHWC",
                       llvm::StringRef name = "");
  Tensor batchNorm(Tensor x, Tensor scale, Tensor bias, Tensor mean, Tensor variance,
                   double epsilon = 1e-5, double momentum = 0.9,
                   llvm::StringRef layout = "NHWC", llvm::StringRef name = "");
  Tensor layerNorm(Tensor x, Tensor scale, Tensor bias, double epsilon = 1e-5,
                   int64_t axis = -1, llvm::StringRef name = "");
  Tensor reduceSum(Tensor x, llvm::ArrayRef<int64_t> axes = {}, bool keepdims = false,
                   llvm::StringRef name = "");
  Tensor reduceMean(Tensor x, llvm::ArrayRef<int64_t> axes = {}, bool keepdims = false,
                    llvm::StringRef name = "");
  Tensor softmax(Tensor x, int64_t axis = -1, llvm::StringRef name = "");
  Tensor logSoftmax(Tensor x, int64_t axis = -1, llvm::StringRef name = "");
  /// Fused scaled dot-product attention: q [batch, seq_q, heads, head_dim],
  /// k and v [batch, seq_k, heads, head_dim(_v)]; scale 1/sqrt(head_dim)
  /// unless given; causal: query i sees keys j <= i; in training, dropout
  /// of the probabilities at rate `dropout` (the bits of `dropout` with `seed`).
  /// A `bias` (rank 4, broadcast to [batch, heads, seq_q, seq_k]) is
  /// added to the scaled scores: an additive mask.
  Tensor attention(Tensor q, Tensor k, Tensor v, bool causal = false,
                   std::optional<double> scale = std::nullopt, llvm::StringRef name = "",
                   double dropout = 0.0, int64_t seed = 0,
                   std::optional<Tensor> bias = std::nullopt);
  Tensor embedding(Tensor ids, Tensor weight, llvm::StringRef name = "");
  /// PyTorch's cross_entropy(label_smoothing=, ignore_index=, weight=,
  /// reduction=); no ignored label by default (PyTorch's is -100).
  /// `classWeights`, f32 [C], is a const (b.constant) or a param with
  /// trainable = false; `reduction` is "mean", "sum" or "none" (a loss a
  /// row, in the labels' shape, to weigh and reduce before setLoss).
  Tensor softmaxCrossEntropy(Tensor logits, Tensor labels, llvm::StringRef name = "",
                             double labelSmoothing = 0.0,
                             std::optional<int64_t> ignoreIndex = std::nullopt,
                             std::optional<Tensor> classWeights = std::nullopt,
                             llvm::StringRef reduction = "mean");
  Tensor mseLoss(Tensor prediction, Tensor target, llvm::StringRef name = "");
  Tensor cast(Tensor x, llvm::StringRef dtype, llvm::StringRef name = "");
  Tensor constant(llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<double> data,
                  llvm::StringRef dtype = "f32", llvm::StringRef name = "");
  Tensor fill(llvm::ArrayRef<int64_t> shape, double value, llvm::StringRef dtype = "f32",
              llvm::StringRef name = "");

  /// Any op of the dialect by name, with attributes.
  Tensor node(llvm::StringRef op, llvm::ArrayRef<Tensor> inputs,
              mlir::NamedAttrList attrs = {}, llvm::StringRef name = "",
              mlir::TypeRange resultTypes = {});

  /// Marks a graph output.
  void output(Tensor t);
  /// Marks the loss (a float scalar); it becomes an output too.
  void setLoss(Tensor t);
  /// Ends the graph and verifies it. The builder is spent afterwards.
  mlir::OwningOpRef<mlir::ModuleOp> finish();

  mlir::OpBuilder &opBuilder() { return builder_; }

private:
  std::string uniqueName(llvm::StringRef local);
  std::string valueName(llvm::StringRef name);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape, llvm::StringRef dtype);
  /// Creates an input/param/const op after the previous ones, at the top of
  /// the graph: values come first in every saved graph.
  template <typename OpT, typename... Args> OpT createValueOp(Args &&...args);

  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::Operation *graph_;
  mlir::Operation *lastValueOp_ = nullptr;
  mlir::OpBuilder builder_;
  std::vector<std::string> scopes_;
  llvm::StringSet<> used_;
  llvm::StringMap<int> nextSuffix_; // the last suffix given to each taken name
  std::vector<mlir::Value> outputs_;
  std::string loss_;
};

} // namespace ampc

#endif
