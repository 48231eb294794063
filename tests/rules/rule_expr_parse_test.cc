// Tests of the rule-expression parser (ParseRuleExpr): the trees it builds,
// its operator precedence, calls of the built-in functions, and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rules/rule_expr.h"

namespace torchcost::rules {
namespace {

using ::testing::HasSubstr;
using Op = AstNode::Op;

// The names in scope in these tests; a name's slot is its index here.
const std::vector<std::string_view>& Names() {
  static const auto* kNames = new std::vector<std::string_view>{
      "a", "b", "c", "d", "e", "notable", "order", "android"};
  return *kNames;
}

// Returns the slot of `name`, or -1 if it is not in Names().
int Resolve(std::string_view name) {
  const auto& names = Names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

// Returns the symbol a binary operator node is written with.
const char* BinarySymbol(Op op) {
  switch (op) {
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kPow:
      return "^";
    case Op::kEq:
      return "==";
    case Op::kNe:
      return "!=";
    case Op::kLt:
      return "<";
    case Op::kLe:
      return "<=";
    case Op::kGt:
      return ">";
    case Op::kGe:
      return ">=";
    case Op::kAnd:
      return "and";
    case Op::kOr:
      return "or";
    default:
      return nullptr;
  }
}

// Returns the tree rooted at `node` as text with every operator application in
// parentheses, so that the grouping the parser chose is visible.
std::string Render(const ExprPool& pool, int node) {
  const AstNode& n = pool.nodes[node];
  auto kid = [&](size_t i) { return Render(pool, n.kids[i]); };
  switch (n.op) {
    case Op::kInt:
      return std::to_string(n.ival);
    case Op::kFloat:
      return "float";
    case Op::kString:
      return "'" + n.sval + "'";
    case Op::kTrue:
      return "true";
    case Op::kFalse:
      return "false";
    case Op::kName:
      return n.sval;
    case Op::kList: {
      std::string s = "[";
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (i > 0) s += ", ";
        if (n.splat[i]) s += "*";
        s += kid(i);
      }
      return s + "]";
    }
    case Op::kIndex:
      return kid(0) + "[" + kid(1) + "]";
    case Op::kSlice:
      return kid(0) + "[" + (n.kids[1] < 0 ? "" : kid(1)) + ":" +
             (n.kids[2] < 0 ? "" : kid(2)) + "]";
    case Op::kCall: {
      std::string s = n.sval + "(";
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (i > 0) s += ", ";
        s += kid(i);
      }
      return s + ")";
    }
    case Op::kNeg:
      return "(-" + kid(0) + ")";
    case Op::kNot:
      return "(not " + kid(0) + ")";
    default:
      return "(" + kid(0) + " " + BinarySymbol(n.op) + " " + kid(1) + ")";
  }
}

// Parses `text` into a fresh pool and renders it.
std::string Grouping(std::string_view text) {
  ExprPool pool;
  const int root = ParseRuleExpr(text, Resolve, &pool);
  return Render(pool, root);
}

// Returns the error parsing `text` throws; fails the test if it parses.
RuleError ParseError(std::string_view text) {
  ExprPool pool;
  try {
    (void)ParseRuleExpr(text, Resolve, &pool);
  } catch (const RuleError& e) {
    return e;
  }
  ADD_FAILURE() << "'" << text << "' parsed";
  return RuleError("");
}

struct GroupingCase {
  const char* text;
  const char* grouping;  // The same expression, fully parenthesized by hand.
};

void PrintTo(const GroupingCase& c, std::ostream* os) { *os << c.text; }

class RuleExprPrecedenceTest : public ::testing::TestWithParam<GroupingCase> {};

TEST_P(RuleExprPrecedenceTest, GroupsAsDocumented) {
  EXPECT_EQ(Grouping(GetParam().text), GetParam().grouping);
}

// Precedence from low to high: or, and, not, comparison, + -, *, unary -, ^,
// postfix [ ], primary.
INSTANTIATE_TEST_SUITE_P(
    Cases, RuleExprPrecedenceTest,
    ::testing::Values(
        // A sign after a number's fraction is an operator, not part of it.
        GroupingCase{"1.5-2", "(float - 2)"},
        GroupingCase{"1e-3+a", "(float + a)"},
        // or < and.
        GroupingCase{"a or b and c", "(a or (b and c))"},
        GroupingCase{"a and b or c", "((a and b) or c)"},
        GroupingCase{"a or b or c", "((a or b) or c)"},
        // and < not.
        GroupingCase{"not a and b", "((not a) and b)"},
        GroupingCase{"a and not b", "(a and (not b))"},
        GroupingCase{"not not a", "(not (not a))"},
        // not < comparison.
        GroupingCase{"not a == b", "(not (a == b))"},
        // comparison < + -.
        GroupingCase{"a == b + c", "(a == (b + c))"},
        GroupingCase{"a - b < c", "((a - b) < c)"},
        GroupingCase{"a != b", "(a != b)"}, GroupingCase{"a <= b", "(a <= b)"},
        GroupingCase{"a >= b", "(a >= b)"}, GroupingCase{"a > b", "(a > b)"},
        // + - < *, both left-associative.
        GroupingCase{"a + b * c", "(a + (b * c))"},
        GroupingCase{"a * b - c", "((a * b) - c)"},
        GroupingCase{"a - b - c", "((a - b) - c)"},
        GroupingCase{"a - b + c", "((a - b) + c)"},
        GroupingCase{"a * b * c", "((a * b) * c)"},
        // * < unary -.
        GroupingCase{"-a * b", "((-a) * b)"},
        GroupingCase{"a * -b", "(a * (-b))"},
        GroupingCase{"a - -b", "(a - (-b))"},
        // unary - < ^; ^ is right-associative and takes a unary operand.
        GroupingCase{"-a ^ b", "(-(a ^ b))"},
        GroupingCase{"a ^ b ^ c", "(a ^ (b ^ c))"},
        GroupingCase{"a ^ -b", "(a ^ (-b))"},
        GroupingCase{"a ** b * c", "((a ^ b) * c)"},
        // ^ < postfix [ ].
        GroupingCase{"a[0] ^ 2", "(a[0] ^ 2)"},
        GroupingCase{"-a[0]", "(-a[0])"},
        GroupingCase{"a[1:] * 2", "(a[1:] * 2)"},
        GroupingCase{"a[:b + 1]", "a[:(b + 1)]"},
        GroupingCase{"a[b:c][0]", "a[b:c][0]"},
        // Parentheses override; one condition using every level.
        GroupingCase{"(a or b) and c", "((a or b) and c)"},
        GroupingCase{"(a + b) * c", "((a + b) * c)"},
        GroupingCase{"a + b < c * d or not e",
                     "(((a + b) < (c * d)) or (not e))"},
        // A keyword is a whole word: these names start with one.
        GroupingCase{"order or notable and android",
                     "(order or (notable and android))"},
        // Lists, with "*list" items.
        GroupingCase{"[a, *b, c + 1]", "[a, *b, (c + 1)]"},
        GroupingCase{"[]", "[]"}),
    [](const ::testing::TestParamInfo<GroupingCase>& info) {
      return "Case" + std::to_string(info.index);
    });

TEST(RuleExprParseTest, NamesResolveToTheirSlots) {
  ExprPool pool;
  const int root = ParseRuleExpr("c + android", Resolve, &pool);
  const AstNode& add = pool.nodes[root];
  ASSERT_EQ(add.op, Op::kAdd);
  ASSERT_EQ(add.kids.size(), 2u);
  const AstNode& lhs = pool.nodes[add.kids[0]];
  const AstNode& rhs = pool.nodes[add.kids[1]];
  EXPECT_EQ(lhs.op, Op::kName);
  EXPECT_EQ(lhs.slot, Resolve("c"));
  EXPECT_EQ(rhs.op, Op::kName);
  EXPECT_EQ(rhs.slot, Resolve("android"));
  EXPECT_EQ(rhs.sval, "android");
}

TEST(RuleExprParseTest, NodesRecordTheirColumns) {
  const std::string text = "a + min(b, 2)";
  ExprPool pool;
  const int root = ParseRuleExpr(text, Resolve, &pool);
  const AstNode& add = pool.nodes[root];
  EXPECT_EQ(add.col, static_cast<int>(text.find('+')));
  const AstNode& call = pool.nodes[add.kids[1]];
  EXPECT_EQ(call.col, static_cast<int>(text.find("min")));
  EXPECT_EQ(pool.nodes[call.kids[0]].col, static_cast<int>(text.find('b')));
}

TEST(RuleExprParseTest, Literals) {
  ExprPool pool;
  const int i = ParseRuleExpr("42", Resolve, &pool);
  EXPECT_EQ(pool.nodes[i].op, Op::kInt);
  EXPECT_EQ(pool.nodes[i].ival, 42);
  const int f = ParseRuleExpr("2.5", Resolve, &pool);
  EXPECT_EQ(pool.nodes[f].op, Op::kFloat);
  EXPECT_DOUBLE_EQ(pool.nodes[f].fval, 2.5);
  const int g = ParseRuleExpr("1e3", Resolve, &pool);
  EXPECT_EQ(pool.nodes[g].op, Op::kFloat);
  EXPECT_DOUBLE_EQ(pool.nodes[g].fval, 1000.0);
  // Signed exponents, upper-case E, a fraction with an exponent.
  for (auto [text, value] : {std::pair<const char*, double>{"1e+5", 1e5},
                             {"2.5e-1", 0.25},
                             {"3E2", 300.0},
                             {"7.", 7.0}}) {
    const int h = ParseRuleExpr(text, Resolve, &pool);
    EXPECT_EQ(pool.nodes[h].op, Op::kFloat) << text;
    EXPECT_DOUBLE_EQ(pool.nodes[h].fval, value) << text;
  }
  for (const char* quoted : {"\"cuda\"", "'cuda'"}) {
    const int s = ParseRuleExpr(quoted, Resolve, &pool);
    EXPECT_EQ(pool.nodes[s].op, Op::kString) << quoted;
    EXPECT_EQ(pool.nodes[s].sval, "cuda") << quoted;
  }
  for (const char* t : {"true", "True"})
    EXPECT_EQ(pool.nodes[ParseRuleExpr(t, Resolve, &pool)].op, Op::kTrue) << t;
  for (const char* t : {"false", "False"})
    EXPECT_EQ(pool.nodes[ParseRuleExpr(t, Resolve, &pool)].op, Op::kFalse) << t;
}

TEST(RuleExprParseTest, ExpressionsShareAPool) {
  // A second expression's nodes follow the first's, and its kids refer to its
  // own nodes.
  ExprPool pool;
  const int first = ParseRuleExpr("a + b", Resolve, &pool);
  const size_t after_first = pool.nodes.size();
  const int second = ParseRuleExpr("c * d", Resolve, &pool);
  EXPECT_GE(second, static_cast<int>(after_first));
  EXPECT_EQ(Render(pool, first), "(a + b)");
  EXPECT_EQ(Render(pool, second), "(c * d)");
}

struct FunctionCase {
  const char* name;
  Fn fn;
  int arity;
};

void PrintTo(const FunctionCase& c, std::ostream* os) { *os << c.name; }

class RuleExprFunctionTest : public ::testing::TestWithParam<FunctionCase> {};

// Returns a call of `name` with `n` arguments a, b, ...
std::string CallText(const std::string& name, int n) {
  std::string s = name + "(";
  for (int i = 0; i < n; ++i) {
    if (i > 0) s += ", ";
    s += std::string(Names()[i]);
  }
  return s + ")";
}

TEST_P(RuleExprFunctionTest, CallsTheFunction) {
  const FunctionCase& c = GetParam();
  const std::string text = CallText(c.name, c.arity);
  ExprPool pool;
  const int root = ParseRuleExpr(text, Resolve, &pool);
  const AstNode& n = pool.nodes[root];
  ASSERT_EQ(n.op, Op::kCall) << text;
  EXPECT_EQ(n.fn, c.fn) << text;
  EXPECT_EQ(n.sval, c.name);
  ASSERT_EQ(n.kids.size(), static_cast<size_t>(c.arity));
  for (int i = 0; i < c.arity; ++i)
    EXPECT_EQ(pool.nodes[n.kids[i]].slot, i) << text;
}

TEST_P(RuleExprFunctionTest, OtherArgumentCountsAreErrors) {
  const FunctionCase& c = GetParam();
  for (int got : {c.arity - 1, c.arity + 1}) {
    if (got < 0) continue;
    const std::string text = CallText(c.name, got);
    const std::string want = std::string(c.name) + "() takes " +
                             std::to_string(c.arity) +
                             (c.arity == 1 ? " argument" : " arguments") +
                             ", got " + std::to_string(got);
    EXPECT_EQ(std::string(ParseError(text).what()), want) << text;
  }
}

// The functions rules/README.md lists, with the argument counts it gives.
INSTANTIATE_TEST_SUITE_P(
    Functions, RuleExprFunctionTest,
    ::testing::Values(
        FunctionCase{"floordiv", Fn::kFloorDiv, 2},
        FunctionCase{"ceildiv", Fn::kCeilDiv, 2},
        FunctionCase{"mod", Fn::kMod, 2}, FunctionCase{"min", Fn::kMin, 2},
        FunctionCase{"max", Fn::kMax, 2},
        FunctionCase{"exact_div", Fn::kExactDiv, 2},
        FunctionCase{"prod", Fn::kProd, 1}, FunctionCase{"sum", Fn::kSum, 1},
        FunctionCase{"len", Fn::kLen, 1}, FunctionCase{"ones", Fn::kOnes, 1},
        FunctionCase{"broadcast", Fn::kBroadcast, 2},
        FunctionCase{"shape", Fn::kShape, 1},
        FunctionCase{"rank", Fn::kRank, 1},
        FunctionCase{"numel", Fn::kNumel, 1}, FunctionCase{"has", Fn::kHas, 1},
        FunctionCase{"is_list", Fn::kIsList, 1}, FunctionCase{"if", Fn::kIf, 3},
        FunctionCase{"normdim", Fn::kNormDim, 2},
        FunctionCase{"device", Fn::kDevice, 0},
        FunctionCase{"dtype", Fn::kDType, 1},
        FunctionCase{"itemsize", Fn::kItemSize, 1},
        FunctionCase{"einsum_sizes", Fn::kEinsumSizes, 2},
        FunctionCase{"attention_backend", Fn::kAttentionBackend, 0},
        FunctionCase{"ind", Fn::kInd, 1}),
    [](const ::testing::TestParamInfo<FunctionCase>& info) {
      return std::string(info.param.name);
    });

TEST(RuleExprParseTest, CallArgumentsAreWholeExpressions) {
  EXPECT_EQ(Grouping("max(a + b, c * 2) - 1"), "(max((a + b), (c * 2)) - 1)");
  EXPECT_EQ(Grouping("if(a > 0 and b, [c], [])"),
            "if(((a > 0) and b), [c], [])");
  EXPECT_EQ(Grouping("prod( a )"), "prod(a)");
}

TEST(RuleExprParseTest, ArityErrorIsAtTheFunctionsName) {
  const std::string text = "a + min(b)";
  RuleError e = ParseError(text);
  EXPECT_THAT(e.what(), HasSubstr("min() takes 2 arguments, got 1"));
  EXPECT_EQ(e.col, static_cast<int>(text.find("min")));
}

struct ErrorCase {
  const char* text;
  const char* message;
  // Where the error is: the first occurrence of this in `text`, or, if empty,
  // the end of `text`.
  const char* at;
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.text; }

class RuleExprParseErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(RuleExprParseErrorTest, NamesThePlace) {
  const ErrorCase& c = GetParam();
  const std::string text = c.text;
  const size_t at = *c.at ? text.find(c.at) : text.size();
  ASSERT_NE(at, std::string::npos) << c.at;
  RuleError e = ParseError(text);
  EXPECT_EQ(std::string(e.what()), c.message) << text;
  EXPECT_EQ(e.col, static_cast<int>(at)) << text;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RuleExprParseErrorTest,
    ::testing::Values(
        ErrorCase{"a + zz", "unknown name 'zz'", "zz"},
        ErrorCase{"b * foo(1)", "unknown function 'foo'", "foo"},
        ErrorCase{"", "unexpected end of expression", ""},
        ErrorCase{"a +", "unexpected end of expression", ""},
        ErrorCase{"a + ", "unexpected end of expression", ""},
        ErrorCase{"(a + b", "expected ')'", ""},
        ErrorCase{"a[1", "expected ']'", ""},
        ErrorCase{"a[1:2", "expected ']'", ""},
        ErrorCase{"[a, b", "expected ',' or ']' in list", ""},
        ErrorCase{"[a b]", "expected ',' or ']' in list", "b]"},
        ErrorCase{"min(a b)", "expected ',' or ')' in call to min", "b)"},
        ErrorCase{"a == 'cuda", "unterminated string", "'"},
        ErrorCase{"a b", "unexpected 'b'", "b"},
        ErrorCase{"a ? b", "unexpected '?'", "?"},
        ErrorCase{"#", "unexpected '#'", "#"},
        ErrorCase{"a + )", "unexpected ')'", ")"},
        // Comparisons do not chain: the second is left over.
        ErrorCase{"a == b == c", "unexpected '='", "== c"},
        ErrorCase{"2e * a", "malformed number: its exponent has no digits",
                  " * a"},
        ErrorCase{"1e+", "malformed number: its exponent has no digits", ""},
        // Past int64's 9223372036854775807.
        ErrorCase{"1 + 9223372036854775808", "integer literal out of range",
                  ""}),
    [](const ::testing::TestParamInfo<ErrorCase>& info) {
      return "Case" + std::to_string(info.index);
    });

TEST(RuleExprParseTest, LargestIntegerLiteralParses) {
  ExprPool pool;
  const int root = ParseRuleExpr("9223372036854775807", Resolve, &pool);
  EXPECT_EQ(pool.nodes[root].ival, INT64_MAX);
}

}  // namespace
}  // namespace torchcost::rules
