// The command table and the graph commands: rewrite, dot, report.
#include "tools/ampc/Commands.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "compiler/Diagnostics.h"
#include "compiler/GraphDot.h"
#include "compiler/GraphIO.h"
#include "compiler/Pipelines.h"
#include "compiler/PrecisionReport.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/Files.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/WeightShards.h"
#include "tools/ampc/AmpFlags.h"

using namespace mlir;

namespace ampc::cli {

const std::string &inputFile(const Args &args) {
  if (args.positionals().size() != 1)
    throw UsageError("expects exactly one input file");
  return args.positionals()[0];
}

std::string deviceFrom(const Args &args) {
  std::string device = args.get("device").value_or("cpu");
  std::vector<std::string> names = rt::backendNames();
  if (!rt::findTarget(device) && std::find(names.begin(), names.end(), device) == names.end()) {
    std::string known;
    for (size_t i = 0; i < names.size(); ++i)
      known += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    throw UsageError("--device must be " + known + ", got '" + device + "'");
  }
  rt::createBackend(device); // says now, before compiling, why it cannot run
  return device;
}

rt::WeightLayout weightLayoutFrom(const Args &args) {
  std::optional<std::string> layout = args.get("init-layout");
  if (!layout)
    return rt::WeightLayout::FromFile;
  if (*layout == "torch")
    return rt::WeightLayout::Torch;
  if (*layout == "graph")
    return rt::WeightLayout::Graph;
  if (*layout == "hf")
    return rt::WeightLayout::HuggingFace;
  throw UsageError("--init-layout must be torch, graph or hf, got '" + *layout + "'");
}

void loadWeightFiles(const Args &args, const std::vector<std::string> &files, rt::Executor &ex,
                     const std::string &what) {
  std::vector<std::string> params;
  for (const rt::Buffer &b : ex.plan().buffers)
    if (b.kind == rt::BufferKind::Param && b.copyOf < 0) // copies follow their params
      params.push_back(b.name);
  onFile(files[0], [&] {
    rt::Safetensors file = rt::readWeights(files, what);
    if (args.has("ema"))
      file = rt::averagedWeights(std::move(file));
    rt::loadWeights(file, ex, params, ex.plan(), weightLayoutFrom(args));
  });
}

const rt::Target &targetFrom(const Args &args) {
  std::string device = args.get("device").value_or("cpu");
  const rt::Target *target = rt::findTarget(device);
  if (!target)
    throw UsageError("--device must be cpu or cuda, got '" + device + "'");
  return *target;
}

void checkInput(const Args &args) {
  const std::string &in = inputFile(args);
  if (std::FILE *f = std::fopen(in.c_str(), "rb"))
    std::fclose(f);
  else
    throw CliError(in, std::string("cannot read the file: ") + std::strerror(errno));
}

void checkOutput(const Args &args, const std::string &name) {
  std::string file = args.getFile(name);
  if (file.empty())
    return;
  if (std::string why = rt::checkWritable(file); !why.empty())
    throw CliError(file, "cannot write the file: " + why);
}

std::string outputFile(const Args &args) {
  auto out = args.get("output");
  if (!out || out->empty())
    throw UsageError("needs an output file: -o FILE");
  return *out;
}

int runRewrite(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  AmpSettings options = ampOptionsFrom(args);
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = onFile(in, [&] { return loadGraph(ctx, in); });
  IrPrinting printing{args.has("print-ir-before-amp"), args.has("print-ir-after-amp"),
                      args.has("print-ir-full-constants")};
  onFile(in, [&] { runAmpPipeline(*module, options, printing); });
  onFile(out, [&] { saveGraph(*module, out); });
  return 0;
}

int runDot(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = onFile(in, [&] { return loadGraph(ctx, in); });
  onFile(out, [&] { writeFileAtomically(out, exportDot(*module)); });
  return 0;
}

int runReport(const Args &args) {
  const std::string &in = inputFile(args);
  MLIRContext ctx;
  PrecisionReport report = onFile(in, [&] {
    OwningOpRef<ModuleOp> module = loadGraph(ctx, in);
    bool ampAsked = false; // AMP options without --train: the rewritten forward graph
    for (const OptionSpec &s : ampOptionSpecs())
      ampAsked = ampAsked || args.has(s.name);
    if (args.has("train")) // the training step, as `ampc compile --train` makes it
      runTrainingPipeline(*module, ampOptionsFrom(args), trainSettingsFrom(args));
    else if (ampAsked) // as `ampc rewrite` would write it
      runAmpPipeline(*module, ampOptionsFrom(args));
    return makeReport(*module);
  });
  std::cout << (args.has("json") ? reportJson(report) : reportText(report));
  return 0;
}


static std::vector<OptionSpec> withTrainingOptions(std::vector<OptionSpec> specs) {
  for (OptionSpec &s : trainingOptionSpecs())
    specs.push_back(s);
  return specs;
}

/// The options of a training run: steps, epochs, batch, data, lr, seed.
static std::vector<OptionSpec> withRunOptions(const char *stepsHelp,
                                              std::vector<OptionSpec> specs) {
  std::vector<OptionSpec> run = {
      {"steps", true, false, stepsHelp},
      {"epochs", true, false, "passes over the training set (default 1)"},
      {"batch", true, false, "the batch size (must be the graph's)"},
      {"data", true, false, "synthetic (default), fashion-mnist[:DIR], FILE.safetensors or tokens:SHARDS"},
      {"lr", true, false, "learning rate (0.01); a schedule's peak"},
      {"lr-total-steps", true, false,
       "a schedule's length in optimizer steps (default: the run's, or the resumed run's)"},
      {"log-every", true, false, "a progress line every N optimizer steps"},
      {"val-data", true, false,
       "the validation set: fashion-mnist-test[:DIR], FILE.safetensors or tokens:SHARDS (default: "
       "Fashion-MNIST's test set when training on it)"},
      {"eval-every", true, false, "validates every N optimizer steps (and at the end)"},
      {"save-every", true, false, "with --checkpoint: also writes it every N optimizer steps"},
      {"save-best", true, false,
       "writes the training state here whenever an evaluation is the best yet (--best-metric)"},
      {"best-metric", true, false,
       "what --save-best, --early-stop and reduce_lr_on_plateau follow: val_loss (default), "
       "val_accuracy, ema_val_loss or ema_val_accuracy"},
      {"early-stop", true, false,
       "stops after N evaluations in a row that do not improve on the best (--eval-every)"},
      {"plateau-patience", true, false,
       "reduce_lr_on_plateau: evaluations without improvement the rate waits (10)"},
      {"plateau-factor", true, false, "reduce_lr_on_plateau: the cut, a factor below 1 (0.1)"},
      {"plateau-threshold", true, false,
       "reduce_lr_on_plateau: the relative margin an improvement needs (1e-4)"},
      {"plateau-cooldown", true, false,
       "reduce_lr_on_plateau: evaluations after a cut that do not count (0)"},
      {"seed", true, false, "seed of init, shuffling, dropout and synthetic data (0)"}};
  run.insert(run.end(), specs.begin(), specs.end());
  return run;
}

static std::vector<OptionSpec> withAmpOptions(std::vector<OptionSpec> specs) {
  for (OptionSpec &s : ampOptionSpecs())
    specs.push_back(s);
  return specs;
}

const std::vector<Command> &commands() {
  static const std::vector<Command> table = {
      {"model", "model [NAME] [--hf-config config.json] [--peft-config adapter_config.json] "
                "[--set key=value]... -o FILE",
       "writes a model of the zoo as a saved graph (.json or .mlir)",
       {{"output", true, false, "the file to write"},
        {"set", true, true, "overrides a model parameter, key=value"},
        {"hf-config", true, false,
         "a Hugging Face config.json (gpt2, llama, mistral, qwen2): the zoo model of its shape"},
        {"peft-config", true, false,
         "a PEFT LoRA adapter_config.json: the llama's adapters (lora, lora_alpha, lora_targets)"},
        {"list", false, false, "lists the models and their parameters"}},
       runModel},
      {"rewrite", "rewrite IN -o OUT [AMP options] [--print-ir-before-amp] [--print-ir-after-amp]",
       "runs the AMP pass and cast cleanup on a graph (.json or .mlir)",
       withAmpOptions({{"output", true, false, "the file to write"},
                       {"print-ir-before-amp", false, false,
                        "prints the IR before the AMP pass to stderr"},
                       {"print-ir-after-amp", false, false,
                        "prints the IR after the AMP pass to stderr"},
                       {"print-ir-full-constants", false, false,
                        "IR dumps print constants of over 16 elements in full (elided by "
                        "default)"}}),
       runRewrite},
      {"lora", "lora IN -o OUT --targets PATTERN,...|all [--rank R] [--alpha A] [--dropout P] "
               "[--also-train PATTERN,...]",
       "adds LoRA adapters to a graph's linear layers (PEFT's) and freezes the rest",
       {{"output", true, false, "the graph to write (.json or .mlir)"},
        {"targets", true, true,
         "the linear layers to adapt, by name or module, globs allowed ('*.query,*.value'), "
         "or all"},
        {"rank", true, false, "the adapters' rank (8)"},
        {"alpha", true, false, "their scale is alpha / rank (8)"},
        {"dropout", true, false, "dropout on their input in training (0)"},
        {"also-train", true, true,
         "params trained beside the adapters (PEFT's modules_to_save: a new head), by name or "
         "module"}},
       runLora},
      {"report", "report FILE [--json] [AMP options] [--train [training options] [--world-size N]]",
       "per op type, the nodes computing in each dtype, the casts and the FLOP share; with "
       "AMP options, of the graph the AMP pass makes; with --train, of the training step "
       "(and its allreduce buckets)",
       withAmpOptions(withTrainingOptions(
           {{"json", false, false, "prints one JSON object"},
            {"train", false, false, "reports on the training step"},
            {"world-size", true, false, "with --train: data-parallel ranks (1)"}})),
       runReport},
      {"compile", "compile IN -o PLAN.json [AMP options] [--train [training options]] "
                  "[--device cpu|cuda]",
       "runs the AMP pipeline (and with --train the training passes) and writes the plan",
       withAmpOptions(withTrainingOptions({{"output", true, false, "the plan file to write"},
                                           {"train", false, false, "compiles a training step"},
                                           {"check-numerics", false, false,
                                            "with --train: adds the non-finite probes"},
                                           {"world-size", true, false,
                                            "with --train: data-parallel ranks (1)"},
                                           {"device", true, false,
                                            "the target: cpu (default) or cuda"},
                                           noFuseOptionSpec()})),
       runCompile},
      {"run", "run IN [AMP options] [--batch N] [--data synthetic|fashion-mnist[:DIR]|FILE] "
              "[--steps N] [--seed S] [--metrics-json FILE] "
              "[--inputs IN.safetensors [--outputs OUT.safetensors]]",
       "compiles a graph (or takes a plan) and runs its forward pass on a batch stream",
       withAmpOptions({{"batch", true, false, "the batch size (must be the graph's)"},
                       {"data", true, false, "synthetic (default), fashion-mnist[:DIR], FILE.safetensors or tokens:SHARDS"},
                       {"steps", true, false, "batches to run (default: one pass, or 10)"},
                       {"seed", true, false, "seed of the params and synthetic data (0)"},
                       {"metrics-json", true, false, "writes the run's figures as JSON"},
                       {"inputs", true, false,
                        "runs once on the named inputs of a safetensors file"},
                       {"outputs", true, false,
                        "with --inputs: writes every graph output to a safetensors file"},
                       {"weights", true, true,
                        "the params' values: a checkpoint or a weights-only file (as --init-from; "
                        "repeat it for a LoRA adapter over a base)"},
                       {"init-layout", true, false,
                        "--weights' Linear weights: torch ([out, in]), graph or hf (a Hub GPT-2 or LLaMA)"},
                       {"ema", false, false,
                        "--weights' averages: a checkpoint of a run with --ema-decay"},
                       {"ignore-index", true, false,
                        "softmax_cross_entropy: rows with this label count for nothing"},
                       {"class-weights", true, false,
                        "softmax_cross_entropy: W0,W1,...: each class's weight"},
                       {"device", true, false, "cpu (default) or cuda"},
                       noFuseOptionSpec(),
                       {"no-cuda-graph", false, false,
                        "queues every kernel of every batch (no CUDA graph replay)"},
                       {"tune-gemms", false, false,
                        "times cuBLASLt's candidates for each GEMM and runs the fastest"},
                       {"profile", false, false, "prints the time per batch of each kernel"}}),
       runRun},
      {"train", "train IN [AMP options] [training options]",
       "compiles a training step (autodiff, loss scaling, optimizer) and trains it",
       withAmpOptions(withTrainingOptions(withRunOptions(
           "optimizer steps (default: --epochs over real data, 100 otherwise)", {
           {"checkpoint", true, false, "writes the training state (safetensors) at the end"},
           {"resume", true, false, "continues from a checkpoint"},
           {"init-from", true, true,
            "starts from the weights of a safetensors file, a sharded checkpoint's index or "
            "its folder (fresh optimizer state); repeated, their tensors together (a base and "
            "a LoRA adapter)"},
           {"init-layout", true, false,
            "--init-from's Linear weights: torch ([out, in]), graph or hf (a Hub GPT-2 or "
            "LLaMA; default: the file's metadata)"},
           {"metrics-json", true, false, "writes the run's figures as JSON"},
           {"device", true, false, "cpu (default) or cuda"},
           noFuseOptionSpec(),
           {"no-cuda-graph", false, false,
            "queues every kernel of every step (no CUDA graph replay)"},
           {"tune-gemms", false, false,
            "times cuBLASLt's candidates for each GEMM and runs the fastest"},
           {"check-numerics", false, false,
            "names the first op that produced an inf or NaN, its cause and the fix"},
           {"profile", false, false, "prints the time per step of each kernel"}}))),
       runTrain},
      {"doctor", "doctor IN [AMP options] [training options] [--data D] [--steps N] "
                 "[--json FILE] [--dot FILE]",
       "trains N steps (20) measuring every value against L's range: the ops closest to "
       "overflow, the gradients lost to underflow, and the options to train with",
       withAmpOptions(withTrainingOptions(withRunOptions(
           "optimizer steps (default 20)", {
           {"init-from", true, true,
            "starts from the weights of a safetensors file, a sharded index or a folder "
            "(repeatable)"},
           {"init-layout", true, false, "--init-from's Linear weights: torch, graph or hf"},
           {"json", true, false, "writes the ranges and the verdict as JSON"},
           {"dot", true, false, "draws the graph coloured by headroom (Graphviz)"}}))),
       runDoctor},
      {"dot", "dot FILE -o OUT.dot", "draws the graph for Graphviz, nodes coloured by dtype",
       {{"output", true, false, "the .dot file to write"}},
       runDot},
      {"plot", "plot METRICS.json -o FILE.svg",
       "draws a training run's curves: loss (train and validation), learning rate, loss scale",
       {{"output", true, false, "the .svg file to write"}},
       runPlot},
      {"import", "import MODEL.onnx -o OUT.json|.mlir [--batch N] [--set NAME=N] "
                 "[--loss softmax_cross_entropy|mse [--labels NAME[:SHAPE:DTYPE]] [--loss-on OUT] "
                 "[--class-axis N]] [--fuse-attention]",
       "imports an ONNX model: initializers become params with their values and names",
       {{"output", true, false, "the graph file to write (.json or .mlir)"},
        {"batch", true, false, "fixes a dynamic first dimension of the inputs"},
        {"set", true, true, "fixes a named dynamic dimension: NAME=N"},
        {"loss", true, false, "adds a loss: softmax_cross_entropy or mse"},
        {"labels", true, false, "the loss's labels input: NAME[:SHAPE:DTYPE] (labels)"},
        {"loss-on", true, false, "the output the loss reads (the first)"},
        {"class-axis", true, false,
         "the output's axis of classes for softmax_cross_entropy (the last; 1 for [N, C, H, W])"},
        {"fuse-attention", false, false,
         "imports attention (MatMul, scale, Softmax, MatMul) as one fused attention op"}},
       runImport},
      {"export", "export IN -o MODEL.onnx [--weights FILE [--init-layout L] [--ema]] [--seed S]",
       "exports a forward graph, casts included, as an ONNX model (opset 17), with trained "
       "weights as its initializers",
       {{"output", true, false, "the .onnx file to write"},
        {"weights", true, true,
         "the initializers' values: a checkpoint or a weights-only file (as ampc run "
         "--weights; default: the params' init)"},
        {"init-layout", true, false,
         "--weights' Linear weights: torch ([out, in]), graph or hf (a Hub GPT-2 or LLaMA)"},
        {"ema", false, false, "--weights' averages: a checkpoint of a run with --ema-decay"},
        {"seed", true, false, "seed of params with random init kinds (0, as ampc run)"}},
       runExport},
      {"tokenize", "tokenize IN.txt|IN.jsonl... -o TRAIN.bin [--val VAL.bin [--val-fraction F]] "
                   "[--tokenizer tokenizer.json] [--eot TOKEN]",
       "writes texts as tokens in llm.c's shard format, for --data tokens: (their bytes, "
       "vocabulary 256, or a Hugging Face BPE tokenizer's ids)",
       {{"output", true, false, "the training shard to write"},
        {"val", true, false, "also writes a validation shard of the text's end"},
        {"val-fraction", true, false, "the share of the text --val takes (0.1)"},
        {"tokenizer", true, false, "a Hugging Face tokenizer.json (GPT-2's, LLaMA's) instead of bytes"},
        {"eot", true, false, "ends each document with this token (<|endoftext|>)"}},
       runTokenize},
      {"sample", "sample CHECKPOINT|WEIGHTS... --graph G --prompt TEXT --tokens N [--tokenizer tokenizer.json] "
                 "[--stop TEXT] [--temperature T] [--top-k K] [--top-p P] [--seed S] [--ema]",
       "continues a prompt with a language model (a trained gpt2 or llama): byte-level, or "
       "through the model's tokenizer.json",
       withAmpOptions({{"graph", true, false, "the graph the checkpoint was trained from"},
                       {"prompt", true, false, "the text to continue"},
                       {"tokens", true, false, "how many tokens to add (0)"},
                       {"tokenizer", true, false,
                        "the model's Hugging Face tokenizer.json (bytes without it)"},
                       {"stop", true, false,
                        "ends the sample once its text holds this (an end-of-text token, say)"},
                       {"temperature", true, false,
                        "divides the logits before sampling; 0 takes the most likely (1)"},
                       {"top-k", true, false, "samples among the K most likely only (all)"},
                       {"top-p", true, false,
                        "then among the fewest most likely whose probabilities reach P (1)"},
                       {"seed", true, false, "seed of the draws (0)"},
                       {"no-kv-cache", false, false,
                        "runs the graph as given, the whole window per token, not the zoo "
                        "model's decode graph"},
                       {"init-layout", true, false, "the checkpoint's Linear weights: torch, graph or hf"},
                       {"ema", false, false,
                        "the weight averages of a checkpoint of a run with --ema-decay"},
                       {"device", true, false, "cpu (default) or cuda"},
                       noFuseOptionSpec()}),
       runSample},
      {"weights", "weights CHECKPOINT --graph G -o OUT.safetensors [--layout graph|hf|peft] "
                  "[--ema] [--merge-lora] [--save-dtype f32|f16|bf16] [--vocab N]",
       "writes a checkpoint's model weights alone (f32 masters where kept, no optimizer "
       "state), in the graph's names or Hugging Face's (gpt2, llama; LoRA merged), or a LoRA "
       "model's adapters as PEFT saves them, for inference",
       {{"graph", true, false, "the graph the checkpoint was trained from"},
        {"output", true, false, "the safetensors file to write"},
        {"layout", true, false,
         "graph (ampc's names, the default), hf (transformers', LoRA merged) or peft (the "
         "LoRA adapters alone, as PEFT saves them)"},
        {"save-dtype", true, false, "f32 (default), f16 or bf16, rounded to nearest even"},
        {"vocab", true, false, "with --layout hf: the vocabulary's rows to keep (GPT-2's 50257)"},
        {"ema", false, false,
         "the weight averages (a run with --ema-decay) in place of the trained weights"},
        {"merge-lora", false, false,
         "with --layout graph: LoRA adapters folded into their layers' weights (an imported "
         "model's, in PyTorch's names and layout)"}},
       runWeights},
  };
  return table;
}

} // namespace ampc::cli
