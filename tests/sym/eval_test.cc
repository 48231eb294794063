// Evaluate, Evaluate128, Substitute, FreeSymbols and Program.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class EvalTest : public ::testing::Test {
 protected:
  void SetUp() override { ctx_.Symbol("x", {-5, 5}); }
  Expr P(const std::string& text) {
    Result<Expr> e = Parse(ctx_, text);
    EXPECT_TRUE(e.ok()) << text << ": " << e.status().message();
    return e.ok() ? *e : Expr(0);
  }
  Context ctx_;
};

TEST_F(EvalTest, Evaluate) {
  struct Row {
    const char* expr;
    Bindings bindings;
    int64_t expected;
  };
  const std::vector<Row> rows = {
      {"42", {}, 42},
      {"2*B*H + 4*B + 1", {{"B", 3}, {"H", 5}}, 2 * 3 * 5 + 4 * 3 + 1},
      {"floordiv(H - 1, 2) + 1", {{"H", 224}}, (224 - 1) / 2 + 1},
      {"floordiv(x, 2)", {{"x", -5}}, -3},  // floor(-2.5).
      {"mod(x, 3)", {{"x", -5}}, 1},        // -5 - 3*floor(-5/3) = -5 + 6.
      {"ceildiv(H, 4)", {{"H", 9}}, 3},
      {"min(B, 4) + max(B, 4)", {{"B", 9}}, 4 + 9},
      {"B^2*S", {{"B", 3}, {"S", 7}}, 3 * 3 * 7},
      {"x^3", {{"x", -2}}, -8},
      {"B", {{"B", 5}, {"unused", 1}}, 5},
  };
  for (const Row& row : rows) {
    Result<int64_t> v = Evaluate(P(row.expr), row.bindings);
    ASSERT_TRUE(v.ok()) << row.expr << ": " << v.status().message();
    EXPECT_EQ(*v, row.expected) << row.expr;
    Result<__int128> w = Evaluate128(P(row.expr), row.bindings);
    ASSERT_TRUE(w.ok()) << row.expr;
    EXPECT_EQ(*w, static_cast<__int128>(row.expected)) << row.expr;
  }
}

// More symbols and opaque atoms than the evaluator remembers by scanning
// (16 each), each met more than once.
TEST_F(EvalTest, ManySymbolsAndAtoms) {
  // sum_{i=1..20} (min(B, i) + floordiv(S_i, 2)) * (S_i + 1), with S_i = i and
  // B = 10: min(10, i) is i up to 10, then 10; floordiv(i, 2) = i / 2
  // rounded down.
  Expr e = 0;
  Bindings b = {{"B", 10}};
  int64_t expected = 0;
  for (int i = 1; i <= 20; ++i) {
    const std::string s = "S" + std::to_string(i);
    const Expr si = ctx_.Symbol(s);
    e = e + (Min(ctx_.Symbol("B"), i) + FloorDiv(si, 2)) * (si + 1);
    b[s] = i;
    expected += (std::min(10, i) + i / 2) * (i + 1);
  }
  Result<int64_t> v = Evaluate(e, b);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, expected);
  Result<__int128> w = Evaluate128(e, b);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(*w, static_cast<__int128>(expected));
  b.erase("S20");
  v = Evaluate(e, b);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("unbound symbol 'S20'"));
}

TEST_F(EvalTest, UnboundSymbolIsNamed) {
  // NB: the first unbound symbol is the leftmost one in the printed text.
  Result<int64_t> v = Evaluate(P("2*B*H + W"), {{"H", 2}});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("unbound symbol 'B'"));
  v = Evaluate(P("floordiv(W, 2) + B"), {{"B", 2}});
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("unbound symbol 'W'"));
  EXPECT_FALSE(Evaluate128(P("Q"), {}).ok());
}

TEST_F(EvalTest, OverflowIsAnErrorNotAWrap) {
  constexpr int64_t k2to62 = int64_t{1} << 62;
  Expr e = P("B*H");
  Result<int64_t> v = Evaluate(e, {{"B", k2to62}, {"H", 4}});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Status::Code::kOutOfRange);
  EXPECT_THAT(v.status().message(), HasSubstr("integer overflow"));
  // The same total fits in 128 bits: 2^62 * 4 = 2^64.
  Result<__int128> w = Evaluate128(e, {{"B", k2to62}, {"H", 4}});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, static_cast<__int128>(1) << 64);
  EXPECT_EQ(Int128ToString(*w), "18446744073709551616");
  EXPECT_FALSE(
      Evaluate(P("B + 1"), {{"B", std::numeric_limits<int64_t>::max()}}).ok());
  EXPECT_FALSE(Evaluate(P("B^3"), {{"B", 1 << 22}}).ok());  // 2^66.
  // Only the result must fit: B*H - B*W passes through 2^62 * 4 = 2^64.
  Result<int64_t> mid =
      Evaluate(P("B*H - B*W"), {{"B", k2to62}, {"H", 4}, {"W", 3}});
  ASSERT_TRUE(mid.ok()) << mid.status().message();
  EXPECT_EQ(*mid, k2to62);  // 2^62 * (4 - 3).
  // 2^62^3 = 2^186 overflows even 128 bits.
  EXPECT_FALSE(Evaluate128(P("B^3"), {{"B", k2to62}}).ok());
  // A divisor bound outside its range evaluates to zero: an error, not a crash.
  Result<int64_t> z = Evaluate(P("floordiv(H, W)"), {{"H", 1}, {"W", 0}});
  ASSERT_FALSE(z.ok());
  EXPECT_THAT(z.status().message(), HasSubstr("division by zero"));
}

TEST_F(EvalTest, Substitute) {
  Expr e = P("floordiv(H - 1, 2)*B + B*W");
  EXPECT_EQ(Substitute(e, {{"H", 9}}).ToString(), "B*W + 4*B");
  EXPECT_EQ(Substitute(e, {{"B", 2}}).ToString(), "2*W + 2*floordiv(H - 1, 2)");
  EXPECT_EQ(Substitute(e, {{"B", 2}, {"H", 9}, {"W", 3}}), Expr(2 * 4 + 2 * 3));
  EXPECT_EQ(Substitute(e, {}), e);
  EXPECT_EQ(Substitute(e, {{"unrelated", 1}}), e);
  EXPECT_EQ(Substitute(P("min(B, H)"), {{"B", 3}}).ToString(), "min(H, 3)");
  EXPECT_EQ(Substitute(P("max(B, H)"), {{"B", 1}}), P("H"));  // H >= 1.
  // Substituting a divisor by a non-positive value is an error.
  EXPECT_THROW(Substitute(P("floordiv(H, W)"), {{"W", 0}}), Error);
}

TEST_F(EvalTest, FreeSymbolsAreSorted) {
  EXPECT_THAT(FreeSymbols(P("W*floordiv(H, B) + min(a, B) + 3")),
              ElementsAre("B", "H", "W", "a"));
  EXPECT_TRUE(FreeSymbols(Expr(3)).empty());
}

TEST_F(EvalTest, ProgramMatchesEvaluate) {
  std::vector<Expr> exprs = {
      P("2*B*S*H^2 + 4*B*S*H + 7"),
      P("floordiv(floordiv(H - 1, 2) + 1 - 3, 2)*B"),
      P("min(B, 4)*max(S, 2) - mod(B, 3)"),
      P("B^5"),
      Expr(11),
  };
  std::vector<std::string> symbols = {"B", "H", "S"};
  Result<Program> prog = Program::Compile(exprs, symbols);
  ASSERT_TRUE(prog.ok()) << prog.status().message();
  ASSERT_EQ(prog->num_outputs(), exprs.size());
  for (int64_t b : {1, 2, 3, 8, 1000}) {
    for (int64_t h : {1, 7, 224}) {
      int64_t values[3] = {b, h, 13};
      __int128 out[5];
      ASSERT_TRUE(prog->Run(values, out).ok());
      Bindings bind = {{"B", b}, {"H", h}, {"S", 13}};
      for (size_t i = 0; i < exprs.size(); ++i) {
        Result<__int128> want = Evaluate128(exprs[i], bind);
        ASSERT_TRUE(want.ok());
        EXPECT_EQ(out[i], *want)
            << exprs[i].ToString() << " B=" << b << " H=" << h;
      }
    }
  }
}

TEST_F(EvalTest, ProgramErrors) {
  Result<Program> prog = Program::Compile({P("B + Q")}, {"B"});
  ASSERT_FALSE(prog.ok());
  EXPECT_THAT(prog.status().message(), HasSubstr("symbol 'Q'"));

  // 128-bit overflow is reported: (2^62)^3 = 2^186.
  Result<Program> cube = Program::Compile({P("B^3")}, {"B"});
  ASSERT_TRUE(cube.ok());
  int64_t big = int64_t{1} << 62;
  __int128 out;
  EXPECT_EQ(cube->Run(&big, &out).code(), Status::Code::kOutOfRange);
  int64_t small = 3;
  ASSERT_TRUE(cube->Run(&small, &out).ok());
  EXPECT_EQ(out, 27);
}

// Run64 agrees with Run where int64 holds every step, and refuses otherwise:
// 2^21 cubed is 2^63, one past INT64_MAX; B*B - B*B at 2^32 overflows midway.
TEST_F(EvalTest, Run64MatchesRunOrRefuses) {
  Result<Program> prog = Program::Compile(
      {P("2*B*S*H^2 + 4*B*S*H + 7"), P("floordiv(H - 1, 2)*min(B, S)")},
      {"B", "H", "S"});
  ASSERT_TRUE(prog.ok());
  int64_t values[3] = {8, 224, 1000};
  __int128 exact[2];
  int64_t fast[2];
  ASSERT_TRUE(prog->Run(values, exact).ok());
  ASSERT_TRUE(prog->Run64(values, fast));
  EXPECT_EQ(fast[0], exact[0]);
  EXPECT_EQ(fast[1], exact[1]);
  Result<Program> cube = Program::Compile({P("B^3")}, {"B"});
  ASSERT_TRUE(cube.ok());
  int64_t b = int64_t{1} << 21, out = 0;
  EXPECT_FALSE(cube->Run64(&b, &out));
  b = (int64_t{1} << 21) - 1;
  ASSERT_TRUE(cube->Run64(&b, &out));
  EXPECT_EQ(out, b * b * b);
}

TEST_F(EvalTest, Int128ToString) {
  EXPECT_EQ(Int128ToString(0), "0");
  EXPECT_EQ(Int128ToString(-42), "-42");
  __int128 max =
      static_cast<__int128>((static_cast<unsigned __int128>(1) << 127) - 1);
  EXPECT_EQ(Int128ToString(max), "170141183460469231731687303715884105727");
  EXPECT_EQ(Int128ToString(-max - 1),
            "-170141183460469231731687303715884105728");
}

}  // namespace
}  // namespace torchcost::sym
