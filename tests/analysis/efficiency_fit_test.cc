// The efficiency fit, against solutions derived by hand or by numpy's lstsq:
// exact samples give back the efficiencies (and overhead) they were made from,
// an overdetermined class its relative least-squares value (or, with a scale,
// the least squares of errors relative to the step), classes the
// samples cannot tell apart a common value, a negative overhead is dropped,
// and the errors name the sample or class.
#include "torchcost/efficiency_fit.h"

#include <gtest/gtest.h>

#include <cmath>

namespace torchcost {
namespace {

constexpr int kMatmul = static_cast<int>(OpClass::kMatmul);
constexpr int kPointwise = static_cast<int>(OpClass::kPointwise);
constexpr int kOptimizer = static_cast<int>(OpClass::kOptimizer);

// A sample with roofline seconds in matmul, pointwise and optimizer.
TimingSample Sample(const char* name, double mm, double pw, double opt,
                    double measured) {
  TimingSample s;
  s.name = name;
  s.roofline_seconds[kMatmul] = mm;
  s.roofline_seconds[kPointwise] = pw;
  s.roofline_seconds[kOptimizer] = opt;
  s.measured_seconds = measured;
  return s;
}

TEST(EfficiencyFitTest, ExactSamplesGiveBackTheirEfficiencies) {
  // Made with e = 0.5 (matmul), 0.25 (pointwise), 0.8 (optimizer):
  // measured = mm / 0.5 + pw / 0.25 + opt / 0.8.
  auto m = [](double mm, double pw, double opt) {
    return mm / 0.5 + pw / 0.25 + opt / 0.8;
  };
  auto fit = FitEfficiencies(
      {Sample("a", 1, 0.1, 0, m(1, 0.1, 0)),
       Sample("b", 0.2, 1, 0, m(0.2, 1, 0)), Sample("c", 0, 0, 2, m(0, 0, 2)),
       Sample("d", 3, 1, 1, m(3, 1, 1))},
      /*tie_penalty=*/1e-6);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  // NB: the tie penalty (1e-6) moves an exact fit by less than 1e-4.
  EXPECT_NEAR(fit->efficiency[kMatmul], 0.5, 1e-4);
  EXPECT_NEAR(fit->efficiency[kPointwise], 0.25, 1e-4);
  EXPECT_NEAR(fit->efficiency[kOptimizer], 0.8, 1e-4);
  EXPECT_EQ(fit->rank, 3);
  EXPECT_LT(fit->max_relative_error, 1e-4);
  // Classes without time stay at the pure roofline, unfitted.
  EXPECT_FALSE(fit->fitted[static_cast<int>(OpClass::kAttention)]);
  EXPECT_EQ(fit->efficiency[static_cast<int>(OpClass::kReduction)], 1);
  EXPECT_TRUE(fit->fitted[kPointwise]);
  ASSERT_EQ(fit->predicted_seconds.size(), 4u);
  EXPECT_NEAR(fit->predicted_seconds[3], m(3, 1, 1), 1e-2);
}

TEST(EfficiencyFitTest, OverdeterminedClassMinimisesRelativeErrors) {
  // One class, r = 1 s, measured 2 s and 4 s: minimise (x/2 - 1)^2 + (x/4 -
  // 1)^2; d/dx = 0 gives (x/2 - 1)/2 + (x/4 - 1)/4 = 0, x = 12/5, e = 5/12.
  auto fit =
      FitEfficiencies({Sample("two", 1, 0, 0, 2), Sample("four", 1, 0, 0, 4)},
                      /*tie_penalty=*/0);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->efficiency[kMatmul], 5.0 / 12, 1e-12);
  // Relative errors 2.4/2 - 1 = 0.2 and 2.4/4 - 1 = -0.4.
  EXPECT_NEAR(fit->max_relative_error, 0.4, 1e-12);
  EXPECT_NEAR(fit->rms_relative_error, std::sqrt((0.04 + 0.16) / 2), 1e-12);
  EXPECT_EQ(fit->rank, 1);
}

TEST(EfficiencyFitTest, ScaleMakesErrorsRelativeToTheStep) {
  // The same two samples, each a piece of a step of 4 s: minimise ((x - 2)/4)^2
  // + ((x - 4)/4)^2; d/dx = 0 gives x = 3, e = 1/3 (not 5/12: the 4 s piece
  // weighs as much as the 2 s one in seconds, not in its own share).
  TimingSample two = Sample("two", 1, 0, 0, 2),
               four = Sample("four", 1, 0, 0, 4);
  two.scale_seconds = four.scale_seconds = 4;
  auto fit = FitEfficiencies({two, four}, /*tie_penalty=*/0);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->efficiency[kMatmul], 1.0 / 3, 1e-12);
  // The errors reported stay each sample's own: 3/2 - 1 and 3/4 - 1.
  EXPECT_NEAR(fit->max_relative_error, 0.5, 1e-12);
  EXPECT_NEAR(fit->rms_relative_error, std::sqrt((0.25 + 0.0625) / 2), 1e-12);
  // A scale of 0 is the sample's own measured time: the plain relative fit.
  two.scale_seconds = four.scale_seconds = 0;
  auto own = FitEfficiencies({two, four}, /*tie_penalty=*/0);
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_NEAR(own->efficiency[kMatmul], 5.0 / 12, 1e-12);
  four.scale_seconds = -1;
  auto negative = FitEfficiencies({two, four});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("'four' has a scale"),
            std::string::npos);
}

TEST(EfficiencyFitTest, ClassesTheSamplesCannotSeparateShareAnEfficiency) {
  // Matmul and pointwise always in equal parts, 1/e_m + 1/e_p = 4: the
  // penalty picks 1/e = 2 for both.
  auto fit = FitEfficiencies(
      {Sample("small", 1, 1, 0, 4), Sample("large", 2, 2, 0, 8)});
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->rank, 1);
  EXPECT_NEAR(fit->efficiency[kMatmul], 0.5, 1e-9);
  EXPECT_NEAR(fit->efficiency[kPointwise], 0.5, 1e-9);
}

TEST(EfficiencyFitTest, PenaltyPullsAPoorlyDeterminedClassToTheOthers) {
  // Two samples: 1 s of matmul and 0.001 s of pointwise measured at 2.5 s
  // (e_m = 0.5, pointwise 2 s per roofline second), and 1 s of matmul alone at
  // 2 s. Without the penalty pointwise's 1/e is 500. With it, the normal
  // equations of the rows [1/2.5, 0.001/2.5 | 1], [1/2, 0 | 1] and
  // sqrt(1e-3) [1, -1 | 0] (solved by numpy.linalg.lstsq) give x_m = 2.19437,
  // x_p = 2.24291: pointwise is pulled to matmul's.
  const std::vector<TimingSample> s = {Sample("mixed", 1, 0.001, 0, 2.5),
                                       Sample("mm", 1, 0, 0, 2)};
  auto free = FitEfficiencies(s, /*tie_penalty=*/0);
  ASSERT_TRUE(free.ok()) << free.status().message();
  EXPECT_NEAR(1 / free->efficiency[kPointwise], 500, 1e-6);
  auto tied = FitEfficiencies(s);
  ASSERT_TRUE(tied.ok()) << tied.status().message();
  EXPECT_NEAR(1 / tied->efficiency[kPointwise], 2.24291, 1e-4);
  EXPECT_NEAR(1 / tied->efficiency[kMatmul], 2.19437, 1e-4);
}

TEST(EfficiencyFitTest, PenaltyGrowsUntilNoClassIsLeftANegativeTime) {
  // 1 s of matmul and 1 s of pointwise measured at 1 s, and 1 s of matmul
  // alone at 1.6 s: without a penalty x_m = 1.6, x_p = -0.6. Rows [1, 1 | 1],
  // [0.625, 0 | 1], sqrt(l) [1, -1 | 0]; normal equations
  // [[1.390625 + l, 1 - l], [1 - l, 1 + l]] x = [1.625, 1], so
  // x_p = (1.390625 + l - 1.625 (1 - l)) / det, det = (1.390625 + l)(1 + l) -
  // (1 - l)^2: negative at l = 1e-3 and 1e-2, at l = 0.1 det = 0.8296875,
  // x_p = 0.028125 / det = 0.0338983, x_m = (1.625 * 1.1 - 0.9) / det
  // = 1.0696798.
  const std::vector<TimingSample> s = {Sample("both", 1, 1, 0, 1),
                                       Sample("mm", 1, 0, 0, 1.6)};
  auto fit = FitEfficiencies(s);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(fit->tie_penalty, 0.1, 1e-12);
  EXPECT_NEAR(1 / fit->efficiency[kPointwise], 0.028125 / 0.8296875, 1e-9);
  EXPECT_NEAR(1 / fit->efficiency[kMatmul], 0.8875 / 0.8296875, 1e-9);
  // Samples that separate the classes keep the penalty asked for.
  auto plain =
      FitEfficiencies({Sample("mm", 1, 0, 0, 2), Sample("pw", 0, 1, 0, 4)});
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->tie_penalty, kTiePenalty);
}

// A matmul-only sample that launches `kernels` kernels.
TimingSample Launches(const char* name, double mm, double kernels,
                      double measured) {
  TimingSample s = Sample(name, mm, 0, 0, measured);
  s.kernels = kernels;
  return s;
}

TEST(EfficiencyFitTest, OverheadOfExactSamplesComesBack) {
  // Made with e = 0.5 and o = 10 us: measured = mm / 0.5 + kernels * 1e-5.
  auto fit = FitEfficiencies({Launches("small", 1e-3, 10, 2e-3 + 10 * 1e-5),
                              Launches("large", 1e-2, 5, 2e-2 + 5 * 1e-5)},
                             kTiePenalty, /*fit_overhead=*/true);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_TRUE(fit->overhead_fitted);
  EXPECT_NEAR(fit->efficiency[kMatmul], 0.5, 1e-9);
  EXPECT_NEAR(fit->kernel_overhead, 1e-5, 1e-14);
  EXPECT_EQ(fit->rank, 2);
  EXPECT_NEAR(fit->predicted_seconds[0], 2.1e-3, 1e-12);
  // Without asking for it, the kernels are ignored: o = 0.
  auto none = FitEfficiencies({Launches("small", 1e-3, 10, 2.1e-3)});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->overhead_fitted);
  EXPECT_EQ(none->kernel_overhead, 0);
}

TEST(EfficiencyFitTest, OverheadMinimisesRelativeErrors) {
  // Rows [r/m, n us/m] of (1 ms, 100, 3.5 ms), (10 ms, 50, 23 ms), (4 ms,
  // 400, 13 ms) solved by numpy.linalg.lstsq: x = 2.24390771, o = 11.2184571
  // us.
  auto fit = FitEfficiencies(
      {Launches("a", 1e-3, 100, 3.5e-3), Launches("b", 1e-2, 50, 2.3e-2),
       Launches("c", 4e-3, 400, 1.3e-2)},
      kTiePenalty, /*fit_overhead=*/true);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_NEAR(1 / fit->efficiency[kMatmul], 2.24390771, 1e-6);
  EXPECT_NEAR(fit->kernel_overhead, 11.2184571e-6, 1e-12);
}

TEST(EfficiencyFitTest, NegativeOverheadIsDropped) {
  // (1 s, 1 kernel, 2 s) and (1 s, 100 kernels, 1 s): exactly x + 1e-6 o = 2
  // and x + 1e-4 o = 1, o < 0. Dropped, the fit is x alone: minimise
  // (x/2 - 1)^2 + (x - 1)^2, (x/2 - 1)/2 + (x - 1) = 0, x = 6/5.
  auto fit = FitEfficiencies(
      {Launches("few", 1, 1, 2), Launches("many", 1, 100, 1)}, kTiePenalty,
      /*fit_overhead=*/true);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_FALSE(fit->overhead_fitted);
  EXPECT_EQ(fit->kernel_overhead, 0);
  EXPECT_NEAR(fit->efficiency[kMatmul], 5.0 / 6, 1e-12);
  // (1 s, 10 kernels, 2 s) and (1 s, 20 kernels, 3 s): exactly x + 1e-5 o = 2
  // and x + 2e-5 o = 3, x = 1, o = 1e5 us; and pointwise (1 s, 100 kernels,
  // 1 s) would then take 1 - 100 * 0.1 s: the overhead leaves it a time below
  // 0 and is dropped.
  auto swamped =
      FitEfficiencies({Launches("a", 1, 10, 2), Launches("b", 1, 20, 3),
                       [] {
                         TimingSample s = Sample("pw", 0, 1, 0, 1);
                         s.kernels = 100;
                         return s;
                       }()},
                      kTiePenalty, /*fit_overhead=*/true);
  ASSERT_TRUE(swamped.ok()) << swamped.status().message();
  EXPECT_FALSE(swamped->overhead_fitted);
  auto negative = FitEfficiencies({Launches("neg", 1, -1, 1)}, kTiePenalty,
                                  /*fit_overhead=*/true);
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("'neg'"), std::string::npos);
}

TEST(EfficiencyFitTest, ErrorsNameTheSampleOrClass) {
  EXPECT_FALSE(FitEfficiencies({}).ok());
  auto zero = FitEfficiencies({Sample("mlp forward", 1, 0, 0, 0)});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("'mlp forward'"), std::string::npos);
  auto negative = FitEfficiencies({Sample("neg", -1, 0, 0, 1)});
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("matmul"), std::string::npos);
  auto empty = FitEfficiencies({Sample("nothing", 0, 0, 0, 1)});
  EXPECT_FALSE(empty.ok());
  // x_m = 1 and x_m + x_p = 0.5 exactly: pointwise would take -0.5 s per
  // roofline second.
  auto unphysical =
      FitEfficiencies({Sample("mm", 1, 0, 0, 1), Sample("both", 1, 1, 0, 0.5)},
                      /*tie_penalty=*/0);
  ASSERT_FALSE(unphysical.ok());
  EXPECT_NE(unphysical.status().message().find("pointwise"), std::string::npos);
}

}  // namespace
}  // namespace torchcost
