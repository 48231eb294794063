// The kinds of kernels whose achieved fraction of a GPU's peak differs: each
// node belongs to one (its rule's `class:`, or its rule file's family).
#ifndef TORCHCOST_OP_CLASS_H_
#define TORCHCOST_OP_CLASS_H_

#include <string_view>

#include "torchcost/status.h"

namespace torchcost {

// An op class; the optimizer's step is a class of its own.
enum class OpClass : int {
  kMatmul = 0,
  kAttention,
  kPointwise,
  kReduction,
  kOptimizer
};
inline constexpr int kNumOpClasses = 5;
// Returns "matmul", "attention", "pointwise", "reduction", "optimizer".
std::string_view OpClassName(OpClass c);
// Parses a name OpClassName returns.
Result<OpClass> ParseOpClass(std::string_view name);

}  // namespace torchcost

#endif  // TORCHCOST_OP_CLASS_H_
