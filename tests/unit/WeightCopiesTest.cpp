// Weight copies (graph-fuse-weight-casts, docs/training.md "Weight copies")
// and updates that rewrite a low-precision copy in their own pass
// (`writes_copy`): the same bits as the casts and assigns they replace, on
// every optimizer, with accumulation and skipped steps; copies that follow
// their params through host writes and checkpoints.
#include <algorithm>
#include <cmath>
#include <map>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/core/KernelSignatures.h"
#include "runtime/driver/Checkpoint.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

using test::countKernel;

using Bytes = std::map<std::string, std::vector<char>>;

/// A small zoo model's training plan, for a CPU target with or without
/// fused casts (without: weight copies, as for CUDA).
rt::Plan zooPlan(const std::string &model, const std::string &level,
                 const std::string &optimizer, int64_t accumulate, bool fusedCasts) {
  mlir::MLIRContext ctx;
  std::map<std::string, std::string> sets = {{"batch", "4"}};
  if (model == "bert")
    sets = {{"layers", "1"}, {"batch", "2"}, {"seq", "8"}, {"vocab", "64"}, {"hidden", "32"},
            {"heads", "2"}};
  auto m = buildModel(ctx, model, sets);
  AmpSettings amp;
  amp.level = level;
  TrainSettings train;
  train.optimizer = optimizer;
  train.accumulate = accumulate;
  runTrainingPipeline(*m, amp, train);
  rt::Target target = rt::cpuTarget();
  target.fusedCasts = fusedCasts;
  return lowerToPlan(*m, target);
}

/// Every param after `runs` runs on fixed inputs; an inf in the inputs of
/// run `infAt` (its step is skipped).
Bytes train(const rt::Plan &plan, int runs, int infAt, int64_t accumulate = 1) {
  rt::Executor ex(plan, {true, 5});
  ex.writeScalar(ex.id("lr"), 0.01);
  for (int r = 0; r < runs; ++r) {
    for (int id : plan.inputs) {
      const rt::Buffer &b = plan.buffers[id];
      if (b.name == "lr")
        continue;
      std::vector<double> v(rt::numElements(b.shape));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = rt::isFloat(b.dtype) ? 0.01 * double((i * 37 + r * 11) % 101) - 0.4
                                    : double((i + r) % 4);
      if (r == infAt && rt::isFloat(b.dtype) && !v.empty())
        v[0] = INFINITY;
      test::setValues(ex, b.name, v);
    }
    ex.run(/*apply=*/(r + 1) % accumulate == 0, /*first=*/r % accumulate == 0);
  }
  return test::paramBytes(plan, ex);
}

/// `plan` with each `writes_copy` update split back into the update and an
/// `assign` of the copy right after it.
rt::Plan unfused(rt::Plan plan) {
  std::vector<rt::Step> steps;
  for (rt::Step s : plan.steps) {
    if (!s.attrs.value(rt::attr::kWritesCopy, false)) {
      steps.push_back(std::move(s));
      continue;
    }
    int copy = s.inputs.back();
    s.inputs.pop_back();
    s.attrs.erase(rt::attr::kWritesCopy);
    rt::Step assign{s.name + ".assign", rt::Kernel::Assign, {copy, s.inputs[0]}, {}, rt::Json::object()};
    if (s.attrs.contains("phase"))
      assign.attrs["phase"] = s.attrs["phase"];
    steps.push_back(std::move(s));
    steps.push_back(std::move(assign));
  }
  plan.steps = std::move(steps);
  return plan;
}

int countCopies(const rt::Plan &plan) {
  return (int)std::count_if(plan.buffers.begin(), plan.buffers.end(),
                            [](const rt::Buffer &b) { return b.copyOf >= 0; });
}

struct Case {
  const char *model, *level, *optimizer;
  int64_t accumulate;
};

const Case kCases[] = {
    {"mlp", "O1", "sgd", 1},      {"mlp", "O1", "momentum", 2}, {"mlp", "O2", "adam", 1},
    {"mnist_cnn", "O1", "adam", 1}, {"bert", "O1", "adamw", 1}, {"bert", "O2", "sgd", 2},
};

// Weight copies, written by the updates, give the bits of casting every
// step, including a step skipped for an inf; every copy is its param
// rounded.
TEST(WeightCopies, ChangeNoBitOfTraining) {
  for (const Case &c : kCases) {
    std::string what = std::string(c.model) + " " + c.level + " " + c.optimizer + " x" +
                       std::to_string(c.accumulate);
    rt::Plan fused = zooPlan(c.model, c.level, c.optimizer, c.accumulate, true);
    rt::Plan copies = zooPlan(c.model, c.level, c.optimizer, c.accumulate, false);
    if (std::string(c.level) == "O1") {
      EXPECT_GT(countCopies(copies), 0) << what;
      EXPECT_EQ(countCopies(fused), 0) << what;
    }
    for (const rt::Step &s : copies.steps) {
      if (s.kernel == rt::Kernel::Cast && s.attrs["to"] != "f32") {
        EXPECT_NE(copies.buffers[s.inputs[0]].kind, rt::BufferKind::Param)
            << what << ": " << s.name << " casts a param every step";
      }
    }
    int runs = 4 * (int)c.accumulate;
    Bytes a = train(fused, runs, (int)c.accumulate, c.accumulate);
    Bytes b = train(copies, runs, (int)c.accumulate, c.accumulate);
    for (const auto &[name, bytes] : a)
      EXPECT_EQ(bytes, b[name]) << what << ": " << name;
    for (const rt::Buffer &buf : copies.buffers) {
      if (buf.copyOf < 0)
        continue;
      const rt::Buffer &source = copies.buffers[buf.copyOf];
      std::vector<char> rounded(buf.bytes);
      rt::convertElements(b[source.name].data(), source.dtype, rounded.data(), buf.dtype,
                          rt::numElements(buf.shape));
      EXPECT_EQ(rounded, b[buf.name]) << what << ": " << buf.name << " is not its param rounded";
    }
  }
}

// An update that writes the copy in its own pass equals the update followed
// by the assign it replaced (O2 masters and O1 copies), skipped steps too.
TEST(WeightCopies, UpdatesWritingCopiesEqualUpdateThenAssign) {
  for (const Case &c : kCases) {
    std::string what = std::string(c.model) + " " + c.level + " " + c.optimizer;
    rt::Plan plan = zooPlan(c.model, c.level, c.optimizer, c.accumulate, false);
    rt::Plan split = unfused(plan);
    EXPECT_GT(countKernel(split, rt::Kernel::Assign), countKernel(plan, rt::Kernel::Assign)) << what;
    int runs = 4 * (int)c.accumulate;
    Bytes a = train(plan, runs, 1, c.accumulate), b = train(split, runs, 1, c.accumulate);
    EXPECT_EQ(a, b) << what;
  }
}

// The copy follows every host write of its param (init, --init-from, a
// test's values), checkpoints leave it out, and a checkpoint without copies
// (a CPU run's) resumes a plan with copies.
TEST(WeightCopies, FollowTheirParamsThroughWritesAndCheckpoints) {
  rt::Plan copies = zooPlan("mlp", "O1", "sgd", 1, false);
  rt::Plan fused = zooPlan("mlp", "O1", "sgd", 1, true);
  rt::Executor ex(copies, {true, 9});
  int w = ex.id("fc1.w"), copy = ex.id("fc1.w.f16");
  ASSERT_EQ(copies.buffers[copy].copyOf, w);
  auto rounded = [&](const std::vector<float> &v) {
    std::vector<std::byte> bytes(v.size() * 2);
    rt::fromF32(v.data(), bytes.data(), rt::DType::F16, v.size());
    return bytes;
  };
  EXPECT_EQ(ex.readBytes(copy), rounded(ex.readF32(w))) << "initialised from its param";
  std::vector<float> values(rt::numElements(copies.buffers[w].shape), 1.0f / 3.0f);
  ex.writeF32(w, values);
  EXPECT_EQ(ex.readBytes(copy), rounded(values)) << "a write of the param rewrites the copy";

  std::string path = ::testing::TempDir() + "weight-copies.st";
  rt::Executor cpu(fused, {true, 9});
  cpu.writeF32(cpu.id("fc1.w"), values);
  rt::saveCheckpoint(path, cpu, {});
  rt::Safetensors file = rt::readSafetensors(path);
  EXPECT_FALSE(file.tensors.count("fc1.w.f16"));
  rt::Executor resumed(copies, {true, 1});
  rt::loadParams(file, resumed);
  EXPECT_EQ(resumed.readBytes(copy), rounded(values)) << "loaded with its param";
  rt::saveCheckpoint(path, resumed, {});
  EXPECT_FALSE(rt::readSafetensors(path).tensors.count("fc1.w.f16"))
      << "copies are no training state";
}

TEST(WeightCopies, PlansNamingABadSourceAreRefused) {
  rt::Plan plan = zooPlan("mlp", "O1", "sgd", 1, false);
  int copy = plan.find("fc1.w.f16");
  ASSERT_GE(copy, 0);
  for (int source : {copy, plan.find("x"), plan.find("fc1.b"), (int)plan.buffers.size() + 3}) {
    rt::Plan bad = plan;
    bad.buffers[copy].copyOf = source;
    EXPECT_THROW(rt::planFromJson(rt::planToJson(bad)), rt::PlanError) << source;
  }
  EXPECT_NO_THROW(rt::planFromJson(rt::planToJson(plan)));
}

} // namespace
