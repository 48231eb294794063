// Tests of InlineInts with four in place (a node's ValueIds): the same sequence
// as a std::vector<int> through the vector-like calls, copies and moves, in
// place and on the heap. SmallInts (two in place) has its own test.
#include "torchcost/inline_ints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::ir {
namespace {

using ::testing::ElementsAre;

std::vector<int> Items(const ValueIds& s) {
  return std::vector<int>(s.begin(), s.end());
}

TEST(InlineIntsTest, KeepsFourInPlaceInAVectorsSize) {
  // NB: two 4-byte counts and a 16-byte union (four ints or a pointer): the
  // 24 bytes of the std::vector<int> a node held before.
  EXPECT_EQ(sizeof(ValueIds), 24u);
  EXPECT_EQ(sizeof(ValueIds), sizeof(std::vector<int>));
  ValueIds s = {7, -3, 5, 9};
  EXPECT_EQ(s.size(), 4u);
  EXPECT_THAT(s, ElementsAre(7, -3, 5, 9));
  EXPECT_EQ(s.front(), 7);
  EXPECT_EQ(s.back(), 9);
  s.back() = 10;
  EXPECT_EQ(s[3], 10);
}

TEST(InlineIntsTest, BehavesAsAVectorThroughGrowth) {
  ValueIds s;
  std::vector<int> expected;
  for (int i = 0; i < 40; ++i) {
    s.push_back(i * i);
    expected.push_back(i * i);
    ASSERT_EQ(Items(s), expected) << i;
  }
  s.resize(3);
  expected.resize(3);
  EXPECT_EQ(Items(s), expected);
  s.resize(6, -2);
  expected.resize(6, -2);
  EXPECT_EQ(Items(s), expected);
  s.assign(5, 1);
  EXPECT_EQ(Items(s), (std::vector<int>{1, 1, 1, 1, 1}));
  s.clear();
  EXPECT_TRUE(s.empty());
  s.reserve(100);
  s.push_back(4);
  EXPECT_EQ(Items(s), (std::vector<int>{4}));
  const std::vector<int> v = {3, 1, 4, 1, 5, 9};
  EXPECT_EQ(Items(ValueIds(v.begin(), v.end())), v);
}

TEST(InlineIntsTest, ComparesByElements) {
  ValueIds a = {1, 2}, b;
  b.push_back(1);
  EXPECT_NE(a, b);
  b.push_back(2);
  EXPECT_EQ(a, b);
  b.push_back(3);
  b.resize(2);  // The same ints, one more in capacity.
  EXPECT_EQ(a, b);
  EXPECT_NE(a, (ValueIds{1, 3}));
  // On the heap against in place.
  ValueIds big = {1, 2, 3, 4, 5}, small = {1, 2, 3, 4};
  EXPECT_NE(big, small);
  big.resize(4);
  EXPECT_EQ(big, small);
}

TEST(InlineIntsTest, CopiesAndMovesInPlaceAndOnTheHeap) {
  for (int n : {0, 1, 4, 5, 17}) {
    ValueIds a;
    std::vector<int> expected;
    for (int i = 0; i < n; ++i) {
      a.push_back(i + 1);
      expected.push_back(i + 1);
    }
    ValueIds copy(a);
    EXPECT_EQ(Items(copy), expected) << n;
    // Assigned over a longer list (a heap block it keeps) and a shorter one.
    ValueIds longer, shorter = {99};
    longer.assign(40, 41);
    longer = a;
    shorter = a;
    EXPECT_EQ(Items(longer), expected) << n;
    EXPECT_EQ(Items(shorter), expected) << n;
    copy.push_back(0);  // The copy is independent of its source.
    EXPECT_EQ(Items(a), expected) << n;
    ValueIds moved(std::move(a));
    EXPECT_EQ(Items(moved), expected) << n;
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from
                             // list is empty.
    ValueIds target = {5, 6, 7, 8, 9, 10};
    target = std::move(moved);
    EXPECT_EQ(Items(target), expected) << n;
  }
}

}  // namespace
}  // namespace torchcost::ir
