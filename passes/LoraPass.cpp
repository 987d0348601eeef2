// graph-lora: low-rank adapters on a graph's linear layers, as Hugging
// Face's PEFT adds them to any model's nn.Linear (docs/training.md, "LoRA
// on any graph").
//
// Algorithm: for each linear layer (passes/LinearLayers.h) a target pattern
// matches (passes/ParamPatterns.h; `all` takes every layer), the matmul's
// result y becomes y + scale(((dropout(x) @ lora_a) @ lora_b), alpha /
// rank), with `<layer>.lora_a` [in, rank] uniform(±1/sqrt(in)) and
// `<layer>.lora_b` [rank, out] zeros: the node names of the zoo's LoRA
// layers, so that loading, merging and export treat both alike. The sum
// takes y's value name, so that outputs and the loss keep theirs. Every
// other param is then frozen, but those `also-train` names (PEFT's
// modules_to_save: a new head).
#include "passes/LinearLayers.h"
#include "passes/ParamPatterns.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"
#include "runtime/core/LoraNames.h"

#include <cmath>

#include "ops/GradBuilder.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHLORA
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphLoraPass : impl::GraphLoraBase<GraphLoraPass> {
  using GraphLoraBase::GraphLoraBase;

  /// A new trainable param after the graph's last value op.
  Value addParam(graph::GraphOp g, StringRef name, RankedTensorType type, DictionaryAttr init) {
    Operation *last = nullptr;
    for (Operation &op : g.getBody().front())
      if (graph::isValueOp(&op))
        last = &op;
    OpBuilder b(g.getContext());
    b.setInsertionPointAfter(last);
    return b
        .create<graph::ParamOp>(NameLoc::get(b.getStringAttr("value '" + name + "'")), type,
                                b.getStringAttr(name), init, nullptr, nullptr, nullptr)
        .getValue();
  }

  void adapt(graph::GraphOp g, graph::NameTable &names, train::LinearLayer l);

  void runOnOperation() override;
};

void GraphLoraPass::adapt(graph::GraphOp g, graph::NameTable &names, train::LinearLayer l) {
  MLIRContext *ctx = g.getContext();
  Builder b(ctx);
  Type element = graph::elementType(l.weight.getType());
  double bound = 1.0 / std::sqrt((double)l.in);
  NamedAttrList uniform, zeros;
  uniform.set("kind", b.getStringAttr("uniform"));
  uniform.set("low", b.getF64FloatAttr(-bound));
  uniform.set("high", b.getF64FloatAttr(bound));
  zeros.set("kind", b.getStringAttr("zeros"));
  Value loraA = addParam(g, names.fresh(l.layer + ".lora_a"),
                         RankedTensorType::get({l.in, rank}, element), uniform.getDictionary(ctx));
  Value loraB = addParam(g, names.fresh(l.layer + ".lora_b"),
                         RankedTensorType::get({rank, l.out}, element), zeros.getDictionary(ctx));

  OpBuilder ob(ctx);
  ob.setInsertionPointAfter(l.matmul);
  graph::GradBuilder gb(ob, [&](StringRef n) { return names.fresh(n); });
  Value x = l.matmul.getA(), y = l.matmul.getY();
  if (dropout > 0) {             // each adapter its own stream, seeded from its name as the zoo's
    NamedAttrList attrs;
    attrs.set("rate", b.getF64FloatAttr(dropout));
    attrs.set("seed", b.getI64IntegerAttr(rt::loraDropoutSeed(l.layer + ".lora_dropout")));
    x = gb.create("dropout", l.layer + ".lora_dropout", {x}, attrs)->getResult(0);
  }
  Value down = gb.create("matmul", l.layer + ".lora_down", {x, loraA})->getResult(0);
  Value up = gb.create("matmul", l.layer + ".lora_up", {down, loraB})->getResult(0);
  NamedAttrList scale;
  scale.set("scale", b.getF64FloatAttr(alpha / (double)rank));
  Value scaled = gb.create("scale", l.layer + ".lora_scale", {up}, scale)->getResult(0);
  Operation *sum = gb.create("add", l.layer + ".lora_add", {y, scaled});
  // The sum is the layer's output now: it takes y's name, y a fresh one.
  std::string yName = graph::valueName(y).str();
  l.matmul->setAttr("outs", b.getStrArrayAttr({names.fresh(yName + ".base")}));
  sum->setAttr("outs", b.getStrArrayAttr({yName}));
  y.replaceAllUsesExcept(sum->getResult(0), sum);
}

void GraphLoraPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (rank < 1) {
    g.emitError("lora: the rank must be 1 or more, got ") << (int64_t)rank;
    return signalPassFailure();
  }
  if (!(alpha > 0) || !(dropout >= 0 && dropout < 1)) {
    g.emitError("lora: alpha must be above 0 and dropout in [0, 1)");
    return signalPassFailure();
  }
  std::vector<train::LinearLayer> layers = train::linearLayers(g);
  if (layers.empty()) {
    g.emitError("lora: the graph has no linear layer (a matmul by a 2-D param)");
    return signalPassFailure();
  }
  std::string known;
  for (size_t i = 0; i < layers.size() && i < 8; ++i)
    known += (i ? ", " : "") + layers[i].layer;
  if (layers.size() > 8)
    known += ", ... (" + std::to_string(layers.size()) + " in all)";
  bool all = targets.size() == 1 && targets[0] == "all";
  std::vector<train::ParamPatterns> patterns; // one each, to check each takes a layer
  for (const std::string &t :
       all ? std::vector<std::string>{} : std::vector<std::string>(targets)) {
    FailureOr<train::ParamPatterns> p = train::ParamPatterns::compile(g, "lora targets", {t});
    if (failed(p))
      return signalPassFailure();
    if (llvm::none_of(layers,
                      [&](train::LinearLayer l) { return p->matches(l.weight.getName()); })) {
      g.emitError("lora targets: '") << t << "' matches no linear layer; the layers are " << known;
      return signalPassFailure();
    }
    patterns.push_back(std::move(*p));
  }
  if (!all && patterns.empty()) {
    g.emitError("lora: give the target layers (patterns, or all); the layers are ") << known;
    return signalPassFailure();
  }
  FailureOr<train::ParamPatterns> trained =
      train::ParamPatterns::compile(g, "lora also-train", alsoTrain);
  if (failed(trained))
    return signalPassFailure();
  graph::NameTable names(g);
  for (train::LinearLayer &l : layers) {
    if (!all && llvm::none_of(patterns, [&](const train::ParamPatterns &p) {
          return p.matches(l.weight.getName());
        }))
      continue;
    if (names.contains(l.layer + ".lora_a")) {
      g.emitError("lora: layer '") << l.layer << "' has adapters already";
      return signalPassFailure();
    }
    adapt(g, names, l);
  }
  Builder b(&getContext());
  for (graph::ParamOp p : g.getOps<graph::ParamOp>()) {
    StringRef name = p.getName();
    if (!name.ends_with(".lora_a") && !name.ends_with(".lora_b") && !trained->matches(name))
      p.setTrainableAttr(b.getBoolAttr(false));
  }
}

} // namespace
} // namespace ampc
