// Parse and ToString share one grammar.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

using ::testing::HasSubstr;

class ParseTest : public ::testing::Test {
 protected:
  void SetUp() override { ctx_.Symbol("x", {-5, 5}); }
  Context ctx_;
};

TEST_F(ParseTest, CanonicalTextRoundTrips) {
  // Each line is canonical: parsing it and printing gives it back.
  const std::vector<std::string> texts = {
      "0",
      "-7",
      "B",
      "-B",
      "2*B*H + 4*B + 1",
      "B^2*S",
      "-B + 3",
      "floordiv(H - 1, 2) + 1",
      "min(B, 4)",
      "max(H, W)",
      "floordiv(H, 2)^2 + B",
      "B*floordiv(W, B) - W",
      "floordiv(H + 1, 2)",
      "floordiv(x*min(B, 4) + 1, 3)",
      "-9223372036854775808",
      "9223372036854775807",
      "-9223372036854775808*B - 9223372036854775808",
      "layer1.0.dim_0 + 1",
  };
  for (const std::string& text : texts) {
    Result<Expr> e = Parse(ctx_, text);
    ASSERT_TRUE(e.ok()) << text << ": " << e.status().message();
    EXPECT_EQ(e->ToString(), text);
    Result<Expr> again = Parse(ctx_, e->ToString());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->node(), e->node()) << text;  // The same interned node.
    EXPECT_EQ(*again, *e);
  }
}

TEST_F(ParseTest, NormalisesInput) {
  struct Row {
    const char* input;
    const char* canonical;
  };
  const std::vector<Row> rows = {
      {"B*2 + (H)", "2*B + H"},
      {"  B  *  H  ", "B*H"},
      {"(B + 1)*(B - 1)", "B^2 - 1"},
      {"-B^2", "-B^2"},  // NB: ^ binds tighter than unary minus.
      {"(-B)^2", "B^2"},
      {"--B", "B"},
      {"2 - -3", "5"},
      {"2^10", "1024"},
      {"-2^2", "-4"},
      {"B - (H - W)", "B - H + W"},
      {"ceildiv(H, 2)", "floordiv(H + 1, 2)"},
      {"mod(H, 4)", "H - 4*floordiv(H, 4)"},
      {"min(4, B)", "min(B, 4)"},
      {"floordiv(H+2*1-3, 2)+1", "floordiv(H - 1, 2) + 1"},
      {"B^0", "1"},
      {"x*x", "x^2"},
  };
  for (const Row& row : rows) {
    Result<Expr> e = Parse(ctx_, row.input);
    ASSERT_TRUE(e.ok()) << row.input << ": " << e.status().message();
    EXPECT_EQ(e->ToString(), row.canonical) << row.input;
  }
}

TEST_F(ParseTest, UnknownSymbolsGetDimRange) {
  Result<Expr> e = Parse(ctx_, "N + x");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(ctx_.SymbolRange(*ctx_.FindSymbol("N")), (Interval{1, kPosInf}));
  EXPECT_EQ(ctx_.SymbolRange(*ctx_.FindSymbol("x")),
            (Interval{-5, 5}));  // Kept.
}

TEST_F(ParseTest, ErrorsNameTheColumn) {
  struct Row {
    const char* input;
    const char* message;
  };
  const std::vector<Row> rows = {
      {"(B+1", "at column 5: expected ')'"},
      {"", "at column 1: expected an expression"},
      {"B +", "at column 4: expected an expression"},
      {"B B", "at column 3: unexpected 'B'"},
      {"B )", "at column 3: unexpected ')'"},
      {"foo(B, 2)", "at column 1: unknown function 'foo'"},
      {"min(B)", "at column 6: expected ','"},
      {"floordiv(B, 2", "at column 14: expected ')'"},
      {"B^x", "at column 3: expected a non-negative integer exponent"},
      {"B^-1", "at column 3: expected a non-negative integer exponent"},
      {"9223372036854775808", "at column 1: integer literal out of range"},
      {"B + 99999999999999999999", "at column 5: integer literal out of range"},
      {"3 $ 4", "at column 3: unexpected '$'"},
      {"floordiv(B, 0)",
       "at column 1: floordiv(B, 0): the divisor 0 is not positive"},
      {"2*floordiv(B, x)",
       "at column 3: floordiv(B, x): the divisor 'x' is not provably positive"},
      {"9223372036854775807 + 1", "integer overflow in"},
      {"(B + 2)^99", "integer overflow in"},  // The constant 2^99.
  };
  for (const Row& row : rows) {
    Result<Expr> e = Parse(ctx_, row.input);
    ASSERT_FALSE(e.ok()) << row.input;
    EXPECT_EQ(e.status().code(), Status::Code::kParseError);
    EXPECT_THAT(e.status().message(), HasSubstr(row.message)) << row.input;
    EXPECT_THAT(e.status().message(),
                HasSubstr(std::string("'") + row.input + "'"));
  }
}

}  // namespace
}  // namespace torchcost::sym
