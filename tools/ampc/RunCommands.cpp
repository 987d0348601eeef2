// `ampc compile` (graph -> plan) and `ampc run` (inference on a batch stream).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>

#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "llvm/Support/Path.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/Data.h"
#include "runtime/Half.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/Progress.h"

using namespace mlir;

namespace ampc::cli {
namespace {

/// True for a JSON file whose "format" is "ampc.plan".
bool isPlanFile(const std::string &path) {
  if (llvm::sys::path::extension(path) != ".json")
    return false;
  std::ifstream in(path);
  char head[256] = {};
  in.read(head, sizeof head - 1);
  return std::string(head).find("\"ampc.plan\"") != std::string::npos;
}

/// Loads a graph, runs the AMP pipeline (or the training pipeline) and
/// lowers it; or loads a plan.
rt::Plan planFor(const std::string &in, const AmpSettings &settings,
                 const TrainSettings *training = nullptr) {
  if (isPlanFile(in))
    return rt::loadPlan(in);
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = loadGraph(ctx, in);
  if (training)
    runTrainingPipeline(*module, settings, *training);
  else
    runAmpPipeline(*module, settings);
  return lowerToPlan(*module);
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// A float output of shape [batch, classes]: the logits to score.
int logitsBuffer(const rt::Plan &plan, int64_t batch) {
  for (int id : plan.outputs) {
    const rt::Buffer &b = plan.buffers[id];
    if (id != plan.loss && rt::isFloat(b.dtype) && b.shape.size() == 2 && b.shape[0] == batch)
      return id;
  }
  return -1;
}

int64_t correctPredictions(const rt::TensorRef &logits, const rt::TensorRef &labels) {
  std::vector<float> v(logits.size());
  rt::toF32(logits.data, logits.dtype, v.data(), v.size());
  int64_t classes = logits.dim(1), correct = 0;
  for (int64_t r = 0; r < logits.dim(0); ++r) {
    const float *row = v.data() + r * classes;
    int64_t best = std::max_element(row, row + classes) - row;
    int64_t label = labels.dtype == rt::DType::I64 ? labels.as<int64_t>()[r]
                                                   : labels.as<int32_t>()[r];
    correct += best == label;
  }
  return correct;
}

std::string summary(const rt::Buffer &b, const rt::TensorRef &t) {
  std::vector<float> v(t.size());
  rt::toF32(t.data, t.dtype, v.data(), v.size());
  double sum = 0;
  float lo = INFINITY, hi = -INFINITY;
  for (float x : v) {
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  std::string shape;
  for (size_t i = 0; i < b.shape.size(); ++i)
    shape += (i ? "," : "") + std::to_string(b.shape[i]);
  char line[256];
  std::snprintf(line, sizeof line, "  %s %s[%s]: mean %.6g, min %.6g, max %.6g", b.name.c_str(),
                rt::dtypeName(b.dtype), shape.c_str(), v.empty() ? 0.0 : sum / v.size(),
                lo, hi);
  return line;
}

} // namespace

int runCompile(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  AmpSettings settings = ampOptionsFrom(args);
  rt::Plan plan = onFile(in, [&] {
    if (!args.has("train"))
      return planFor(in, settings);
    TrainSettings training = trainSettingsFrom(args);
    return planFor(in, settings, &training);
  });
  onFile(out, [&] { writeFileAtomically(out, rt::planToJson(plan)); });
  return 0;
}

int runRun(const Args &args) {
  const std::string &in = inputFile(args);
  AmpSettings settings = ampOptionsFrom(args);
  std::string data = args.get("data").value_or("synthetic");
  uint64_t seed = args.getInt("seed", 0, 0);
  return onFile(in, [&] {
    checkDevice(args);
    rt::Plan plan = planFor(in, settings);
    rt::DataFeed feed(plan, data, /*train=*/false, seed);
    if (args.has("batch") && args.getInt("batch", 0) != feed.batchSize())
      throw UsageError("the graph takes batches of " + std::to_string(feed.batchSize()) +
                       "; build it for " + *args.get("batch") +
                       " (for a zoo model: ampc model NAME --set batch=" + *args.get("batch") + ")");
    int64_t steps = args.getInt("steps", feed.batchesPerEpoch() ? feed.batchesPerEpoch() : 10);
    rt::Executor ex(plan, {/*training=*/false, seed, /*profile=*/args.has("profile")});
    int logits = logitsBuffer(plan, feed.batchSize());
    int64_t correct = 0;
    double loss = NAN;
    std::vector<double> times;
    Progress progress("run", steps);
    for (int64_t i = 0; i < steps; ++i) {
      feed.fill(ex, i);
      auto t0 = std::chrono::steady_clock::now();
      ex.run();
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (plan.loss >= 0) {
        float l;
        rt::TensorRef t = ex.tensor(plan.loss);
        rt::toF32(t.data, t.dtype, &l, 1);
        loss = l;
      }
      if (feed.labelled() && logits >= 0)
        correct += correctPredictions(ex.tensor(logits), ex.tensor(feed.labelBuffer()));
      char status[96];
      std::snprintf(status, sizeof status, "%.2f ms/batch loss %.4g", times.back(), loss);
      progress.update(i + 1, status);
    }
    progress.finish();
    double ms = median(times);
    double samplesPerS = ms > 0 ? feed.batchSize() / (ms / 1000.0) : 0;
    std::printf("%s: %lld batches of %lld, %.3f ms/batch (median), %.1f samples/s, "
                "peak %lld bytes\n",
                plan.name.c_str(), (long long)steps, (long long)feed.batchSize(), ms,
                samplesPerS, (long long)plan.peakBytes());
    if (plan.loss >= 0)
      std::printf("loss: %.6g\n", loss);
    double accuracy = feed.labelled() && logits >= 0
                          ? double(correct) / double(steps * feed.batchSize())
                          : NAN;
    if (!std::isnan(accuracy))
      std::printf("accuracy: %.4f\n", accuracy);
    if (args.has("profile")) {
      std::vector<std::pair<double, std::string>> rows;
      double total = 0;
      for (const auto &[kernel, msTotal] : ex.profile()) {
        rows.push_back({msTotal / steps, kernel});
        total += msTotal / steps;
      }
      std::sort(rows.rbegin(), rows.rend());
      std::printf("time per batch by kernel:\n");
      for (const auto &[perBatch, kernel] : rows)
        std::printf("  %-24s %9.3f ms %5.1f%%\n", kernel.c_str(), perBatch,
                    total > 0 ? 100 * perBatch / total : 0.0);
    }
    std::printf("outputs of the last batch:\n");
    for (int id : plan.outputs)
      std::printf("%s\n", summary(plan.buffers[id], ex.tensor(id)).c_str());
    if (auto file = args.get("metrics-json")) {
      Json m = {{"command", "run"},
                {"graph", plan.name},
                {"steps", steps},
                {"batch", feed.batchSize()},
                {"step_ms_median", ms},
                {"samples_per_s", samplesPerS},
                {"peak_bytes", plan.peakBytes()},
                {"arena_bytes", plan.arenaBytes},
                {"persistent_bytes", plan.persistentBytes}};
      m["final_loss"] = std::isnan(loss) ? Json(nullptr) : Json(loss);
      if (!std::isnan(accuracy))
        m["eval_accuracy"] = accuracy;
      writeFileAtomically(*file, m.dump(2) + "\n");
    }
    return 0;
  });
}

} // namespace ampc::cli
