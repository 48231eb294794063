// Tests of ArgNames: a list of names read as a std::vector<std::string>,
// shared by its copies until one of them appends (copy on write).
#include "torchcost/arg_names.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::ir {
namespace {

using ::testing::ElementsAre;

TEST(ArgNamesTest, ReadsAsAVector) {
  ArgNames none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.begin(), none.end());
  ArgNames names = {"self", "other", "alpha"};
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(names[1], "other");
  EXPECT_EQ(names.back(), "alpha");
  EXPECT_THAT(names, ElementsAre("self", "other", "alpha"));
  EXPECT_EQ(names, (std::vector<std::string>{"self", "other", "alpha"}));
  // An empty vector is no names.
  EXPECT_EQ(ArgNames(std::vector<std::string>()), none);
}

TEST(ArgNamesTest, CopiesShareTheNames) {
  ArgNames a = {"input", "weight"};
  const ArgNames b = a;
  // The same strings, not equal copies of them.
  EXPECT_EQ(&a[0], &b[0]);
  EXPECT_EQ(a, b);
}

TEST(ArgNamesTest, AppendingCopiesSharedNamesFirst) {
  ArgNames a;
  a.reserve(2);
  a.push_back("input");
  a.push_back("weight");
  a.push_back("bias");  // Not shared: appended in place (or reallocated).
  const ArgNames b = a;
  a.push_back("stride");
  EXPECT_THAT(a, ElementsAre("input", "weight", "bias", "stride"));
  EXPECT_THAT(b, ElementsAre("input", "weight", "bias"));
  EXPECT_NE(&a[0], &b[0]);
  EXPECT_NE(a, b);
}

TEST(ArgNamesTest, ComparesByNames) {
  const ArgNames a = {"self", "dim"}, b = {"self", "dim"}, c = {"self"};
  EXPECT_EQ(a, b);  // Equal names in separate lists.
  EXPECT_NE(a, c);
  EXPECT_NE(c, ArgNames());
  EXPECT_NE(ArgNames({"x"}), ArgNames({"y"}));
}

}  // namespace
}  // namespace torchcost::ir
