// Where a matrix product's operands sit among a node's inputs (torch 1.13's
// schemas): its two GEMM operands, consecutive (the data, then the weight
// whose gradient is the weight-gradient GEMM), and its additive operand
// (linear's and conv's bias, addmm's self).
#ifndef TORCHCOST_SRC_ANALYSIS_GEMM_OPERANDS_H_
#define TORCHCOST_SRC_ANALYSIS_GEMM_OPERANDS_H_

#include <optional>
#include <string>

namespace torchcost::analysis {

// A product's operand positions.
struct GemmOperands {
  int first = 0;      // The data operand; first + 1 is the weight.
  int additive = -1;  // -1: none.
};

// Returns the operand positions of `op` (a node's op name), or nullopt for an
// op that is not a matrix product.
inline std::optional<GemmOperands> GemmOperandsOf(const std::string& op) {
  if (op == "aten::linear" || op == "torchcost::sp_linear" ||
      op == "aten::_convolution" || op == "aten::convolution" ||
      op == "aten::conv1d" || op == "aten::conv2d" || op == "aten::conv3d")
    return GemmOperands{0, 2};
  if (op == "aten::addmm" || op == "aten::baddbmm" || op == "aten::addbmm" ||
      op == "aten::addmv")
    return GemmOperands{1, 0};
  if (op == "aten::mm" || op == "aten::bmm" || op == "aten::matmul" ||
      op == "aten::mv" || op == "aten::dot")
    return GemmOperands{0, -1};
  return std::nullopt;
}

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_GEMM_OPERANDS_H_
