// Building small graphs, lowering them and running them in the unit tests.
#ifndef AMPC_TESTS_UNIT_RUNTIMETESTUTIL_H
#define AMPC_TESTS_UNIT_RUNTIMETESTUTIL_H

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "compiler/GraphBuilder.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/plan/PlanPass.h"
#include "models/Models.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"
#include "runtime/core/Convert.h"
#include "runtime/core/Files.h"
#include "runtime/device/Executor.h"

namespace ampc::test {

/// Appends a buffer to a plan built by hand, its elements all `init` at
/// the start; returns its id.
inline int addBuffer(rt::Plan &plan, const char *name, rt::BufferKind kind, rt::DType dtype,
                     std::vector<int64_t> shape, double init = 0) {
  rt::Buffer b;
  b.id = plan.buffers.size();
  b.name = name;
  b.kind = kind;
  b.dtype = dtype;
  b.shape = shape;
  b.bytes = rt::dtypeSize(dtype) * rt::numElements(shape);
  b.init = {{"kind", "constant"}, {"value", init}};
  plan.buffers.push_back(b);
  return b.id;
}

/// Writes `values` into the buffer called `name` through the executor.
inline void setValues(rt::Executor &ex, const std::string &name,
                      const std::vector<double> &values) {
  int id = ex.id(name);
  const rt::Buffer &b = ex.plan().buffers[id];
  std::vector<std::byte> bytes(b.bytes);
  for (size_t i = 0; i < values.size(); ++i)
    rt::storeElement(bytes.data(), b.dtype, i, values[i]);
  ex.write(id, bytes.data(), bytes.size());
}

/// The f32 values of the buffer called `name`, and of a scalar one.
inline std::vector<float> valuesOf(const rt::Executor &ex, const std::string &name) {
  return ex.readF32(ex.id(name));
}
inline double scalarOf(const rt::Executor &ex, const std::string &name) {
  return ex.readScalar(ex.id(name));
}

/// n values in [-scale, scale] in a fixed pattern that `shift` varies:
/// gradients and params for the optimizer tests.
inline std::vector<float> updatePattern(int64_t n, float scale, int shift) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = scale * float(((i * 37 + shift) % 201) - 100) / 100.0f;
  return v;
}

/// Runs the autodiff pass on `module` (its loss set) and makes every
/// trainable param's gradient a graph output, after the outputs it has.
inline void differentiateWithGradOutputs(mlir::ModuleOp module) {
  mlir::PassManager pm(module.getContext());
  pm.nest<graph::GraphOp>().addPass(createGraphAutodiff());
  if (mlir::failed(pm.run(module)))
    throw GraphError("autodiff failed");
  auto g = *module.getOps<graph::GraphOp>().begin();
  auto ret = llvm::cast<graph::ReturnOp>(g.getBody().front().getTerminator());
  for (graph::ParamOp p : train::trainableParams(g))
    if (mlir::Value grad = train::findValue(g, train::gradName(p.getName())))
      ret.getOutputsMutable().append(grad);
}

/// A compiled graph with its executor.
struct Compiled {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  /// Writes `values` (the buffer's element count) into buffer `name`,
  /// integers as they are, floats rounded to its dtype.
  void set(const std::string &name, const std::vector<double> &values) {
    setValues(*ex, name, values);
  }

  std::vector<double> get(const std::string &name) const {
    std::vector<float> f = ex->readF32(ex->id(name));
    return std::vector<double>(f.begin(), f.end());
  }
};

/// With AMPC_DUMP_CUDA_PLANS=DIR, each graph a test lowers is also lowered
/// for the CUDA target and written to DIR/<suite>.<test>-<n>.json: the kernel
/// tests' graphs, which ampc-backend-check runs on a GPU machine against the
/// CPU (scripts/gpu-check.sh prepare).
inline void dumpCudaPlan(mlir::ModuleOp module, const PlanOptions &options = {}) {
  const char *dir = std::getenv("AMPC_DUMP_CUDA_PLANS");
  const ::testing::TestInfo *test = ::testing::UnitTest::GetInstance()->current_test_info();
  if (!dir || !test)
    return;
  std::string name = std::string(test->test_suite_name()) + "." + test->name();
  for (char &ch : name)
    if (!std::isalnum((unsigned char)ch) && ch != '.' && ch != '-')
      ch = '_';
  static std::map<std::string, int> counts;
  std::string path = std::string(dir) + "/" + name + "-" + std::to_string(counts[name]++) + ".json";
  rt::writeFileAtomically(path, rt::planToJson(lowerToPlan(module, rt::cudaTarget(), options)));
}

/// Every fusion but `fusion`: the options that lower the plan of separate
/// steps a fusion is held to.
inline FusionSet fusionsWithout(const plan::PlanPass &fusion) { return FusionSet::allBut(fusion); }

/// The plan's steps that run `kernel`.
inline int countKernel(const rt::Plan &plan, rt::Kernel kernel) {
  return (int)std::count_if(plan.steps.begin(), plan.steps.end(),
                            [&](const rt::Step &s) { return s.kernel == kernel; });
}

/// A one-layer BERT (batch 2, seq 8, vocab 64, hidden 32, 4 heads: the
/// attention scale 1/sqrt(8) is no power of two, so a fused kernel that
/// scales or rounds in the wrong place shows) trained with Adam at `level`
/// in `dtype`; its CUDA plan dumped for the GPU check.
inline mlir::OwningOpRef<mlir::ModuleOp> smallBertTraining(mlir::MLIRContext &ctx,
                                                          const std::string &level,
                                                          const std::string &dtype,
                                                          bool recompute = true) {
  auto m = buildModel(ctx, "bert",
                      {{"layers", "1"},
                       {"batch", "2"},
                       {"seq", "8"},
                       {"vocab", "64"},
                       {"hidden", "32"},
                       {"heads", "4"}});
  AmpSettings amp;
  amp.level = level;
  amp.dtype = dtype;
  TrainSettings train;
  train.optimizer = "adam";
  train.recompute = recompute;
  runTrainingPipeline(*m, amp, train);
  dumpCudaPlan(*m);
  return m;
}

inline Compiled compile(const std::function<void(GraphBuilder &)> &build,
                        rt::ExecOptions options = {},
                        const rt::Target &target = rt::cpuTarget()) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "test");
  build(b);
  auto module = b.finish();
  dumpCudaPlan(*module);
  Compiled c{lowerToPlan(*module, target), nullptr};
  c.ex = std::make_unique<rt::Executor>(c.plan, options);
  return c;
}

/// The bytes of every param buffer (params, masters, optimizer state, loss
/// scale) by name: the training state to compare between runs.
inline std::map<std::string, std::vector<char>> paramBytes(const rt::Plan &plan,
                                                           rt::Executor &ex) {
  std::map<std::string, std::vector<char>> state;
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param) {
      std::vector<std::byte> bytes = ex.readBytes(b.id);
      state[b.name] = std::vector<char>((char *)bytes.data(), (char *)bytes.data() + bytes.size());
    }
  return state;
}

/// `n` values in [-2, 2), each exactly representable in `dtype`.
inline std::vector<double> randomValues(int64_t n, const std::string &dtype, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<double> v(n);
  for (double &x : v) {
    float f = dist(rng);
    if (dtype == "f16")
      f = rt::f16ToF32(rt::f32ToF16(f));
    else if (dtype == "bf16")
      f = rt::bf16ToF32(rt::f32ToBf16(f));
    x = f;
  }
  return v;
}

/// Tolerance of a kernel result in `dtype`: f32 compute, one output rounding.
inline double tolerance(const std::string &dtype, double magnitude) {
  double rel = dtype == "f16" ? 2.0 / 1024 : dtype == "bf16" ? 2.0 / 128 : 2e-6;
  return rel * std::max(magnitude, 1.0);
}

/// Every output (forward) or param (training, after 3 steps) of `plan`, by
/// name, on fixed inputs: for comparing a fused plan with the unfused one.
inline std::map<std::string, std::vector<std::byte>> fixedRunResults(const rt::Plan &plan,
                                                                      bool training) {
  rt::Executor ex(plan, {training, 3});
  for (const rt::Buffer &b : plan.buffers) // biases too, which models start at zero
    if (b.kind == rt::BufferKind::Param && b.trainable && rt::isFloat(b.dtype) && !training) {
      std::vector<double> v(rt::numElements(b.shape));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = 0.05 * double(int(i * 13 % 17) - 8);
      test::setValues(ex, b.name, v);
    }
  for (int r = 0; r < (training ? 3 : 1); ++r) {
    for (int id : plan.inputs) {
      const rt::Buffer &b = plan.buffers[id];
      std::vector<double> v(rt::numElements(b.shape));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = b.name == "lr" ? 0.05
               : rt::isFloat(b.dtype) ? 0.02 * double((i * 29 + r * 7) % 97) - 0.9
                                      : double((i + r) % 4);
      test::setValues(ex, b.name, v);
    }
    ex.run();
  }
  std::map<std::string, std::vector<std::byte>> out;
  for (const rt::Buffer &b : plan.buffers)
    if (training ? b.kind == rt::BufferKind::Param
                 : std::count(plan.outputs.begin(), plan.outputs.end(), b.id) > 0)
      out[b.name] = ex.readBytes(b.id);
  return out;
}

/// The CUDA target's lowering choices on a target the CPU runs: no fused
/// casts (weight copies instead), GEMM epilogues, and elementwise chains
/// (with the fusions that need them) where `chains`.
inline rt::Target cudaChoicesOnCpu(bool chains) {
  rt::Target t = rt::cpuTarget();
  t.fusedCasts = false;
  t.gemmEpilogues = true;
  t.elementwiseChains = chains;
  return t;
}

/// Expects `a` and `b` to leave the same bytes in every output (forward) or
/// param (training) on fixed inputs (fixedRunResults).
inline void expectSameResults(const rt::Plan &a, const rt::Plan &b, bool training,
                              const std::string &what) {
  auto want = fixedRunResults(a, training), got = fixedRunResults(b, training);
  ASSERT_EQ(want.size(), got.size()) << what;
  for (const auto &[name, bytes] : want)
    EXPECT_EQ(bytes, got[name]) << what << ": " << name << " differs";
}

/// Expects an executor to refuse `good` edited by `edit`, with a PlanError
/// whose message contains `message`.
inline void expectRefused(const rt::Plan &good, const std::function<void(rt::Plan &)> &edit,
                          const std::string &message) {
  rt::Plan bad = good;
  edit(bad);
  try {
    rt::Executor ex(bad, {true, 1});
    ADD_FAILURE() << "accepted: " << message;
  } catch (const rt::PlanError &e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

} // namespace ampc::test

#endif
