#include "nas/dominance.h"

#include <gtest/gtest.h>

#include <vector>

namespace torchcost::nas {
namespace {

// For x, y >= 1: x <= x*y (x*y - x = t + t*u + ... with x = 1 + t, y = 1 + u),
// and 3 + x <= 2*x + 2 (x - 1 = t >= 0), so only x*y and 2x + 2 remain; x*y
// and 2x + 2 are incomparable (x = y = 1: 1 < 4; x = y = 4: 16 > 10).
TEST(DominanceTest, DropsWhatAnotherBoundsForEveryValue) {
  sym::Context ctx;
  const sym::Expr x = ctx.Symbol("x"), y = ctx.Symbol("y");
  const std::vector<sym::Expr> e = {x, x * y, 3 + x, 2 * x + 2};
  EXPECT_EQ(UndominatedCandidates(e), (std::vector<int>{1, 3}));
}

// With x >= 5, x <= x^2 - 4x: with x = 5 + t, (5+t)^2 - 4(5+t) - (5+t) = t^2 +
// 5t >= 0.
TEST(DominanceTest, UsesTheLowerBounds) {
  sym::Context ctx;
  const sym::Expr x = ctx.Symbol("x", sym::Interval{5, sym::kPosInf});
  const std::vector<sym::Expr> e = {x, x * x - 4 * x};
  EXPECT_EQ(UndominatedCandidates(e), (std::vector<int>{1}));
}

// A floordiv atom is kept and dominates nothing; equal expressions keep the
// first.
TEST(DominanceTest, OpaqueAtomsAndTies) {
  sym::Context ctx;
  const sym::Expr x = ctx.Symbol("x");
  const std::vector<sym::Expr> e = {sym::FloorDiv(x, 2) + 100, x, x, x + 1};
  EXPECT_EQ(UndominatedCandidates(e), (std::vector<int>{0, 3}));
}

}  // namespace
}  // namespace torchcost::nas
