// The runtime's seam: every kernel has a traits row and every graph op a
// kernel; backends by name; a plan made for another target is refused; the
// host path by buffer id; synthetic data; decoded step attributes; the plan's counters; the
// local communicator; the in-order list contract a target may decline; the
// Runner.
#include <algorithm>
#include <cmath>
#include <dlfcn.h>
#include <omp.h>
#include <unistd.h>

#include "compiler/GraphBuilder.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"
#include "ops/GraphDialect.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/device/Communicator.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/Data.h"
#include "runtime/driver/Runner.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

std::vector<std::string> traitNames() {
  std::vector<std::string> names;
  for (const rt::KernelTraits &t : rt::allKernelTraits())
    names.push_back(t.name());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(KernelTraits, EveryCpuKernelHasARowAndEveryRowACpuKernel) {
  std::vector<std::string> rows = traitNames();
  EXPECT_EQ(std::adjacent_find(rows.begin(), rows.end()), rows.end()) << "a row twice";
  EXPECT_EQ(rt::createBackend("cpu")->kernelNames(), rows);
}

TEST(KernelTraits, EveryRowHasACudaKernelAndNoMore) {
  // The CUDA backend is a plugin beside the program (build/lib).
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(n, 0);
  std::string exe(self, n), plugin = exe.substr(0, exe.rfind('/')) + "/../lib/libampc-cuda.so";
  void *handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    GTEST_SKIP() << "this build has no CUDA backend (" << plugin << ")";
  auto names = reinterpret_cast<const char *(*)()>(dlsym(handle, "ampcCudaKernelNames"));
  ASSERT_TRUE(names);
  std::string list = names();
  std::vector<std::string> kernels;
  for (size_t start = 0; start < list.size();) {
    size_t end = std::min(list.find(',', start), list.size());
    kernels.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  EXPECT_EQ(kernels, traitNames()) << "the CUDA backend implements exactly the traits' kernels";
}

TEST(KernelTraits, EveryGraphNodeOpLowersToAKernelWithARow) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  int ops = 0;
  for (mlir::RegisteredOperationName op : ctx.getRegisteredOperations()) {
    llvm::StringRef name = op.getStringRef();
    if (!name.consume_front("graph."))
      continue;
    // Structure, and constants, which lowering turns into buffers.
    if (llvm::is_contained({"graph", "return", "input", "param", "const", "constant"}, name))
      continue;
    ++ops;
    EXPECT_TRUE(rt::findKernelTraits(name.str())) << "no kernel traits for graph." << name.str();
  }
  EXPECT_GT(ops, 60);
}

TEST(KernelTraits, CausalAttentionCountsTheKeptPairs) {
  // q [1, sq, 2, 8], k and v [1, sk, 2, 8]: 2 (8 + 8) FLOPs a pair forward,
  // 2 (24 + 16) backward; causal, query i sees min(i + 1, sk) keys.
  auto flops = [](rt::Kernel kernel, int64_t sq, int64_t sk, bool causal) {
    std::vector<std::vector<int64_t>> in = {{1, sq, 2, 8}, {1, sk, 2, 8}, {1, sk, 2, 8}};
    return rt::kernelFlops(rt::traitsOf(kernel), in, {in[0]}, {false, causal});
  };
  EXPECT_EQ(flops(rt::Kernel::Attention, 4, 4, false), 2 * 16.0 * 2 * 16);
  EXPECT_EQ(flops(rt::Kernel::Attention, 4, 4, true), 2 * 16.0 * 2 * 10);
  EXPECT_EQ(flops(rt::Kernel::Attention, 6, 4, true), 2 * 16.0 * 2 * (10 + 2 * 4));
  EXPECT_EQ(flops(rt::Kernel::AttentionBackward, 3, 5, true), 2 * 40.0 * 2 * 6);
}

TEST(KernelTraits, ConvolutionGradientsCountTheForwardsProducts) {
  // x [2, 8, 8, 3] NHWC, filter [4, 3, 3, 3], dy [2, 8, 8, 4]: 27 taps for
  // each of dy's 512 elements, a multiply-add each; both gradients redo them.
  std::vector<int64_t> x = {2, 8, 8, 3}, w = {4, 3, 3, 3}, dy = {2, 8, 8, 4};
  double forward = rt::kernelFlops(rt::traitsOf(rt::Kernel::Conv2d), {x, w}, {dy}, {});
  EXPECT_EQ(forward, 2.0 * 512 * 27);
  EXPECT_EQ(rt::kernelFlops(rt::traitsOf(rt::Kernel::Conv2dBackwardInput), {dy, w}, {x}, {}), forward);
  EXPECT_EQ(rt::kernelFlops(rt::traitsOf(rt::Kernel::Conv2dBackwardFilter), {x, dy}, {w}, {}),
            forward);
}

TEST(Backends, AreFoundByNameAndAMissingOneSaysWhy) {
  std::vector<std::string> names = rt::backendNames();
  EXPECT_TRUE(llvm::is_contained(names, "cpu"));
  EXPECT_EQ(rt::createBackend("cpu")->target(), rt::cpuTarget());
  try {
    rt::createBackend("tpu");
    ADD_FAILURE() << "an unknown device was accepted";
  } catch (const rt::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("--device tpu: unknown device"), std::string::npos);
  }
}

rt::Plan reluPlan(const rt::Target &target) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "relu");
  b.output(b.relu(b.input("x", {8}), "y"));
  return lowerToPlan(*b.finish(), target);
}

TEST(Executor, RefusesAPlanMadeForAnotherTarget) {
  rt::Plan cuda = reluPlan(rt::cudaTarget());
  EXPECT_EQ(cuda.target, rt::cudaTarget());
  EXPECT_EQ(cuda.buffers[cuda.find("y")].offset % 256, 0);
  try {
    rt::Executor ex(cuda);
    ADD_FAILURE() << "a cuda plan ran on the cpu";
  } catch (const rt::PlanError &e) {
    EXPECT_NE(std::string(e.what()).find("compiled for the cuda target"), std::string::npos)
        << e.what();
  }
  rt::Target loose = rt::cpuTarget();
  loose.alignment = 16;
  EXPECT_THROW(rt::Executor{reluPlan(loose)}, rt::PlanError);
  // The CPU runs its own plans with or without fused casts and in-order lists.
  rt::Target plain = rt::cpuTarget();
  plain.fusedCasts = plain.inOrderLists = false;
  EXPECT_NO_THROW(rt::Executor{reluPlan(plain)});
}

TEST(Executor, MovesHostValuesByBufferIdAndChecksSizes) {
  rt::Executor ex(reluPlan(rt::cpuTarget()));
  int x = ex.id("x"), y = ex.id("y");
  ex.writeF32(x, {-1, 2, -3, 4, 0.5f, -0.5f, 7, -7});
  ex.run();
  EXPECT_EQ(ex.readF32(y), (std::vector<float>{0, 2, 0, 4, 0.5f, 0, 7, 0}));
  float v[8];
  EXPECT_THROW(ex.read(y, v, 4), rt::RuntimeError) << "a size that is not the buffer's";
  EXPECT_THROW(ex.readScalar(y), rt::RuntimeError) << "not a scalar";
  EXPECT_THROW(ex.id("z"), rt::RuntimeError);
}

// Synthetic data: standard normal floats and ids below the vocabulary,
// each element from its own counter, so one thread or many give the same
// batch; another batch or seed, another one.
TEST(DataFeed, SyntheticBatchesAreNormalAndTheSameOnAnyThreads) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "synthetic");
  b.output(b.relu(b.input("x", {100001}), "y"));
  b.output(b.embedding(b.input("ids", {70000}, "i32"), b.param("table", {37, 2}, Init::normal(1.0)),
                       "e"));
  rt::Plan plan = lowerToPlan(*b.finish());
  rt::Executor ex(plan);
  auto batch = [&](uint64_t seed, int64_t index) {
    rt::DataFeed feed(plan, "synthetic", false, seed);
    feed.fill(ex, index);
    std::vector<float> x = ex.readF32(ex.id("x"));
    std::vector<float> ids = ex.readF32(ex.id("ids"));
    x.insert(x.end(), ids.begin(), ids.end());
    return x;
  };
  std::vector<float> first = batch(7, 0);
  double sum = 0, squares = 0;
  for (int64_t i = 0; i < 100001; ++i) {
    ASSERT_TRUE(std::isfinite(first[i])) << i;
    sum += first[i];
    squares += double(first[i]) * first[i];
  }
  EXPECT_NEAR(sum / 100001, 0.0, 0.01);
  EXPECT_NEAR(squares / 100001, 1.0, 0.02);
  EXPECT_NE(first[100000], 0.0f) << "the last element of an odd count is drawn too";
  std::vector<int> counts(37);
  for (size_t i = 100001; i < first.size(); ++i) {
    ASSERT_TRUE(first[i] >= 0 && first[i] < 37) << first[i];
    ++counts[(int)first[i]];
  }
  for (int c : counts) // 70000 / 37 = 1892 each
    EXPECT_NEAR(c, 1892, 200);
  int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  EXPECT_EQ(batch(7, 0), first) << "one thread fills the batch as many do";
  omp_set_num_threads(threads);
  EXPECT_NE(batch(7, 1), first);
  EXPECT_NE(batch(8, 0), first);
}

TEST(StepAttrs, DecodesOnceAndNamesAWrongType) {
  rt::Step s{"s", rt::Kernel::Conv2d, {}, {}, {{"strides", {2, 2}}, {"layout", "NCHW"}, {"groups", 4},
                                      {"rate", 0.25}, {"flag", true}, {"phase", "apply"},
                                      {"round_inputs", {"", "f16"}}}};
  rt::StepAttrs a(s);
  EXPECT_EQ(a.getInts("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(a.getInts("dilations", {1, 1}), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(a.getStr("layout", "NHWC"), "NCHW");
  EXPECT_EQ(a.getInt("groups", 1), 4);
  EXPECT_EQ(a.getF64("rate", 0.5), 0.25);
  EXPECT_TRUE(a.getBool("flag", false));
  EXPECT_EQ(a.phase(), rt::Phase::Apply);
  EXPECT_EQ(a.roundedInput(0), rt::DType::F32);
  EXPECT_EQ(a.roundedInput(1), rt::DType::F16);
  EXPECT_EQ(a.roundedInput(5), rt::DType::F32);
  try {
    a.getInt("layout", 0);
    ADD_FAILURE() << "a string read as a number";
  } catch (const rt::PlanError &e) {
    EXPECT_STREQ(e.what(), "step 's': attribute 'layout' must be a number");
  }
  rt::Step nested{"n", rt::Kernel::Relu, {}, {}, {{"bad", {{"a", 1}}}}};
  EXPECT_THROW(rt::StepAttrs{nested}, rt::PlanError);
}

TEST(Counters, DropoutReadsTheRunCounterAndResumeRestoresIt) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "drop");
  b.output(b.dropout(b.input("x", {256}), 0.5, 9, "d"));
  rt::Plan plan = lowerToPlan(*b.finish());
  ASSERT_GE(plan.iteration, 0);
  EXPECT_EQ(plan.buffers[plan.iteration].kind, rt::BufferKind::State);
  EXPECT_EQ(plan.steps.back().kernel, rt::Kernel::Increment) << "the last step advances the counter";
  EXPECT_EQ(plan.steps[0].inputs.back(), plan.iteration);
  EXPECT_EQ(plan.skippedSteps, -1) << "a forward plan has no finite check";
  auto masks = [&](rt::Executor &ex, int runs) {
    std::vector<std::vector<float>> out;
    for (int i = 0; i < runs; ++i) {
      ex.writeF32(ex.id("x"), std::vector<float>(256, 1.0f));
      ex.run();
      out.push_back(ex.readF32(ex.id("d")));
    }
    return out;
  };
  rt::Executor ex(plan, {/*training=*/true, 5});
  auto three = masks(ex, 3);
  EXPECT_NE(three[0], three[1]) << "each run draws a new mask";
  EXPECT_EQ(ex.readScalar(plan.iteration), 3.0);
  rt::Executor resumed(plan, {true, 5});
  resumed.setIterations(1);
  EXPECT_EQ(masks(resumed, 2), std::vector<std::vector<float>>(three.begin() + 1, three.end()));
}

TEST(Communicator, OneRankLeavesTensorsAsTheyAre) {
  std::unique_ptr<rt::Communicator> c = rt::localCommunicator();
  EXPECT_EQ(c->rank(), 0);
  EXPECT_EQ(c->size(), 1);
  std::vector<float> a = {1, 2, 3}, b = {4, 5};
  c->allReduce({{a.data(), rt::DType::F32, {3}}, {b.data(), rt::DType::F32, {2}}},
               rt::ReduceOp::Average);
  EXPECT_EQ(a, (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(b, (std::vector<float>{4, 5}));
  uint16_t h = 0;
  EXPECT_THROW(c->allReduce({{a.data(), rt::DType::F32, {3}}, {&h, rt::DType::F16, {1}}},
                            rt::ReduceOp::Sum),
               rt::RuntimeError);
}

/// A BERT layer's training plan with its finite check's list read in order
/// (reuse inside the list) or all at once.
rt::Plan bertTraining(bool inOrderLists) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "bert", {{"layers", "1"}, {"batch", "2"}, {"seq", "8"},
                                    {"vocab", "64"}, {"hidden", "32"}, {"heads", "2"}});
  TrainSettings train;
  train.foldUnscale = false; // keep check_finite_and_unscale and its output list
  runTrainingPipeline(*m, AmpSettings{}, train);
  rt::Target target = rt::cpuTarget();
  target.inOrderLists = inOrderLists;
  return lowerToPlan(*m, target);
}

TEST(MemoryPlan, ATargetMayDeclineInOrderListReuse) {
  rt::Plan inOrder = bertTraining(true), whole = bertTraining(false);
  EXPECT_LT(inOrder.arenaBytes, whole.arenaBytes)
      << "reading the list in order lets unscaled gradients reuse consumed ones";
  rt::Executor a(inOrder, {true, 2}), b(whole, {true, 2});
  for (rt::Executor *ex : {&a, &b}) {
    ex->writeScalar(ex->id("lr"), 0.1);
    ex->run();
  }
  EXPECT_EQ(test::paramBytes(inOrder, a), test::paramBytes(whole, b));
}

TEST(Runner, RunsBatchesAndReportsTheLastLoss) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {{"batch", "8"}, {"hidden", "16"}});
  runAmpPipeline(*m, AmpSettings{});
  rt::Plan plan = lowerToPlan(*m);
  rt::RunOptions options;
  options.steps = 3;
  int reports = 0;
  rt::Runner runner(plan, options);
  rt::RunResult r = runner.run([&](const rt::RunProgress &p) {
    ++reports;
    EXPECT_TRUE(p.loss.has_value());
  });
  EXPECT_EQ(r.steps, 3);
  EXPECT_EQ(r.batch, 8);
  EXPECT_EQ(reports, 3);
  ASSERT_TRUE(r.loss.has_value());
  EXPECT_EQ(*r.loss, runner.executor().readScalar(plan.loss));
  EXPECT_GT(*r.loss, 0.0);
  EXPECT_FALSE(r.accuracy.has_value()) << "synthetic data has no labels to score";
}

} // namespace
