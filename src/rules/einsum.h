// Parsing of torch.einsum equations ("bhqd,bhkd->bhqk", with "..." and an
// implicit output), shared by impl `einsum` (the output shape) and the rule
// expression function einsum_sizes (the sizes of the distinct indices, whose
// product is the MACs of a naive contraction).
#ifndef TORCHCOST_SRC_RULES_EINSUM_H_
#define TORCHCOST_SRC_RULES_EINSUM_H_

#include <string>
#include <string_view>
#include <vector>

#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {

// What an einsum equation says about its operands' shapes.
struct EinsumInfo {
  sym::Shape out;  // The output shape.
  // The broadcast "..." dims, then one size per distinct letter (first
  // appearance).
  sym::Shape sizes;
  // Equalities of symbolic dims that could not be proven: (a, b, what).
  struct Assumed {
    sym::Expr a, b;
    std::string what;
  };
  std::vector<Assumed> assumptions;
};

// Parses `equation` against the operand shapes. Letters repeated across (or
// within) operands must have equal sizes (a size of 1 broadcasts, as in
// torch.einsum); "..." dims broadcast NumPy-style. Without "->" the output is
// the "..." dims, then the letters used exactly once, in alphabetical order.
// Errors name the operand and the letter: "einsum: operand 1 has rank 3 but
// subscripts 'bhkd' need 4".
Result<EinsumInfo> ParseEinsum(std::string_view equation,
                               const std::vector<sym::Shape>& shapes,
                               sym::Context& ctx);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_EINSUM_H_
