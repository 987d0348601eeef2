// ampc-dp-check: data-parallel training checked under mpirun.
//
//   mpirun -np N ampc-dp-check PLAN_N PLAN_1 STEPS [--inject-inf STEP] [--lr X]
//                              [--tolerance REL] [--device D]
//
// PLAN_N is a training plan compiled for N ranks (ampc compile --train
// --world-size N) with batch b, PLAN_1 the same model for one rank with
// batch N·b. Each step, rank 0's reference executor (PLAN_1) takes a global
// batch of synthetic data; every rank trains PLAN_N on its b rows of it.
// Rank 0 prints whether the training state is the same bits on every rank
// after every step, how far it is from the one-rank run on the whole batch,
// (within REL of the largest param, 1e-5 by default), and the loss scales
// and skipped steps. With --inject-inf, the last rank
// puts an inf into its first float input at that step: every rank must skip
// it and halve the scale. With --device, the ranks run PLAN_N on that
// backend (cuda-emulated: through its NCCL communicator), the reference
// stays on the CPU. Exit status 0 when everything agrees.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mpi.h>

#include "runtime/core/Plan.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/Data.h"

using namespace ampc::rt;

namespace {

/// The bytes of every param buffer, in plan order: the training state.
std::vector<std::byte> state(const Plan &plan, Executor &ex) {
  std::vector<std::byte> all;
  for (const Buffer &b : plan.buffers)
    if (b.kind == BufferKind::Param) {
      std::vector<std::byte> bytes = ex.readBytes(b.id);
      all.insert(all.end(), bytes.begin(), bytes.end());
    }
  return all;
}

uint64_t fnv(const std::vector<std::byte> &bytes) {
  uint64_t h = 1469598103934665603ull;
  for (std::byte b : bytes)
    h = (h ^ (uint64_t)b) * 1099511628211ull;
  return h;
}

/// Copies rank `rank`'s rows of every batched input of the reference into
/// the rank's executor.
void shard(const Plan &whole, Executor &ref, const Plan &part, Executor &ex, int rank) {
  for (int id : part.inputs) {
    const Buffer &b = part.buffers[id];
    int wid = whole.find(b.name);
    if (b.name == "lr" || wid < 0 || b.shape.empty())
      continue;
    std::vector<std::byte> all = ref.readBytes(wid);
    size_t bytes = b.bytes;
    ex.write(id, all.data() + rank * bytes, bytes);
  }
}

/// The loss scale, 1 where the plan has none (no scaling).
double scaleOf(const Plan &plan, Executor &ex) {
  int id = plan.find("loss_scale");
  return id < 0 ? 1.0 : ex.readScalar(id);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: ampc-dp-check PLAN_N PLAN_1 STEPS [--inject-inf STEP] [--lr X] "
                         "[--tolerance REL] [--device D]\n");
    return 2;
  }
  int inject = -1;
  double lr = 0.05, tolerance = 1e-5;
  std::string device = "cpu";
  for (int i = 4; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--inject-inf"))
      inject = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--lr"))
      lr = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--tolerance"))
      tolerance = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--device"))
      device = argv[i + 1];
  }
  int steps = std::atoi(argv[3]);
  std::unique_ptr<Communicator> comm = createCommunicator("mpi");
  int rank = comm->rank(), ranks = comm->size();
  try {
    Plan part = loadPlan(argv[1]), whole = loadPlan(argv[2]);
    ExecOptions options{true, 7, false, device, true, comm.get()};
    Executor ex(part, options), ref(whole, {true, 7});
    DataFeed feed(whole, "synthetic", true, 11, {"lr"});
    ex.writeScalar(ex.id("lr"), lr);
    ref.writeScalar(ref.id("lr"), lr);
    bool identical = true;
    for (int step = 0; step < steps; ++step) {
      feed.fill(ref, step);
      shard(whole, ref, part, ex, rank);
      if (step == inject && rank == ranks - 1)
        for (int id : part.inputs)
          if (isFloat(part.buffers[id].dtype) && part.buffers[id].name != "lr") {
            std::vector<float> v = ex.readF32(id);
            v[0] = INFINITY;
            ex.writeF32(id, v);
            break;
          }
      std::vector<std::byte> before = state(part, ex);
      ex.run();
      ref.run();
      uint64_t h = fnv(state(part, ex));
      std::vector<uint64_t> all(ranks);
      MPI_Allgather(&h, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
      for (uint64_t other : all)
        identical = identical && other == all[0];
      if (step == inject && rank == 0) {
        double scale = scaleOf(part, ex);
        std::vector<std::byte> after = state(part, ex);
        // Only the scale and its counters may change on a skipped step.
        size_t changed = 0;
        for (size_t i = 0; i < after.size(); ++i)
          changed += after[i] != before[i];
        std::printf("inf on rank %d at step %d: skipped on every rank: %s (skipped %g), scale "
                    "now %g, %zu state bytes changed (the scale and its counters)\n",
                    ranks - 1, step, identical ? "yes" : "no",
                    ex.readScalar(part.skippedSteps), scale, changed);
      }
    }
    int status = identical ? 0 : 1;
    if (rank == 0) {
      // Against one rank on the whole batch: params by name.
      double worst = 0, top = 0;
      for (const Buffer &b : part.buffers)
        if (b.kind == BufferKind::Param && b.trainable && isFloat(b.dtype)) {
          std::vector<float> a = ex.readF32(b.id), r = ref.readF32(whole.find(b.name));
          for (size_t i = 0; i < a.size(); ++i) {
            worst = std::max(worst, (double)std::fabs(a[i] - r[i]));
            top = std::max(top, (double)std::fabs(r[i]));
          }
        }
      std::printf("training state the same bits on all %d ranks after every step: %s\n", ranks,
                  identical ? "yes" : "no");
      bool close = worst <= tolerance * top;
      std::printf("params against one rank on the whole batch: max |diff| %.3g, max |param| %.3g "
                  "(relative %.3g), within %g: %s\n",
                  worst, top, worst / top, tolerance, close ? "yes" : "no");
      if (!close && inject < 0)
        status = 1;
      std::printf("loss scale %g and %g, skipped steps %g and %g\n",
                  scaleOf(part, ex), scaleOf(whole, ref),
                  ex.readScalar(part.skippedSteps), ref.readScalar(whole.skippedSteps));
      std::printf("allreduce bytes per step per rank: %lld\n", (long long)allreduceBytes(part));
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return status;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ampc-dp-check: error: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return 1;
}
