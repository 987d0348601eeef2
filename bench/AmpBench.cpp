// ampc-bench-amp: figures for the AMP pass.
//  1. Per model at O1 and O2 (f16): casts, nodes in L and the FLOP share in L,
//     for ampc and for Paddle's rule (gray follows producers, black wins, no
//     upstream cast move).
//  2. Time of the AMP pass + cast cleanup on BERT-large and on generated graphs
//     of about 20k and 200k nodes (median of 3 runs), and the growth ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "compiler/GraphBuilder.h"
#include "compiler/Layers.h"
#include "compiler/Pipelines.h"
#include "compiler/PrecisionReport.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"

using namespace ampc;

namespace {

int64_t lowNodes(const PrecisionReport &r) {
  int64_t n = 0;
  for (const auto &[op, counts] : r.ops)
    if (op != "cast" && counts.count("f16"))
      n += counts.at("f16");
  return n;
}

PrecisionReport run(const std::string &model, const std::map<std::string, std::string> &sets,
                    const std::string &level, bool upstream) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, model, sets);
  AmpSettings s;
  s.level = level;
  s.moveCastsUpstream = upstream;
  runAmpPipeline(*m, s);
  return makeReport(*m);
}

/// A generated graph of about `nodes` nodes: repeated blocks of a matmul, a
/// bias add, a ReLU, a reshape, and every fourth block a softmax and a mul.
mlir::OwningOpRef<mlir::ModuleOp> generated(mlir::MLIRContext &ctx, int64_t nodes) {
  GraphBuilder b(ctx, "generated");
  Tensor h = b.input("x", {8, 16});
  Tensor labels = b.input("labels", {8}, "i64");
  for (int64_t i = 0, made = 0; made < nodes; ++i) {
    auto s = b.scope("block" + std::to_string(i));
    h = b.relu(linear(b, h, 16, "fc"), "relu");
    h = b.reshape(h, {8, 16}, "reshape");
    made += 4;
    if (i % 4 == 3) {
      h = b.mul(h, b.softmax(h, -1, "softmax"), "gate");
      made += 2;
    }
  }
  b.setLoss(b.softmaxCrossEntropy(h, labels, "loss"));
  return b.finish();
}

double medianMs(const std::function<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &)> &make,
                int64_t *nodeCount) {
  std::vector<double> times;
  for (int i = 0; i < 3; ++i) {
    mlir::MLIRContext ctx;
    auto m = make(ctx);
    *nodeCount = makeReport(*m).nodes;
    auto t0 = std::chrono::steady_clock::now();
    runAmpPipeline(*m, AmpSettings{});
    auto t1 = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[1];
}

} // namespace

int main() {
  std::printf("%-16s %-5s %12s %14s %12s %14s %10s\n", "model", "level", "casts ampc",
              "casts paddle", "L ops ampc", "L ops paddle", "L FLOPs");
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> models = {
      {"simplenet", {}}, {"mlp", {}}, {"mnist_cnn", {}}, {"resnet", {{"depth", "18"}}},
      {"resnet", {{"depth", "50"}}}, {"bert", {}},
      {"bert", {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}}}};
  for (auto &[model, sets] : models) {
    std::string label = model;
    if (sets.count("depth"))
      label += sets.at("depth");
    if (sets.count("layers"))
      label += "-large";
    else if (model == "bert")
      label += "-base";
    for (const char *level : {"O1", "O2"}) {
      PrecisionReport ours = run(model, sets, level, true);
      PrecisionReport paddle = run(model, sets, level, false);
      std::printf("%-16s %-5s %12lld %14lld %12lld %14lld %9.2f%%\n", label.c_str(), level,
                  (long long)ours.casts, (long long)paddle.casts, (long long)lowNodes(ours),
                  (long long)lowNodes(paddle),
                  100.0 * ours.flopsLowPrecision / ours.flopsTotal);
    }
  }

  std::printf("\nAMP pass + cast cleanup (O1 f16), median of 3:\n");
  int64_t n = 0;
  double bert = medianMs(
      [](mlir::MLIRContext &ctx) {
        return buildModel(ctx, "bert", {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}});
      },
      &n);
  std::printf("  BERT-large   %7lld nodes  %9.1f ms\n", (long long)n, bert);
  int64_t n20 = 0, n200 = 0;
  double t20 = medianMs([](mlir::MLIRContext &ctx) { return generated(ctx, 20000); }, &n20);
  std::printf("  generated    %7lld nodes  %9.1f ms\n", (long long)n20, t20);
  double t200 = medianMs([](mlir::MLIRContext &ctx) { return generated(ctx, 200000); }, &n200);
  std::printf("  generated    %7lld nodes  %9.1f ms\n", (long long)n200, t200);
  std::printf("  growth: %.1fx the nodes took %.1fx the time (linear: %.1fx)\n",
              (double)n200 / n20, t200 / t20, (double)n200 / n20);
  return 0;
}
