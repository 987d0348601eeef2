// The fixture of the kernel tests against f64 references: a dtype (f32,
// f16, bf16) per instance, and a comparison within that dtype's tolerance
// for the largest expected magnitude.
#ifndef AMPC_TESTS_UNIT_KERNELFIXTURE_H
#define AMPC_TESTS_UNIT_KERNELFIXTURE_H

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tests/unit/RuntimeTestUtil.h"

namespace ampc::test {

class KernelsInDtypes : public ::testing::TestWithParam<std::string> {
protected:
  std::string dt() const { return GetParam(); }
  void expectClose(const std::vector<double> &got, const std::vector<double> &want) {
    ASSERT_EQ(got.size(), want.size());
    double magnitude = 0;
    for (double w : want)
      magnitude = std::max(magnitude, std::fabs(w));
    for (size_t i = 0; i < got.size(); ++i)
      ASSERT_NEAR(got[i], want[i], tolerance(dt(), magnitude)) << "element " << i;
  }
};

} // namespace ampc::test

#endif
