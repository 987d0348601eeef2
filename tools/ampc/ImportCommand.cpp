// `ampc import MODEL.onnx -o GRAPH` and `ampc export GRAPH -o MODEL.onnx`:
// ONNX models in and out (docs/onnx.md).
#include "compiler/DenseData.h"
#include "compiler/GraphIO.h"
#include "compiler/onnx/OnnxExport.h"
#include "compiler/onnx/OnnxImport.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/Files.h"
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {

static OnnxImportOptions importOptionsFrom(const Args &args) {
  OnnxImportOptions o;
  o.batch = args.getInt("batch", 0, 1);
  for (const std::string &set : args.getAll("set")) {
    size_t eq = set.find('=');
    std::string name = set.substr(0, eq);
    if (eq == std::string::npos || name.empty())
      throw UsageError("--set needs NAME=VALUE, got '" + set + "'");
    std::string value = set.substr(eq + 1);
    if (value.empty() || value.size() > 10 ||
        value.find_first_not_of("0123456789") != std::string::npos || std::stoll(value) < 1 ||
        std::stoll(value) >= Args::kMaxCount)
      throw UsageError("--set " + name + ": the value must be a positive integer, got '" +
                       value + "'");
    o.dims[name] = std::stoll(value);
  }
  o.loss = args.get("loss").value_or("");
  if (!o.loss.empty() && o.loss != "softmax_cross_entropy" && o.loss != "mse")
    throw UsageError("--loss must be softmax_cross_entropy or mse, got '" + o.loss + "'");
  o.lossOutput = args.get("loss-on").value_or("");
  o.labels = args.get("labels").value_or("");
  o.fuseAttention = args.has("fuse-attention");
  if (o.loss.empty() && (args.has("labels") || args.has("loss-on")))
    throw UsageError("--labels and --loss-on go with --loss");
  if (args.has("class-axis")) {
    if (o.loss != "softmax_cross_entropy")
      throw UsageError("--class-axis goes with --loss softmax_cross_entropy");
    o.classAxis = args.getInt("class-axis", -1, -64, 63);
  }
  return o;
}

int runImport(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  OnnxImportOptions options = importOptionsFrom(args);
  size_t slash = in.find_last_of('/');
  options.modelDir = slash == std::string::npos ? "." : slash == 0 ? "/" : in.substr(0, slash);
  std::string error;
  std::optional<std::string> bytes = rt::readFile(in, error);
  if (!bytes)
    throw CliError(in, "cannot read the model: " + error);
  checkOutput(args, "output"); // before the import, the long part
  std::string name = in.substr(in.find_last_of('/') + 1);
  name = name.substr(0, name.find('.'));
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = onFile(in, [&] {
    return importOnnx(ctx, *bytes, name.empty() ? "model" : name, options);
  });
  onFile(out, [&] { saveGraph(*module, out); });
  return 0;
}

/// Every param of `module` takes its value in weights files `files` (read as
/// `ampc run --weights` reads them) as its init: the values it exports.
static void takeWeights(const Args &args, const std::vector<std::string> &files,
                        ModuleOp module) {
  rt::Plan plan = lowerToPlan(module);
  rt::Executor ex(plan, {/*training=*/false, 0, /*profile=*/false, "cpu", false, nullptr, false});
  loadWeightFiles(args, files, ex, "weights file");
  module.walk([&](graph::ParamOp p) {
    int id = plan.find(p.getName().str());
    if (id < 0 || !rt::isStoredFloat(plan.buffers[id].dtype))
      return; // a param no step reads keeps its init
    std::vector<float> values = ex.readF32(id);
    auto type = RankedTensorType::get(cast<RankedTensorType>(p.getType()).getShape(),
                                      Float32Type::get(module.getContext()));
    NamedAttrList init;
    init.set("kind", StringAttr::get(module.getContext(), "data"));
    init.set("data", denseFromDoubles(type, std::vector<double>(values.begin(), values.end())));
    p.setInitAttr(init.getDictionary(module.getContext()));
  });
}

int runExport(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  checkInput(args);
  checkOutput(args, "output");
  // ONNX protobuf in a file named as a graph would mislead every reader.
  if (out.size() < 5 || out.compare(out.size() - 5, 5, ".onnx") != 0)
    throw CliError(out, "ampc export writes ONNX (protobuf): name the file .onnx; "
                        "`ampc rewrite` writes .json and .mlir graphs");
  uint64_t seed = args.getInt("seed", 0, 0);
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = onFile(in, [&] { return loadGraph(ctx, in); });
  std::vector<std::string> weights = args.getFiles("weights");
  onFile(in, [&] {
    for (const char *flag : {"init-layout", "ema"})
      if (weights.empty() && args.has(flag))
        throw UsageError(std::string("--") + flag + " is about the --weights FILE: give one");
    if (!weights.empty())
      takeWeights(args, weights, *module);
  });
  std::string bytes = onFile(in, [&] { return exportOnnx(*module, seed); });
  onFile(out, [&] { writeFileAtomically(out, bytes); });
  return 0;
}

} // namespace ampc::cli
