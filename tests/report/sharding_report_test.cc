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

TEST(ShardingReportTest, AccumulationSaysWhichMicroBatchesCommunicate) {
  TrainingReport tr = Zero3();
  tr.accumulate = 4;
  EXPECT_THAT(report::RenderSharding(tr),
              HasSubstr("  Accumulating 4 micro-batches: each reduces its "
                        "gradients and gathers the parameters\n"));
  tr.sharding.strategy = ShardStrategy::kDdp;
  EXPECT_THAT(report::RenderSharding(tr),
              HasSubstr("  Accumulating 4 micro-batches: the gradients are "
                        "reduced after the last only (no_sync())\n"));
  tr.accumulate = 1;
  EXPECT_THAT(report::RenderSharding(tr),
              ::testing::Not(HasSubstr("Accumulating")));
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

TEST(ShardingReportTest, DeepSpeedGradientBuffers) {
  TrainingReport tr = Zero3();
  EXPECT_TRUE(report::ShardingJson(tr)["gradient_buffers"].is_null());
  EXPECT_THAT(report::RenderSharding(tr),
              ::testing::Not(HasSubstr("flat gradient buffers")));
  ShardingReport& s = tr.sharding;
  s.contiguous_gradients = true;
  s.reduce_bucket_elements = 500;
  s.bucket_buffers = 2;
  s.bucket_buffer_bytes = 2 * 500 * 2;
  s.offload_staging_bytes = 64;
  EXPECT_THAT(report::RenderSharding(tr),
              HasSubstr("DeepSpeed's flat gradient buffers "
                        "(contiguous_gradients): 2 x reduce bucket of 500 "
                        "elements, 1.95 KiB (2000); offload staging 64 B"));
  const auto j = report::ShardingJson(tr)["gradient_buffers"];
  EXPECT_EQ(j["reduce_bucket_elements"], 500);
  EXPECT_EQ(j["buckets"], 2);
  EXPECT_EQ(j["bucket_bytes"], 2000);
  EXPECT_EQ(j["offload_staging_bytes"], 64);
}

TEST(ShardingReportTest, ParameterOffload) {
  TrainingReport tr = Zero3();
  ShardingReport& s = tr.sharding;
  s.offload_optimizer = s.offload_params = true;
  s.host_param_bytes = 1000;
  s.host_opt_bytes = 6004;
  s.host_grad_bytes = 2000;
  s.host_transfer_bytes = 3000;
  EXPECT_THAT(report::RenderSharding(tr),
              HasSubstr("Offloaded to the host (parameters and optimizer; not "
                        "in the device's peak): param 1000 B, opt 5.86 KiB "
                        "(6004), float32 gradient shard 1.95 KiB (2000); 2.93 "
                        "KiB (3000) over the host link per step"));
  const auto j = report::ShardingJson(tr)["offload"];
  EXPECT_EQ(j["what"], "params");
  EXPECT_EQ(j["param"], 1000);
  EXPECT_EQ(j["transfer"], 3000);
}

}  // namespace
}  // namespace torchcost
