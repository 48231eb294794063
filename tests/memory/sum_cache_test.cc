// Tests of the sum cache: the same answers as sym's operators, each distinct
// pair of operands computed once.
#include "memory/sum_cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace torchcost::memory {
namespace {

TEST(SumCacheTest, AnswersAsSymsOperators) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B"), s = ctx.Symbol("S");
  // Operands as a step's live bytes take them: symbolic sums, products and
  // constants.
  const std::vector<sym::Expr> xs = {sym::Expr(0),
                                     sym::Expr(7),
                                     sym::Expr(-3),
                                     b,
                                     b * s * 8192,
                                     b * s * 8192 + b * 4096 + 12,
                                     sym::Min(s, sym::Expr(4096)) * b};
  SumCache cache;
  for (int round = 0; round < 2; ++round) {  // The second from the cache.
    for (const sym::Expr& x : xs) {
      for (const sym::Expr& y : xs) {
        EXPECT_EQ(cache.Add(x, y), x + y)
            << x.ToString() << " + " << y.ToString();
        EXPECT_EQ(cache.Sub(x, y), x - y)
            << x.ToString() << " - " << y.ToString();
      }
    }
  }
  // 2 x 7 x 7 pairs, less those that never reach the table: y = 0 (7 pairs
  // each way), constant x with constant y (x in {0, 7, -3}, y in {7, -3}:
  // 6 each way), and 0 + y for the 4 symbolic y (a sum only).
  EXPECT_EQ(cache.size(), 2u * (49 - 7 - 6) - 4);
}

TEST(SumCacheTest, RepeatedPairsAreComputedOnce) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  SumCache cache;
  sym::Expr live = sym::Expr(0);
  // A layer's allocation and free, 32 times: the live bytes return to b each
  // time, so only the pairs (b, 2b) and (3b, 2b) are held (0 + b is b, not
  // held).
  live = cache.Add(live, b);
  for (int layer = 0; layer < 32; ++layer) {
    live = cache.Add(live, b * 2);
    live = cache.Sub(live, b * 2);
  }
  EXPECT_EQ(live, b);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(SumCacheTest, ManyDistinctPairsSurviveGrowth) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  SumCache cache;
  // 1,000 distinct sums k*B + k, past several doublings of the table.
  sym::Expr total = sym::Expr(0);
  for (int k = 1; k <= 1000; ++k) total = cache.Add(total, b * k + k);
  // Sum of k for k = 1..1000 = 1000 * 1001 / 2 = 500500, for B and the
  // constant.
  EXPECT_EQ(total, b * 500500 + 500500);
  // The first, 0 + (B + 1), is B + 1 without the table.
  EXPECT_EQ(cache.size(), 999u);
  sym::Expr again = sym::Expr(0);
  for (int k = 1; k <= 1000; ++k) again = cache.Add(again, b * k + k);
  EXPECT_EQ(again, total);
  EXPECT_EQ(cache.size(), 999u);
}

TEST(SumCacheTest, ConstantOverflowRaisesAsSymDoes) {
  SumCache cache;
  const sym::Expr big(std::numeric_limits<int64_t>::max());
  EXPECT_THROW(cache.Add(big, sym::Expr(1)), sym::Error);
  EXPECT_THROW(cache.Sub(sym::Expr(-2), big), sym::Error);
  // -b overflows for the least int64, so sym's a - b does even where the
  // difference would fit.
  const sym::Expr least(std::numeric_limits<int64_t>::min());
  EXPECT_THROW(sym::Expr(-1) - least, sym::Error);
  EXPECT_THROW(cache.Sub(sym::Expr(-1), least), sym::Error);
}

}  // namespace
}  // namespace torchcost::memory
