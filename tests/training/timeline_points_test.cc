// Tests of TimelinePoints: every point reads back as it was appended, whichever
// categories changed, across the blocks the storage groups points in.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "testing/timeline.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

// Returns 200 points in which category c changes at every point whose index
// is a multiple of c + 1 (category 0 at every point, category 6 every 7th),
// with a symbolic value in the act category every 5th point.
std::vector<TimelinePoint> Points(sym::Context& ctx) {
  const sym::Expr B = ctx.Symbol("B");
  std::vector<TimelinePoint> out;
  CategoryBytes live;
  for (int i = 0; i < 200; ++i) {
    TimelinePoint p;
    p.phase = static_cast<StepPhase>(i % 4);
    p.node = i - 1;
    for (int c = 0; c < kNumMemCategories; ++c) {
      if (i % (c + 1) == 0) live[c] = sym::Expr(int64_t{1000} * c + i);
    }
    if (i % 5 == 0) live[testing::kAct] = B * (i + 1);
    p.live = live;
    for (const sym::Expr& b : live) p.total += b;
    out.push_back(p);
  }
  return out;
}

void ExpectSame(const TimelinePoint& got, const TimelinePoint& want, size_t i) {
  EXPECT_EQ(got.phase, want.phase) << "point " << i;
  EXPECT_EQ(got.node, want.node) << "point " << i;
  EXPECT_EQ(got.total, want.total) << "point " << i;
  for (int c = 0; c < kNumMemCategories; ++c)
    EXPECT_EQ(got.live[c], want.live[c]) << "point " << i << " category " << c;
}

TEST(TimelinePointsTest, PointsReadBackAsAppended) {
  sym::Context ctx;
  const std::vector<TimelinePoint> want = Points(ctx);
  TimelinePoints tl;
  for (const TimelinePoint& p : want) tl.push_back(p);
  ASSERT_EQ(tl.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ExpectSame(tl[i], want[i], i);
    EXPECT_EQ(tl.phase(i), want[i].phase);
    EXPECT_EQ(tl.node(i), want[i].node);
    EXPECT_EQ(tl.total(i), want[i].total);
    for (int c = 0; c < kNumMemCategories; ++c)
      EXPECT_EQ(tl.live(i, c), want[i].live[c]);
  }
  size_t i = 0;
  for (const TimelinePoint& p : tl) {
    ExpectSame(p, want[i], i);
    ++i;
  }
  EXPECT_EQ(i, want.size());
  ExpectSame(tl.front(), want.front(), 0);
  ExpectSame(tl.back(), want.back(), want.size() - 1);
}

TEST(TimelinePointsTest, BackEqualsComparesTheLastPoint) {
  sym::Context ctx;
  const std::vector<TimelinePoint> want = Points(ctx);
  TimelinePoints tl;
  EXPECT_FALSE(tl.BackEquals(want[0].live, want[0].total));
  for (const TimelinePoint& p : want) tl.push_back(p);
  EXPECT_TRUE(tl.BackEquals(want.back().live, want.back().total));
  // Point 198 differs from the last in category 0 (which changes at every
  // point).
  EXPECT_FALSE(tl.BackEquals(want[198].live, want.back().total));
  EXPECT_FALSE(tl.BackEquals(want.back().live, want.back().total + 1));
}

TEST(TimelinePointsTest, EqualityClearAndInitializerList) {
  sym::Context ctx;
  const std::vector<TimelinePoint> want = Points(ctx);
  TimelinePoints a, b;
  for (const TimelinePoint& p : want) a.push_back(p);
  for (size_t i = 0; i + 1 < want.size(); ++i) b.push_back(want[i]);
  EXPECT_NE(a, b);
  b.push_back(want.back());
  EXPECT_EQ(a, b);
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.begin(), b.end());
  b = {want[3], want[4]};
  ASSERT_EQ(b.size(), 2u);
  // After clear, the first point stores every category again.
  ExpectSame(b[0], want[3], 0);
  ExpectSame(b[1], want[4], 1);
}

// The last point, as BackEquals and push_back see it, follows every append,
// copy and clear: a category unchanged at the last point still has the value
// it last changed to, and a point after clear() stores every category even
// where it equals the point before the clear.
TEST(TimelinePointsTest, TheLastPointFollowsAppendsCopiesAndClear) {
  sym::Context ctx;
  const std::vector<TimelinePoint> want = Points(ctx);
  TimelinePoints tl;
  for (size_t i = 0; i < want.size(); ++i) {
    tl.push_back(want[i]);
    ASSERT_TRUE(tl.BackEquals(want[i].live, want[i].total)) << "point " << i;
    if (i > 0) {
      // Category 0 changes at every point, so the point before differs.
      EXPECT_FALSE(tl.BackEquals(want[i - 1].live, want[i].total));
    }
  }
  // Category 6 last changed at point 196 (7 * 28), three points before.
  EXPECT_EQ(want.back().live[6], want[196].live[6]);
  CategoryBytes other = want.back().live;
  other[6] = want[189].live[6];
  EXPECT_FALSE(tl.BackEquals(other, want.back().total));

  TimelinePoints copy = tl;
  EXPECT_TRUE(copy.BackEquals(want.back().live, want.back().total));
  copy.push_back(want[0]);
  EXPECT_TRUE(copy.BackEquals(want[0].live, want[0].total));
  EXPECT_TRUE(tl.BackEquals(want.back().live, want.back().total));

  tl.clear();
  EXPECT_FALSE(tl.BackEquals(want.back().live, want.back().total));
  tl.push_back(want.back());
  EXPECT_TRUE(tl.BackEquals(want.back().live, want.back().total));
  for (int c = 0; c < kNumMemCategories; ++c) {
    ASSERT_EQ(tl.NumRuns(c), 1u) << "category " << c;
    EXPECT_EQ(tl.RunValue(c, 0), want.back().live[c]) << "category " << c;
  }
  // Equal points are equal timelines, whatever came before the clear.
  EXPECT_EQ(tl, TimelinePoints({want.back()}));
}

// A constant is held as its value and a symbolic count as an index into a list
// of its own: a symbolic count first stored at index 0 is not the constant 0.
TEST(TimelinePointsTest, ConstantAndSymbolicBytesStayApart) {
  sym::Context ctx;
  const sym::Expr B = ctx.Symbol("B");
  const int act = testing::kAct;
  TimelinePoint constant, symbolic;
  symbolic.live[act] = B;
  symbolic.total = B;
  const TimelinePoints a = {constant, symbolic}, b = {constant, constant},
                       c = {symbolic, constant};
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a.live(0, act), sym::Expr(0));
  EXPECT_EQ(a.live(1, act), B);
  EXPECT_EQ(a.total(1), B);
  EXPECT_EQ(c.live(0, act), B);
  EXPECT_EQ(c.total(1), sym::Expr(0));
  EXPECT_TRUE(a.BackEquals(symbolic.live, symbolic.total));
  EXPECT_FALSE(b.BackEquals(symbolic.live, symbolic.total));
}

// Each category's runs are its values with the repeats in a row dropped, read
// from the points themselves.
TEST(TimelinePointsTest, RunsAreTheValuesWhereACategoryChanges) {
  sym::Context ctx;
  const std::vector<TimelinePoint> want = Points(ctx);
  TimelinePoints tl;
  for (const TimelinePoint& p : want) tl.push_back(p);
  for (int c = 0; c < kNumMemCategories; ++c) {
    std::vector<sym::Expr> runs;
    for (const TimelinePoint& p : want) {
      if (runs.empty() || runs.back() != p.live[c]) runs.push_back(p.live[c]);
    }
    ASSERT_EQ(tl.NumRuns(c), runs.size()) << "category " << c;
    for (size_t k = 0; k < runs.size(); ++k)
      EXPECT_EQ(tl.RunValue(c, k), runs[k]) << "category " << c << " run " << k;
    EXPECT_EQ(tl.RunsConstant(c), c != testing::kAct) << "category " << c;
  }
  // Category 0 changes at each of the 200 points; act at the multiples of 4
  // or 5 below 200: 50 + 40 - 10 = 80.
  EXPECT_EQ(tl.NumRuns(0), 200u);
  EXPECT_EQ(tl.NumRuns(testing::kAct), 80u);
  EXPECT_FALSE(tl.TotalsConstant());
  const TimelinePoints constant = {TimelinePoint(), TimelinePoint()};
  EXPECT_TRUE(constant.TotalsConstant());
  EXPECT_EQ(constant.NumRuns(0), 1u);
  EXPECT_EQ(TimelinePoints().NumRuns(0), 0u);
}

}  // namespace
}  // namespace torchcost
