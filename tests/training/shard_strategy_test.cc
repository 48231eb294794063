// Tests of the sharding strategies' names and kinds.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace torchcost
