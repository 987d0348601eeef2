// FP8 GEMM layouts (docs/runtime.md, "FP8 GEMMs"), for targets whose FP8
// GEMMs take one layout (cuBLASLt's TN: in row-major terms y = a · bᵀ, a
// [.., M, K] and b [.., N, K]).
//
// Algorithm: for each fp8_matmul with `transpose_a`, or without
// `transpose_b`, that operand is read through a copy with its last two
// dimensions swapped: a `transpose` step (FP8 bytes) right before the
// GEMM, one per operand buffer however many GEMMs read it, and the GEMM's
// flags then say TN. The forward's weights ([K, N]) and the weight
// gradients' two operands are transposed so; the activation gradients'
// GEMMs are TN already. Exact: a transpose moves bytes.
#include <map>

#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

/// The permutation that swaps the last two of `rank` dimensions.
std::vector<int64_t> swapLastTwo(size_t rank) {
  std::vector<int64_t> perm(rank);
  for (size_t d = 0; d < rank; ++d)
    perm[d] = (int64_t)d;
  std::swap(perm[rank - 2], perm[rank - 1]);
  return perm;
}

void run(PlanIndex &index, const PassContext &) {
  rt::Plan &plan = index.rewrite();
  // (operand buffer, phase) -> its transposed copy
  std::map<std::pair<int, std::string>, int> transposed;
  std::vector<rt::Step> steps;
  for (rt::Step &step : plan.steps) {
    if (step.kernel == rt::Kernel::Fp8Matmul) {
      auto layout = [&](int &operand, const char *flag, bool want) {
        if (step.attrs.value(flag, false) == want)
          return;
        std::string phase = step.attrs.value("phase", std::string());
        auto known = transposed.find({operand, phase});
        if (known == transposed.end()) {
          rt::Buffer x = plan.buffers[operand]; // a copy: addBuffer may move the buffers
          std::vector<int64_t> shape = x.shape;
          std::swap(shape[shape.size() - 2], shape[shape.size() - 1]);
          int copy = plan.addBuffer(x.name + ".t", rt::BufferKind::Temp, x.dtype, shape);
          rt::Step t;
          t.name = x.name + ".transpose";
          t.kernel = rt::Kernel::Transpose;
          t.inputs = {operand};
          t.outputs = {copy};
          t.attrs["perm"] = swapLastTwo(shape.size());
          if (step.attrs.contains("phase"))
            t.attrs["phase"] = step.attrs["phase"];
          steps.push_back(std::move(t));
          known = transposed.emplace(std::make_pair(operand, phase), copy).first;
        }
        operand = known->second;
        step.attrs[flag] = want;
      };
      layout(step.inputs[0], "transpose_a", false);
      layout(step.inputs[1], "transpose_b", true);
    }
    steps.push_back(std::move(step));
  }
  plan.steps = std::move(steps);
}

bool tnTarget(const PassContext &context) { return context.target.fp8GemmsTN; }

} // namespace

const PlanPass fp8Layouts = {"fp8-layouts", "", false, true, tnTarget, run};

} // namespace ampc::plan
