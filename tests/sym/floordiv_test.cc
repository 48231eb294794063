// FloorDiv's guarded simplifications, CeilDiv, Mod, Min and Max.
//
// Each family is a table of {input text, expected canonical text}; inputs are
// parsed, so the rows read like the rule files that use them. Symbols:
//   B, H, W: dims in [1, inf);  x in [-5, 5];  r in [0, 3];  q in [8, 11].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

using ::testing::HasSubstr;

struct Row {
  const char* input;
  const char* expected;
};

class FloorDivTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ctx_.Symbol("B");
    ctx_.Symbol("H");
    ctx_.Symbol("W");
    ctx_.Symbol("x", {-5, 5});
    ctx_.Symbol("r", {0, 3});
    ctx_.Symbol("q", {8, 11});
  }

  Expr P(const std::string& text) {
    Result<Expr> e = Parse(ctx_, text);
    EXPECT_TRUE(e.ok()) << text << ": " << e.status().message();
    return e.ok() ? *e : Expr(0);
  }

  void Check(const std::vector<Row>& rows) {
    for (const Row& row : rows) {
      Expr e = P(row.input);
      EXPECT_EQ(e.ToString(), row.expected) << "input: " << row.input;
      Verify(e);
    }
  }

  Context ctx_;
};

TEST_F(FloorDivTest, FloorDivConstFold) {
  Check({
      {"floordiv(7, 2)", "3"},
      {"floordiv(-7, 2)", "-4"},  // floor(-3.5) = -4, not C++'s -3.
      {"floordiv(-8, 2)", "-4"},
      {"floordiv(-1, 3)", "-1"},
      {"floordiv(0, 5)", "0"},
      {"floordiv(6, 6)", "1"},
      {"floordiv(0, H)", "0"},
      {"floordiv(H, H)", "1"},
  });
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(FloorDiv(kMin, 2), Expr(kMin / 2));  // Exact: -2^62.
  // floor(-2^63 / 3) = -3074457345618258602.67 rounded down.
  EXPECT_EQ(FloorDiv(kMin, 3), Expr(int64_t{-3074457345618258603}));
  EXPECT_EQ(FloorDiv(kMin, 1), Expr(kMin));
  EXPECT_EQ(FloorDiv(kMax, kMax), Expr(1));
  EXPECT_EQ(FloorDiv(kMin, kMax),
            Expr(-2));  // -2^63 / (2^63 - 1) = -1.0000000001.
}

TEST_F(FloorDivTest, FloorDivByOne) {
  Check({
      {"floordiv(H, 1)", "H"},
      {"floordiv(x - 3, 1)", "x - 3"},
  });
}

TEST_F(FloorDivTest, FloorDivNested) {
  Check({
      {"floordiv(floordiv(H, 2), 3)", "floordiv(H, 6)"},
      {"floordiv(floordiv(H - 1, 2), 2)", "floordiv(H - 1, 4)"},
      {"floordiv(floordiv(H, W), 2)", "floordiv(H, 2*W)"},
      {"floordiv(floordiv(x, 2), B)", "floordiv(x, 2*B)"},  // Any sign of x.
  });
}

TEST_F(FloorDivTest, FloorDivGcd) {
  Check({
      {"floordiv(4*H + 2, 6)", "floordiv(2*H + 1, 3)"},
      {"floordiv(2*H - 2, 4)", "floordiv(H - 1, 2)"},
      {"floordiv(2*H, 4*W)", "floordiv(H, 2*W)"},
      {"floordiv(6*x + 3, 9)", "floordiv(2*x + 1, 3)"},
      {"floordiv(4, 2*H)", "floordiv(2, H)"},
      // A common monomial factor t >= 1 cancels too.
      {"floordiv(B*H, B*W)", "floordiv(H, W)"},
      {"floordiv(B^2*H + B*W, B*W)", "floordiv(B*H, W) + 1"},  // Then W / W.
      {"floordiv(6*B*H, 4*B)", "floordiv(3*H, 2)"},
  });
}

TEST_F(FloorDivTest, FloorDivPullOut) {
  Check({
      {"floordiv(4*H + W, 2)", "2*H + floordiv(W, 2)"},
      {"floordiv(4*H + 1, 2)", "2*H"},  // 2*H + floordiv(1, 2).
      {"floordiv(H + 4, 2)", "floordiv(H, 2) + 2"},
      {"floordiv(H - 4, 2)", "floordiv(H, 2) - 2"},
      {"floordiv(H - 1, 2)",
       "floordiv(H - 1, 2)"},         // NB: -1 is not a multiple.
      {"floordiv(3*x + 1, 3)", "x"},  // x + floordiv(1, 3).
      {"floordiv(-6*x + W, 3)", "-2*x + floordiv(W, 3)"},
      {"floordiv(B*H + W, B)", "H + floordiv(W, B)"},
      {"floordiv(B*H, B)", "H"},
      {"floordiv(B^2*H + B, B)", "B*H + 1"},
      {"floordiv(2*B*H + W, 2*B)", "H + floordiv(W, 2*B)"},
      {"floordiv(B*H + B*W + 3, B)", "H + W + floordiv(3, B)"},
      {"floordiv(B*H + W, H)", "B + floordiv(W, H)"},
  });
}

TEST_F(FloorDivTest, FloorDivBounds) {
  Check({
      {"floordiv(r, 4)", "0"},       // 0 <= r <= 3 < 4.
      {"floordiv(r + 4, 4)", "1"},   // 1 + floordiv(r, 4).
      {"floordiv(r - 4, 4)", "-1"},  // -4 <= r - 4 <= -1.
      {"floordiv(-r - 1, 4)", "-1"},
      {"floordiv(q, 4)", "2"},               // 8..11 / 4 = 2.
      {"floordiv(x, 8)", "floordiv(x, 8)"},  // -5..5 straddles 0.
      {"floordiv(H - 1, H)", "0"},           // 0 <= H - 1 < H.
      {"floordiv(r, H + 3)", "0"},           // r <= 3 < H + 3.
      {"floordiv(H + 1, H)", "floordiv(1, H) + 1"},
  });
}

TEST_F(FloorDivTest, DivisorMustBeProvablyPositive) {
  Expr B = ctx_.Symbol("B"), x = ctx_.Symbol("x"), H = ctx_.Symbol("H");
  struct Bad {
    Expr a, b;
    const char* message;
  };
  const std::vector<Bad> bad = {
      {B, 0, "the divisor 0 is not positive"},
      {B, -2, "the divisor -2 is not positive"},
      {B, x,
       "the divisor 'x' is not provably positive; its bounds are [-5, 5]"},
      {B, H - 1,
       "the divisor 'H - 1' is not provably positive; its bounds are [0, inf)"},
  };
  for (const Bad& c : bad) {
    try {
      (void)FloorDiv(c.a, c.b);
      ADD_FAILURE() << "no error for divisor " << c.b.ToString();
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message));
    }
    EXPECT_THROW(CeilDiv(c.a, c.b), Error);
    EXPECT_THROW(Mod(c.a, c.b), Error);
  }
}

TEST_F(FloorDivTest, Mod) {
  Check({
      {"mod(H, 2)", "H - 2*floordiv(H, 2)"},
      {"mod(2*H, 2)", "0"},
      {"mod(r, 4)", "r"},
      {"mod(H + 4, 2)", "H - 2*floordiv(H, 2)"},
      {"mod(B*H + W, B)", "-B*floordiv(W, B) + W"},
      {"mod(7, 3)", "1"},
      {"mod(-7, 3)", "2"},  // -7 - 3*floor(-7/3) = -7 + 9.
  });
  // floordiv(x, c)*c + mod(x, c) == x falls out of linear cancellation.
  for (const char* x : {"H", "x", "3*H - W + 1", "B*H"}) {
    for (const char* c : {"2", "7", "W", "2*B"}) {
      Expr e = P(x), d = P(c);
      EXPECT_EQ(FloorDiv(e, d) * d + Mod(e, d), e) << x << " and " << c;
    }
  }
}

TEST_F(FloorDivTest, CeilDiv) {
  Check({
      {"ceildiv(7, 2)", "4"},
      {"ceildiv(-7, 2)", "-3"},  // ceil(-3.5) = -3.
      {"ceildiv(6, 2)", "3"},
      {"ceildiv(H, 2)", "floordiv(H + 1, 2)"},
      {"ceildiv(2*H, 2)", "H"},
      {"ceildiv(H, W)", "floordiv(H - 1, W) + 1"},  // Pulls out W / W.
  });
  Expr H = ctx_.Symbol("H");
  EXPECT_EQ(CeilDiv(H, 2), FloorDiv(H + 1, 2));
}

TEST_F(FloorDivTest, MinMax) {
  Check({
      {"min(3, 5)", "3"},
      {"max(3, -5)", "3"},
      {"min(B, B)", "B"},
      {"min(B, B + 1)", "B"},
      {"max(B, B + 1)", "B + 1"},
      {"min(B, 0)", "0"},  // B >= 1.
      {"max(B, 1)", "B"},
      {"min(4, B)", "min(B, 4)"},
      {"max(W, H)", "max(H, W)"},
      {"min(x, 10)", "x"},
      {"max(x, -5)", "x"},
      {"min(x, r)", "min(r, x)"},
      {"min(q, r)", "r"},
  });
  Expr H = ctx_.Symbol("H"), W = ctx_.Symbol("W");
  EXPECT_EQ(Min(H, W), Min(W, H));
  EXPECT_EQ(Max(H, W), Max(W, H));
  EXPECT_NE(Min(H, W), Max(H, W));
}

}  // namespace
}  // namespace torchcost::sym
