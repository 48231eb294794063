// Helpers shared by the C++ shape functions (rules/impls.h): argument access,
// dim wrapping, shape arithmetic and type promotion.
#ifndef TORCHCOST_SRC_RULES_IMPL_UTIL_H_
#define TORCHCOST_SRC_RULES_IMPL_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/builtin.h"
#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules::impl {

using sym::Expr;
using sym::Shape;

// ---------------------------------------------------------------------------
// Argument access.

// Returns `name` in single quotes, for messages.
std::string Quote(std::string_view name);

// Returns an InvalidArgument status with `message`.
Status Bad(const std::string& message);

// Returns the first of `names` that the schema has (kind != kUnknown), or
// nullptr.
const RValue* FirstArg(ImplContext& c,
                       std::initializer_list<std::string_view> names,
                       std::string_view* found = nullptr);

// Returns the tensor argument `name`.
Result<TensorType> TensorArg(ImplContext& c, std::string_view name);

// Returns a list of ints from an int list, a single int (int[1] given as a
// scalar), or a generic list of ints; nullopt otherwise.
std::optional<Shape> AsIntList(const RValue& v);

// Returns the int list argument `name` (symbolic elements allowed).
Result<Shape> IntListArg(ImplContext& c, std::string_view name);

// Returns the symbolic int argument `name`, or `def` if it is None or absent.
Result<Expr> IntArg(ImplContext& c, std::string_view name,
                    std::optional<Expr> def = std::nullopt);

// Returns the constant int argument `name`, or `def` if it is None or absent.
Result<int64_t> ConstIntArg(ImplContext& c, std::string_view name,
                            std::optional<int64_t> def = std::nullopt);

// Returns the bool argument `name`, or `def` if it is None or absent.
Result<bool> BoolArg(ImplContext& c, std::string_view name, bool def);

// Returns the ScalarType argument `dtype` if given, else `fallback`.
DType DTypeArg(ImplContext& c, DType fallback);

// Returns the constants of `l`, or an error naming the argument.
Result<std::vector<int64_t>> ConstList(const Shape& l, std::string_view name);

// ---------------------------------------------------------------------------
// Dims and shapes.

// Returns `d` wrapped into [0, rank) (a 0-dim tensor takes dims -1 and 0).
Result<int64_t> WrapDim(int64_t d, int64_t rank, std::string_view arg);

// Returns `l` formatted as "[a, b, c]", for messages.
std::string ListToString(const std::vector<int64_t>& l);

// Returns the product of the dims of `s` in [begin, end).
Expr Product(const Shape& s, size_t begin = 0,
             size_t end = std::numeric_limits<size_t>::max());

// Returns whether `e` is provably 1.
bool IsOne(ImplContext& c, const Expr& e);

// Returns a tensor type with `shape` and the dtype of `t`.
TensorType WithShape(const TensorType& t, Shape shape);

// Fills `out` with the shape `size`, inferring one -1 from `numel` (view,
// reshape, unflatten). `arg` names the size argument in messages.
Status InferShape(ImplContext& c, const Shape& numel_factors, const Shape& size,
                  std::string_view arg, const std::string& op, Shape* out);

// Broadcasts two shapes (NumPy rules: align on the right); `what` names the
// operands in messages (impl_pointwise.cc).
Result<Shape> BroadcastShapes(ImplContext& c, const Shape& a, const Shape& b,
                              const std::string& what);

// ---------------------------------------------------------------------------
// Type promotion (c10 result_type): dimensioned tensors, then 0-dim tensors,
// then Python scalars ("wrapped numbers"), each category winning over lower
// ones.

// Accumulates the operands of an op and returns their promoted result dtype.
struct ResultTypeState {
  DType dim = DType::kUnknown, zero = DType::kUnknown,
        wrapped = DType::kUnknown;
  // Adds one operand (a tensor, or an int, float or bool scalar; others are
  // ignored).
  void Add(const RValue& v);
  // Returns the result dtype of the operands added so far.
  DType Result() const;
};

}  // namespace torchcost::rules::impl

#endif  // TORCHCOST_SRC_RULES_IMPL_UTIL_H_
