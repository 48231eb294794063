// The time fits' shared arithmetic: a sample's fitted seconds and the
// relative errors of predictions.
#include "analysis/fit_errors.h"

#include <gtest/gtest.h>

namespace torchcost::analysis {
namespace {

TEST(FitErrorsTest, FittedSecondsDivideByEfficiencyAndAddKernels) {
  TimingSample s;
  s.roofline_seconds[static_cast<int>(OpClass::kMatmul)] = 0.3;
  s.roofline_seconds[static_cast<int>(OpClass::kPointwise)] = 0.1;
  s.kernels = 10;
  std::array<double, kNumOpClasses> e = kPureRoofline;
  e[static_cast<int>(OpClass::kMatmul)] = 0.5;
  e[static_cast<int>(OpClass::kPointwise)] = 0.25;
  // 0.3 / 0.5 + 0.1 / 0.25 + 10 x 0.01 = 0.6 + 0.4 + 0.1.
  EXPECT_DOUBLE_EQ(FittedSeconds(s, e, 0.01), 1.1);
  EXPECT_DOUBLE_EQ(FittedSeconds(s, kPureRoofline, 0), 0.4);
}

TEST(FitErrorsTest, RootMeanSquareAndLargest) {
  // Errors +10% and -30%: rms sqrt((0.01 + 0.09) / 2), largest 0.3.
  const RelativeErrors e = RelativeErrorsOf({1.1, 1.4}, {1.0, 2.0});
  EXPECT_NEAR(e.rms, std::sqrt(0.05), 1e-12);
  EXPECT_NEAR(e.max, 0.3, 1e-12);
  const RelativeErrors none = RelativeErrorsOf({}, {});
  EXPECT_EQ(none.rms, 0);
  EXPECT_EQ(none.max, 0);
}

}  // namespace
}  // namespace torchcost::analysis
