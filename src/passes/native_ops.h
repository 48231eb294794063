// Ops the analysis evaluates itself rather than through rule files: list and
// tuple plumbing, integer arithmetic, and the size queries that make traced
// shape arithmetic symbolic (aten::size, prim::NumToTensor, aten::Int).
#ifndef TORCHCOST_SRC_PASSES_NATIVE_OPS_H_
#define TORCHCOST_SRC_PASSES_NATIVE_OPS_H_

#include <string>
#include <vector>

#include "rules/value.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::passes {

// Returns true if `node` is evaluated natively.
bool IsNativeOp(const ir::Node& node);

// Returns true if `node` is an arithmetic op that also has integer overloads
// (add, mul, floordiv, ...).
bool IsIntArith(const ir::Node& node);

// Evaluates a native node: reads `values` of its inputs and writes its outputs.
Status RunNativeOp(const ir::Node& node, sym::Context& ctx,
                   std::vector<rules::RValue>& values);

// Returns true if PropagateScalarValue may act on `node` (by its op alone).
bool PropagatesScalarValue(const ir::Node& node);

// After a rule computed a pointwise op's output, carries the symbolic value of
// 0-dim integer tensors through add/sub/mul/div/floor_divide/remainder/rsub,
// minimum/maximum and neg.
void PropagateScalarValue(const ir::Node& node,
                          std::vector<rules::RValue>& values);

// Converts a constant payload of the IR into an RValue.
rules::RValue ConstantToValue(const ir::Value& v);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_NATIVE_OPS_H_
