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

TEST(ArgNamesPoolTest, EqualSequencesShareOneList) {
  ArgNamesPool pool;
  auto same = [](const std::string& s) -> const std::string& { return s; };
  const std::vector<std::string> self_dim = {"self", "dim"};
  const ArgNames a = pool.Intern(self_dim, same);
  const ArgNames b = pool.Intern(std::vector<std::string>{"self", "dim"}, same);
  EXPECT_THAT(a, ElementsAre("self", "dim"));
  EXPECT_EQ(&a[0], &b[0]);  // One list.
  // A sequence whose joined text is the other's is still another sequence.
  const ArgNames joined =
      pool.Intern(std::vector<std::string>{"selfdim"}, same);
  EXPECT_THAT(joined, ElementsAre("selfdim"));
  const ArgNames shorter = pool.Intern(std::vector<std::string>{"self"}, same);
  EXPECT_THAT(shorter, ElementsAre("self"));
  EXPECT_NE(&shorter[0], &a[0]);
  EXPECT_TRUE(pool.Intern(std::vector<std::string>{}, same).empty());
}

}  // namespace
}  // namespace torchcost::ir
