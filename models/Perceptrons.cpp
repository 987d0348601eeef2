// simplenet (the Paddle AMP tutorial's network) and mlp.
#include "compiler/Layers.h"
#include "models/Models.h"

namespace ampc {

mlir::OwningOpRef<mlir::ModuleOp> buildSimpleNet(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t batch = a.getInt("batch"), hidden = a.getInt("hidden");
  GraphBuilder b(ctx, "simplenet");
  Tensor x = b.input("x", {batch, hidden});
  Tensor target = b.input("target", {batch, hidden});
  Tensor h = b.relu(linear(b, x, hidden, "fc1"), "relu1");
  h = b.relu(linear(b, h, hidden, "fc2"), "relu2");
  Tensor y = linear(b, h, hidden, "fc3");
  b.setLoss(b.mseLoss(y, target, "loss"));
  return b.finish();
}

mlir::OwningOpRef<mlir::ModuleOp> buildMlp(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t batch = a.getInt("batch"), hidden = a.getInt("hidden");
  GraphBuilder b(ctx, "mlp");
  Tensor x = b.input("x", {batch, 784});
  Tensor labels = b.input("labels", {batch}, "i64");
  Tensor h = b.relu(linear(b, x, hidden, "fc1"), "relu1");
  h = b.relu(linear(b, h, hidden, "fc2"), "relu2");
  Tensor logits = linear(b, h, 10, "fc3");
  b.output(logits);
  b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
  return b.finish();
}

} // namespace ampc
