// Trains a compiled training plan through the runtime API, without MLIR:
//
//   ampc compile mlp.json --train -o mlp.train.plan.json
//   train_plan mlp.train.plan.json mlp.ckpt.safetensors [STEPS]
//
// The plan's inputs are fed from host memory: `x` [batch, features] and
// `labels` [batch], a task it can learn (each label is the nearest of ten
// fixed directions), and the learning rate `lr`. It prints the loss, the
// loss scale and the skipped steps, saves a checkpoint, loads it into a
// second executor and checks that both take the next step alike, bit for
// bit.
#include <ampc/Runtime.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace rt = ampc::rt;

namespace {

/// A batch of the task: x ~ N(0, 1); the label is the direction of ten
/// fixed ones that x leans to most.
struct Batch {
  std::vector<float> x;
  std::vector<int64_t> labels;
};

Batch makeBatch(int64_t batch, int64_t features, const std::vector<float> &directions,
                std::mt19937 &rng) {
  std::normal_distribution<float> normal;
  Batch b{std::vector<float>(batch * features), std::vector<int64_t>(batch)};
  for (float &v : b.x)
    v = normal(rng);
  for (int64_t i = 0; i < batch; ++i) {
    float best = -1e30f;
    for (int64_t c = 0; c < 10; ++c) {
      float dot = 0;
      for (int64_t f = 0; f < features; ++f)
        dot += b.x[i * features + f] * directions[c * features + f];
      if (dot > best)
        best = dot, b.labels[i] = c;
    }
  }
  return b;
}

void feed(rt::Executor &ex, const Batch &b) {
  ex.writeF32(ex.id("x"), b.x); // rounded to the input's dtype
  ex.write(ex.id("labels"), b.labels.data(), b.labels.size() * sizeof(int64_t));
}

} // namespace

int main(int argc, char **argv) {
  ampc::rt::applyCpuEnvironment(argv); // OpenMP threads spin briefly, then sleep; OpenBLAS's kernels fit the CPU
  if (argc < 3) {
    std::fprintf(stderr, "usage: train_plan PLAN.json CHECKPOINT.safetensors [STEPS]\n");
    return 2;
  }
  try {
    rt::Plan plan = rt::loadPlan(argv[1]);
    int64_t steps = argc > 3 ? std::stoll(argv[3]) : 100;
    const rt::Buffer &x = plan.buffers[plan.find("x")];
    int64_t batch = x.shape[0], features = x.shape[1];

    rt::ExecOptions options;
    options.training = true;
    options.seed = 1; // the params' initialisation
    rt::Executor ex(plan, options);
    ex.writeScalar(ex.id("lr"), 0.05);

    std::mt19937 rng(7);
    std::normal_distribution<float> normal;
    std::vector<float> directions(10 * features);
    for (float &v : directions)
      v = normal(rng);

    double first = 0, last = 0;
    Batch b;
    for (int64_t step = 1; step <= steps; ++step) {
      b = makeBatch(batch, features, directions, rng);
      feed(ex, b);
      ex.run(); // forward, backward, loss scaling, optimizer: one step
      last = ex.readScalar(plan.loss);
      if (step == 1)
        first = last;
    }
    int scale = plan.find("loss_scale");
    std::printf("%s: %lld steps of %lld samples on %s\n", plan.name.c_str(), (long long)steps,
                (long long)batch, ex.backend().device().name().c_str());
    std::printf("loss: %.4f -> %.4f\n", first, last);
    std::printf("loss scale: %g, skipped steps: %lld\n", scale >= 0 ? ex.readScalar(scale) : 1.0,
                (long long)ex.readScalar(plan.skippedSteps));
    // An output read back to the host: the logits the last step's forward
    // computed (before its update).
    if (int logits = rt::logitsBuffer(plan, batch); logits >= 0) {
      int64_t classes = plan.buffers[logits].shape[1];
      int64_t right = rt::correctPredictions(ex.readF32(logits), classes, b.labels, batch);
      std::printf("accuracy on the last batch: %.2f\n", double(right) / double(batch));
    }

    // A checkpoint: every param and piece of training state. `ampc train
    // --resume` reads the same metadata.
    rt::saveCheckpoint(argv[2], ex,
                       {{"format", "ampc"},
                        {"graph", plan.name},
                        {"micro_batch", std::to_string(steps)},
                        {"iteration", std::to_string(ex.iterations())},
                        {"skipped_steps", std::to_string((int64_t)ex.readScalar(plan.skippedSteps))},
                        {"accumulate", "1"}});
    rt::Executor resumed(plan, options);
    rt::loadParams(rt::readSafetensors(argv[2]), resumed);
    resumed.setIterations(ex.iterations());
    resumed.writeScalar(resumed.id("lr"), 0.05);

    Batch next = makeBatch(batch, features, directions, rng);
    feed(ex, next);
    feed(resumed, next);
    ex.run();
    resumed.run();
    bool same = ex.readBytes(plan.loss) == resumed.readBytes(plan.loss);
    for (const rt::Buffer &b : plan.buffers)
      if (b.kind == rt::BufferKind::Param)
        same = same && ex.readBytes(b.id) == resumed.readBytes(b.id);
    std::printf("checkpoint: %s; the resumed executor's next step %s\n", argv[2],
                same ? "matches, bit for bit" : "DIFFERS");
    return same && last < first ? 0 : 1;
  } catch (const std::exception &e) { // PlanError, RuntimeError: one line
    std::fprintf(stderr, "train_plan: error: %s\n", e.what());
    return 1;
  }
}
