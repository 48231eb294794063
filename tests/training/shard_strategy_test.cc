// Tests of the sharding strategies' names and kinds.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "torchcost/sharding.h"

namespace torchcost {
namespace {

TEST(ShardStrategyTest, NamesRoundTripAndZeroIsDeepSpeedsStages) {
  for (const char* name : {"none", "ddp", "zero1", "zero2", "zero3", "fsdp"}) {
    Result<ShardStrategy> s = ParseShardStrategy(name);
    ASSERT_TRUE(s.ok()) << name;
    EXPECT_EQ(ShardStrategyName(*s), name);
    const std::string text = name;
    EXPECT_EQ(IsZero(*s), text.rfind("zero", 0) == 0) << name;
  }
  EXPECT_EQ(ParseShardStrategy("zero4").status().message(),
            "unknown sharding strategy 'zero4'; expected none, ddp, zero1, "
            "zero2, zero3 or fsdp");
}

TEST(ShardStrategyTest, ZeroTwoThreeAndFsdpShardTheGradients) {
  // ZeRO's stages: 1 optimizer states, 2 and gradients, 3 and parameters
  // (Rajbhandari et al. 2020, Sec. 5); FSDP shards all three.
  for (const auto& [name, shards] :
       std::vector<std::pair<const char*, bool>>{{"none", false},
                                                 {"ddp", false},
                                                 {"zero1", false},
                                                 {"zero2", true},
                                                 {"zero3", true},
                                                 {"fsdp", true}}) {
    EXPECT_EQ(ShardsGradients(*ParseShardStrategy(name)), shards) << name;
  }
}

}  // namespace
}  // namespace torchcost
