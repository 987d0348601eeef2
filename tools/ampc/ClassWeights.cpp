// `--class-weights balanced` (docs/training.md, "Label smoothing, ignored
// labels and class weights"): each class weighs n / (C * count), scikit-
// learn's compute_class_weight("balanced", classes=np.unique(y), y), over
// the training labels.
#include <algorithm>

#include "compiler/Lowering.h"
#include "ops/GraphOps.h"
#include "runtime/driver/Data.h"
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {

std::vector<double> balancedClassWeights(ModuleOp forward, const std::string &data,
                                         std::optional<int64_t> ignore) {
  int64_t classes = 0;
  forward.walk([&](graph::SoftmaxCrossEntropyOp op) {
    classes = cast<RankedTensorType>(op.getLogits().getType()).getShape().back();
    return WalkResult::interrupt();
  });
  if (classes == 0)
    throw GraphError("--class-weights balanced: the graph has no softmax_cross_entropy");
  if (data == "synthetic")
    throw UsageError("--class-weights balanced counts the training set's labels: give --data");
  rt::Plan plan = lowerToPlan(forward);
  rt::DataFeed feed(plan, data, /*train=*/true, 0);
  if (!feed.labelled())
    throw rt::RuntimeError("--class-weights balanced counts one class label per sample; " + data +
                           " has none (token data: give the weights as numbers)");
  std::vector<int64_t> counts(classes, 0);
  int64_t rows = 0;
  for (int64_t label : feed.labels()) {
    if (ignore && label == *ignore)
      continue;
    if (label < 0 || label >= classes)
      throw rt::RuntimeError(data + ": label " + std::to_string(label) + " is not one of the " +
                             std::to_string(classes) + " classes");
    ++counts[label];
    ++rows;
  }
  if (rows == 0)
    throw rt::RuntimeError(data + ": every label is ignored: nothing to count");
  // C counts the classes the labels have (scikit-learn's np.unique(y)), so
  // that the weights average 1 over the rows, as an absent class's 1.
  int64_t present = std::count_if(counts.begin(), counts.end(), [](int64_t n) { return n > 0; });
  std::vector<double> weights(classes, 1.0);
  for (int64_t c = 0; c < classes; ++c)
    if (counts[c] > 0)
      weights[c] = double(rows) / (double(present) * double(counts[c]));
  return weights;
}

} // namespace ampc::cli
