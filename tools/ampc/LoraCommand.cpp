// `ampc lora`: LoRA adapters on any graph's linear layers, the rest frozen
// (graph-lora; docs/training.md, "LoRA on any graph").
#include "compiler/GraphIO.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {

int runLora(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  LoraSettings options;
  options.rank = args.getInt("rank", 8, 1, 1 << 16);
  options.alpha = args.getNumber("alpha", 8.0, 1e-12, 1e12);
  options.dropout = args.getNumber("dropout", 0.0, 0.0, 0.999999);
  for (const std::string &value : args.getAll("targets"))
    for (std::string &pattern : splitCommas(value))
      options.targets.push_back(std::move(pattern));
  for (const std::string &value : args.getAll("also-train"))
    for (std::string &pattern : splitCommas(value))
      options.alsoTrain.push_back(std::move(pattern));
  if (options.targets.empty())
    throw UsageError("give the layers to adapt: --targets PATTERN,... (a layer's name, such as "
                     "'*.query,*.value', or all)");
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = onFile(in, [&] { return loadGraph(ctx, in); });
  auto countAdapters = [&] {
    int64_t n = 0;
    module->walk([&](graph::ParamOp p) { n += p.getName().ends_with(".lora_a"); });
    return n;
  };
  int64_t before = countAdapters();
  onFile(in, [&] { runLoraPipeline(*module, options); });
  onFile(out, [&] { saveGraph(*module, out); });
  int64_t adapters = countAdapters() - before;
  std::printf("%s: %lld layer%s with rank-%lld adapters; every other param frozen%s\n",
              out.c_str(), (long long)adapters, adapters == 1 ? "" : "s",
              (long long)options.rank,
              options.alsoTrain.empty() ? "" : ", but those --also-train names");
  return 0;
}

} // namespace ampc::cli
