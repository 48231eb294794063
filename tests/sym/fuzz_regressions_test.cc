// Inputs fuzz/sym_parse_fuzz.cc found that hung or crashed the sym grammar;
// each must now parse or fail with a one-line error, quickly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <string>

#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

using ::testing::HasSubstr;

TEST(SymFuzzRegressionTest, PowerOfASumIsRefusedInsteadOfExpandedForever) {
  // (B + S + 1)^4999 expands to C(5001, 2) ~ 12.5 M terms, each squaring step
  // multiplying sums term by term: the product is refused once a step would
  // pair more than 2^18 terms. The fuzzer's input, verbatim (a timeout):
  Context ctx;
  const std::string found =
      "(-((-p_a_3*((Eaaa--_a-aa)*a*-m33_a*-an0ZHH_-a-Z-Z1-aa_*-xa--aaa-a-iaO*-"
      "xaw3a--VVVVV*aaa_*m)^4999-maxw*a";
  Result<Expr> e = Parse(ctx, found + "-a)*a_-a_-a)a)*");
  EXPECT_FALSE(e.ok());
  Result<Expr> p = Parse(ctx, "(B + S + 1)^4999");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("expression too large"));
}

TEST(SymFuzzRegressionTest, SmallPowersOfSumsStillExpand) {
  // (B + 1)^3 = B^3 + 3*B^2 + 3*B + 1 (the binomial theorem).
  Context ctx;
  Result<Expr> p = Parse(ctx, "(B + 1)^3");
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->ToString(), "B^3 + 3*B^2 + 3*B + 1");
  // (B + S + 1)^8 has C(8 + 2, 2) = 45 terms: within the limit.
  Result<Expr> q = Parse(ctx, "(B + S + 1)^8");
  ASSERT_TRUE(q.ok()) << q.status().message();
  Result<int64_t> v = Evaluate(*q, {{"B", 1}, {"S", 1}});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 6561);  // 3^8.
}

TEST(SymFuzzRegressionTest, DeepNestingIsAnErrorNotAStackOverflow) {
  // 100,000 parentheses (or calls) overflowed the recursive-descent parser's
  // stack (ASan: stack-overflow in ParseUnary); they are now an error.
  Context ctx;
  const int n = 100000;
  Result<Expr> parens =
      Parse(ctx, std::string(n, '(') + "1" + std::string(n, ')'));
  ASSERT_FALSE(parens.ok());
  EXPECT_THAT(parens.status().message(),
              HasSubstr("nested deeper than 200 levels"));
  std::string calls;
  for (int i = 0; i < n; ++i) calls += "min(B, ";
  Result<Expr> nested_calls = Parse(ctx, calls + "1" + std::string(n, ')'));
  ASSERT_FALSE(nested_calls.ok());
  EXPECT_THAT(nested_calls.status().message(),
              HasSubstr("nested deeper than 200 levels"));
  // A run of minus signs is read in a loop: 100,001 of them negate 7 (an odd
  // count).
  Result<Expr> minus = Parse(ctx, std::string(n + 1, '-') + "7");
  ASSERT_TRUE(minus.ok()) << minus.status().message();
  EXPECT_EQ(*minus, Expr(-7));
  // 150 levels are within the limit.
  Result<Expr> ok =
      Parse(ctx, std::string(150, '(') + "B + 1" + std::string(150, ')'));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->ToString(), "B + 1");
}

// Returns the bytes the heap holds in use (small blocks and mmapped ones).
size_t HeapBytes() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

TEST(SymFuzzRegressionTest, ReparsingALongSumTakesLinearishMemory) {
  // The fuzzer's input, verbatim: a sum of 11 terms and a constant to the 6th
  // prints as C(11 + 6, 6) = 12,376 terms (651k characters); parsing that back
  // added term after term, interning every partial sum: 1.7 GB (2.2 GB under
  // ASan). Summed in pairs, it parses back to the same expression.
  Context ctx;
  const std::string found =
      "2*(B*SSdddddddddddddd1*dBAadddddd+ Am+BrBrHv "
      "+r2*Lv--cr*B4ei-addddddddA62B*S*3+66 + Ajjjjjjjjjjm+BrBrHv "
      "+r2*Lv--cr2*Lv--cr*B4ei-addddddddA62B*S*B4ei-aB*av+ R*R)^6";
  Result<Expr> e = Parse(ctx, found);
  ASSERT_TRUE(e.ok()) << e.status().message();
  const std::string printed = e->ToString();
  // Monomials of degree <= 6 in the 11 terms: C(11 + 6, 6) = 12,376, joined by
  // " + " or " - ".
  size_t terms = 1;
  for (size_t i = 0; i + 2 < printed.size(); ++i) {
    if (printed[i] == ' ' && (printed[i + 1] == '+' || printed[i + 1] == '-') &&
        printed[i + 2] == ' ')
      ++terms;
  }
  EXPECT_EQ(terms, 12376u);
  // NB: bounded in heap bytes, not seconds (a wall-clock bound fails on a
  // loaded machine). Summed in pairs, the partial sums hold n log2 n ~ 175k
  // operands; term after term they held n^2 / 2 ~ 77M (1.7 GB). Under a
  // sanitizer's allocator mallinfo2 reads 0 and the plain build checks it.
  const size_t before = HeapBytes();
  Result<Expr> again = Parse(ctx, printed);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(*again, *e);
  EXPECT_LT(HeapBytes() - before, size_t{64} << 20);  // Measured: 20.8 MB.
  // A sum of n terms still adds up as written: 1 + 2 + ... + 100 = 100 * 101
  // / 2.
  std::string numbers = "1";
  for (int i = 2; i <= 100; ++i) numbers += " + " + std::to_string(i);
  Result<Expr> gauss = Parse(ctx, numbers + " - B + B");
  ASSERT_TRUE(gauss.ok());
  EXPECT_EQ(*gauss, Expr(5050));
}

}  // namespace
}  // namespace torchcost::sym
