// Ops the analysis evaluates itself rather than through rule files: list and
// tuple plumbing, integer arithmetic, and the size queries that make traced
// shape arithmetic symbolic (aten::size, prim::NumToTensor, aten::Int).
#ifndef TORCHCOST_SRC_PASSES_NATIVE_OPS_H_
#define TORCHCOST_SRC_PASSES_NATIVE_OPS_H_

#include <string>
#include <string_view>
#include <vector>

#include "rules/value.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::passes {

// A native op or an integer arithmetic op, by op name alone.
enum class NativeOp {
  kNone,  // Neither.
  kListConstruct,
  kTupleConstruct,
  kUnpack,       // prim::ListUnpack, prim::TupleUnpack.
  kNumToTensor,  // prim::NumToTensor.
  kToInt,        // aten::Int, aten::ScalarImplicit.
  kToFloat,      // aten::Float.
  kSize,
  kNumel,
  kDim,
  kLen,
  kGetItem,  // aten::__getitem__, prim::TupleIndex.
  // NB: integer arithmetic last (IsIntArith is kind >= kAdd); these ops are
  // native only on ints (the "int" overload, or ints given to no overload).
  kAdd,
  kSub,
  kMul,
  kFloorDiv,  // aten::floordiv, aten::__floordiv__.
  kRemainder,
  kNeg,
};

// Returns which native or integer arithmetic op `op` names, or kNone.
NativeOp ClassifyNativeOp(std::string_view op);

// Returns true if `node` is evaluated natively.
bool IsNativeOp(const ir::Node& node);

// Returns true if `node` is an arithmetic op that also has integer overloads
// (add, mul, floordiv, ...).
bool IsIntArith(const ir::Node& node);

// Returns true if RunNativeOp would mint a fresh symbol for `node` (aten::Int
// of a value that carries no int: a data-dependent scalar), so that two such
// nodes on equal inputs find different values.
bool MintsSymbol(const ir::Node& node, NativeOp kind,
                 const std::vector<rules::RValue>& values);

// Evaluates a native node whose op is `kind` (ClassifyNativeOp(node.op)):
// reads `values` of its inputs and writes its outputs.
Status RunNativeOp(const ir::Node& node, NativeOp kind, sym::Context& ctx,
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
