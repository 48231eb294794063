// Canonical form, interning and printing of sym::Expr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

using ::testing::HasSubstr;

class ExprTest : public ::testing::Test {
 protected:
  Context ctx_;
  Expr B = ctx_.Symbol("B");
  Expr H = ctx_.Symbol("H");
  Expr S = ctx_.Symbol("S");
  Expr W = ctx_.Symbol("W");
};

struct CanonCase {
  const char* name;
  std::function<Expr(Expr B, Expr H, Expr S, Expr W)> build;
  const char* expected;
};

TEST_F(ExprTest, CanonicalText) {
  const std::vector<CanonCase> cases = {
      {"zero_is_dropped", [](Expr B, Expr, Expr, Expr) { return B + 0; }, "B"},
      {"times_one", [](Expr B, Expr, Expr, Expr) { return B * 1; }, "B"},
      {"commutes", [](Expr B, Expr H, Expr, Expr) { return H + B; }, "B + H"},
      {"distributes",
       [](Expr B, Expr H, Expr, Expr) { return B * (2 * H + 4) + 1; },
       "2*B*H + 4*B + 1"},
      {"powers", [](Expr B, Expr, Expr S, Expr) { return S * B * B; }, "B^2*S"},
      {"negated_leading_term", [](Expr B, Expr, Expr, Expr) { return 3 - B; },
       "-B + 3"},
      {"cancels", [](Expr B, Expr H, Expr, Expr) { return B + H - B; }, "H"},
      {"cancels_to_constant",
       [](Expr B, Expr, Expr, Expr) { return (B + 5) - (B + 2); }, "3"},
      {"difference_of_squares",
       [](Expr B, Expr, Expr, Expr) { return (B + 1) * (B - 1); }, "B^2 - 1"},
      {"degree_order",
       [](Expr B, Expr H, Expr S, Expr) { return 1 + B + H * S + B * B * S; },
       "B^2*S + H*S + B + 1"},
      {"graded_lex",
       [](Expr B, Expr, Expr S, Expr) { return B * S * S + B * B * S; },
       "B^2*S + B*S^2"},
      {"negative_coefficients",
       [](Expr B, Expr H, Expr, Expr) { return -2 * B - H - 7; },
       "-2*B - H - 7"},
      {"atom_before_floordiv",
       [](Expr B, Expr H, Expr, Expr) { return FloorDiv(H, 2) + B; },
       "B + floordiv(H, 2)"},
      {"conv_output",
       // floordiv(H + 2*pad - kernel, stride) + 1 with pad 1, kernel 3,
       // stride 2.
       [](Expr, Expr H, Expr, Expr) { return FloorDiv(H + 2 * 1 - 3, 2) + 1; },
       "floordiv(H - 1, 2) + 1"},
      {"min_prints_constant_last",
       [](Expr B, Expr, Expr, Expr) { return Min(4, B); }, "min(B, 4)"},
      {"product_of_sums",
       [](Expr B, Expr H, Expr, Expr W) { return (B + H) * (H + W); },
       "B*H + B*W + H^2 + H*W"},
      {"pow", [](Expr B, Expr, Expr, Expr) { return Pow(B + 1, 2); },
       "B^2 + 2*B + 1"},
      {"pow_zero", [](Expr B, Expr, Expr, Expr) { return Pow(B, 0); }, "1"},
      {"opaque_atom_power",
       [](Expr, Expr H, Expr, Expr) { return FloorDiv(H, 2) * FloorDiv(H, 2); },
       "floordiv(H, 2)^2"},
  };
  for (const CanonCase& c : cases) {
    Expr e = c.build(B, H, S, W);
    EXPECT_EQ(e.ToString(), c.expected) << c.name;
    Verify(e);
  }
}

TEST_F(ExprTest, SingleAtomIsTheAtomNode) {
  EXPECT_EQ(B + 0, B);
  EXPECT_EQ(B * 1, B);
  EXPECT_EQ((B + H) - H, B);
  EXPECT_EQ(B.kind(), Kind::kSymbol);
  EXPECT_EQ((B * H).kind(), Kind::kProduct);
  EXPECT_EQ((2 * B).kind(), Kind::kSum);
  EXPECT_EQ((B + 1).kind(), Kind::kSum);
  EXPECT_EQ(FloorDiv(B, 2).kind(), Kind::kFloorDiv);
  EXPECT_EQ(Min(B, H).kind(), Kind::kMin);
  EXPECT_EQ(Max(B, H).kind(), Kind::kMax);
  EXPECT_EQ(Expr(5).kind(), Kind::kConstant);
}

TEST_F(ExprTest, LinearTermsRebuildTheExpression) {
  std::vector<LinearTerm> terms;
  // A constant has no terms; a single atom is itself with coefficient 1.
  EXPECT_EQ(LinearTerms(Expr(7), &terms), 7);
  EXPECT_TRUE(terms.empty());
  EXPECT_EQ(LinearTerms(B, &terms), 0);
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].term, B);
  EXPECT_EQ(terms[0].coeff, 1);
  // 3*B*S - 2*floordiv(S, 4) + 5: two terms and the constant, which sum back to
  // it.
  const Expr e = 3 * B * S - 2 * FloorDiv(S, 4) + 5;
  EXPECT_EQ(LinearTerms(e, &terms), 5);
  ASSERT_EQ(terms.size(), 2u);
  Expr sum = 5;
  for (const LinearTerm& t : terms) {
    EXPECT_NE(t.term.kind(), Kind::kSum);
    sum += t.coeff * t.term;
  }
  EXPECT_EQ(sum, e);
}

TEST_F(ExprTest, UniquingWorks) {
  auto build = [&] { return FloorDiv(B * H + 2 * W - 3, 2) * S + Min(B, 8); };
  Expr a = build();
  size_t nodes = ctx_.NodeCount();
  Expr b = build();
  EXPECT_EQ(a.node(), b.node());
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_EQ(ctx_.NodeCount(), nodes);  // Nothing new was interned.
  // Same value, different construction order.
  EXPECT_EQ((B + H) * (B + H), B * B + 2 * B * H + H * H);
  EXPECT_EQ(B * H * S, S * (H * B));
}

TEST_F(ExprTest, AddingAConstantFindsTheSumsAlreadyInterned) {
  // x + c keeps x's terms and changes the constant: it is the same node as the
  // sum built term by term, and adding then taking away c gives x back.
  Expr x = 3 * B * S + 2 * H + 7;
  EXPECT_EQ(x + 5, 3 * B * S + 2 * H + 12);
  EXPECT_EQ((x + 5).node(), (2 * H + 12 + 3 * S * B).node());
  size_t nodes = ctx_.NodeCount();
  EXPECT_EQ(x + 5 - 5, x);
  EXPECT_EQ(x - 7, 3 * B * S + 2 * H);
  EXPECT_EQ(ctx_.NodeCount(), nodes);  // Nothing new was interned.
  EXPECT_EQ(B + 4 - 4, B);  // A single term and a constant: the term itself.
  EXPECT_NE(x + 1, x);
  EXPECT_EQ((x + 1).ToString(), "3*B*S + 2*H + 8");
}

TEST_F(ExprTest, AddingALikeTermChangesItsCoefficient) {
  // x + k*t with t already a term of x: only t's coefficient changes, at its
  // place among x's terms, and a coefficient that reaches 0 drops the term.
  const Expr x = 4 * B * S + 3 * H + 2 * W + 1;
  EXPECT_EQ((x + B * S).ToString(), "5*B*S + 3*H + 2*W + 1");  // First term.
  EXPECT_EQ((x + 2 * H).ToString(), "4*B*S + 5*H + 2*W + 1");  // Middle.
  EXPECT_EQ((x - 3 * W).ToString(), "4*B*S + 3*H - W + 1");    // Last.
  EXPECT_EQ((x - 4 * B * S).ToString(), "3*H + 2*W + 1");      // Cancels.
  EXPECT_EQ((x - 2 * W).ToString(), "4*B*S + 3*H + 1");
  // A single-term operand with a constant: the constants add too.
  EXPECT_EQ((x + (2 * H + 5)).ToString(), "4*B*S + 5*H + 2*W + 6");
  EXPECT_EQ((x - (3 * H + 1)).ToString(), "4*B*S + 2*W");
  // 2*B - B leaves 1*B + 0, which is the node B itself.
  EXPECT_EQ(2 * B - B, B);
  // The same sums built term by term in another order are the same nodes.
  EXPECT_EQ(x + 2 * H, 2 * W + 5 * H + 1 + 4 * S * B);
  EXPECT_EQ(x - 4 * B * S, 1 + 2 * W + 3 * H);
}

TEST_F(ExprTest, AddingANewTermMergesItInOrder) {
  // Where the single term is not a term of x (the like-term shortcut must not
  // apply), it is inserted at its structural place: degree first, then atoms.
  const Expr x = 4 * B * S + 3 * H + 2 * W + 1;
  EXPECT_EQ((x + S).ToString(), "4*B*S + 3*H + S + 2*W + 1");
  EXPECT_EQ((x + B * H).ToString(), "B*H + 4*B*S + 3*H + 2*W + 1");
  EXPECT_EQ((x - H * S).ToString(), "4*B*S - H*S + 3*H + 2*W + 1");
  EXPECT_EQ((x + 7 * B).ToString(), "4*B*S + 7*B + 3*H + 2*W + 1");
  EXPECT_EQ((x + B * B * S).ToString(), "B^2*S + 4*B*S + 3*H + 2*W + 1");
  // An overflowing coefficient still throws on the shortcut's path.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_THROW((kMax * H + B) + H, Error);
  EXPECT_THROW((B - kMax * H) - 2 * H, Error);
}

TEST_F(ExprTest, RepeatedSumsAreTheSameWithoutNewNodes) {
  // A repeated a + b is remembered on a; a - b, a + c and b + a are not that
  // sum, and asking for them in between leaves a + b right.
  const Expr a = 3 * B + H;
  const Expr b = B + W;
  const Expr c = B + S;
  const Expr sum = a + b;
  EXPECT_EQ(sum.ToString(), "4*B + H + W");
  size_t nodes = ctx_.NodeCount();
  EXPECT_EQ(a + b, sum);
  EXPECT_EQ(ctx_.NodeCount(), nodes);  // Nothing new was interned.
  EXPECT_EQ((a - b).ToString(), "2*B + H - W");
  EXPECT_EQ(a + b, sum);
  EXPECT_EQ((a + c).ToString(), "4*B + H + S");
  EXPECT_EQ(a + b, sum);
  EXPECT_EQ((b + a).ToString(), "4*B + H + W");
  EXPECT_EQ(b + a, sum);
  EXPECT_EQ((a - b).ToString(), "2*B + H - W");
  EXPECT_EQ((b - a).ToString(), "-2*B - H + W");
  // A sum that overflowed is not remembered: it throws again.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const Expr big = kMax * B + H;
  EXPECT_THROW(big + b, Error);
  EXPECT_THROW(big + b, Error);
  EXPECT_EQ((big - b).ToString(), std::to_string(kMax - 1) + "*B + H - W");
}

TEST_F(ExprTest, RepeatedScalingsAreRightForEachFactor) {
  // k * e is remembered per (e, k) in a small cache where a collision
  // overwrites: another factor of the same e, or the same factor of another
  // e, is never the remembered product. Checked against repeated addition.
  const Expr x = 3 * B * S + H + 1;
  EXPECT_EQ((2 * x).ToString(), "6*B*S + 2*H + 2");
  EXPECT_EQ((3 * x).ToString(), "9*B*S + 3*H + 3");
  EXPECT_EQ((-x).ToString(), "-3*B*S - H - 1");
  EXPECT_EQ((2 * x).ToString(), "6*B*S + 2*H + 2");
  EXPECT_EQ((2 * B).ToString(), "2*B");
  EXPECT_EQ((2 * H).ToString(), "2*H");
  // 700 expressions (more than the cache's slots) scaled by 2, 3 and -1,
  // twice over.
  std::vector<Expr> es;
  for (int i = 0; i < 700; ++i) es.push_back(B * (i + 1) + H * (i % 7) + i);
  for (int round = 0; round < 2; ++round) {
    for (const Expr& e : es) {
      ASSERT_EQ(e * 2, e + e);
      ASSERT_EQ(3 * e, e + e + e);
      ASSERT_EQ(-e, Expr(0) - e);
    }
  }
  // An overflowing product is not remembered: it throws again.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_THROW(x * kMax, Error);
  EXPECT_THROW(x * kMax, Error);
}

TEST_F(ExprTest, ContextAndConstants) {
  EXPECT_EQ(B.context(), &ctx_);
  EXPECT_EQ((B * H + 1).context(), &ctx_);
  EXPECT_EQ(Expr(3).context(), nullptr);
  EXPECT_EQ(Expr(3).AsConstant(), 3);
  EXPECT_EQ(B.AsConstant(), std::nullopt);
  EXPECT_EQ(Expr(2) * Expr(3) + Expr(4), Expr(10));
  EXPECT_EQ(Expr(), Expr(0));
  EXPECT_EQ(Expr(-7).ToString(), "-7");
}

TEST_F(ExprTest, OrderIsStructuralNotByCreation) {
  // Two contexts creating symbols in opposite orders print the same text.
  Context c1, c2;
  Expr a1 = c1.Symbol("a"), z1 = c1.Symbol("z");
  Expr z2 = c2.Symbol("z"), a2 = c2.Symbol("a");
  EXPECT_EQ((z1 * 3 + a1 + FloorDiv(z1, a1)).ToString(),
            (FloorDiv(z2, a2) + a2 + 3 * z2).ToString());
  EXPECT_EQ(Max(z1, a1).ToString(), "max(a, z)");
  EXPECT_EQ(Max(a2, z2).ToString(), "max(a, z)");
}

TEST_F(ExprTest, OverflowThrows) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_THROW(Expr(kMax) + 1, Error);
  EXPECT_THROW(Expr(kNegInf) - 1, Error);
  EXPECT_THROW(-Expr(kNegInf), Error);
  EXPECT_THROW((B * kMax) * 2, Error);
  EXPECT_THROW((B + kMax) + (H + 1), Error);
  EXPECT_THROW(Pow(B + 2, 1000), Error);
  try {
    (void)(Expr(kMax) * 2);
    FAIL() << "expected an overflow";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("integer overflow in"));
  }
}

TEST_F(ExprTest, MixingContextsThrows) {
  Context other;
  Expr b2 = other.Symbol("B");
  EXPECT_THROW(B + b2, Error);
  EXPECT_THROW(B * b2, Error);
  EXPECT_THROW(FloorDiv(B, b2), Error);
  EXPECT_THROW(Pow(B, -1), Error);
}

TEST_F(ExprTest, Symbols) {
  EXPECT_EQ(ctx_.Symbol("B"), B);
  EXPECT_EQ(ctx_.FindSymbol("B"), B);
  EXPECT_EQ(ctx_.FindSymbol("nope"), std::nullopt);
  Expr u0 = ctx_.FreshSymbol();
  Expr u1 = ctx_.FreshSymbol();
  EXPECT_EQ(u0.ToString(), "u0");
  EXPECT_EQ(u1.ToString(), "u1");
  ctx_.Symbol("t0");
  EXPECT_EQ(ctx_.FreshSymbol("t").ToString(), "t1");  // t0 is taken.
  EXPECT_EQ(ctx_.SymbolRange(B), (Interval{1, kPosInf}));
  Expr x = ctx_.Symbol("x", {-5, 5});
  EXPECT_EQ(ctx_.SymbolRange(x), (Interval{-5, 5}));
  // NB: a second Symbol call keeps the first range.
  EXPECT_EQ(ctx_.SymbolRange(ctx_.Symbol("x", {0, 1})), (Interval{-5, 5}));
  EXPECT_THROW(ctx_.Symbol("empty", {3, 2}), Error);
}

}  // namespace
}  // namespace torchcost::sym
