// Element loops in f32 over same-shaped tensors of any float dtype, a chunk
// at a time: each thread widens its chunk of every input into a buffer on its
// stack (an f32 input is read where it lies), runs the loop, and rounds the
// chunk into the output. A mixed-precision kernel so neither allocates nor
// makes whole-tensor copies, and its chunks stay in the core's cache. The
// values are those of widening everything first: each element is rounded
// the same once.
#ifndef AMPC_RUNTIME_CPU_F32CHUNKS_H
#define AMPC_RUNTIME_CPU_F32CHUNKS_H

#include <array>

#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {

/// One input of forF32Chunks: a tensor, and the dtype an f32 one is read
/// rounded to (the step's round_inputs; F32 for none).
struct F32Source {
  const TensorRef *tensor;
  DType roundTo = DType::F32;
};

/// body(in, out, at, n) over the elements of `out`, chunk by chunk: `in[k]`
/// elements [at, at + n) of `sources[k]` (each of out's element count), `out`
/// where the chunk's results go, n at most 2,048. Element i of a chunk is read before it is
/// written, so the planner may give the output an input's memory.
template <size_t N, typename Body>
void forF32Chunks(const std::array<F32Source, N> &sources, const TensorRef &out, Body body) {
  constexpr int64_t kChunk = 2048;
  int64_t total = out.size(), chunks = (total + kChunk - 1) / kChunk;
#pragma omp parallel if (total > kParallelGrain)
  {
    float scratch[N + 1][kChunk];
#pragma omp for schedule(static)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      int64_t at = ch * kChunk, n = std::min(kChunk, total - at);
      const float *in[N];
      for (size_t k = 0; k < N; ++k) {
        const TensorRef &t = *sources[k].tensor;
        if (t.dtype != DType::F32)
          readF32(t, at, n, scratch[k]);
        else if (sources[k].roundTo != DType::F32)
          roundThrough(t.as<float>() + at, sources[k].roundTo, scratch[k], n);
        in[k] = t.dtype == DType::F32 && sources[k].roundTo == DType::F32 ? t.as<float>() + at
                                                                            : scratch[k];
      }
      float *result = out.dtype == DType::F32 ? out.as<float>() + at : scratch[N];
      body(in, result, at, n);
      if (out.dtype != DType::F32)
        writeF32(result, out, at, n);
    }
  }
}

} // namespace ampc::rt

#endif
