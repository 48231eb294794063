// Tests of the sharding block of the text and JSON reports.
#include "report/sharding_report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost {
namespace {

using ::testing::HasSubstr;

TrainingReport Zero3() {
  TrainingReport tr;
  ShardingReport& s = tr.sharding;
  s.strategy = ShardStrategy::kZero3;
  s.world = 8;
  s.param_bytes = 1000;
  s.grad_bytes = 1000;
  s.opt_bytes = 6004;
  s.unsharded_param_bytes = 8000;
  s.reduce_scatter_bytes = 8000;
  s.all_gather_bytes = 2 * 8000;
  s.units = {"a", "b"};
  s.largest_unit_bytes = 4000;
  return tr;
}

TEST(ShardingReportTest, TextNamesTheStrategyAndThePerRankStates) {
  const std::string text = report::RenderSharding(Zero3());
  EXPECT_THAT(
      text,
      HasSubstr("Sharding: zero3 over 8 ranks; the memory below is per rank"));
  EXPECT_THAT(text,
              HasSubstr("param 1000 B, grad 1000 B, opt 5.86 KiB (6004)"));
  // 16000 / 1024 = 15.625, half away from zero.
  EXPECT_THAT(text, HasSubstr("all-gather 15.63 KiB (16000)"));
  EXPECT_THAT(
      text,
      HasSubstr("Gathering units: 2, the largest 3.91 KiB (4000) gathered"));
}

TEST(ShardingReportTest, NothingWithoutShardingOrMasters) {
  EXPECT_EQ(report::RenderSharding(TrainingReport()), "");
}

TEST(ShardingReportTest, Json) {
  const auto j = report::ShardingJson(Zero3());
  EXPECT_EQ(j["strategy"], "zero3");
  EXPECT_EQ(j["world"], 8);
  EXPECT_EQ(j["per_rank"]["opt"], 6004);
  EXPECT_EQ(j["unsharded"]["param"], 8000);
  EXPECT_EQ(j["communication"]["all_gather"], 16000);
  EXPECT_EQ(j["units"].size(), 2u);
}

}  // namespace
}  // namespace torchcost
