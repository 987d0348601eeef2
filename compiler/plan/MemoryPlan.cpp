// Memory planning (runtime/core/MemoryPlanner.h): arena offsets from the
// buffers' live ranges, for the final steps. Always runs, last.
#include "compiler/plan/PlanPass.h"
#include "runtime/core/MemoryPlanner.h"

namespace ampc::plan {
namespace {

void run(PlanIndex &index, const PassContext &) { rt::planMemory(index.rewrite()); }

} // namespace

const PlanPass memoryPlan = {"memory-plan", "", false, true, always, run};

} // namespace ampc::plan
