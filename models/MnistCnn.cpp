// mnist_cnn: a small NHWC convolutional network for 28x28 grey images.
#include "compiler/Layers.h"
#include "models/Models.h"

namespace ampc {

mlir::OwningOpRef<mlir::ModuleOp> buildMnistCnn(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t batch = a.getInt("batch");
  GraphBuilder b(ctx, "mnist_cnn");
  Tensor x = b.input("x", {batch, 28, 28, 1});
  Tensor labels = b.input("labels", {batch}, "i64");
  Pool2dAttrs pool; // 2x2, stride 2
  Tensor h = conv2dLayer(b, x, 16, 5, "conv1", 1, 2);
  h = b.relu(batchNormLayer(b, h, "bn1"), "relu1");
  h = b.maxPool2d(h, pool, "pool1");
  h = conv2dLayer(b, h, 64, 5, "conv2", 1, 2);
  h = b.relu(batchNormLayer(b, h, "bn2"), "relu2");
  h = b.maxPool2d(h, pool, "pool2");
  h = b.flatten(h, 1, "flatten");
  h = b.relu(linear(b, h, 64, "fc1"), "relu3");
  Tensor logits = linear(b, h, 10, "fc2");
  b.output(logits);
  b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
  return b.finish();
}

} // namespace ampc
