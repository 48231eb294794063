// Tests of splitting "key=value,..." lists (src/builder/key_values.cc).
#include "builder/key_values.h"

#include <gtest/gtest.h>

#include <vector>

namespace torchcost::builder {
namespace {

TEST(KeyValuesTest, ItemsInOrderEmptyOnesSkipped) {
  const std::vector<KeyValueItem> items =
      SplitKeyValues(",layers=2,,eps=1e-5,tie=,");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].text, "layers=2");
  EXPECT_EQ(items[0].key, "layers");
  EXPECT_EQ(items[0].value, "2");
  EXPECT_EQ(items[1].key, "eps");
  EXPECT_EQ(items[1].value, "1e-5");
  EXPECT_EQ(items[2].key, "tie");  // An empty value is the caller's to judge.
  EXPECT_EQ(items[2].value, "");
  EXPECT_TRUE(SplitKeyValues("").empty());
}

TEST(KeyValuesTest, TheValueIsAllAfterTheFirstEquals) {
  const std::vector<KeyValueItem> items = SplitKeyValues("config=a=b");
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].key, "config");
  EXPECT_EQ(items[0].value, "a=b");
}

TEST(KeyValuesTest, AnItemWithoutAKeyHasAnEmptyKey) {
  const std::vector<KeyValueItem> items = SplitKeyValues("heads,=4,h=1");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].text, "heads");
  EXPECT_EQ(items[0].key, "");
  EXPECT_EQ(items[1].text, "=4");
  EXPECT_EQ(items[1].key, "");
  EXPECT_EQ(items[2].key, "h");
}

}  // namespace
}  // namespace torchcost::builder
