// Integer arithmetic the layers share: byte and element counts divided into
// blocks, shards or packed codes, and 128-bit sums brought back to 64 bits.
#ifndef TORCHCOST_SRC_IR_INT_MATH_H_
#define TORCHCOST_SRC_IR_INT_MATH_H_

#include <algorithm>
#include <cstdint>
#include <limits>

namespace torchcost::ir {

// Returns ceil(a / b) for a >= 0 and b > 0: (a + b - 1) / b.
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Returns `v`, or INT64_MAX where a 128-bit sum of byte counts exceeds it.
constexpr int64_t ClampToInt64(__int128 v) {
  return static_cast<int64_t>(
      std::min<__int128>(v, std::numeric_limits<int64_t>::max()));
}

}  // namespace torchcost::ir

#endif  // TORCHCOST_SRC_IR_INT_MATH_H_
