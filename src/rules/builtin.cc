// Shape functions in C++ for what the rule language cannot say: reshape with
// -1, permute, squeeze, slicing, splitting, concatenation, reductions over dim
// lists, and PyTorch broadcasting with type promotion. Rules select them with
// `impl: NAME` (rules/README.md, "Shape functions in C++").
//
// Conventions shared by every function here:
// - Dim arguments (`int dim`, `int[] dims`) must be constants; negative dims
//   count from the end (PyTorch's maybe_wrap_dim; a 0-dim tensor accepts
//   dims -1 and 0).
// - Sizes may be symbolic. A fact the function needs but cannot prove is
//   handed to ImplContext::RequireEq / RequireLe, which fails on a disproven
//   fact and records an assumption on an unknown one.
// - Errors are one line and name the argument:
//   "dim 5 out of range for a tensor of rank 4 (argument 'dim')".
#include "rules/builtin.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules {
namespace {

using sym::Expr;
using Shape = std::vector<Expr>;

// ---------------------------------------------------------------------------
// Argument access.

std::string Quote(std::string_view name) { return "'" + std::string(name) + "'"; }

Status Bad(const std::string& message) { return Status::InvalidArgument(message); }

// Returns the first of `names` that the schema has (kind != kUnknown), or nullptr.
const RValue* FirstArg(ImplContext& c, std::initializer_list<std::string_view> names,
                       std::string_view* found = nullptr) {
  for (std::string_view n : names) {
    const RValue& v = c.Arg(n);
    if (v.kind != RValue::Kind::kUnknown) {
      if (found != nullptr) *found = n;
      return &v;
    }
  }
  return nullptr;
}

// Returns the tensor argument `name`.
Result<TensorType> TensorArg(ImplContext& c, std::string_view name) {
  const RValue& v = c.Arg(name);
  if (v.kind != RValue::Kind::kTensor) {
    return Bad("argument " + Quote(name) + " must be a tensor");
  }
  return v.t;
}

// Returns a list of ints from an int list, a single int (int[1] given as a
// scalar), or a generic list of ints; nullopt otherwise.
std::optional<Shape> AsIntList(const RValue& v) {
  switch (v.kind) {
    case RValue::Kind::kIntList:
      return v.ints;
    case RValue::Kind::kInt:
      return Shape{v.i};
    case RValue::Kind::kList: {
      Shape out;
      for (const RValue& item : v.items) {
        if (item.kind == RValue::Kind::kInt) {
          out.push_back(item.i);
        } else if (item.kind == RValue::Kind::kTensor && item.t.has_scalar) {
          out.push_back(item.t.scalar);
        } else {
          return std::nullopt;
        }
      }
      return out;
    }
    case RValue::Kind::kTensor:
      // A 0-dim integer tensor carrying its value (prim::NumToTensor).
      if (v.t.has_scalar) return Shape{v.t.scalar};
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// Returns the int list argument `name` (symbolic elements allowed).
Result<Shape> IntListArg(ImplContext& c, std::string_view name) {
  std::optional<Shape> l = AsIntList(c.Arg(name));
  if (!l) return Bad("argument " + Quote(name) + " must be a list of ints");
  return *l;
}

// Returns the symbolic int argument `name`, or `def` if it is None or absent.
Result<Expr> IntArg(ImplContext& c, std::string_view name, std::optional<Expr> def = std::nullopt) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kInt) return v.i;
  if (v.kind == RValue::Kind::kTensor && v.t.has_scalar) return v.t.scalar;
  if ((v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown) && def) return *def;
  return Bad("argument " + Quote(name) + " must be an int");
}

// Returns the constant int argument `name`, or `def` if it is None or absent.
Result<int64_t> ConstIntArg(ImplContext& c, std::string_view name,
                            std::optional<int64_t> def = std::nullopt) {
  const RValue& v = c.Arg(name);
  if ((v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown) && def) return *def;
  Expr e;
  if (v.kind == RValue::Kind::kInt) {
    e = v.i;
  } else if (v.kind == RValue::Kind::kTensor && v.t.has_scalar) {
    e = v.t.scalar;
  } else {
    return Bad("argument " + Quote(name) + " must be an int");
  }
  std::optional<int64_t> k = e.AsConstant();
  if (!k) return Bad("argument " + Quote(name) + " must be a constant; got " + e.ToString());
  return *k;
}

// Returns the bool argument `name`, or `def` if it is None or absent.
Result<bool> BoolArg(ImplContext& c, std::string_view name, bool def) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown) return def;
  if (v.kind == RValue::Kind::kBool) return v.b;
  if (v.kind == RValue::Kind::kInt && v.i.IsConstant()) return *v.i.AsConstant() != 0;
  return Bad("argument " + Quote(name) + " must be a bool");
}

// Returns the constants of `l`, or an error naming the argument.
Result<std::vector<int64_t>> ConstList(const Shape& l, std::string_view name) {
  std::vector<int64_t> out;
  for (const Expr& e : l) {
    std::optional<int64_t> k = e.AsConstant();
    if (!k) return Bad("argument " + Quote(name) + " must hold constants; got " + e.ToString());
    out.push_back(*k);
  }
  return out;
}

// Returns `d` wrapped into [0, rank) (a 0-dim tensor takes dims -1 and 0).
Result<int64_t> WrapDim(int64_t d, int64_t rank, std::string_view arg) {
  const int64_t r = rank <= 0 ? 1 : rank;
  if (d < -r || d >= r) {
    return Status::OutOfRange("dim " + std::to_string(d) + " out of range for a tensor of rank " +
                              std::to_string(rank) + " (argument " + Quote(arg) + ")");
  }
  return d < 0 ? d + r : d;
}

std::string ListToString(const std::vector<int64_t>& l) {
  std::string s = "[";
  for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + std::to_string(l[i]);
  return s + "]";
}

Expr Product(const Shape& s, size_t begin = 0, size_t end = std::numeric_limits<size_t>::max()) {
  Expr p = 1;
  for (size_t i = begin; i < s.size() && i < end; ++i) p = p * s[i];
  return p;
}

bool IsOne(ImplContext& c, const Expr& e) { return c.ctx().ProveEq(e, 1) == sym::Truth::kTrue; }

TensorType WithShape(const TensorType& t, Shape shape) {
  TensorType out;
  out.shape = std::move(shape);
  out.dtype = t.dtype;
  return out;
}

// Returns numerator / denominator as products of factors, cancelling equal
// factors first (so numel [N, 3, 224, 224] over [N] gives 150528 without
// relying on the simplifier), then dividing with FloorDiv. Records that the
// division is exact.
Result<Expr> ExactQuotient(ImplContext& c, Shape num, Shape den, const std::string& what) {
  for (auto it = den.begin(); it != den.end();) {
    auto match = std::find(num.begin(), num.end(), *it);
    if (match != num.end()) {
      num.erase(match);
      it = den.erase(it);
    } else {
      ++it;
    }
  }
  Expr n = Product(num), d = Product(den);
  if (d.IsConstant() && *d.AsConstant() <= 0) {
    return Bad(what + ": cannot infer a dim of -1 when the other dims multiply to " + d.ToString());
  }
  Expr q = sym::FloorDiv(n, d);
  TORCHCOST_RETURN_IF_ERROR(c.RequireEq(q * d, n, what + ": the sizes must divide the number of elements"));
  return q;
}

// Fills `out` with the shape `size`, inferring one -1 from `numel` (view,
// reshape, unflatten). `arg` names the size argument in messages.
Status InferShape(ImplContext& c, const Shape& numel_factors, const Shape& size, std::string_view arg,
                  const std::string& op, Shape* out) {
  int infer = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    std::optional<int64_t> k = size[i].AsConstant();
    if (k && *k == -1) {
      if (infer >= 0) {
        std::string s = "[";
        for (size_t j = 0; j < size.size(); ++j) s += (j ? ", " : "") + size[j].ToString();
        return Bad("shape '" + s + "]' has more than one -1 (argument " + Quote(arg) + ")");
      }
      infer = static_cast<int>(i);
    } else if (k && *k < -1) {
      return Bad("invalid shape dimension " + std::to_string(*k) + " (argument " + Quote(arg) + ")");
    }
  }
  *out = size;
  if (infer < 0) {
    return c.RequireEq(Product(size), Product(numel_factors),
                       op + ": the number of elements of " + ShapeToString(size) + " must equal that of " +
                           ShapeToString(numel_factors));
  }
  Shape others;
  for (size_t i = 0; i < size.size(); ++i) {
    if (static_cast<int>(i) != infer) others.push_back(size[i]);
  }
  Result<Expr> q = ExactQuotient(c, numel_factors, others, op + " " + ShapeToString(size));
  if (!q.ok()) return q.status();
  (*out)[infer] = *q;
  return Status::Ok();
}

// Returns a + b for broadcasting, or an error; `what` names the operands.
Result<Expr> BroadcastDim(ImplContext& c, const Expr& a, const Expr& b, const std::string& what) {
  if (a == b) return a;
  if (IsOne(c, a)) return b;
  if (IsOne(c, b)) return a;
  if (a.IsConstant() && b.IsConstant()) {
    return Bad(what + ": sizes " + a.ToString() + " and " + b.ToString() + " are not broadcastable");
  }
  sym::Truth eq = c.ctx().ProveEq(a, b);
  if (eq == sym::Truth::kTrue) return a;
  // NB: a symbolic dim that might be 1 is assumed equal to the other side.
  TORCHCOST_RETURN_IF_ERROR(c.RequireEq(a, b, what + ": broadcast dims must be equal or 1"));
  return b.IsConstant() ? b : a;
}

// Broadcasts two shapes (NumPy rules: align on the right).
Result<Shape> BroadcastShapes(ImplContext& c, const Shape& a, const Shape& b, const std::string& what) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t ia = i + a.size(), ib = i + b.size();  // Offsets from the right.
    if (ia < n) {
      out[i] = b[ib - n];
    } else if (ib < n) {
      out[i] = a[ia - n];
    } else {
      Result<Expr> d = BroadcastDim(c, a[ia - n], b[ib - n],
                                    what + " " + ShapeToString(a) + " and " + ShapeToString(b) + " at dim " +
                                        std::to_string(static_cast<int64_t>(i) - static_cast<int64_t>(n)));
      if (!d.ok()) return d.status();
      out[i] = *d;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// Type promotion (c10 result_type): dimensioned tensors, then 0-dim tensors,
// then Python scalars ("wrapped numbers"), each category winning over lower ones.

bool IsComplex(DType t) {
  return t == DType::kComplex32 || t == DType::kComplex64 || t == DType::kComplex128;
}
bool IsFloat(DType t) { return IsFloatingPoint(t) && !IsComplex(t); }

DType PromoteKnown(DType a, DType b) {
  if (a == DType::kUnknown) return b;
  if (b == DType::kUnknown) return a;
  return PromoteTypes(a, b);
}

DType CombineCategories(DType higher, DType lower) {
  if (higher == DType::kUnknown) return lower;
  if (lower == DType::kUnknown) return higher;
  if (IsComplex(higher)) return higher;
  if (IsComplex(lower)) return PromoteKnown(higher, lower);
  if (IsFloat(higher)) return higher;
  if (higher == DType::kBool || IsFloat(lower)) return PromoteKnown(higher, lower);
  return higher;
}

struct ResultTypeState {
  DType dim = DType::kUnknown, zero = DType::kUnknown, wrapped = DType::kUnknown;
  void Add(const RValue& v) {
    switch (v.kind) {
      case RValue::Kind::kTensor:
        if (v.t.shape.empty()) {
          zero = PromoteKnown(zero, v.t.dtype);
        } else {
          dim = PromoteKnown(dim, v.t.dtype);
        }
        break;
      case RValue::Kind::kInt:
        wrapped = PromoteKnown(wrapped, DType::kInt64);
        break;
      case RValue::Kind::kFloat:
        wrapped = PromoteKnown(wrapped, DType::kFloat32);  // NB: the default dtype.
        break;
      case RValue::Kind::kBool:
        wrapped = PromoteKnown(wrapped, DType::kBool);
        break;
      default:
        break;
    }
  }
  DType Result() const { return CombineCategories(dim, CombineCategories(zero, wrapped)); }
};

// The operand names elementwise ops use, in schema order of the common ones.
constexpr std::string_view kOperandNames[] = {"self",    "input",   "other", "condition", "exponent",
                                              "tensor1", "tensor2", "end",   "weight",    "mask",
                                              "min",     "max"};

enum class DTypeMode { kPromote, kBool, kFloat };

// Broadcasts every operand that is present; the result dtype follows `mode`.
Status BroadcastImpl(ImplContext& c, std::vector<RValue>* outputs, DTypeMode mode) {
  ResultTypeState state;
  Shape shape;
  bool any_tensor = false;
  std::string first_name;
  for (std::string_view name : kOperandNames) {
    const RValue& v = c.Arg(name);
    state.Add(v);
    if (v.kind != RValue::Kind::kTensor) continue;
    if (!any_tensor) {
      shape = v.t.shape;
      any_tensor = true;
      first_name = std::string(name);
      continue;
    }
    Result<Shape> s = BroadcastShapes(c, shape, v.t.shape, "operands " + Quote(first_name) + " and " + Quote(name));
    if (!s.ok()) return s.status();
    shape = *s;
  }
  if (!any_tensor) {
    // NB: scalar overloads (aten::eq.int, aten::add.Scalar of two numbers in
    // scripted code) reach op-wide rules too: their value is left unknown.
    outputs->push_back(RValue());
    return Status::Ok();
  }
  TensorType out;
  out.shape = std::move(shape);
  out.dtype = state.Result();
  if (mode == DTypeMode::kBool) out.dtype = DType::kBool;
  if (mode == DTypeMode::kFloat && out.dtype != DType::kUnknown && !IsFloatingPoint(out.dtype)) {
    out.dtype = DType::kFloat32;  // NB: true division and float functions of ints give the default dtype.
  }
  outputs->push_back(RValue::Tensor(std::move(out)));
  return Status::Ok();
}

Status Broadcast(ImplContext& c, std::vector<RValue>* o) { return BroadcastImpl(c, o, DTypeMode::kPromote); }
Status BroadcastBool(ImplContext& c, std::vector<RValue>* o) { return BroadcastImpl(c, o, DTypeMode::kBool); }
Status BroadcastFloat(ImplContext& c, std::vector<RValue>* o) { return BroadcastImpl(c, o, DTypeMode::kFloat); }

// In-place elementwise ops (add_, mul_, masked_fill_, ...): every other operand
// must broadcast to self's shape, and the output is self.
Status BroadcastInplace(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  for (std::string_view name : kOperandNames) {
    if (name == "self") continue;
    const RValue& v = c.Arg(name);
    if (v.kind != RValue::Kind::kTensor) continue;
    const Shape& o = v.t.shape;
    if (o.size() > self.shape.size()) {
      return Bad("argument " + Quote(name) + " of shape " + ShapeToString(o) +
                 " does not broadcast to the in-place self of shape " + ShapeToString(self.shape));
    }
    for (size_t i = 0; i < o.size(); ++i) {
      const Expr& d = o[o.size() - 1 - i];
      const Expr& s = self.shape[self.shape.size() - 1 - i];
      if (d == s || IsOne(c, d)) continue;
      if (d.IsConstant() && s.IsConstant()) {
        return Bad("argument " + Quote(name) + " of shape " + ShapeToString(o) +
                   " does not broadcast to the in-place self of shape " + ShapeToString(self.shape));
      }
      TORCHCOST_RETURN_IF_ERROR(c.RequireEq(d, s, "in-place operand " + Quote(name) + " " + ShapeToString(o) +
                                                      " must broadcast to self " + ShapeToString(self.shape)));
    }
  }
  outputs->push_back(RValue::Tensor(self));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Views and shape ops.

// view(self, size) / reshape(self, shape) / _unsafe_view / view_as-less forms.
Status View(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  std::string_view name;
  const RValue* size = FirstArg(c, {"size", "shape"}, &name);
  if (size == nullptr) return Bad("view: the schema has no 'size' or 'shape' argument");
  std::optional<Shape> l = AsIntList(*size);
  if (!l) return Bad("argument " + Quote(name) + " must be a list of ints");
  Shape out;
  TORCHCOST_RETURN_IF_ERROR(InferShape(c, self.shape, *l, name, "view", &out));
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// flatten(self, start_dim=0, end_dim=-1): dims start..end become one.
Status Flatten(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t s0, ConstIntArg(c, "start_dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t e0, ConstIntArg(c, "end_dim", -1));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t s, WrapDim(s0, rank, "start_dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t e, WrapDim(e0, rank, "end_dim"));
  if (s > e) return Bad("flatten: start_dim " + std::to_string(s0) + " comes after end_dim " + std::to_string(e0));
  if (rank == 0) {  // A 0-dim tensor flattens to [1].
    outputs->push_back(RValue::Tensor(WithShape(self, {Expr(1)})));
    return Status::Ok();
  }
  Shape out(self.shape.begin(), self.shape.begin() + s);
  out.push_back(Product(self.shape, s, e + 1));
  out.insert(out.end(), self.shape.begin() + e + 1, self.shape.end());
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// unflatten(self, dim, sizes): dim becomes `sizes` (one -1 inferred).
Status Unflatten(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("unflatten: self must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Shape sizes, IntListArg(c, "sizes"));
  if (sizes.empty()) return Bad("unflatten: argument 'sizes' must be non-empty");
  Shape mid;
  TORCHCOST_RETURN_IF_ERROR(InferShape(c, {self.shape[d]}, sizes, "sizes", "unflatten", &mid));
  Shape out(self.shape.begin(), self.shape.begin() + d);
  out.insert(out.end(), mid.begin(), mid.end());
  out.insert(out.end(), self.shape.begin() + d + 1, self.shape.end());
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// permute(self, dims): a permutation of all dims.
Status Permute(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(Shape l, IntListArg(c, "dims"));
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstList(l, "dims"));
  if (static_cast<int64_t>(dims.size()) != rank) {
    return Bad("permute: argument 'dims' " + ListToString(dims) + " has " + std::to_string(dims.size()) +
               " entries for a tensor of rank " + std::to_string(rank));
  }
  std::vector<bool> seen(rank, false);
  Shape out;
  for (int64_t d0 : dims) {
    TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dims"));
    if (seen[d]) return Bad("permute: dim " + std::to_string(d0) + " repeats in argument 'dims' " + ListToString(dims));
    seen[d] = true;
    out.push_back(self.shape[d]);
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// transpose(self, dim0, dim1): swaps two dims.
Status Transpose(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t a0, ConstIntArg(c, "dim0"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t b0, ConstIntArg(c, "dim1"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t a, WrapDim(a0, rank, "dim0"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t b, WrapDim(b0, rank, "dim1"));
  Shape out = self.shape;
  if (rank > 0) std::swap(out[a], out[b]);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// t(self): transposes a matrix; vectors and scalars pass through.
Status T(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  if (self.shape.size() > 2) {
    return Bad("t: argument 'self' must have at most 2 dims; got shape " + ShapeToString(self.shape));
  }
  Shape out = self.shape;
  if (out.size() == 2) std::swap(out[0], out[1]);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// squeeze(self), squeeze.dim(self, dim), squeeze.dims(self, dim[]).
// NB: a dim is removed only if it is provably 1. A symbolic dim that might be 1
// is kept, and the assumption "dim >= 2" is recorded.
Status Squeeze(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  std::vector<bool> candidate(rank, false);
  const RValue& dim = c.Arg("dim");
  if (dim.kind == RValue::Kind::kNone || dim.kind == RValue::Kind::kUnknown) {
    std::fill(candidate.begin(), candidate.end(), true);
  } else {
    std::optional<Shape> l = AsIntList(dim);
    if (!l) return Bad("argument 'dim' must be an int or a list of ints");
    TORCHCOST_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ConstList(*l, "dim"));
    for (int64_t d0 : dims) {
      TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
      if (rank > 0) candidate[d] = true;
    }
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    const Expr& d = self.shape[i];
    if (candidate[i]) {
      if (IsOne(c, d)) continue;
      if (!d.IsConstant()) {
        TORCHCOST_RETURN_IF_ERROR(c.RequireLe(2, d, "squeeze keeps dim " + std::to_string(i) + " of self " +
                                                        ShapeToString(self.shape) + ", assuming it is not 1"));
      }
    }
    out.push_back(d);
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// unsqueeze(self, dim): inserts a dim of size 1 at dim (in [-rank-1, rank]).
Status Unsqueeze(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank + 1, "dim"));
  Shape out = self.shape;
  out.insert(out.begin() + d, Expr(1));
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// expand(self, size) or expand_as(self, other): -1 keeps a dim; new dims lead.
Status Expand(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  Shape size;
  std::string arg = "size";
  const RValue& other = c.Arg("other");
  if (other.kind == RValue::Kind::kTensor) {
    size = other.t.shape;
    arg = "other";
  } else {
    TORCHCOST_ASSIGN_OR_RETURN(size, IntListArg(c, "size"));
  }
  const size_t rank = self.shape.size();
  if (size.size() < rank) {
    return Bad("expand: argument " + Quote(arg) + " " + ShapeToString(size) + " has fewer dims than self " +
               ShapeToString(self.shape));
  }
  const size_t lead = size.size() - rank;
  Shape out(size.size());
  for (size_t i = 0; i < size.size(); ++i) {
    std::optional<int64_t> k = size[i].AsConstant();
    if (i < lead) {
      if (k && *k < 0) {
        return Bad("expand: the new leading dim " + std::to_string(i) + " cannot be " + std::to_string(*k) +
                   " (argument " + Quote(arg) + ")");
      }
      out[i] = size[i];
      continue;
    }
    const Expr& s = self.shape[i - lead];
    if (k && *k == -1) {
      out[i] = s;
    } else if (k && *k < -1) {
      return Bad("expand: invalid size " + std::to_string(*k) + " (argument " + Quote(arg) + ")");
    } else if (s == size[i] || IsOne(c, s)) {
      out[i] = size[i];
    } else if (s.IsConstant() && k) {
      return Bad("expand: dim " + std::to_string(i) + " of self " + ShapeToString(self.shape) +
                 " is neither 1 nor " + std::to_string(*k) + " (argument " + Quote(arg) + ")");
    } else {
      TORCHCOST_RETURN_IF_ERROR(
          c.RequireEq(s, size[i], "expand: a non-1 dim of self " + ShapeToString(self.shape) + " must keep its size"));
      out[i] = size[i];
    }
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// Returns index made non-negative against `size`, requiring 0 <= index < size.
Result<Expr> CheckIndex(ImplContext& c, const Expr& index, const Expr& size, const std::string& what) {
  std::optional<int64_t> k = index.AsConstant();
  std::optional<int64_t> n = size.AsConstant();
  if (k && n) {
    if (*k < -*n || *k >= *n) {
      return Status::OutOfRange("index " + std::to_string(*k) + " out of range for " + what + " of size " +
                                std::to_string(*n));
    }
    return *k < 0 ? Expr(*k + *n) : index;
  }
  if (k && *k < 0) {
    TORCHCOST_RETURN_IF_ERROR(c.RequireLe(-*k, size, "index " + std::to_string(*k) + " must lie within " + what));
    return size + *k;
  }
  TORCHCOST_RETURN_IF_ERROR(c.RequireLe(index + 1, size, "index " + index.ToString() + " must lie within " + what));
  return index;
}

// select(self, dim, index): removes dim.
Status Select(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("select: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr index, IntArg(c, "index"));
  Result<Expr> checked = CheckIndex(c, index, self.shape[d], "dim " + std::to_string(d0) + " (argument 'index')");
  if (!checked.ok()) return checked.status();
  Shape out = self.shape;
  out.erase(out.begin() + d);
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// Returns a slice bound (start or end) normalized as PyTorch's slice does:
// negative counts from the end, then clamped to [lo, size].
Result<Expr> SliceBound(ImplContext& c, const Expr& v, const Expr& size, const Expr& lo, const std::string& what) {
  Expr x = v;
  sym::Context& ctx = c.ctx();
  std::optional<int64_t> k = v.AsConstant();
  if (k && *k < 0) {
    x = size + *k;
  } else if (!k && ctx.ProveLe(0, v) != sym::Truth::kTrue) {
    TORCHCOST_RETURN_IF_ERROR(c.RequireLe(0, v, what + " is assumed non-negative"));
  }
  if (ctx.ProveLe(lo, x) != sym::Truth::kTrue) x = sym::Max(x, lo);
  if (ctx.ProveLe(x, size) != sym::Truth::kTrue) x = sym::Min(x, size);
  return x;
}

// slice(self, dim=0, start=None, end=None, step=1).
Status Slice(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("slice: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr step, IntArg(c, "step", Expr(1)));
  if (c.ctx().ProveLe(1, step) != sym::Truth::kTrue) {
    return Bad("slice: argument 'step' must be positive; got " + step.ToString());
  }
  const Expr size = self.shape[d];
  TORCHCOST_ASSIGN_OR_RETURN(Expr start0, IntArg(c, "start", Expr(0)));
  // NB: `x[a:]` traces as end = INT64_MAX; any constant at or past the size means "to the end".
  const RValue& end_arg = c.Arg("end");
  Expr end0 = size;
  bool end_is_size = end_arg.kind == RValue::Kind::kNone || end_arg.kind == RValue::Kind::kUnknown;
  if (!end_is_size) {
    TORCHCOST_ASSIGN_OR_RETURN(end0, IntArg(c, "end"));
    std::optional<int64_t> k = end0.AsConstant();
    if (k && *k >= std::numeric_limits<int64_t>::max() / 4) end_is_size = true;
  }
  TORCHCOST_ASSIGN_OR_RETURN(Expr start, SliceBound(c, start0, size, 0, "slice start"));
  Expr end = size;
  if (!end_is_size) {
    TORCHCOST_ASSIGN_OR_RETURN(end, SliceBound(c, end0, size, start, "slice end"));
  }
  Shape out = self.shape;
  out[d] = sym::CeilDiv(end - start, step);  // ceil((end - start) / step) elements.
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// narrow(self, dim, start, length): start + length must fit in the dim.
Status Narrow(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("narrow: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr start, IntArg(c, "start"));
  TORCHCOST_ASSIGN_OR_RETURN(Expr length, IntArg(c, "length"));
  const Expr size = self.shape[d];
  std::optional<int64_t> ks = start.AsConstant();
  if (ks && *ks < 0) start = size + *ks;
  if (length.IsConstant() && *length.AsConstant() < 0) {
    return Bad("narrow: argument 'length' must be non-negative; got " + length.ToString());
  }
  TORCHCOST_RETURN_IF_ERROR(c.RequireLe(start + length, size,
                                        "narrow: start + length must not exceed dim " + std::to_string(d0) +
                                            " of self " + ShapeToString(self.shape)));
  Shape out = self.shape;
  out[d] = length;
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// Emits the pieces of dim `d` of `self` with the given sizes as a Tensor[].
void EmitPieces(const TensorType& self, int64_t d, const Shape& sizes, std::vector<RValue>* outputs) {
  std::vector<TensorType> pieces;
  for (const Expr& s : sizes) {
    Shape shape = self.shape;
    shape[d] = s;
    pieces.push_back(WithShape(self, shape));
  }
  outputs->push_back(RValue::Tensors(std::move(pieces)));
}

// Splits a dim of size `size` into pieces of `split` (the last one smaller).
// NB: with a symbolic size the number of pieces is unknown unless `pieces` is
// given (chunk): then the size is required to divide evenly.
Result<Shape> EvenPieces(ImplContext& c, const Expr& size, const Expr& split, std::optional<int64_t> pieces,
                         const std::string& what) {
  std::optional<int64_t> n = size.AsConstant();
  std::optional<int64_t> s = split.AsConstant();
  if (n && s) {
    if (*s <= 0) {
      if (*n == 0 && *s == 0) return Shape{Expr(0)};
      return Bad(what + ": split size must be positive; got " + std::to_string(*s));
    }
    if (*n == 0) return Shape{Expr(0)};
    const int64_t count = (*n + *s - 1) / *s;  // ceildiv(size, split) pieces
    Shape out(count, split);
    out.back() = *n - *s * (count - 1);  // the last piece takes the rest
    return out;
  }
  if (pieces) {
    // NB: symbolic size: require size == pieces * split, then every piece is equal.
    TORCHCOST_RETURN_IF_ERROR(
        c.RequireEq(sym::Mod(size, *pieces), 0, what + ": symbolic size " + size.ToString() +
                                                    " is assumed divisible by " + std::to_string(*pieces)));
    return Shape(*pieces, sym::FloorDiv(size, *pieces));
  }
  if (s && *s > 0) {
    // split(x, s) of a symbolic dim: one piece if size <= s is provable.
    if (c.ctx().ProveLe(size, split) == sym::Truth::kTrue) return Shape{size};
  }
  if (!s) {
    // split size equal to the dim (x.split(x.size(d))) or a divisor of it.
    if (c.ctx().ProveEq(size, split) == sym::Truth::kTrue) return Shape{size};
  }
  return Bad(what + ": the number of pieces of a dim of symbolic size " + size.ToString() +
             " split by " + split.ToString() + " is unknown; give the dim a concrete size");
}

// chunk(self, chunks, dim=0) -> Tensor[]: pieces of ceildiv(size, chunks).
Status Chunk(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("chunk: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t chunks, ConstIntArg(c, "chunks"));
  if (chunks <= 0) return Bad("chunk: argument 'chunks' must be positive; got " + std::to_string(chunks));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  const Expr size = self.shape[d];
  Result<Shape> sizes = size.IsConstant()
                            ? EvenPieces(c, size, sym::CeilDiv(size, chunks), chunks, "chunk")
                            : EvenPieces(c, size, Expr(), chunks, "chunk");
  if (!sizes.ok()) return sizes.status();
  EmitPieces(self, d, *sizes, outputs);
  return Status::Ok();
}

// split.Tensor(self, split_size, dim), split.sizes / split_with_sizes(self, split_sizes, dim).
Status Split(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("split: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  const Expr size = self.shape[d];
  std::string_view name;
  const RValue* arg = FirstArg(c, {"split_sizes", "split_size"}, &name);
  if (arg == nullptr) return Bad("split: the schema has no 'split_size' or 'split_sizes' argument");
  if (arg->kind == RValue::Kind::kIntList || arg->kind == RValue::Kind::kList) {
    std::optional<Shape> sizes = AsIntList(*arg);
    if (!sizes) return Bad("argument " + Quote(name) + " must be a list of ints");
    Expr total = 0;
    for (const Expr& s : *sizes) {
      if (s.IsConstant() && *s.AsConstant() < 0) {
        return Bad("split: argument " + Quote(name) + " has a negative size " + s.ToString());
      }
      total = total + s;
    }
    TORCHCOST_RETURN_IF_ERROR(c.RequireEq(total, size, "split: the sizes in argument " + Quote(name) +
                                                           " must sum to dim " + std::to_string(d0) +
                                                           " of self " + ShapeToString(self.shape)));
    EmitPieces(self, d, *sizes, outputs);
    return Status::Ok();
  }
  TORCHCOST_ASSIGN_OR_RETURN(Expr split, IntArg(c, name));
  Result<Shape> sizes = EvenPieces(c, size, split, std::nullopt, "split");
  if (!sizes.ok()) return sizes.status();
  EmitPieces(self, d, *sizes, outputs);
  return Status::Ok();
}

// unbind(self, dim=0) -> Tensor[]: one tensor per index of dim (a constant size).
Status Unbind(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  const int64_t rank = static_cast<int64_t>(self.shape.size());
  if (rank == 0) return Bad("unbind: argument 'self' must have at least one dim");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  std::optional<int64_t> n = self.shape[d].AsConstant();
  if (!n) {
    return Bad("unbind: dim " + std::to_string(d0) + " of self has symbolic size " + self.shape[d].ToString() +
               ", so the number of outputs is unknown");
  }
  Shape shape = self.shape;
  shape.erase(shape.begin() + d);
  outputs->push_back(RValue::Tensors(std::vector<TensorType>(*n, WithShape(self, shape))));
  return Status::Ok();
}

// Returns the tensors of the list argument `name`.
Result<std::vector<TensorType>> TensorListArg(ImplContext& c, std::string_view name) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kTensorList) return v.tensors;
  if (v.kind == RValue::Kind::kList) {
    std::vector<TensorType> out;
    for (const RValue& item : v.items) {
      if (item.kind != RValue::Kind::kTensor) return Bad("argument " + Quote(name) + " must be a list of tensors");
      out.push_back(item.t);
    }
    return out;
  }
  return Bad("argument " + Quote(name) + " must be a list of tensors");
}

// cat(tensors, dim=0): dims other than `dim` must agree; `dim` sums.
// NB: as PyTorch still does, 1-D tensors of size 0 are skipped.
Status Cat(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<TensorType> all, TensorListArg(c, "tensors"));
  std::vector<TensorType> ts;
  ResultTypeState state;
  for (const TensorType& t : all) {
    RValue v = RValue::Tensor(t);
    v.t.shape.assign(1, 1);  // Every operand of cat is a dimensioned tensor for promotion.
    state.Add(v);
    if (t.shape.size() == 1 && t.shape[0] == Expr(0)) continue;
    ts.push_back(t);
  }
  if (all.empty()) return Bad("cat: argument 'tensors' must be non-empty");
  if (ts.empty()) {
    outputs->push_back(RValue::Tensor(all[0]));
    return Status::Ok();
  }
  const int64_t rank = static_cast<int64_t>(ts[0].shape.size());
  if (rank == 0) return Bad("cat: zero-dimensional tensor (argument 'tensors' item 0) cannot be concatenated");
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank, "dim"));
  Shape out = ts[0].shape;
  for (size_t k = 1; k < ts.size(); ++k) {
    const Shape& s = ts[k].shape;
    if (static_cast<int64_t>(s.size()) != rank) {
      return Bad("cat: tensors must have the same rank; item 0 is " + ShapeToString(ts[0].shape) + " and item " +
                 std::to_string(k) + " is " + ShapeToString(s) + " (argument 'tensors')");
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (s[i] != out[i] && s[i].IsConstant() && out[i].IsConstant()) {
        return Bad("cat: sizes must match except in dim " + std::to_string(d0) + "; item 0 is " +
                   ShapeToString(ts[0].shape) + " and item " + std::to_string(k) + " is " + ShapeToString(s) +
                   " (argument 'tensors')");
      }
      TORCHCOST_RETURN_IF_ERROR(c.RequireEq(s[i], out[i], "cat: dim " + std::to_string(i) + " of item " +
                                                              std::to_string(k) + " must equal that of item 0"));
    }
    out[d] = out[d] + s[d];
  }
  TensorType t;
  t.shape = out;
  t.dtype = state.Result();
  outputs->push_back(RValue::Tensor(t));
  return Status::Ok();
}

// stack(tensors, dim=0): equal shapes; a new dim of size len(tensors) at dim.
Status Stack(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<TensorType> ts, TensorListArg(c, "tensors"));
  if (ts.empty()) return Bad("stack: argument 'tensors' must be non-empty");
  const int64_t rank = static_cast<int64_t>(ts[0].shape.size());
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d0, ConstIntArg(c, "dim", 0));
  TORCHCOST_ASSIGN_OR_RETURN(int64_t d, WrapDim(d0, rank + 1, "dim"));
  ResultTypeState state;
  for (size_t k = 0; k < ts.size(); ++k) {
    RValue v = RValue::Tensor(ts[k]);
    v.t.shape.assign(1, 1);
    state.Add(v);
    const Shape& s = ts[k].shape;
    if (static_cast<int64_t>(s.size()) != rank) {
      return Bad("stack: tensors must have equal shapes; item 0 is " + ShapeToString(ts[0].shape) + " and item " +
                 std::to_string(k) + " is " + ShapeToString(s) + " (argument 'tensors')");
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (s[i] != ts[0].shape[i] && s[i].IsConstant() && ts[0].shape[i].IsConstant()) {
        return Bad("stack: tensors must have equal shapes; item 0 is " + ShapeToString(ts[0].shape) +
                   " and item " + std::to_string(k) + " is " + ShapeToString(s) + " (argument 'tensors')");
      }
      TORCHCOST_RETURN_IF_ERROR(c.RequireEq(s[i], ts[0].shape[i], "stack: dim " + std::to_string(i) + " of item " +
                                                                      std::to_string(k) + " must equal that of item 0"));
    }
  }
  TensorType t;
  t.shape = ts[0].shape;
  t.shape.insert(t.shape.begin() + d, Expr(static_cast<int64_t>(ts.size())));
  t.dtype = state.Result();
  outputs->push_back(RValue::Tensor(t));
  return Status::Ok();
}

// constant_pad_nd(self, pad) / pad(self, pad, mode): pad = [before_last,
// after_last, before_prev, after_prev, ...]; negative pads crop.
Status Pad(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  TORCHCOST_ASSIGN_OR_RETURN(Shape pad, IntListArg(c, "pad"));
  const size_t rank = self.shape.size();
  if (pad.size() % 2 != 0 || pad.size() / 2 > rank) {
    return Bad("pad: argument 'pad' has " + std::to_string(pad.size()) +
               " entries; it needs an even number, at most twice the rank " + std::to_string(rank));
  }
  Shape out = self.shape;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    Expr& d = out[rank - 1 - i];
    d = d + pad[2 * i] + pad[2 * i + 1];  // before + size + after
    TORCHCOST_RETURN_IF_ERROR(c.RequireLe(0, d, "pad: padded dim " + std::to_string(rank - 1 - i) +
                                                    " must not be negative"));
  }
  outputs->push_back(RValue::Tensor(WithShape(self, out)));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Reductions.

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
      return Bad("dim " + std::to_string(d) + " appears multiple times in the list of dims (argument 'dim')");
    }
    reduced[d] = true;
  }
  return reduced;
}

// Returns the reduced shape of `self` (keepdim keeps reduced dims as 1).
Result<Shape> ReducedShape(ImplContext& c, const TensorType& self) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<bool> reduced, ReducedDims(c, self.shape.size()));
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

// Returns the ScalarType argument `dtype` if given, else `fallback`.
DType DTypeArg(ImplContext& c, DType fallback) {
  const RValue& v = c.Arg("dtype");
  if (v.kind == RValue::Kind::kInt && v.i.IsConstant()) {
    DType d = DTypeFromScalarTypeCode(*v.i.AsConstant());
    if (d != DType::kUnknown) return d;
  }
  if (v.kind == RValue::Kind::kString) {
    Result<DType> d = ParseDType(v.s);
    if (d.ok()) return *d;
  }
  return fallback;
}

enum class ReduceDType { kSelf, kSum, kBool, kIndex };

Status ReduceImpl(ImplContext& c, std::vector<RValue>* outputs, ReduceDType mode, bool with_indices) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  TORCHCOST_ASSIGN_OR_RETURN(Shape shape, ReducedShape(c, self));
  DType dtype = self.dtype;
  switch (mode) {
    case ReduceDType::kSelf:
      dtype = DTypeArg(c, self.dtype);
      break;
    case ReduceDType::kSum:  // NB: sum and prod of integers or bools accumulate in int64.
      dtype = DTypeArg(c, (self.dtype != DType::kUnknown && !IsFloatingPoint(self.dtype)) ? DType::kInt64
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

Status Reduce(ImplContext& c, std::vector<RValue>* o) { return ReduceImpl(c, o, ReduceDType::kSelf, false); }
Status ReduceSum(ImplContext& c, std::vector<RValue>* o) { return ReduceImpl(c, o, ReduceDType::kSum, false); }
Status ReduceBool(ImplContext& c, std::vector<RValue>* o) { return ReduceImpl(c, o, ReduceDType::kBool, false); }
Status ReduceIndex(ImplContext& c, std::vector<RValue>* o) { return ReduceImpl(c, o, ReduceDType::kIndex, false); }
Status ReduceWithIndices(ImplContext& c, std::vector<RValue>* o) {
  return ReduceImpl(c, o, ReduceDType::kSelf, true);
}

// ---------------------------------------------------------------------------
// Casts.

// to(...) overloads and type_as: self's shape with the dtype of `dtype` or `other`.
Status To(ImplContext& c, std::vector<RValue>* outputs) {
  TORCHCOST_ASSIGN_OR_RETURN(TensorType self, TensorArg(c, "self"));
  TensorType out = self;
  const RValue& other = c.Arg("other");
  if (other.kind == RValue::Kind::kTensor) {
    out.dtype = other.t.dtype;
  } else {
    out.dtype = DTypeArg(c, self.dtype);
  }
  outputs->push_back(RValue::Tensor(out));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Registry.

struct Entry {
  std::string_view name;
  ImplFn fn;
};

// Wraps `Fn` so that sym::Error (overflow, a divisor not provably positive)
// becomes a Status instead of crossing the rule engine.
template <ImplFn Fn>
Status Guarded(ImplContext& c, std::vector<RValue>* outputs) {
  try {
    return Fn(c, outputs);
  } catch (const sym::Error& e) {
    return Status::InvalidArgument(e.what());
  }
}

// Sorted by name.
constexpr Entry kImpls[] = {
    {"broadcast", &Guarded<Broadcast>},
    {"broadcast_bool", &Guarded<BroadcastBool>},
    {"broadcast_float", &Guarded<BroadcastFloat>},
    {"broadcast_inplace", &Guarded<BroadcastInplace>},
    {"cat", &Guarded<Cat>},
    {"chunk", &Guarded<Chunk>},
    {"expand", &Guarded<Expand>},
    {"flatten", &Guarded<Flatten>},
    {"narrow", &Guarded<Narrow>},
    {"pad", &Guarded<Pad>},
    {"permute", &Guarded<Permute>},
    {"reduce", &Guarded<Reduce>},
    {"reduce_bool", &Guarded<ReduceBool>},
    {"reduce_index", &Guarded<ReduceIndex>},
    {"reduce_sum", &Guarded<ReduceSum>},
    {"reduce_with_indices", &Guarded<ReduceWithIndices>},
    {"select", &Guarded<Select>},
    {"slice", &Guarded<Slice>},
    {"split", &Guarded<Split>},
    {"squeeze", &Guarded<Squeeze>},
    {"stack", &Guarded<Stack>},
    {"t", &Guarded<T>},
    {"to", &Guarded<To>},
    {"transpose", &Guarded<Transpose>},
    {"unbind", &Guarded<Unbind>},
    {"unflatten", &Guarded<Unflatten>},
    {"unsqueeze", &Guarded<Unsqueeze>},
    {"view", &Guarded<View>},
};

}  // namespace

ImplFn FindImpl(std::string_view name) {
  for (const Entry& e : kImpls) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

std::vector<std::string> ImplNames() {
  std::vector<std::string> names;
  for (const Entry& e : kImpls) names.emplace_back(e.name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace torchcost::rules
