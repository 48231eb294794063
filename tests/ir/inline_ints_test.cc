// Tests of InlineInts with two in place (SmallInts, the passes' per-node lists)
// and four (ValueIds, a node's inputs and outputs): the same sequence as a
// std::vector<int> through the vector-like calls, copies and moves, in place
// and on the heap.
#include "torchcost/inline_ints.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "ir/small_ints.h"
#include "torchcost/graph.h"

namespace torchcost::ir {
namespace {

using ::testing::ElementsAre;

template <typename List>
std::vector<int> Items(const List& s) {
  return std::vector<int>(s.begin(), s.end());
}

// How many ints InlineInts<N> keeps in place: N.
template <uint32_t N>
constexpr int InPlace(const InlineInts<N>*) {
  return static_cast<int>(N);
}

TEST(InlineIntsTest, SmallIntsKeepTwoInPlaceInSixteenBytes) {
  // NB: two 4-byte counts and an 8-byte union (two ints or a pointer).
  EXPECT_EQ(sizeof(SmallInts), 16u);
  SmallInts s;
  EXPECT_TRUE(s.empty());
  s.push_back(7);
  s.push_back(-3);
  EXPECT_EQ(Items(s), (std::vector<int>{7, -3}));
  EXPECT_EQ(s[1], -3);
}

TEST(InlineIntsTest, ValueIdsKeepFourInPlaceInAVectorsSize) {
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

// Each test below runs for both sizes in place.
template <typename List>
class InlineIntsTypedTest : public ::testing::Test {};
using Lists = ::testing::Types<SmallInts, ValueIds>;
TYPED_TEST_SUITE(InlineIntsTypedTest, Lists);

TYPED_TEST(InlineIntsTypedTest, BehavesAsAVectorThroughGrowth) {
  TypeParam s;
  std::vector<int> expected;
  for (int i = 0; i < 100; ++i) {
    s.push_back(i * i);
    expected.push_back(i * i);
    ASSERT_EQ(Items(s), expected) << i;
  }
  s[5] = -1;
  expected[5] = -1;
  EXPECT_EQ(Items(s), expected);
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
  EXPECT_EQ(Items(TypeParam(v.begin(), v.end())), v);
}

TYPED_TEST(InlineIntsTypedTest, ComparesByElements) {
  TypeParam a = {1, 2}, b;
  b.push_back(1);
  EXPECT_NE(a, b);
  b.push_back(2);
  EXPECT_EQ(a, b);
  b.push_back(3);
  b.resize(2);  // The same ints, one more in capacity.
  EXPECT_EQ(a, b);
  EXPECT_NE(a, (TypeParam{1, 3}));
  // On the heap against in place.
  TypeParam big = {1, 2, 3, 4, 5}, small = {1, 2, 3, 4};
  EXPECT_NE(big, small);
  big.resize(4);
  EXPECT_EQ(big, small);
}

TYPED_TEST(InlineIntsTypedTest, CopiesAndMovesInPlaceAndOnTheHeap) {
  const int in_place = InPlace(static_cast<const TypeParam*>(nullptr));
  for (int n : {0, 1, in_place, in_place + 1, 17}) {
    TypeParam a;
    std::vector<int> expected;
    for (int i = 0; i < n; ++i) {
      a.push_back(i + 1);
      expected.push_back(i + 1);
    }
    TypeParam copy(a);
    EXPECT_EQ(Items(copy), expected) << n;
    // Assigned over a longer list (a heap block it keeps) and a shorter one.
    TypeParam longer, shorter = {99};
    longer.assign(40, 41);
    longer = a;
    shorter = a;
    EXPECT_EQ(Items(longer), expected) << n;
    EXPECT_EQ(Items(shorter), expected) << n;
    copy.push_back(0);  // The copy is independent of its source.
    EXPECT_EQ(Items(a), expected) << n;
    TypeParam moved(std::move(a));
    EXPECT_EQ(Items(moved), expected) << n;
    EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): a moved-from
                             // list is empty.
    TypeParam target = {5, 6, 7, 8, 9, 10};
    target = std::move(moved);
    EXPECT_EQ(Items(target), expected) << n;
    // Vectors of them, as the simulation keeps them.
    std::vector<TypeParam> lists(3, target);
    lists.resize(40);
    EXPECT_EQ(Items(lists[2]), expected) << n;
    EXPECT_TRUE(lists[39].empty());
  }
}

}  // namespace
}  // namespace torchcost::ir
