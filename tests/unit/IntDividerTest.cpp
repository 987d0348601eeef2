// The index divider (runtime/numerics/IntDivider.h) against / and %: the
// multiply-high division the CUDA kernels take their coordinates by.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/numerics/IntDivider.h"

using namespace ampc::num;

namespace {

TEST(IntDivider, IsExactBelowTwoToTheThirtyOne) {
  std::mt19937 gen(7);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 4100; ++d)
    divisors.push_back(d);
  for (uint32_t s = 1; s <= 31; ++s) // powers of two and their neighbours
    for (int64_t d : {(int64_t(1) << s) - 1, int64_t(1) << s, (int64_t(1) << s) + 1})
      if (d <= (int64_t(1) << 31))
        divisors.push_back((uint32_t)d);
  for (int i = 0; i < 2000; ++i)
    divisors.push_back(1 + gen() % 0x7FFFFFFFu);
  const uint32_t top = 0x7FFFFFFFu; // the largest numerator it takes
  for (uint32_t d : divisors) {
    IntDivider<uint32_t> div(d);
    std::vector<uint32_t> ns = {0, 1, d - 1, top, top - 1, top / d * d, top / d * d - 1};
    for (uint32_t k : {1u, 2u, 3u, 7u, 1000u})
      if (uint64_t(d) * k <= top)
        for (uint32_t n : {d * k - 1, d * k, d * k + 1})
          ns.push_back(n);
    for (int i = 0; i < 200; ++i)
      ns.push_back(gen() & top);
    for (uint32_t n : ns) {
      if (n > top)
        continue;
      DivMod<uint32_t> q = div.divMod(n);
      ASSERT_EQ(q.quotient, n / d) << n << " / " << d;
      ASSERT_EQ(q.remainder, n % d) << n << " % " << d;
    }
  }
  // A whole range for the small divisors a pooling window's strides and a
  // layer's widths are.
  for (uint32_t d : {1u, 2u, 3u, 7u, 56u, 64u, 112u, 224u, 768u}) {
    IntDivider<uint32_t> div(d);
    for (uint32_t n = 0; n < 1u << 20; ++n)
      ASSERT_EQ(div.div(n), n / d) << n << " / " << d;
  }
}

} // namespace
