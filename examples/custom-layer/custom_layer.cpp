// Custom layers from primitive ops: RMSNorm and a SwiGLU feed-forward block,
// written as functions over the builder like ampc's own layers
// (<ampc/compiler/Layers.h>). The program builds a small classifier with
// them, saves it, runs the AMP pass from C++ with a custom list and prints
// the precision report, then compiles a training step to a plan:
//
//   custom_layer OUT.json OUT.train.plan.json
//
// `ampc train OUT.json` trains the saved graph; the plan runs with the
// runtime alone (examples/train-plan).
#include <ampc/Builder.h>

#include <cstdio>

using ampc::GraphBuilder;
using ampc::Tensor;

/// RMSNorm over the last axis: x / sqrt(mean(x^2) + eps) * g, g learned
/// (ones at the start). Its params and nodes are named `<name>.g`,
/// `<name>.mean_square`, ...
Tensor rmsNorm(GraphBuilder &b, Tensor x, llvm::StringRef name, double eps = 1e-6) {
  auto scope = b.scope(name);
  Tensor g = b.param("g", {x.dim(-1)}, ampc::Init::ones());
  Tensor meanSquare = b.reduceMean(b.unary("square", x), {-1}, /*keepdims=*/true, "mean_square");
  Tensor inverse = b.unary("rsqrt", b.scale(meanSquare, 1.0, eps, "plus_eps"), "inverse_rms");
  return b.mul(b.mul(x, inverse, "normed"), g, "scaled");
}

/// SwiGLU: down(silu(gate(x)) * up(x)), silu(v) = v * sigmoid(v); the
/// projections have no bias, as in LLaMA.
Tensor swiGlu(GraphBuilder &b, Tensor x, int64_t hidden, llvm::StringRef name) {
  auto scope = b.scope(name);
  Tensor gate = ampc::linear(b, x, hidden, "gate", /*bias=*/false);
  Tensor up = ampc::linear(b, x, hidden, "up", /*bias=*/false);
  Tensor silu = b.mul(gate, b.unary("sigmoid", gate), "silu");
  return ampc::linear(b, b.mul(silu, up, "glu"), x.dim(-1), "down", /*bias=*/false);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: custom_layer OUT.json OUT.train.plan.json\n");
    return 2;
  }
  try {
    mlir::MLIRContext ctx;
    {
      GraphBuilder b(ctx, "swiglu_net");
      Tensor x = b.input("x", {64, 784});
      Tensor labels = b.input("labels", {64}, "i64");
      Tensor h = ampc::linear(b, x, 128, "embed");
      h = b.add(h, swiGlu(b, rmsNorm(b, h, "norm1"), 256, "ffn"), "residual");
      Tensor logits = ampc::linear(b, rmsNorm(b, h, "norm2"), 10, "head");
      b.output(logits);
      b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
      ampc::saveGraph(*b.finish(), argv[1]);
    }

    // The AMP pass from C++: O1 in bf16, with the gates' sigmoids kept in
    // f32 by a custom black list (as `--custom-black-list sigmoid`).
    ampc::AmpSettings amp;
    amp.dtype = "bf16";
    amp.customBlackList = {"sigmoid"};
    mlir::OwningOpRef<mlir::ModuleOp> rewritten = ampc::loadGraph(ctx, argv[1]);
    ampc::runAmpPipeline(*rewritten, amp);
    std::printf("%s", ampc::reportText(ampc::makeReport(*rewritten)).c_str());

    // A training step (autodiff, optimizer; bf16 needs no loss scaling),
    // lowered to a plan for the CPU, as `ampc compile --train` does.
    ampc::TrainSettings training;
    training.optimizer = "adam";
    mlir::OwningOpRef<mlir::ModuleOp> step = ampc::loadGraph(ctx, argv[1]);
    ampc::runTrainingPipeline(*step, amp, training);
    ampc::rt::Plan plan = ampc::lowerToPlan(*step);
    ampc::writeFileAtomically(argv[2], ampc::rt::planToJson(plan));
    std::printf("training plan: %zu steps, %lld bytes at peak\n", plan.steps.size(),
                (long long)plan.peakBytes());
  } catch (const std::exception &e) { // GraphError names the node at fault
    std::fprintf(stderr, "custom_layer: error: %s\n", e.what());
    return 1;
  }
}
