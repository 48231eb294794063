// Reductions over a dim, a dim list, or all dims (reduce*).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "rules/builtin.h"
#include "rules/impl_util.h"
#include "rules/impls.h"
#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules::impl {
namespace {

// Returns which dims of a rank-`rank` tensor the `dim` argument reduces.
// None, an absent argument, or an empty list means all dims.
Result<std::vector<bool>> ReducedDims(ImplContext& c, int64_t rank) {
  std::vector<bool> reduced(std::max<int64_t>(rank, 0), false);
  const RValue& dim = c.Arg("dim");
  if (dim.kind == RValue::Kind::kNone || dim.kind == RValue::Kind::kUnknown) {
    std::fill(reduced.begin(), reduced.end(), true);
    return reduced;
  }
  std::optional<Shape> l = AsIntList(dim);
  if (!l) return Bad("argument 'dim' must be an int or a list of ints");
  if (l->empty()) {
    std::fill(reduced.begin(), reduced.end(), true);
    return reduced;
  }
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstList(*l, "dim"));
  for (int64_t d0 : dims) {
    TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
    if (rank == 0) continue;
    if (reduced[d]) {
      return Bad(
          "dim " + std::to_string(d) +
          " appears multiple times in the list of dims (argument 'dim')");
    }
    reduced[d] = true;
  }
  return reduced;
}

// Returns the reduced shape of `self` (keepdim keeps reduced dims as 1).
Result<Shape> ReducedShape(ImplContext& c, const TensorType& self) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<bool> reduced,
                             ReducedDims(c, self.shape.size()));
  TORCHCOST_ASSIGN_OR_RETURN(bool keepdim, BoolArg(c, "keepdim", false));
  Shape out;
  for (size_t i = 0; i < self.shape.size(); ++i) {
    if (!reduced[i]) {
      out.push_back(self.shape[i]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

enum class ReduceDType { kSelf, kSum, kBool, kIndex };

Status ReduceImpl(ImplContext& c, std::vector<RValue>* outputs,
                  ReduceDType mode, bool with_indices) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  TORCHCOST_ASSIGN_OR_RETURN(Shape shape, ReducedShape(c, self));
  DType dtype = self.dtype;
  switch (mode) {
    case ReduceDType::kSelf:
      dtype = DTypeArg(c, self.dtype);
      break;
    // NB: sum and prod of integers or bools accumulate in int64.
    case ReduceDType::kSum:
      dtype = DTypeArg(
          c, (self.dtype != DType::kUnknown && !IsFloatingPoint(self.dtype))
                 ? DType::kInt64
                 : self.dtype);
      break;
    case ReduceDType::kBool:
      dtype = self.dtype == DType::kUInt8 ? DType::kUInt8 : DType::kBool;
      break;
    case ReduceDType::kIndex:
      dtype = DType::kInt64;
      break;
  }
  TensorType out;
  out.shape = shape;
  out.dtype = dtype;
  outputs->push_back(RValue::Tensor(out));
  if (with_indices) {
    out.dtype = DType::kInt64;
    outputs->push_back(RValue::Tensor(out));
  }
  return Status::Ok();
}

}  // namespace

Status Reduce(ImplContext& c, std::vector<RValue>* o) {
  return ReduceImpl(c, o, ReduceDType::kSelf, false);
}
Status ReduceSum(ImplContext& c, std::vector<RValue>* o) {
  return ReduceImpl(c, o, ReduceDType::kSum, false);
}
Status ReduceBool(ImplContext& c, std::vector<RValue>* o) {
  return ReduceImpl(c, o, ReduceDType::kBool, false);
}
Status ReduceIndex(ImplContext& c, std::vector<RValue>* o) {
  return ReduceImpl(c, o, ReduceDType::kIndex, false);
}
Status ReduceWithIndices(ImplContext& c, std::vector<RValue>* o) {
  return ReduceImpl(c, o, ReduceDType::kSelf, true);
}

}  // namespace torchcost::rules::impl
