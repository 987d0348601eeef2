// CPU ranks over MPI (Open MPI): the world of an `mpirun -np N` launch.
//
// MPI has no f16 or bf16 type. Every float buffer is summed with a
// user-defined, non-commutative MPI_Op that adds in f32 and rounds each
// partial sum to the buffer's dtype, which is what the CPU's add kernel
// does; f64 adds in f64. The sums are reduced to rank 0 in rank order and
// broadcast, so every rank holds the same bits. A bucket whose tensors lie
// one after another in memory (the planner packs them) is one reduction.
// A rank that dies ends the job: Open MPI's default error handler aborts,
// and mpirun stops the other ranks when one exits early.
#include <climits>
#include <cstring>
#include <mpi.h>

#include "runtime/core/Convert.h"
#include "runtime/core/Errors.h"
#include "runtime/device/Registry.h"

namespace ampc::rt {
namespace {

template <uint16_t (*Round)(float), float (*Widen)(uint16_t)>
void addHalves(void *in, void *inout, int *count, MPI_Datatype *) {
  auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *count; ++i)
    b[i] = Round(Widen(a[i]) + Widen(b[i]));
}

template <typename T> void addValues(void *in, void *inout, int *count, MPI_Datatype *) {
  auto *a = static_cast<const T *>(in);
  auto *b = static_cast<T *>(inout);
  for (int i = 0; i < *count; ++i)
    b[i] = a[i] + b[i];
}

class MpiCommunicator : public Communicator {
public:
  MpiCommunicator() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      MPI_Init(nullptr, nullptr);
      owner_ = true;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Op_create(addHalves<f32ToF16, f16ToF32>, /*commute=*/0, &f16_);
    MPI_Op_create(addHalves<f32ToBf16, bf16ToF32>, 0, &bf16_);
    MPI_Op_create(addValues<float>, 0, &f32_);
    MPI_Op_create(addValues<double>, 0, &f64_);
  }

  ~MpiCommunicator() override {
    for (MPI_Op *op : {&f16_, &bf16_, &f32_, &f64_})
      MPI_Op_free(op);
    if (owner_)
      MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allReduce(const std::vector<TensorRef> &tensors, ReduceOp op) override {
    if (tensors.empty())
      return;
    DType dtype = tensors.front().dtype;
    for (const TensorRef &t : tensors)
      if (t.dtype != dtype || !isFloat(dtype))
        throw RuntimeError("allreduce: tensors of one call must be floats of one dtype");
    if (op == ReduceOp::Max) { // exact in any order: MPI's own
      if (dtype != DType::F32)
        throw RuntimeError("allreduce: a max is taken over f32 tensors");
      for (const TensorRef &t : tensors)
        for (int64_t at = 0; at < t.size(); at += INT_MAX)
          MPI_Allreduce(MPI_IN_PLACE, static_cast<float *>(t.data) + at,
                        (int)std::min<int64_t>(t.size() - at, INT_MAX), MPI_FLOAT, MPI_MAX,
                        MPI_COMM_WORLD);
      return;
    }
    if (int64_t span = packedElements(tensors)) {
      reduce(tensors.front().data, span, dtype);
    } else {
      for (const TensorRef &t : tensors)
        reduce(t.data, t.size(), dtype);
    }
    if (op == ReduceOp::Average)
      for (const TensorRef &t : tensors)
        scale(t, 1.0f / (float)size_);
  }

  void broadcastBytes(void *data, size_t bytes, int root) override {
    for (size_t at = 0; at < bytes; at += INT_MAX)
      MPI_Bcast(static_cast<char *>(data) + at, (int)std::min<size_t>(bytes - at, INT_MAX),
                MPI_BYTE, root, MPI_COMM_WORLD);
  }

private:
  /// Sums `count` elements at `data` over the ranks into every rank's copy.
  void reduce(void *data, int64_t count, DType dtype) {
    MPI_Datatype type = dtype == DType::F32   ? MPI_FLOAT
                        : dtype == DType::F64 ? MPI_DOUBLE
                                              : MPI_UINT16_T;
    MPI_Op op = dtype == DType::F16 ? f16_ : dtype == DType::BF16 ? bf16_
                : dtype == DType::F32 ? f32_ : f64_;
    size_t element = dtypeSize(dtype);
    for (int64_t at = 0; at < count; at += INT_MAX / 2) {
      int n = (int)std::min<int64_t>(count - at, INT_MAX / 2);
      char *chunk = static_cast<char *>(data) + at * element;
      if (rank_ == 0)
        MPI_Reduce(MPI_IN_PLACE, chunk, n, type, op, 0, MPI_COMM_WORLD);
      else
        MPI_Reduce(chunk, nullptr, n, type, op, 0, MPI_COMM_WORLD);
      MPI_Bcast(chunk, n, type, 0, MPI_COMM_WORLD);
    }
  }

  static void scale(const TensorRef &t, float factor) {
    std::vector<float> v(t.size());
    toF32(t.data, t.dtype, v.data(), v.size());
    for (float &x : v)
      x *= factor;
    fromF32(v.data(), t.data, t.dtype, v.size());
  }

  bool owner_ = false;
  int rank_ = 0, size_ = 1;
  MPI_Op f16_, bf16_, f32_, f64_;
};

} // namespace

void registerMpiCommunicator() {
  registerCommunicator("mpi", [] { return std::make_unique<MpiCommunicator>(); });
}

} // namespace ampc::rt
