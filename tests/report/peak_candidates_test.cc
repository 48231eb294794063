// Tests of PeakCandidates (src/report/peak_candidates.cc): the peak under any
// bindings is the largest timeline total, at its point.
#include "report/peak_candidates.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/timeline.h"

namespace torchcost::report {
namespace {

TEST(PeakCandidatesTest, LargestTotalUnderEachBinding) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  // 1000 + B, then 10 B: the first is the peak for B <= 111, the second after.
  const sym::Expr totals[] = {sym::Expr(1000) + b, b * sym::Expr(10)};
  Report r;
  for (int i = 0; i < 2; ++i) {
    TimelinePoint p;
    p.node = i;
    for (auto& c : p.live) c = sym::Expr(0);
    p.live[testing::kAct] = totals[i];
    p.total = totals[i];
    r.training.timeline.push_back(p);
  }
  const PeakCandidates peak(r);
  ASSERT_TRUE(peak.error().empty()) << peak.error();
  for (int64_t v : {1, 111, 112, 5000}) {
    auto at = peak.At({{"B", v}});
    ASSERT_TRUE(at.has_value());
    EXPECT_EQ(at->first, std::max<int64_t>(1000 + v, 10 * v)) << v;
    EXPECT_EQ(at->second, 1000 + v >= 10 * v ? 0 : 1) << v;
  }
  EXPECT_FALSE(peak.At({}).has_value());  // B unbound.
}

}  // namespace
}  // namespace torchcost::report
