// The kinds of kernels whose achieved fraction of a GPU's peak differs: each
// node belongs to one (its rule's `class:`, or its rule file's family).
#ifndef TORCHCOST_OP_CLASS_H_
#define TORCHCOST_OP_CLASS_H_

#include <array>
#include <string_view>

#include "torchcost/status.h"

namespace torchcost {

// An op class; the optimizer's step is a class of its own. NB: convolutions
// are apart from matmul: cuDNN's kernels reach a different fraction of the
// tensor-core peak than GEMMs do (docs/calibration.md).
enum class OpClass : int {
  kMatmul = 0,
  kAttention,
  kPointwise,
  kReduction,
  kOptimizer,
  kConvolution
};
inline constexpr int kNumOpClasses = 6;
// Every class at efficiency 1: the pure roofline.
inline constexpr std::array<double, kNumOpClasses> kPureRoofline = {1, 1, 1,
                                                                    1, 1, 1};
// Returns "matmul", "attention", "pointwise", "reduction", "optimizer",
// "convolution".
std::string_view OpClassName(OpClass c);
// Parses a name OpClassName returns.
Result<OpClass> ParseOpClass(std::string_view name);

}  // namespace torchcost

#endif  // TORCHCOST_OP_CLASS_H_
