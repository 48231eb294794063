// Tests of grouped sums: each group's sum as adding its expressions one by
// one would give, with one entry per distinct expression of a group.
#include "memory/grouped_sums.h"

#include <gtest/gtest.h>

#include <vector>

namespace torchcost::memory {
namespace {

TEST(GroupedSumsTest, SumsAsAddingOneByOne) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B"), s = ctx.Symbol("S");
  const std::vector<sym::Expr> xs = {b * s * 8192,
                                     sym::Expr(12),
                                     b * 4096 + 7,
                                     b * s * 8192,
                                     sym::Min(s, sym::Expr(4096)),
                                     sym::Expr(12),
                                     b * s * 8192};
  GroupedSums sums;
  std::vector<sym::Expr> expected(3, sym::Expr(0));
  for (size_t i = 0; i < xs.size(); ++i) {
    // Group 0 takes every expression, group 2 every other one; group 1
    // none.
    sums.Add(0, xs[i]);
    expected[0] += xs[i];
    if (i % 2 == 0) {
      sums.Add(2, xs[i]);
      expected[2] += xs[i];
    }
  }
  // Group 0: 4 distinct expressions; group 2 (xs[0], xs[2], xs[4], xs[6]):
  // 3.
  EXPECT_EQ(sums.size(), 7u);
  std::vector<sym::Expr> got(3, sym::Expr(0));
  got[1] = b;  // Kept: the sums are added to what is there.
  sums.AddTo(&got);
  EXPECT_EQ(got[0], expected[0]) << got[0].ToString();
  EXPECT_EQ(got[1], b);
  EXPECT_EQ(got[2], expected[2]) << got[2].ToString();
  // 3 * 8192 * B * S + (4096 * B + 7) + 2 * 12 + min(S, 4096), by hand.
  EXPECT_EQ(got[0], b * s * 24576 + b * 4096 + sym::Min(s, sym::Expr(4096)) +
                        sym::Expr(31));
  // AddTo starts over empty.
  EXPECT_EQ(sums.size(), 0u);
  sums.AddTo(&got);
  EXPECT_EQ(got[2], expected[2]);
}

TEST(GroupedSumsTest, ManyGroupsSurviveGrowth) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  GroupedSums sums;
  // 1,000 groups, group g taking g * B three times and the constant 1 once:
  // past several doublings of the table.
  for (int round = 0; round < 3; ++round) {
    for (int g = 0; g < 1000; ++g) sums.Add(g, b * g);
  }
  for (int g = 0; g < 1000; ++g) sums.Add(g, sym::Expr(1));
  EXPECT_EQ(sums.size(), 2000u);
  std::vector<sym::Expr> got(1000, sym::Expr(0));
  sums.AddTo(&got);
  for (int g = 0; g < 1000; ++g) ASSERT_EQ(got[g], b * (3 * g) + 1) << g;
}

}  // namespace
}  // namespace torchcost::memory
