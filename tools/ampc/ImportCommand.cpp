// `ampc import MODEL.onnx -o GRAPH` and `ampc export GRAPH -o MODEL.onnx`:
// ONNX models in and out (docs/onnx.md).
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
  std::string bytes = onFile(in, [&] { return exportOnnx(*module, seed); });
  onFile(out, [&] { writeFileAtomically(out, bytes); });
  return 0;
}

} // namespace ampc::cli
