// Tests of OutOfLineVector: a pointer in place, a std::vector's behaviour.
#include "ir/out_of_line_vector.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace torchcost::ir {
namespace {

TEST(OutOfLineVectorTest, EmptyHoldsOnlyAPointer) {
  static_assert(sizeof(OutOfLineVector<std::pair<int, std::string>>) ==
                sizeof(void*));
  OutOfLineVector<int> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.begin(), v.end());
  int n = 0;
  for (int x : v) n += x + 1;
  EXPECT_EQ(n, 0);
}

TEST(OutOfLineVectorTest, AppendsCopiesMovesAndCompares) {
  OutOfLineVector<std::string> v;
  v.push_back("a");
  v.push_back("bc");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], "a");
  EXPECT_EQ(v[1], "bc");
  std::string joined;
  for (const std::string& s : v) joined += s;
  EXPECT_EQ(joined, "abc");

  OutOfLineVector<std::string> copy = v;
  EXPECT_EQ(copy, v);
  copy[1] = "x";  // The copy is deep: v keeps "bc".
  EXPECT_NE(copy, v);
  EXPECT_EQ(v[1], "bc");

  OutOfLineVector<std::string> moved = std::move(copy);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[1], "x");
  moved.clear();
  EXPECT_TRUE(moved.empty());
  EXPECT_EQ(moved, OutOfLineVector<std::string>());
  moved = v;
  EXPECT_EQ(moved, v);
}

}  // namespace
}  // namespace torchcost::ir
