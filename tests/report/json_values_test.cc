// Tests of the report's shared JSON numbers (src/report/json_values.h).
#include "report/json_values.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace torchcost::report {
namespace {

TEST(JsonIntegerTest, NumbersWithin64BitsTextBeyond) {
  const __int128 int64_max = std::numeric_limits<int64_t>::max();
  const __int128 uint64_max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(JsonInteger(-7).dump(), "-7");
  EXPECT_EQ(JsonInteger(int64_max).dump(), "9223372036854775807");
  // 2^63 fits uint64 only: still a number.
  EXPECT_TRUE(JsonInteger(int64_max + 1).is_number_unsigned());
  EXPECT_EQ(JsonInteger(int64_max + 1).dump(), "9223372036854775808");
  // 2^64 = 18446744073709551616 fits neither: its exact decimal text.
  EXPECT_EQ(JsonInteger(uint64_max + 1).dump(), "\"18446744073709551616\"");
  EXPECT_EQ(JsonInteger(-int64_max - 2).dump(), "\"-9223372036854775809\"");
}

TEST(JsonSymbolicTest, ExprTextAndValueOrNull) {
  sym::Context ctx;
  const sym::Expr bytes = ctx.Symbol("B") * sym::Expr(4096);
  EXPECT_EQ(JsonSymbolic(bytes, {{"B", 8}}).dump(),
            "{\"expr\":\"4096*B\",\"value\":32768}");  // 8 * 4096.
  EXPECT_EQ(JsonSymbolic(bytes, {}).dump(),
            "{\"expr\":\"4096*B\",\"value\":null}");
}

}  // namespace
}  // namespace torchcost::report
