// Interval analysis and the three-valued proofs.
//
// Symbols: B, H dims in [1, inf);  x in [-5, 5];  r in [0, 3];  n in [-3, -1].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

using ::testing::HasSubstr;

class BoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.Symbol("B");
    ctx_.Symbol("H");
    ctx_.Symbol("x", {-5, 5});
    ctx_.Symbol("r", {0, 3});
    ctx_.Symbol("n", {-3, -1});
  }
  Expr P(const std::string& text) {
    Result<Expr> e = Parse(ctx_, text);
    EXPECT_TRUE(e.ok()) << text << ": " << e.status().message();
    return e.ok() ? *e : Expr(0);
  }
  Context ctx_;
};

TEST_F(BoundsTest, Intervals) {
  struct Row {
    const char* expr;
    Interval expected;
  };
  const std::vector<Row> rows = {
      {"7", {7, 7}},
      {"B", {1, kPosInf}},
      {"x", {-5, 5}},
      {"2*x + 1", {2 * -5 + 1, 2 * 5 + 1}},
      {"-x", {-5, 5}},
      {"-B", {kNegInf, -1}},
      {"B - 1", {0, kPosInf}},
      {"x^2", {0, 25}},      // Even power straddling 0.
      {"x^3", {-125, 125}},  // Odd powers are increasing.
      {"n^2", {1, 9}},  // Even power of a negative range: [(-1)^2, (-3)^2].
      {"n^3", {-27, -1}},
      {"x*r", {-5 * 3, 5 * 3}},
      {"n*r", {-3 * 3, 0}},
      {"B*x", {kNegInf, kPosInf}},  // [1, inf) * [-5, 5].
      {"B*n", {kNegInf, -1}},
      {"B*H", {1, kPosInf}},
      {"B*r", {0, kPosInf}},  // inf * 0 = 0.
      {"x + r + n", {-5 + 0 - 3, 5 + 3 - 1}},
      {"floordiv(x, 2)", {-3, 2}},  // floor(-5/2) = -3, floor(5/2) = 2.
      {"floordiv(x, B)",
       {-5, 5}},  // x / 1 at the ends; x / inf tends to -1 or 0.
      {"floordiv(n, B)", {-3, -1}},
      {"floordiv(B, 4)", {0, kPosInf}},
      {"min(x, r)", {-5, 3}},
      {"max(x, r)", {0, 5}},
      {"max(x, n)", {-3, 5}},
      {"min(B, 4)", {1, 4}},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(ctx_.Bounds(P(row.expr)), row.expected)
        << row.expr << " gave [" << ctx_.Bounds(P(row.expr)).lo << ", "
        << ctx_.Bounds(P(row.expr)).hi << "]";
  }
}

TEST_F(BoundsTest, SaturatesInsteadOfWrapping) {
  constexpr int64_t kHalf = std::numeric_limits<int64_t>::max() / 2;
  Expr big = ctx_.Symbol("big", {kHalf, kHalf + 10});
  Expr neg = ctx_.Symbol("neg", {-kHalf - 10, -kHalf});
  EXPECT_EQ(ctx_.Bounds(4 * big).hi, kPosInf);
  EXPECT_EQ(ctx_.Bounds(4 * big).lo, kPosInf);  // Every value exceeds int64.
  EXPECT_EQ(ctx_.Bounds(big * big), (Interval{kPosInf, kPosInf}));
  EXPECT_EQ(ctx_.Bounds(4 * neg).lo, kNegInf);
  EXPECT_EQ(ctx_.Bounds(big * neg).lo, kNegInf);
  EXPECT_EQ(ctx_.Bounds(big + ctx_.Symbol("H")).hi, kPosInf);
}

TEST_F(BoundsTest, SetRangeNarrowsAndInvalidatesMemo) {
  Expr B = ctx_.Symbol("B");
  EXPECT_EQ(ctx_.Bounds(2 * B + 1), (Interval{3, kPosInf}));
  ASSERT_TRUE(ctx_.SetRange("B", {1, 64}).ok());
  EXPECT_EQ(ctx_.Bounds(2 * B + 1), (Interval{3, 2 * 64 + 1}));
  // NB: ranges only narrow: the new range is intersected with the old one.
  ASSERT_TRUE(ctx_.SetRange("B", {0, 8}).ok());
  EXPECT_EQ(ctx_.SymbolRange(B), (Interval{1, 8}));
  EXPECT_EQ(ctx_.Bounds(2 * B + 1), (Interval{3, 17}));
  Status unknown = ctx_.SetRange("nope", {1, 2});
  EXPECT_EQ(unknown.code(), Status::Code::kNotFound);
  EXPECT_THAT(unknown.message(), HasSubstr("unknown symbol 'nope'"));
  Status empty = ctx_.SetRange("B", {9, 20});
  EXPECT_EQ(empty.code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("empty range"));
  EXPECT_FALSE(ctx_.SetRange("B", {5, 4}).ok());
  // Narrowing makes new simplifications possible: floordiv(B, 16) with B <= 8.
  EXPECT_EQ(FloorDiv(B, 16), Expr(0));
}

TEST_F(BoundsTest, ProveEqLeLt) {
  struct Row {
    const char* a;
    const char* b;
    Truth eq, le, lt;
  };
  const Truth T = Truth::kTrue, F = Truth::kFalse, U = Truth::kUnknown;
  const std::vector<Row> rows = {
      {"B", "B", T, T, F},
      {"2*(B + 1)", "2*B + 2", T, T, F},
      {"B", "B + 1", F, T, T},
      {"B + 1", "B", F, F, F},
      {"B", "H", U, U, U},
      {"B", "0", F, F, F},  // B >= 1 > 0.
      {"0", "B", F, T, T},
      {"r", "4", F, T, T},
      {"r", "3", U, T, U},  // r <= 3, r < 3 unknown.
      {"r", "0", U, U, F},  // r >= 0: r < 0 is false, r <= 0 unknown.
      {"n", "r", F, T, T},  // -3..-1 vs 0..3.
      {"x", "r", U, U, U},
      // NB: intervals are not relational: H - floordiv(H, 2) is bounded as
      // [1, inf) - [0, inf), so even H/2 <= H stays unknown.
      {"floordiv(H, 2)", "H", U, U, U},
      {"H - 1", "H", F, T, T},
      {"mod(H, 2) + 2*floordiv(H, 2)", "H", T, T, F},
      {"min(B, 4)", "4", U, T, U},
      {"max(B, 4)", "3", F, F, F},
      {"B*B", "B", U, U, U},
  };
  for (const Row& row : rows) {
    Expr a = P(row.a), b = P(row.b);
    EXPECT_EQ(ctx_.ProveEq(a, b), row.eq) << row.a << " == " << row.b;
    EXPECT_EQ(ctx_.ProveLe(a, b), row.le) << row.a << " <= " << row.b;
    EXPECT_EQ(ctx_.ProveLt(a, b), row.lt) << row.a << " < " << row.b;
  }
}

TEST_F(BoundsTest, ProofsSurviveOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Expr B = ctx_.Symbol("B");
  // kMax*B - (-kMax*B) overflows the coefficient: the answer is unknown.
  EXPECT_EQ(ctx_.ProveEq(kMax * B, -kMax * B), Truth::kUnknown);
  EXPECT_EQ(ctx_.ProveLe(-kMax * B, kMax * B), Truth::kUnknown);
}

}  // namespace
}  // namespace torchcost::sym
