// Collective names round-trip and a bad name is named in the error.
#include "torchcost/collective.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost {
namespace {

TEST(CollectiveTest, NamesRoundTrip) {
  for (int i = 0; i < kNumCollectiveKinds; ++i) {
    const CollectiveKind k = static_cast<CollectiveKind>(i);
    Result<CollectiveKind> back = ParseCollectiveKind(CollectiveKindName(k));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, k);
  }
  EXPECT_EQ(CollectiveKindName(CollectiveKind::kReduceScatter),
            "reduce_scatter");
}

TEST(CollectiveTest, UnknownNameIsAnError) {
  Result<CollectiveKind> bad = ParseCollectiveKind("allreduce");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              ::testing::HasSubstr("unknown collective 'allreduce' "
                                   "(all_reduce, reduce_scatter"));
}

}  // namespace
}  // namespace torchcost
