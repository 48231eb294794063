// Integer arithmetic the layers share where byte and element counts are
// divided into blocks, shards or packed codes.
#ifndef TORCHCOST_SRC_IR_INT_MATH_H_
#define TORCHCOST_SRC_IR_INT_MATH_H_

#include <cstdint>

namespace torchcost::ir {

// Returns ceil(a / b) for a >= 0 and b > 0: (a + b - 1) / b.
constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace torchcost::ir

#endif  // TORCHCOST_SRC_IR_INT_MATH_H_
