// Tests of the shared integer arithmetic (src/ir/int_math.h).
#include "ir/int_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace torchcost::ir {
namespace {

TEST(CeilDivTest, RoundsUpOnlyARemainder) {
  EXPECT_EQ(CeilDiv(0, 64), 0);
  EXPECT_EQ(CeilDiv(128, 64), 2);  // Exact: 2 blocks.
  EXPECT_EQ(CeilDiv(129, 64), 3);  // One weight more needs a third block.
  EXPECT_EQ(CeilDiv(7, 2), 4);     // 7 4-bit codes fill 4 bytes.
}

TEST(ClampToInt64Test, KeepsInRangeValuesAndSaturatesAbove) {
  const __int128 max = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(ClampToInt64(-5), -5);
  EXPECT_EQ(ClampToInt64(max), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ClampToInt64(max + 1), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ClampToInt64(max * 4), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace torchcost::ir
