// matmul (batched, transposed, broadcast) through the CPU GEMM; f16/bf16
// operands are widened to f32 first and the f32 result is rounded on output.
#include <algorithm>

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/KernelUtil.h"

namespace ampc::rt {
namespace {

void matmul(KernelContext &c) {
  const TensorRef &a = c.in[0], &b = c.in[1], &o = c.out[0];
  bool ta = attrBool(c, "transpose_a", false), tb = attrBool(c, "transpose_b", false);
  int64_t m = o.dim(-2), n = o.dim(-1), k = ta ? a.dim(-2) : a.dim(-1);
  F32In fa(a, roundedInput(c, 0)), fb(b, roundedInput(c, 1));
  F32Out fo(o);
  int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if (b.rank() == 2 && !ta) { // fold a's batch dimensions into the rows
    gemm(false, tb, o.size() / std::max<int64_t>(n, 1), n, k, fa.data(), lda, fb.data(), ldb,
         fo.data(), n);
    fo.commit();
    return;
  }
  std::vector<int64_t> batch(o.shape.begin(), o.shape.end() - 2);
  int64_t batches = numElements(batch);
  auto batchStrides = [&](const TensorRef &t) {
    std::vector<int64_t> dims(t.shape.begin(), t.shape.end() - 2);
    std::vector<int64_t> s(batch.size(), 0), own = stridesOf(dims);
    size_t off = batch.size() - dims.size();
    int64_t matrix = t.dim(-1) * t.dim(-2);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != 1)
        s[off + i] = own[i] * matrix;
    return s;
  };
  std::vector<int64_t> sa = batchStrides(a), sb = batchStrides(b);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, offA = 0, offB = 0;
    for (int64_t d = (int64_t)batch.size() - 1; d >= 0; --d) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      offA += idx * sa[d];
      offB += idx * sb[d];
    }
    gemm(ta, tb, m, n, k, fa.data() + offA, lda, fb.data() + offB, ldb,
         fo.data() + bi * m * n, n);
  }
  fo.commit();
}

} // namespace

void addMatmulKernels(KernelTable &t) {
  t["matmul"] = matmul;
}

} // namespace ampc::rt
