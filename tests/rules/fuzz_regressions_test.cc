// Inputs fuzz/rule_expr_fuzz.cc found that crashed the rule-expression
// evaluator; each must now give a value or a RuleError.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_expr.h"
#include "rules/value.h"
#include "torchcost/rules.h"
#include "torchcost/sym.h"

namespace torchcost::rules {
namespace {

using ::testing::HasSubstr;

// Parses and evaluates `text` with no names in scope.
RValue EvalText(std::string_view text, sym::Context& ctx) {
  ExprPool pool;
  const int root = ParseRuleExpr(
      text, [](std::string_view) { return -1; }, &pool);
  std::vector<const RValue*> slots;
  return Evaluator(pool, slots, ctx).Eval(root);
}

TEST(RuleExprFuzzRegressionTest, ListOfOneAgainstAnEmptyListIsEmpty) {
  // A list of length 1 broadcasts like a scalar, so [0] - [] is [] (it read
  // past the empty list's end).
  sym::Context ctx;
  for (const char* text : {"[0] - []", "[] - [0]", "[] * [2]"}) {
    RValue v = EvalText(text, ctx);
    EXPECT_EQ(v.kind, RValue::Kind::kIntList) << text;
    EXPECT_TRUE(v.ints.empty()) << text;
  }
  RValue w = EvalText("[1, 2] - [1]", ctx);
  ASSERT_EQ(w.ints.size(), 2u);
  EXPECT_EQ(w.ints[0], sym::Expr(0));
  EXPECT_EQ(w.ints[1], sym::Expr(1));
}

TEST(RuleExprFuzzRegressionTest, FoundInputGivesAValueOrARuleError) {
  // The fuzzer's input, verbatim.
  sym::Context ctx;
  try {
    (void)EvalText("''-[]-[]-5--[]-[0]-55--[]-[]-5--[]-[]--5--5", ctx);
  } catch (const RuleError&) {
  }
}

// Returns the message of the RuleError parsing `text` throws, or "" if it
// parses.
std::string ParseError(const std::string& text) {
  ExprPool pool;
  try {
    (void)ParseRuleExpr(
        text, [](std::string_view) { return -1; }, &pool);
  } catch (const RuleError& e) {
    return e.what();
  }
  return "";
}

TEST(RuleExprFuzzRegressionTest, DeepNestingIsAnErrorNotAStackOverflow) {
  // The fuzzer's input was 1,495 '[' with a few '*' and '\r' between them: the
  // recursive-descent parser overflowed the stack (ASan: stack-overflow).
  std::string found = "\r\r" + std::string(9, '[') + "*\r\r\r\r" +
                      std::string(1480, '[') + "\xe1*\r\r[[M\r";
  EXPECT_THAT(ParseError(found), HasSubstr("nested deeper than 200 levels"));
  // Every way to nest: brackets, parentheses, calls, unary minus, not, powers,
  // and a left-leaning chain that the evaluator would walk as deep as it is
  // long.
  const int n = 5000;
  std::string call, chain = "1";
  for (int i = 0; i < n; ++i) call += "len(";
  for (int i = 0; i < n; ++i) chain += " + 1";
  std::string power = "2";
  for (int i = 0; i < n; ++i) power += "^2";
  for (const std::string& text :
       {std::string(n, '(') + "1" + std::string(n, ')'),
        std::string(n, '[') + std::string(n, ']'),
        call + "1" + std::string(n, ')'), std::string(n, '-') + "1", power,
        chain}) {
    EXPECT_THAT(ParseError(text), HasSubstr("nested deeper than 200 levels"))
        << text.substr(0, 20);
  }
  std::string nots;
  for (int i = 0; i < n; ++i) nots += "not ";
  EXPECT_THAT(ParseError(nots + "true"),
              HasSubstr("nested deeper than 200 levels"));
}

TEST(RuleExprFuzzRegressionTest, NestingWithinTheLimitStillEvaluates) {
  // 150 + 1s: a chain 151 nodes deep evaluates to 151; 100 levels of [] to a
  // list.
  sym::Context ctx;
  std::string chain = "1";
  for (int i = 0; i < 150; ++i) chain += " + 1";
  RValue v = EvalText(chain, ctx);
  ASSERT_EQ(v.kind, RValue::Kind::kInt);
  EXPECT_EQ(v.i, sym::Expr(151));
  EXPECT_EQ(
      ParseError(std::string(60, '(') + "-(-(2^2^2))" + std::string(60, ')')),
      "");
}

TEST(RuleExprFuzzRegressionTest, OnesPastAnyRankIsAnErrorNotAnAllocation) {
  // CI's fuzz_rule_expr ran out of memory allocating 0xbb6f7db20 bytes, about
  // 50 GB: ones(n) built a list of n ones for any constant n (the input was not
  // kept; 3,144,748,466 ones of 16 bytes each are those bytes).
  sym::Context ctx;
  for (const char* text : {"ones(3144748466)", "ones(1025)", "ones(2^40)"}) {
    try {
      (void)EvalText(text, ctx);
      ADD_FAILURE() << text << " evaluated";
    } catch (const RuleError& e) {
      EXPECT_THAT(e.what(), HasSubstr("past any rank")) << text;
    }
  }
  // Up to the limit it is still a list of ones.
  RValue v = EvalText("ones(1024)", ctx);
  ASSERT_EQ(v.kind, RValue::Kind::kIntList);
  ASSERT_EQ(v.ints.size(), 1024u);
  EXPECT_EQ(v.ints.back(), sym::Expr(1));
}

TEST(RuleYamlFuzzRegressionTest, EmptyOpListIsAnError) {
  // "op: []" left the rule without ops; messages then read ops[0] past the end
  // (libstdc++'s assertion under fuzz_rule_yaml). The fuzzer's input,
  // shortened:
  const std::string text =
      "version: 1\nrules:\n  - op: []\n    schema: \"asin(Tensor self) -> "
      "Tensor\"\n"
      "    autocast: {cuda: fp32, only: [aten::asin]}\n    impl: "
      "broadcast_float\n";
  RuleSet rules;
  Status s = rules.AddText(text, "r.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("r.yaml"));
  EXPECT_THAT(s.message(), HasSubstr("'op' is an empty list"));
}

}  // namespace
}  // namespace torchcost::rules
