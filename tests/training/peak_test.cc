// Tests of EvaluatePeak: on timelines whose totals are constants, the peak is
// the first point of the largest total, and each category's maximum its own;
// with symbolic totals, the candidates are the moments nothing proves larger.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "testing/timeline.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

// Returns a point holding `act` bytes of activations and `grad` bytes of
// gradients.
TimelinePoint Point(int node, int64_t act, int64_t grad) {
  TimelinePoint p;
  p.node = node;
  for (auto& b : p.live) b = sym::Expr(0);
  p.live[testing::kAct] = sym::Expr(act);
  p.live[testing::kGrad] = sym::Expr(grad);
  p.total = sym::Expr(act + grad);
  return p;
}

// Returns a timeline whose points hold `totals` as activations, one point each.
TrainingReport ActTimeline(const std::vector<sym::Expr>& totals) {
  TrainingReport r;
  for (size_t i = 0; i < totals.size(); ++i) {
    TimelinePoint p;
    p.node = static_cast<int>(i);
    p.live[testing::kAct] = totals[i];
    p.total = totals[i];
    r.timeline.push_back(p);
  }
  return r;
}

// Checks that the max of the candidates is the largest total at every B
// in 1..200.
void ExpectPeakIsLargest(const PeakInfo& info,
                         const std::vector<sym::Expr>& totals) {
  for (int64_t b = 1; b <= 200; ++b) {
    int64_t largest = 0;
    for (const sym::Expr& t : totals)
      largest = std::max(largest, *sym::Evaluate(t, {{"B", b}}));
    EXPECT_EQ(*sym::Evaluate(info.peak, {{"B", b}}), largest) << "B = " << b;
  }
}

TEST(PeakTest, ConstantTotalsPickTheFirstLargest) {
  TrainingReport r;
  // Totals 5, 9, 9, 3: the peak is 9, first reached at point 1 (7 + 2), not
  // point 2 (1 + 8).
  r.timeline = {Point(0, 5, 0), Point(1, 7, 2), Point(2, 1, 8), Point(3, 3, 0)};
  const PeakInfo info = EvaluatePeak(r, {});
  EXPECT_TRUE(info.error.empty());
  EXPECT_TRUE(info.decided);
  EXPECT_EQ(info.point, 1);
  EXPECT_EQ(info.peak, sym::Expr(9));
  ASSERT_EQ(info.candidate_points, std::vector<int>{1});
  EXPECT_EQ(info.at_peak[testing::kAct], sym::Expr(7));
  EXPECT_EQ(info.at_peak[testing::kGrad], sym::Expr(2));
  // Each category's maximum over the points: act max(5, 7, 1, 3) = 7, grad
  // max(0, 2, 8, 0) = 8.
  EXPECT_EQ(info.category_max[testing::kAct], sym::Expr(7));
  EXPECT_EQ(info.category_max[testing::kGrad], sym::Expr(8));
}

TEST(PeakTest, OnePointIsItsOwnPeak) {
  TrainingReport r;
  r.timeline = {Point(0, 4, 1)};
  const PeakInfo info = EvaluatePeak(r, {}, /*category_max=*/false);
  EXPECT_TRUE(info.decided);
  EXPECT_EQ(info.point, 0);
  EXPECT_EQ(info.peak, sym::Expr(5));
}

TEST(PeakTest, SymbolicTotalsKeepTheFirstOfEachLargestClass) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  const std::vector<sym::Expr> totals = {
      2 * B + 10,  // 0: kept.
      2 * B + 5,   // 1: <= point 0.
      B + 100,     // 2: kept (crosses point 0 at B = 90).
      2 * B + 10,  // 3: equal to point 0, which comes first.
      B + 50,      // 4: <= point 2.
      3 * B,       // 5: kept (crosses point 0 at B = 10, point 2 at B = 50).
      3 * B - 1,   // 6: <= point 5.
  };
  const PeakInfo info = EvaluatePeak(ActTimeline(totals), {});
  EXPECT_FALSE(info.decided);
  EXPECT_EQ(info.candidate_points, (std::vector<int>{0, 2, 5}));
  ExpectPeakIsLargest(info, totals);
}

TEST(PeakTest, LaterLargerMomentsReplaceEarlierOnesAndEqualOnesKeepTheFirst) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  // Runs of moments each <= the next (0 to 3), equal moments apart (3, 4, 6)
  // and together (7, 8): the first pass drops some, the search the rest.
  const std::vector<sym::Expr> totals = {
      B + 1,      // 0: <= point 1.
      2 * B + 1,  // 1: <= point 2.
      2 * B + 3,  // 2: <= point 3.
      2 * B + 4,  // 3: kept (crosses point 5 at B = 48, point 7 at B = 4).
      2 * B + 4,  // 4: equal to point 3, which comes first.
      100,        // 5: kept.
      2 * B + 4,  // 6: equal to point 3.
      3 * B,      // 7: kept.
      3 * B,      // 8: equal to point 7.
  };
  const PeakInfo info = EvaluatePeak(ActTimeline(totals), {});
  EXPECT_FALSE(info.decided);
  EXPECT_EQ(info.candidate_points, (std::vector<int>{3, 5, 7}));
  ExpectPeakIsLargest(info, totals);
}

TEST(PeakTest, RepeatsApartAreTheirFirstOccurrence) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  // Three maximal classes, each met again later: only the first meetings are
  // candidates.
  const std::vector<sym::Expr> totals = {
      2 * B + 4,  // 0: kept (above 3B below B = 4, above 150 past B = 73).
      100,        // 1: <= point 3.
      3 * B,      // 2: kept (crosses point 3 at B = 50).
      150,        // 3: kept.
      2 * B + 4,  // 4: point 0 again.
      100,        // 5: point 1 again.
      3 * B,      // 6: point 2 again.
      2 * B + 4,  // 7: point 0 again.
  };
  const PeakInfo info = EvaluatePeak(ActTimeline(totals), {});
  EXPECT_FALSE(info.decided);
  EXPECT_EQ(info.candidate_points, (std::vector<int>{0, 2, 3}));
  ExpectPeakIsLargest(info, totals);
  // The activations are the totals: their maximum is the peak.
  for (int64_t b = 1; b <= 200; ++b) {
    EXPECT_EQ(*sym::Evaluate(info.category_max[testing::kAct], {{"B", b}}),
              *sym::Evaluate(info.peak, {{"B", b}}))
        << "B = " << b;
  }
}

// Past 16 distinct terms the rows are compared entry by entry rather than as
// dense rows: the same answer.
TEST(PeakTest, ManyTermsCompareAsFewDo) {
  sym::Context ctx;
  sym::Expr sum = 0;
  for (int i = 0; i < 18; ++i) sum += ctx.Symbol("X" + std::to_string(i));
  const sym::Expr x0 = ctx.Symbol("X0");
  const std::vector<sym::Expr> totals = {
      sum + 5,       // 0: kept.
      sum + 3,       // 1: <= point 0.
      sum + x0,      // 2: kept (above point 0 past X0 = 5).
      sum + x0 - 1,  // 3: <= point 2.
  };
  const PeakInfo info = EvaluatePeak(ActTimeline(totals), {});
  EXPECT_FALSE(info.decided);
  EXPECT_EQ(info.candidate_points, (std::vector<int>{0, 2}));
}

// A difference of constants past int64 is still proven: 5e18 - (-5e18) = 1e19
// > 2^63 - 1, so the moment below is dropped.
TEST(PeakTest, ConstantsFarApartStillCompare) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  constexpr int64_t kFar = 5'000'000'000'000'000'000;
  const std::vector<sym::Expr> totals = {B + kFar, B - kFar};
  const PeakInfo info = EvaluatePeak(ActTimeline(totals), {});
  EXPECT_TRUE(info.decided);
  EXPECT_EQ(info.candidate_points, std::vector<int>{0});
}

}  // namespace
}  // namespace torchcost
