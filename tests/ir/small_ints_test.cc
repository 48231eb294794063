// Tests of SmallInts: the same sequence as a std::vector<int> through growth,
// copies and moves, in place and on the heap.
#include "ir/small_ints.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace torchcost::ir {
namespace {

std::vector<int> Items(const SmallInts& s) {
  return std::vector<int>(s.begin(), s.end());
}

TEST(SmallIntsTest, KeepsTwoInPlaceInSixteenBytes) {
  // NB: two 4-byte counts and an 8-byte union (two ints or a pointer).
  EXPECT_EQ(sizeof(SmallInts), 16u);
  SmallInts s;
  EXPECT_TRUE(s.empty());
  s.push_back(7);
  s.push_back(-3);
  EXPECT_EQ(Items(s), (std::vector<int>{7, -3}));
  EXPECT_EQ(s[1], -3);
}

TEST(SmallIntsTest, GrowsPastTwoLikeAVector) {
  SmallInts s;
  std::vector<int> expected;
  for (int i = 0; i < 100; ++i) {
    s.push_back(i * i);
    expected.push_back(i * i);
    ASSERT_EQ(Items(s), expected) << i;
  }
  s[5] = -1;
  expected[5] = -1;
  EXPECT_EQ(Items(s), expected);
  s.clear();
  EXPECT_TRUE(s.empty());
  s.assign(3, -1);
  EXPECT_EQ(Items(s), (std::vector<int>{-1, -1, -1}));
  s.clear();
  s.push_back(4);
  EXPECT_EQ(Items(s), (std::vector<int>{4}));
}

TEST(SmallIntsTest, CopiesAndMovesInPlaceAndOnTheHeap) {
  for (int n : {0, 1, 2, 3, 17}) {
    SmallInts a;
    std::vector<int> expected;
    for (int i = 0; i < n; ++i) {
      a.push_back(i + 1);
      expected.push_back(i + 1);
    }
    SmallInts copy(a);
    EXPECT_EQ(Items(copy), expected) << n;
    SmallInts assigned;
    assigned.push_back(99);
    assigned.push_back(98);
    assigned.push_back(97);
    assigned = a;
    EXPECT_EQ(Items(assigned), expected) << n;
    copy.push_back(0);  // The copy is independent of its source.
    EXPECT_EQ(Items(a), expected) << n;
    SmallInts moved(std::move(a));
    EXPECT_EQ(Items(moved), expected) << n;
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from
                             // list is empty.
    SmallInts target;
    target = std::move(moved);
    EXPECT_EQ(Items(target), expected) << n;
    // Vectors of them, as the simulation keeps them.
    std::vector<SmallInts> lists(3, target);
    lists.resize(40);
    EXPECT_EQ(Items(lists[2]), expected) << n;
    EXPECT_TRUE(lists[39].empty());
  }
}

}  // namespace
}  // namespace torchcost::ir
