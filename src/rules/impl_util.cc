// Helpers shared by the C++ shape functions; see impl_util.h.
#include "rules/impl_util.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/builtin.h"
#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules::impl {
namespace {

// Returns numerator / denominator as products of factors, cancelling equal
// factors first (so numel [N, 3, 224, 224] over [N] gives 150528 without
// relying on the simplifier), then dividing with FloorDiv. Records that the
// division is exact.
Result<Expr> ExactQuotient(ImplContext& c, Shape num, Shape den,
                           const std::string& what) {
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
    return Bad(what +
               ": cannot infer a dim of -1 when the other dims multiply to " +
               d.ToString());
  }
  Expr q = sym::FloorDiv(n, d);
  TORCHCOST_RETURN_IF_ERROR(c.RequireEq(
      q * d, n, what + ": the sizes must divide the number of elements"));
  return q;
}

// Type promotion helpers for ResultTypeState.

bool IsComplex(DType t) {
  return t == DType::kComplex32 || t == DType::kComplex64 ||
         t == DType::kComplex128;
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
  if (higher == DType::kBool || IsFloat(lower))
    return PromoteKnown(higher, lower);
  return higher;
}

}  // namespace

// ---------------------------------------------------------------------------
// Argument access.

std::string Quote(std::string_view name) {
  return "'" + std::string(name) + "'";
}

Status Bad(const std::string& message) {
  return Status::InvalidArgument(message);
}

const RValue* FirstArg(ImplContext& c,
                       std::initializer_list<std::string_view> names,
                       std::string_view* found) {
  for (std::string_view n : names) {
    const RValue& v = c.Arg(n);
    if (v.kind != RValue::Kind::kUnknown) {
      if (found != nullptr) *found = n;
      return &v;
    }
  }
  return nullptr;
}

Result<TensorType> TensorArg(ImplContext& c, std::string_view name) {
  const RValue& v = c.Arg(name);
  if (v.kind != RValue::Kind::kTensor) {
    return Bad("argument " + Quote(name) + " must be a tensor");
  }
  return v.t;
}

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

Result<Shape> IntListArg(ImplContext& c, std::string_view name) {
  std::optional<Shape> l = AsIntList(c.Arg(name));
  if (!l) return Bad("argument " + Quote(name) + " must be a list of ints");
  return *l;
}

Result<Expr> IntArg(ImplContext& c, std::string_view name,
                    std::optional<Expr> def) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kInt) return v.i;
  if (v.kind == RValue::Kind::kTensor && v.t.has_scalar) return v.t.scalar;
  if ((v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown) &&
      def)
    return *def;
  return Bad("argument " + Quote(name) + " must be an int");
}

Result<int64_t> ConstIntArg(ImplContext& c, std::string_view name,
                            std::optional<int64_t> def) {
  const RValue& v = c.Arg(name);
  if ((v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown) &&
      def)
    return *def;
  Expr e;
  if (v.kind == RValue::Kind::kInt) {
    e = v.i;
  } else if (v.kind == RValue::Kind::kTensor && v.t.has_scalar) {
    e = v.t.scalar;
  } else {
    return Bad("argument " + Quote(name) + " must be an int");
  }
  std::optional<int64_t> k = e.AsConstant();
  if (!k)
    return Bad("argument " + Quote(name) + " must be a constant; got " +
               e.ToString());
  return *k;
}

Result<bool> BoolArg(ImplContext& c, std::string_view name, bool def) {
  const RValue& v = c.Arg(name);
  if (v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown)
    return def;
  if (v.kind == RValue::Kind::kBool) return v.b;
  if (v.kind == RValue::Kind::kInt && v.i.IsConstant())
    return *v.i.AsConstant() != 0;
  return Bad("argument " + Quote(name) + " must be a bool");
}

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

Result<std::vector<int64_t>> ConstList(const Shape& l, std::string_view name) {
  std::vector<int64_t> out;
  for (const Expr& e : l) {
    std::optional<int64_t> k = e.AsConstant();
    if (!k)
      return Bad("argument " + Quote(name) + " must hold constants; got " +
                 e.ToString());
    out.push_back(*k);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Dims and shapes.

Result<int64_t> WrapDim(int64_t d, int64_t rank, std::string_view arg) {
  const int64_t r = rank <= 0 ? 1 : rank;
  if (d < -r || d >= r) {
    return Status::OutOfRange(
        "dim " + std::to_string(d) + " out of range for a tensor of rank " +
        std::to_string(rank) + " (argument " + Quote(arg) + ")");
  }
  return d < 0 ? d + r : d;
}

std::string ListToString(const std::vector<int64_t>& l) {
  std::string s = "[";
  for (size_t i = 0; i < l.size(); ++i)
    s += (i ? ", " : "") + std::to_string(l[i]);
  return s + "]";
}

Expr Product(const Shape& s, size_t begin, size_t end) {
  Expr p = 1;
  for (size_t i = begin; i < s.size() && i < end; ++i) p = p * s[i];
  return p;
}

bool IsOne(ImplContext& c, const Expr& e) {
  return c.ctx().ProveEq(e, 1) == sym::Truth::kTrue;
}

TensorType WithShape(const TensorType& t, Shape shape) {
  TensorType out;
  out.shape = std::move(shape);
  out.dtype = t.dtype;
  return out;
}

Status InferShape(ImplContext& c, const Shape& numel_factors, const Shape& size,
                  std::string_view arg, const std::string& op, Shape* out) {
  int infer = -1;
  for (size_t i = 0; i < size.size(); ++i) {
    std::optional<int64_t> k = size[i].AsConstant();
    if (k && *k == -1) {
      if (infer >= 0) {
        std::string s = "[";
        for (size_t j = 0; j < size.size(); ++j)
          s += (j ? ", " : "") + size[j].ToString();
        return Bad("shape '" + s + "]' has more than one -1 (argument " +
                   Quote(arg) + ")");
      }
      infer = static_cast<int>(i);
    } else if (k && *k < -1) {
      return Bad("invalid shape dimension " + std::to_string(*k) +
                 " (argument " + Quote(arg) + ")");
    }
  }
  *out = size;
  if (infer < 0) {
    return c.RequireEq(Product(size), Product(numel_factors),
                       op + ": the number of elements of " +
                           ShapeToString(size) + " must equal that of " +
                           ShapeToString(numel_factors));
  }
  Shape others;
  for (size_t i = 0; i < size.size(); ++i) {
    if (static_cast<int>(i) != infer) others.push_back(size[i]);
  }
  Result<Expr> q =
      ExactQuotient(c, numel_factors, others, op + " " + ShapeToString(size));
  if (!q.ok()) return q.status();
  (*out)[infer] = *q;
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Type promotion.

void ResultTypeState::Add(const RValue& v) {
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
      // NB: the default dtype.
      wrapped = PromoteKnown(wrapped, DType::kFloat32);
      break;
    case RValue::Kind::kBool:
      wrapped = PromoteKnown(wrapped, DType::kBool);
      break;
    default:
      break;
  }
}

DType ResultTypeState::Result() const {
  return CombineCategories(dim, CombineCategories(zero, wrapped));
}

}  // namespace torchcost::rules::impl
