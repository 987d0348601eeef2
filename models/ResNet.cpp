// resnet: ResNet-18 (basic blocks) and ResNet-50 (bottlenecks), NHWC.
#include "compiler/Layers.h"
#include "models/Models.h"

namespace ampc {
namespace {

Tensor convBn(GraphBuilder &b, Tensor x, int64_t out, int64_t kernel, int64_t stride,
              const std::string &name, bool relu) {
  Tensor h = conv2dLayer(b, x, out, kernel, name, stride, kernel / 2);
  h = batchNormLayer(b, h, name + ".bn");
  return relu ? b.relu(h, name + ".relu") : h;
}

Tensor block(GraphBuilder &b, Tensor x, int64_t width, int64_t stride, bool bottleneck,
             const std::string &name) {
  auto s = b.scope(name);
  int64_t out = bottleneck ? width * 4 : width;
  Tensor h;
  if (bottleneck) {
    h = convBn(b, x, width, 1, 1, "conv1", true);
    h = convBn(b, h, width, 3, stride, "conv2", true);
    h = convBn(b, h, out, 1, 1, "conv3", false);
  } else {
    h = convBn(b, x, width, 3, stride, "conv1", true);
    h = convBn(b, h, out, 3, 1, "conv2", false);
  }
  Tensor shortcut = x;
  if (stride != 1 || x.dim(-1) != out)
    shortcut = convBn(b, x, out, 1, stride, "downsample", false);
  return b.relu(b.add(h, shortcut, "residual"), "relu");
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> buildResNet(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t depth = a.getInt("depth");
  if (depth != 18 && depth != 50)
    throw GraphError("parameter 'depth' must be 18 or 50, got " + std::to_string(depth));
  int64_t batch = a.getInt("batch"), image = a.getInt("image");
  GraphBuilder b(ctx, "resnet" + std::to_string(depth));
  Tensor x = b.input("x", {batch, image, image, a.getInt("channels")});
  Tensor labels = b.input("labels", {batch}, "i64");
  Tensor h = convBn(b, x, 64, 7, 2, "stem", true);
  Pool2dAttrs pool;
  pool.kernel = {3, 3};
  pool.strides = {2, 2};
  pool.padding = {1, 1};
  h = b.maxPool2d(h, pool, "stem.pool");
  bool bottleneck = depth == 50;
  std::vector<int64_t> blocks = bottleneck ? std::vector<int64_t>{3, 4, 6, 3}
                                           : std::vector<int64_t>{2, 2, 2, 2};
  for (int stage = 0; stage < 4; ++stage)
    for (int64_t i = 0; i < blocks[stage]; ++i)
      h = block(b, h, 64 << stage, (stage > 0 && i == 0) ? 2 : 1, bottleneck,
                "layer" + std::to_string(stage + 1) + "." + std::to_string(i));
  h = b.globalAvgPool(h, "NHWC", "pool");
  Tensor logits = linear(b, h, a.getInt("classes"), "fc");
  b.output(logits);
  b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
  return b.finish();
}

} // namespace ampc
