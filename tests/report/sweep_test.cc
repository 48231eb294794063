// Tests of sweeps: parsing the ranges, and that each point equals evaluating
// the analysis at that binding (the peak and its breakdown included).
#include "report/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tiny_net.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TinyNet;

TEST(ParseSweepTest, Ranges) {
  auto a = ParseSweep("S=512:8192:x2");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->symbol, "S");
  EXPECT_THAT(a->values, ElementsAre(512, 1024, 2048, 4096, 8192));
  auto b = ParseSweep("B=1:10:+3");
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(b->values, ElementsAre(1, 4, 7, 10));
  auto c = ParseSweep("B=2:7:2");
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(c->values, ElementsAre(2, 4, 6));
  auto d = ParseSweep("B=1,3,8");
  ASSERT_TRUE(d.ok());
  EXPECT_THAT(d->values, ElementsAre(1, 3, 8));
}

TEST(ParseSweepTest, RangesNearInt64StopWithoutOverflow) {
  // 2^62 * 2 overflows int64: the range ends at its last representable point.
  auto a = ParseSweep("B=4611686018427387904:9223372036854775807:x2");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_THAT(a->values, ElementsAre(int64_t{1} << 62));
  auto b = ParseSweep("B=9223372036854775806:9223372036854775807:+5");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_THAT(b->values, ElementsAre(9223372036854775806));
}

TEST(ParseSweepTest, Errors) {
  EXPECT_THAT(ParseSweep("S").status().message(),
              HasSubstr("expected SYM=START:STOP:STEP"));
  EXPECT_THAT(ParseSweep("S=8:4:x2").status().message(),
              HasSubstr("STOP is below START"));
  EXPECT_THAT(ParseSweep("S=1:8:x1").status().message(),
              HasSubstr("a factor must be >= 2"));
  EXPECT_THAT(ParseSweep("S=a:8:2").status().message(),
              HasSubstr("'a' is not a positive integer"));
  EXPECT_THAT(ParseSweep("S=1,0").status().message(),
              HasSubstr("'0' is not a positive integer"));
}

TEST(EvaluateSweepTest, EachPointEqualsTheBoundAnalysis) {
  TinyNet net;
  auto rows = report::EvaluateSweep(net.report, {*ParseSweep("B=1:16:x2")}, {});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 5u);
  for (const auto& row : *rows) {
    const PeakInfo p = EvaluatePeak(net.report.training, row.bindings);
    ASSERT_TRUE(p.decided);
    EXPECT_EQ(row.peak, *p.peak.AsConstant()) << "B=" << row.bindings.at("B");
    EXPECT_EQ(row.peak_point, p.point);
    __int128 sum = 0;
    for (int c = 0; c < kNumMemCategories; ++c) {
      EXPECT_EQ(row.at_peak[c], *p.at_peak[c].AsConstant());
      sum += row.at_peak[c];
    }
    EXPECT_EQ(sum, row.peak);
    EXPECT_EQ(row.flops_step,
              *sym::Evaluate128(net.report.training.flops_step, row.bindings));
  }
}

TEST(EvaluateSweepTest, UnboundSymbolIsAnError) {
  TinyNet net;
  auto rows = report::EvaluateSweep(net.report, {}, {});
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("unbound symbol 'B'"));
}

}  // namespace
}  // namespace torchcost
