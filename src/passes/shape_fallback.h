// The shapes of a node no rule covers, from the frontend's own shape inference
// (ir::Graph::infer_shapes) run at example values of the symbols, and written
// back in the symbols where the examples show how a dim depends on them.
#ifndef TORCHCOST_SRC_PASSES_SHAPE_FALLBACK_H_
#define TORCHCOST_SRC_PASSES_SHAPE_FALLBACK_H_

#include <string>
#include <vector>

#include "rules/value.h"
#include "torchcost/graph.h"
#include "torchcost/sym.h"

namespace torchcost::passes {

// What the inference gave one node.
struct InferredShapes {
  bool ok = false;
  // One per node output (kUnknown where not a tensor, int, float or bool).
  std::vector<rules::RValue> outputs;
  // Non-empty if a dim was written in the symbols: how (for an assumption).
  std::string fitted;
  std::string why;  // Why not, if !ok.
  // How the frontend inferred them, if it said (ok only).
  std::string note;
};

// Returns the example of `v` with every symbol at its value in `examples`
// (kOther if it is not a tensor, scalar or int list, or a symbol is unbound).
ir::ExampleValue ToExample(const rules::RValue& v,
                           const sym::Bindings& examples);

// Runs graph.infer_shapes for node `ni`, its inputs evaluated at `examples`.
// With symbols, it runs again per symbol at twice and three times that
// symbol's example, and writes each output dim that changes with one symbol s
// as a*s + c (or floordiv(s, q) + c), and one that changes with several as k
// times their product, fitted at 1x and 2x and checked at 3x; a dim that fits
// neither makes it fail. If the run at twice a symbol's example fails, dims
// equal to that symbol's example are taken as the symbol.
InferredShapes InferFallbackShapes(const ir::Graph& g, int ni,
                                   const std::vector<rules::RValue>& values,
                                   const sym::Bindings& examples,
                                   sym::Context& ctx);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_SHAPE_FALLBACK_H_
