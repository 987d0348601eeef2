// `ampc weights`: a checkpoint's model weights alone (no optimizer state),
// in the graph's names or in Hugging Face's, in f32, f16 or bf16: what a
// fine-tuning run hands to inference (docs/gpt.md, "Pretrained weights").
#include "compiler/GraphIO.h"
#include "compiler/Lowering.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/HuggingFaceNames.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {

int runWeights(const Args &args) {
  const std::string &checkpoint = inputFile(args);
  std::string graphFile = args.getFile("graph"), out = outputFile(args);
  if (graphFile.empty())
    throw UsageError("ampc weights needs --graph G: the graph the checkpoint was trained from "
                     "(its params are the weights written)");
  std::string layout = args.get("layout").value_or("graph");
  if (layout != "graph" && layout != "hf")
    throw UsageError("option '--layout' must be graph (ampc's names) or hf (Hugging Face's), "
                     "not '" + layout + "'");
  std::string dtypeName = args.get("save-dtype").value_or("f32");
  rt::DType dtype = dtypeName == "bf16"  ? rt::DType::BF16
                    : dtypeName == "f16" ? rt::DType::F16
                                         : rt::DType::F32;
  if (dtypeName != "f32" && dtypeName != "f16" && dtypeName != "bf16")
    throw UsageError("option '--save-dtype' must be f32, f16 or bf16, not '" + dtypeName + "'");
  if (args.has("vocab") && layout != "hf")
    throw UsageError("--vocab cuts the padded vocabulary for --layout hf");
  int64_t vocab = args.getInt("vocab", 0, 1);
  rt::Plan plan = onFile(graphFile, [&] {
    MLIRContext ctx;
    OwningOpRef<ModuleOp> module = loadGraph(ctx, graphFile);
    return lowerToPlan(*module);
  });
  rt::Safetensors file = onFile(checkpoint, [&] { return rt::readSafetensors(checkpoint); });
  // Each param's f32 master where the run kept one (O2), else the param.
  rt::Safetensors weights;
  weights.path = checkpoint;
  for (const rt::Buffer &b : plan.buffers) {
    if (b.kind != rt::BufferKind::Param || b.copyOf >= 0)
      continue;
    auto it = file.tensors.find(b.name + ".master");
    if (it == file.tensors.end())
      it = file.tensors.find(b.name);
    if (it == file.tensors.end())
      throw CliError(checkpoint, "no tensor '" + b.name + "', a param of " + graphFile +
                                     ": a checkpoint of another graph?");
    if (it->second.shape != b.shape || !rt::isStoredFloat(it->second.dtype))
      throw CliError(checkpoint, "tensor '" + it->first + "' is " +
                                     rt::dtypeName(it->second.dtype) +
                                     " of another shape than the param's: a checkpoint of "
                                     "another graph?");
    weights.tensors[b.name] = it->second;
  }
  weights.data = std::move(file.data);
  if (layout == "hf")
    weights = onFile(checkpoint, [&] { return rt::toHuggingFace(weights, vocab); });
  checkOutput(args, "output");
  std::map<std::string, std::string> metadata;
  if (layout == "hf")
    metadata["format"] = "pt"; // as transformers' save_pretrained writes it
  onFile(out, [&] { rt::writeSafetensors(out, weights, dtype, metadata, "weights"); });
  int64_t count = 0;
  for (const auto &[name, t] : weights.tensors)
    count += rt::numElements(t.shape);
  std::printf("%s: %zu tensors, %lld values in %s\n", out.c_str(), weights.tensors.size(),
              (long long)count, dtypeName.c_str());
  return 0;
}

} // namespace ampc::cli
