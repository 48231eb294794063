#include "report/format.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::report {
namespace {

struct HumanCase {
  __int128 value;
  Unit unit;
  std::string expected;
};

class HumanTest : public ::testing::TestWithParam<HumanCase> {};

TEST_P(HumanTest, Formats) {
  const HumanCase& c = GetParam();
  EXPECT_EQ(Human(c.value, c.unit), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Counts, HumanTest,
    ::testing::Values(
        HumanCase{0, Unit::kCount, "0"},
        HumanCase{156, Unit::kCount,
                  "156"},  // LeNet5's first conv: 6*1*5*5 + 6.
        HumanCase{999, Unit::kCount, "999"},  // Exact below 1000.
        HumanCase{1000, Unit::kCount, "1.00 K"},
        HumanCase{61706, Unit::kCount, "61.71 K"},  // 61.706 K rounds up.
        HumanCase{11689512, Unit::kCount,
                  "11.69 M"},                         // ResNet-18: 11.689512 M.
        HumanCase{999994, Unit::kCount, "999.99 K"},  // 999.994 K rounds down.
        HumanCase{999995, Unit::kCount,
                  "1.00 M"},  // 999.995 K rounds to 1000.00 K = 1.00 M.
        HumanCase{1005, Unit::kCount,
                  "1.01 K"},  // Halves round up, exactly (1.005 K).
        HumanCase{-1500, Unit::kCount, "-1.50 K"},
        HumanCase{
            static_cast<__int128>(5) * 1000 * 1000 * 1000 * 1000 * 1000 * 1000,
            Unit::kCount, "5.00 E"}));

INSTANTIATE_TEST_SUITE_P(
    MacsAndFlops, HumanTest,
    ::testing::Values(
        HumanCase{840, Unit::kMacs,
                  "840 MACs"},  // LeNet5's last Linear: 84*10.
        HumanCase{429248, Unit::kMacs, "429.25 KMACs"},  // LeNet5's total.
        HumanCase{1819066368, Unit::kMacs,
                  "1.82 GMACs"},  // ResNet-18 at 224x224.
        HumanCase{2 * 1819066368LL, Unit::kFlops,
                  "3.64 GFLOPs"},  // 2 FLOPs per MAC.
        HumanCase{0, Unit::kFlops, "0 FLOPs"},
        HumanCase{static_cast<__int128>(3) * 1000 * 1000 * 1000 * 1000 * 1000,
                  Unit::kFlops, "3.00 PFLOPs"}));

INSTANTIATE_TEST_SUITE_P(
    Bytes, HumanTest,
    ::testing::Values(
        HumanCase{0, Unit::kBytes, "0 B"},
        HumanCase{1023, Unit::kBytes, "1023 B"},  // Exact below 1024.
        HumanCase{1024, Unit::kBytes, "1.00 KiB"},
        HumanCase{1536, Unit::kBytes, "1.50 KiB"},  // 1.5 * 1024.
        HumanCase{11689512 * 4LL, Unit::kBytes,
                  "44.59 MiB"},  // 46758048 / 2^20 = 44.5919...
        HumanCase{static_cast<__int128>(3) << 30, Unit::kBytes, "3.00 GiB"},
        HumanCase{(static_cast<__int128>(1) << 40) - 1, Unit::kBytes,
                  "1.00 TiB"}));  // 1023.999.. GiB.

TEST(MaxOperandsTest, FlattensNestedMaxInOrder) {
  using V = std::vector<std::string_view>;
  EXPECT_EQ(MaxOperands("max(2*B + 1, max(floordiv(B, 4), max(3, S)))"),
            (V{"2*B + 1", "floordiv(B, 4)", "3", "S"}));
  EXPECT_EQ(MaxOperands("max(max(B, 2), S)"), (V{"B", "2", "S"}));
  // Not one max(...) call: the text itself.
  EXPECT_EQ(MaxOperands("max(B, 2) + max(S, 3)"), (V{"max(B, 2) + max(S, 3)"}));
  EXPECT_EQ(MaxOperands("4*B"), (V{"4*B"}));
}

TEST(ShortTextTest, NestedMaxShowsFirstOperandsAndCount) {
  EXPECT_EQ(ShortText("max(B, S)", 20), "max(B, S)");
  // 30 operands "1000*B + k": the first two fit in 40 characters with the
  // count.
  std::string text = "1000*B + 29";
  for (int k = 28; k >= 0; --k)
    text = "max(1000*B + " + std::to_string(k) + ", " + text + ")";
  const std::string s = ShortText(text, 40);
  EXPECT_EQ(s, "max(1000*B + 0, 1000*B + 1, ... 28 more)");
  EXPECT_LE(s.size(), 40u);
  // A first operand longer than the limit is cut; plain text is cut with "...".
  EXPECT_EQ(ShortText("max(123456789*B + 123456789*S, 7)", 24),
            "max(1234..., ... 1 more)");
  EXPECT_EQ(ShortText("123456789*B + 123456789*S", 12), "123456789...");
  // Where a whole term fits, the cut falls between terms, never inside
  // parentheses.
  EXPECT_EQ(ShortText("12*B + 34*floordiv(S + 31, 32) - 5", 30), "12*B ...");
  EXPECT_EQ(ShortText("12*B + 34*S + floordiv(S + 31, 32) - 5", 20),
            "12*B + 34*S ...");
}

TEST(PercentTest, TwoDecimals) {
  EXPECT_EQ(Percent(0.1234L), "12.34%");
  EXPECT_EQ(Percent(1.0L), "100.00%");
  EXPECT_EQ(Percent(0.0L), "0.00%");
  EXPECT_EQ(Percent(1.0L / 3), "33.33%");
  EXPECT_EQ(Percent(2.0L / 3), "66.67%");
}

class SymbolicFormatTest : public ::testing::Test {
 protected:
  sym::Context ctx_;
  sym::Expr B_ = ctx_.Symbol("B");
};

TEST_F(SymbolicFormatTest, ConstantIsHuman) {
  EXPECT_EQ(HumanExpr(sym::Expr(int64_t{1819066368}), {}, Unit::kMacs),
            "1.82 GMACs");
}

TEST_F(SymbolicFormatTest, UnboundIsExactText) {
  const sym::Expr macs = int64_t{1819066368} * B_;
  EXPECT_EQ(HumanExpr(macs, {}, Unit::kMacs), macs.ToString());
  EXPECT_NE(macs.ToString().find("1819066368"), std::string::npos);
  EXPECT_NE(macs.ToString().find('B'), std::string::npos);
}

TEST_F(SymbolicFormatTest, BoundIsHuman) {
  const sym::Expr macs = int64_t{1819066368} * B_;
  // 2 * 1819066368 = 3638132736 MACs.
  EXPECT_EQ(HumanExpr(macs, {{"B", 2}}, Unit::kMacs), "3.64 GMACs");
}

TEST_F(SymbolicFormatTest, PartiallyBoundSubstitutes) {
  sym::Expr S = ctx_.Symbol("S");
  const sym::Expr flops = 10 * B_ * S;
  const std::string text = HumanExpr(flops, {{"S", 4}}, Unit::kFlops);
  EXPECT_EQ(text, (40 * B_).ToString());
}

TEST_F(SymbolicFormatTest, PercentOf) {
  // Unbound, but the share is the same for every B: 3B / 4B = 75%.
  EXPECT_EQ(PercentOf(3 * B_, 4 * B_, {}), "75.00%");
  // Unbound and the share depends on B: (B + 1) / 2B is 100% at B = 1, ~50% at
  // large B.
  EXPECT_EQ(PercentOf(B_ + 1, 2 * B_, {}), "-");
  EXPECT_EQ(PercentOf(3 * B_, 4 * B_, {{"B", 5}}), "75.00%");
  EXPECT_EQ(PercentOf(0, 4 * B_, {}),
            "0.00%");                   // Zero is zero percent of anything.
  EXPECT_EQ(PercentOf(1, 0, {}), "-");  // No total to divide by.
  EXPECT_EQ(PercentOf(1, 8, {}), "12.50%");
}

TEST_F(SymbolicFormatTest, Shapes) {
  EXPECT_EQ(ShapeText({B_, 3, 224, 224}, {}),
            "[" + B_.ToString() + ", 3, 224, 224]");
  EXPECT_EQ(ShapeText({B_, 3, 224, 224}, {{"B", 8}}), "[8, 3, 224, 224]");
  EXPECT_EQ(ShapeText({}, {}), "[]");
  EXPECT_EQ(DimText(2 * B_ + 1, {{"B", 3}}), "7");  // 2*3 + 1.
}

TEST_F(SymbolicFormatTest, RankValueTakesUnboundSymbolsAsOne) {
  EXPECT_EQ(RankValue(7 * B_ + 2, {}), 9.0L);            // 7*1 + 2.
  EXPECT_EQ(RankValue(7 * B_ + 2, {{"B", 10}}), 72.0L);  // 7*10 + 2.
}

TEST(IntTextTest, Decimal) {
  EXPECT_EQ(IntText(-12), "-12");
  EXPECT_EQ(IntText(static_cast<__int128>(1) << 64), "18446744073709551616");
}

}  // namespace
}  // namespace torchcost::report
