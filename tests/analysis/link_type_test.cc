// Tests of the link types' names.
#include <gtest/gtest.h>

#include "torchcost/gpu.h"

namespace torchcost {
namespace {

TEST(LinkTypeTest, NamesRoundTrip) {
  for (LinkType t : {LinkType::kNvlink, LinkType::kPcie}) {
    Result<LinkType> parsed = ParseLinkType(LinkTypeName(t));
    ASSERT_TRUE(parsed.ok()) << LinkTypeName(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_EQ(LinkTypeName(LinkType::kPcie), "pcie");
  EXPECT_EQ(ParseLinkType("nvswitch").status().message(),
            "unknown link type 'nvswitch' (nvlink, pcie)");
}

}  // namespace
}  // namespace torchcost
