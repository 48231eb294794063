// ForEachLinearPiece and SumOver against evaluating every value: pieces that
// cover the range in order, sums equal to the plain sum for linear, kinked,
// polynomial and stepped expressions.
#include "sym/linear_pieces.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace torchcost::sym {
namespace {

using ::testing::HasSubstr;

class LinearPiecesTest : public ::testing::Test {
 protected:
  Expr P(const std::string& text) {
    Result<Expr> e = Parse(ctx_, text);
    EXPECT_TRUE(e.ok()) << text << ": " << e.status().message();
    return e.ok() ? *e : Expr(0);
  }
  // The plain sum of e at x = first..last, y bound to 7.
  __int128 Plain(const Expr& e, int64_t first, int64_t last) {
    __int128 sum = 0;
    for (int64_t x = first; x <= last; ++x) {
      Result<__int128> v = Evaluate128(e, {{"x", x}, {"y", 7}});
      EXPECT_TRUE(v.ok()) << v.status().message();
      sum += v.ok() ? *v : 0;
    }
    return sum;
  }
  Context ctx_;
};

TEST_F(LinearPiecesTest, SumOverIsThePlainSum) {
  const std::vector<std::string> exprs = {
      "5",
      "3*x + y",
      "min(x, 37)*1000 + 11",        // one kink
      "max(x - 100, 0)*y",           // one kink, zero before it
      "x^2 + 3*x",                   // quadratic
      "x^3 - 40*x^2",                // cubic
      "floordiv(x, 7)*13",           // a step every 7 values
      "min(x + y, 64)*x",            // quadratic, then linear
      "min(x^2, 50*x)",              // samples at 0, 50, 100, 150 collinear
      "max(min(x, 37), 100 - 2*x)",  // nested: three pieces
      "min(3*x + y, 2*x + 40) - max(x, 90)",
  };
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {1, 1},   {1, 4},    {1, 5},     {2, 300},
      {30, 45}, {-20, 20}, {120, 121}, {0, 150}};
  for (const std::string& text : exprs) {
    const Expr e = P(text);
    for (auto [first, last] : ranges) {
      Result<__int128> got = SumOver(e, {{"y", 7}}, "x", first, last);
      ASSERT_TRUE(got.ok()) << got.status().message();
      EXPECT_TRUE(*got == Plain(e, first, last))
          << text << " over " << first << ".." << last << ": "
          << static_cast<long long>(*got) << " vs "
          << static_cast<long long>(Plain(e, first, last));
    }
  }
}

TEST_F(LinearPiecesTest, PiecesCoverTheRangeInOrderAndAreLinear) {
  const std::vector<Expr> exprs = {P("min(x, 37)*1000"), P("x^2")};
  int64_t next = 3;
  int pieces = 0;
  ASSERT_TRUE(
      ForEachLinearPiece(exprs, {}, "x", 3, 200, [&](const LinearPiece& p) {
        EXPECT_EQ(p.lo, next);
        EXPECT_LE(p.lo, p.hi);
        next = p.hi + 1;
        ++pieces;
        // The ends' values are the expressions' there.
        for (size_t k = 0; k < exprs.size(); ++k) {
          EXPECT_TRUE((*p.at_lo)[k] == *Evaluate128(exprs[k], {{"x", p.lo}}));
          EXPECT_TRUE((*p.at_hi)[k] == *Evaluate128(exprs[k], {{"x", p.hi}}));
        }
      }).ok());
  EXPECT_EQ(next, 201);
  // x^2 is linear on no range longer than one value.
  EXPECT_EQ(pieces, 198);
  // Piecewise affine: a piece per side of each kink.
  pieces = 0;
  ASSERT_TRUE(ForEachLinearPiece({P("max(min(x, 37), 100 - 2*x)")}, {}, "x",
                                 -50, 9000,
                                 [&](const LinearPiece&) { ++pieces; })
                  .ok());
  EXPECT_EQ(pieces, 3);
  // Linear on the range: one piece.
  pieces = 0;
  ASSERT_TRUE(ForEachLinearPiece({P("min(x, 37)*1000")}, {}, "x", 40, 9000,
                                 [&](const LinearPiece&) { ++pieces; })
                  .ok());
  EXPECT_EQ(pieces, 1);
}

TEST_F(LinearPiecesTest, EmptyRangeAndUnboundSymbols) {
  Result<__int128> empty = SumOver(P("x + y"), {}, "x", 5, 4);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(*empty == 0);
  Result<__int128> unbound = SumOver(P("x + y"), {}, "x", 1, 9);
  ASSERT_FALSE(unbound.ok());
  EXPECT_THAT(unbound.status().message(), HasSubstr("'y'"));
}

}  // namespace
}  // namespace torchcost::sym
