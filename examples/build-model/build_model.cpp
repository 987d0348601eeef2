// The model zoo's mlp (784-512-512-10), written with the builder API and
// saved as a graph: `build_model [OUT.json]`, then `ampc train OUT.json`.
#include <ampc/Builder.h>
#include <cstdio>

int main(int argc, char **argv) {
  try {
    mlir::MLIRContext ctx;
    ampc::GraphBuilder b(ctx, "mlp");
    ampc::Tensor x = b.input("x", {64, 784});
    ampc::Tensor labels = b.input("labels", {64}, "i64");
    ampc::Tensor h = b.relu(ampc::linear(b, x, 512, "fc1"), "relu1");
    h = b.relu(ampc::linear(b, h, 512, "fc2"), "relu2");
    ampc::Tensor logits = ampc::linear(b, h, 10, "fc3");
    b.output(logits); // an output [batch, classes]: what `ampc train` scores
    b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
    ampc::saveGraph(*b.finish(), argc > 1 ? argv[1] : "mlp.json");
  } catch (const ampc::GraphError &e) { // names the node or value at fault
    std::fprintf(stderr, "build_model: error: %s\n", e.what());
    return 1;
  }
}
