// Elementwise ops with PyTorch broadcasting and type promotion (broadcast*),
// and casts (to).
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rules/builtin.h"
#include "rules/impl_util.h"
#include "rules/impls.h"
#include "rules/value.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::rules::impl {
// Returns a + b for broadcasting, or an error; `what` names the operands.
static Result<Expr> BroadcastDim(ImplContext& c, const Expr& a, const Expr& b,
                                 const std::string& what) {
  if (a == b) return a;
  if (IsOne(c, a)) return b;
  if (IsOne(c, b)) return a;
  if (a.IsConstant() && b.IsConstant()) {
    return Bad(what + ": sizes " + a.ToString() + " and " + b.ToString() +
               " are not broadcastable");
  }
  sym::Truth eq = c.ctx().ProveEq(a, b);
  if (eq == sym::Truth::kTrue) return a;
  // NB: a symbolic dim that might be 1 is assumed equal to the other side.
  TORCHCOST_RETURN_IF_ERROR(
      c.RequireEq(a, b, what + ": broadcast dims must be equal or 1"));
  return b.IsConstant() ? b : a;
}

// Broadcasts two shapes (NumPy rules: align on the right).
Result<Shape> BroadcastShapes(ImplContext& c, const Shape& a, const Shape& b,
                              const std::string& what) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    // Offsets from the right.
    const size_t ia = i + a.size(), ib = i + b.size();
    if (ia < n) {
      out[i] = b[ib - n];
    } else if (ib < n) {
      out[i] = a[ia - n];
    } else {
      Result<Expr> d =
          BroadcastDim(c, a[ia - n], b[ib - n],
                       what + " " + ShapeToString(a) + " and " +
                           ShapeToString(b) + " at dim " +
                           std::to_string(static_cast<int64_t>(i) -
                                          static_cast<int64_t>(n)));
      if (!d.ok()) return d.status();
      out[i] = *d;
    }
  }
  return out;
}

namespace {

// The operand names elementwise ops use, in schema order of the common ones.
constexpr std::string_view kOperandNames[] = {
    "self",    "input", "other",  "condition", "exponent", "tensor1",
    "tensor2", "end",   "weight", "mask",      "min",      "max"};

enum class DTypeMode { kPromote, kBool, kFloat };

// Broadcasts every operand that is present; the result dtype follows `mode`.
Status BroadcastImpl(ImplContext& c, std::vector<RValue>* outputs,
                     DTypeMode mode) {
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
    Result<Shape> s = BroadcastShapes(
        c, shape, v.t.shape,
        "operands " + Quote(first_name) + " and " + Quote(name));
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
  if (mode == DTypeMode::kFloat && out.dtype != DType::kUnknown &&
      !IsFloatingPoint(out.dtype)) {
    // NB: true division and float functions of ints give the default dtype.
    out.dtype = DType::kFloat32;
  }
  outputs->push_back(RValue::Tensor(std::move(out)));
  return Status::Ok();
}

}  // namespace

Status Broadcast(ImplContext& c, std::vector<RValue>* o) {
  return BroadcastImpl(c, o, DTypeMode::kPromote);
}
Status BroadcastBool(ImplContext& c, std::vector<RValue>* o) {
  return BroadcastImpl(c, o, DTypeMode::kBool);
}
Status BroadcastFloat(ImplContext& c, std::vector<RValue>* o) {
  return BroadcastImpl(c, o, DTypeMode::kFloat);
}

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
                 " does not broadcast to the in-place self of shape " +
                 ShapeToString(self.shape));
    }
    for (size_t i = 0; i < o.size(); ++i) {
      const Expr& d = o[o.size() - 1 - i];
      const Expr& s = self.shape[self.shape.size() - 1 - i];
      if (d == s || IsOne(c, d)) continue;
      if (d.IsConstant() && s.IsConstant()) {
        return Bad("argument " + Quote(name) + " of shape " + ShapeToString(o) +
                   " does not broadcast to the in-place self of shape " +
                   ShapeToString(self.shape));
      }
      TORCHCOST_RETURN_IF_ERROR(c.RequireEq(
          d, s,
          "in-place operand " + Quote(name) + " " + ShapeToString(o) +
              " must broadcast to self " + ShapeToString(self.shape)));
    }
  }
  outputs->push_back(RValue::Tensor(self));
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Casts.

// to(...) overloads and type_as: self's shape with the dtype of `dtype` or
// `other`.
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

}  // namespace torchcost::rules::impl
