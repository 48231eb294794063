// Tests of the training options' "key=value,..." specs
// (src/training/key_value_spec.cc).
#include "training/key_value_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(KeyValueSpecTest, ItemsInOrderEmptyOnesSkipped) {
  std::vector<std::pair<std::string, std::string>> seen;
  Status s = ForEachSpecItem(",r=8,,targets=a=b,=x,svd=",
                             [&](const std::string& k, const std::string& v) {
                               seen.emplace_back(k, v);
                               return Status::Ok();
                             });
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(seen, ElementsAre(Pair("r", "8"), Pair("targets", "a=b"),
                                Pair("", "x"), Pair("svd", "")));
}

TEST(KeyValueSpecTest, TheFirstErrorStops) {
  int calls = 0;
  auto count = [&](const std::string&, const std::string&) {
    ++calls;
    return calls == 2 ? Status::InvalidArgument("second") : Status::Ok();
  };
  Status s = ForEachSpecItem("a=1,b=2,c", count);
  EXPECT_EQ(s.message(), "second");
  EXPECT_EQ(calls, 2);
  calls = 0;
  s = ForEachSpecItem("a=1,c,b=2", count);
  EXPECT_EQ(s.message(), "'c' is not key=value");
  EXPECT_EQ(calls, 1);
}

TEST(KeyValueSpecTest, BoolsAndPositiveIntegers) {
  bool b = false;
  EXPECT_TRUE(ParseSpecBool("svd", "1", &b).ok());
  EXPECT_TRUE(b);
  EXPECT_TRUE(ParseSpecBool("svd", "false", &b).ok());
  EXPECT_FALSE(b);
  EXPECT_EQ(ParseSpecBool("svd", "yes", &b).message(),
            "svd=yes must be true or false");
  int64_t n = 0;
  EXPECT_TRUE(ParseSpecPositive("r", "16", &n).ok());
  EXPECT_EQ(n, 16);
  for (const char* bad : {"0", "-2", "", "8x", "1.5"}) {
    EXPECT_EQ(ParseSpecPositive("r", bad, &n).message(),
              std::string("r=") + bad + " must be a positive integer");
  }
  EXPECT_EQ(n, 16);  // Unchanged by a bad value.
}

}  // namespace
}  // namespace torchcost
