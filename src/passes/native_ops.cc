#include "passes/native_ops.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "rules/rule_expr.h"

namespace torchcost::passes {
namespace {

using rules::RValue;
using Kind = RValue::Kind;

// The native ops and integer arithmetic, by op name.
const std::unordered_map<std::string_view, NativeOp>& NativeOps() {
  static const auto* kOps = new std::unordered_map<std::string_view, NativeOp>{
      {"prim::ListConstruct", NativeOp::kListConstruct},
      {"prim::ListUnpack", NativeOp::kUnpack},
      {"prim::TupleConstruct", NativeOp::kTupleConstruct},
      {"prim::TupleUnpack", NativeOp::kUnpack},
      {"prim::NumToTensor", NativeOp::kNumToTensor},
      {"aten::Int", NativeOp::kToInt},
      {"aten::ScalarImplicit", NativeOp::kToInt},
      {"aten::Float", NativeOp::kToFloat},
      {"aten::size", NativeOp::kSize},
      {"aten::dim", NativeOp::kDim},
      {"aten::len", NativeOp::kLen},
      {"aten::__getitem__", NativeOp::kGetItem},
      {"prim::TupleIndex", NativeOp::kGetItem},
      {"aten::numel", NativeOp::kNumel},
      {"aten::add", NativeOp::kAdd},
      {"aten::sub", NativeOp::kSub},
      {"aten::mul", NativeOp::kMul},
      {"aten::floordiv", NativeOp::kFloorDiv},
      {"aten::__floordiv__", NativeOp::kFloorDiv},
      {"aten::neg", NativeOp::kNeg},
      {"aten::remainder", NativeOp::kRemainder}};
  return *kOps;
}

bool IsArith(NativeOp kind) { return kind >= NativeOp::kAdd; }

}  // namespace

NativeOp ClassifyNativeOp(std::string_view op) {
  auto it = NativeOps().find(op);
  return it == NativeOps().end() ? NativeOp::kNone : it->second;
}

bool IsIntArith(const ir::Node& n) { return IsArith(ClassifyNativeOp(n.op)); }

namespace {

// Returns the symbolic integer a value holds: an int, or a 0-dim tensor with a
// known value.
const sym::Expr* AsInt(const RValue& v) {
  if (v.kind == Kind::kInt) return &v.i;
  if (v.kind == Kind::kTensor && v.t.has_scalar) return &v.t.scalar;
  return nullptr;
}

Status Fail(const std::string& msg) { return Status::InvalidArgument(msg); }

// Returns `v` as a default RValue: as it is when it already is one (a fresh
// output, the usual case), else reset.
RValue& Fresh(RValue& v) {
  if (v.kind != Kind::kUnknown || v.b || v.unknown || v.i != sym::Expr(0) ||
      v.f != 0 || !v.s.empty() || !v.ints.empty() || !v.t.shape.empty() ||
      v.t.dtype != DType::kUnknown || v.t.has_scalar ||
      v.t.scalar != sym::Expr(0) || !v.tensors.empty() || !v.items.empty()) {
    v = RValue();
  }
  return v;
}

}  // namespace

bool IsNativeOp(const ir::Node& node) {
  const NativeOp kind = ClassifyNativeOp(node.op);
  // Integer arithmetic on ints (not tensors): aten::add.int and friends.
  return IsArith(kind) ? node.overload == "int" : kind != NativeOp::kNone;
}

RValue ConstantToValue(const ir::Value& v) {
  const ir::Constant& c = v.constant;
  if (std::holds_alternative<std::monostate>(c)) return RValue::None();
  if (auto* i = std::get_if<int64_t>(&c)) {
    if (v.kind == ir::ValueKind::kTensor) {
      // A 0-dim integer tensor constant, as traced shape arithmetic makes.
      rules::TensorType t;
      t.dtype = v.dtype == DType::kUnknown ? DType::kInt64 : v.dtype;
      t.has_scalar = true;
      t.scalar = sym::Expr(*i);
      return RValue::Tensor(std::move(t));
    }
    return RValue::Int(sym::Expr(*i));
  }
  if (auto* d = std::get_if<double>(&c)) {
    if (v.kind == ir::ValueKind::kTensor) {
      rules::TensorType t;
      t.dtype = v.dtype == DType::kUnknown ? DType::kFloat32 : v.dtype;
      return RValue::Tensor(std::move(t));
    }
    return RValue::Float(*d);
  }
  if (auto* b = std::get_if<bool>(&c)) return RValue::Bool(*b);
  if (auto* s = std::get_if<std::string>(&c)) return RValue::Str(*s);
  if (auto* l = std::get_if<std::vector<int64_t>>(&c)) {
    return RValue::IntList(sym::Shape(l->begin(), l->end()));
  }
  if (auto* l = std::get_if<std::vector<double>>(&c)) {
    RValue r;
    r.kind = Kind::kList;
    for (double d : *l) r.items.push_back(RValue::Float(d));
    return r;
  }
  if (auto* l = std::get_if<std::vector<bool>>(&c)) {
    RValue r;
    r.kind = Kind::kList;
    for (bool b : *l) r.items.push_back(RValue::Bool(b));
    return r;
  }
  return RValue();
}

bool MintsSymbol(const ir::Node& node, NativeOp kind,
                 const std::vector<RValue>& values) {
  // aten::Int reads an int or a carried value, fails on a float and mints a
  // symbol for anything else (RunNativeOp asks here).
  if (kind != NativeOp::kToInt || node.inputs.empty()) return false;
  const RValue& v = values[node.inputs[0]];
  return AsInt(v) == nullptr && v.kind != Kind::kFloat;
}

Status RunNativeOp(const ir::Node& node, NativeOp kind, sym::Context& ctx,
                   std::vector<RValue>& values) {
  auto in = [&](size_t i) -> const RValue& { return values[node.inputs[i]]; };
  auto set = [&](size_t i, RValue v) {
    if (i < node.outputs.size()) values[node.outputs[i]] = std::move(v);
  };
  // As set(i, RValue::Int(e)), in place.
  auto set_int = [&](size_t i, sym::Expr e) {
    if (i >= node.outputs.size()) return;
    RValue& out = Fresh(values[node.outputs[i]]);
    out.kind = Kind::kInt;
    out.i = e;
  };
  try {
    if (kind == NativeOp::kListConstruct) {
      bool all_int = true, all_tensor = !node.inputs.empty();
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        all_int = all_int && in(i).kind == Kind::kInt;
        all_tensor = all_tensor && in(i).kind == Kind::kTensor;
      }
      // NB: an output that is also an input (not SSA) takes the general path.
      const bool in_place = !node.outputs.empty() &&
                            std::find(node.inputs.begin(), node.inputs.end(),
                                      node.outputs[0]) == node.inputs.end();
      if (all_int && in_place) {
        // The int list in place (most lists: a view's sizes).
        RValue& out = Fresh(values[node.outputs[0]]);
        out.kind = Kind::kIntList;
        out.ints.reserve(node.inputs.size());
        for (size_t i = 0; i < node.inputs.size(); ++i)
          out.ints.push_back(in(i).i);
        return Status::Ok();
      }
      RValue out;
      if (all_int) {
        sym::Shape l;
        l.reserve(node.inputs.size());
        for (size_t i = 0; i < node.inputs.size(); ++i) l.push_back(in(i).i);
        out = RValue::IntList(std::move(l));
      } else if (all_tensor) {
        std::vector<rules::TensorType> l;
        l.reserve(node.inputs.size());
        for (size_t i = 0; i < node.inputs.size(); ++i) l.push_back(in(i).t);
        out = RValue::Tensors(std::move(l));
      } else {
        out.kind = Kind::kList;
        out.items.reserve(node.inputs.size());
        for (size_t i = 0; i < node.inputs.size(); ++i)
          out.items.push_back(in(i));
      }
      set(0, std::move(out));
      return Status::Ok();
    }
    if (kind == NativeOp::kTupleConstruct) {
      RValue out;
      out.kind = Kind::kList;
      out.items.reserve(node.inputs.size());
      for (size_t i = 0; i < node.inputs.size(); ++i)
        out.items.push_back(in(i));
      set(0, std::move(out));
      return Status::Ok();
    }
    if (kind == NativeOp::kUnpack) {
      const RValue& l = in(0);
      size_t n = l.kind == Kind::kIntList      ? l.ints.size()
                 : l.kind == Kind::kTensorList ? l.tensors.size()
                 : l.kind == Kind::kList       ? l.items.size()
                                               : 0;
      if (l.kind == Kind::kUnknown) return Fail("input is unknown");
      if (n != node.outputs.size())
        return Fail("unpacks " + std::to_string(node.outputs.size()) +
                    " values from a list of " + std::to_string(n));
      for (size_t i = 0; i < n; ++i) {
        if (l.kind == Kind::kIntList)
          set_int(i, l.ints[i]);
        else if (l.kind == Kind::kTensorList)
          set(i, RValue::Tensor(l.tensors[i]));
        else
          set(i, l.items[i]);
      }
      return Status::Ok();
    }
    if (kind == NativeOp::kNumToTensor) {
      const RValue& v = in(0);
      rules::TensorType t;
      if (v.kind == Kind::kInt) {
        t.dtype = DType::kInt64;
        t.has_scalar = true;
        t.scalar = v.i;
      } else if (v.kind == Kind::kFloat) {
        t.dtype = DType::kFloat64;
      } else {
        return Fail("prim::NumToTensor of a " + rules::DescribeValue(v));
      }
      set(0, RValue::Tensor(std::move(t)));
      return Status::Ok();
    }
    if (kind == NativeOp::kToInt) {
      if (MintsSymbol(node, kind, values)) {
        // NB: the value of a data-dependent scalar is unknowable without
        // running the model.
        set(0, RValue::Int(ctx.FreshSymbol(
                   "u", sym::Interval{sym::kNegInf, sym::kPosInf})));
      } else if (const sym::Expr* e = AsInt(in(0))) {
        set_int(0, *e);
      } else {
        return Fail("cannot convert a float to a symbolic int");
      }
      return Status::Ok();
    }
    if (kind == NativeOp::kToFloat) {
      set(0, RValue::Float(0.0));
      return Status::Ok();
    }
    if (kind == NativeOp::kSize || kind == NativeOp::kNumel ||
        kind == NativeOp::kDim) {
      const RValue& t = in(0);
      if (t.kind != Kind::kTensor) return Fail("input is not a tensor");
      const auto& shape = t.t.shape;
      if (kind == NativeOp::kDim) {
        set(0, RValue::Int(static_cast<int64_t>(shape.size())));
      } else if (kind == NativeOp::kNumel) {
        sym::Expr acc(1);
        for (const auto& d : shape) acc = acc * d;
        set(0, RValue::Int(acc));
      } else if (node.inputs.size() >= 2) {
        const sym::Expr* d = AsInt(in(1));
        auto c = d ? d->AsConstant() : std::nullopt;
        int64_t rank = static_cast<int64_t>(shape.size());
        if (!c || *c < -rank || *c >= rank)
          return Fail("dim " + (d ? d->ToString() : std::string("?")) +
                      " out of range for a tensor of rank " +
                      std::to_string(rank));
        set_int(0, shape[*c < 0 ? *c + rank : *c]);
      } else {
        set(0, RValue::IntList(shape));
      }
      return Status::Ok();
    }
    if (kind == NativeOp::kLen) {
      const RValue& l = in(0);
      if (l.kind == Kind::kIntList)
        set(0, RValue::Int(static_cast<int64_t>(l.ints.size())));
      else if (l.kind == Kind::kTensorList)
        set(0, RValue::Int(static_cast<int64_t>(l.tensors.size())));
      else if (l.kind == Kind::kList)
        set(0, RValue::Int(static_cast<int64_t>(l.items.size())));
      else if (l.kind == Kind::kTensor && !l.t.shape.empty())
        set(0, RValue::Int(l.t.shape[0]));
      else
        return Fail("len() of a " + rules::DescribeValue(l));
      return Status::Ok();
    }
    if (kind == NativeOp::kGetItem) {
      const RValue& l = in(0);
      const sym::Expr* idx = AsInt(in(1));
      auto c = idx ? idx->AsConstant() : std::nullopt;
      if (!c) return Fail("index is not a constant");
      int64_t size = l.kind == Kind::kIntList      ? l.ints.size()
                     : l.kind == Kind::kTensorList ? l.tensors.size()
                     : l.kind == Kind::kList       ? l.items.size()
                                                   : -1;
      if (size < 0) return Fail("indexing a " + rules::DescribeValue(l));
      if (*c < -size || *c >= size)
        return Fail("index " + std::to_string(*c) + " out of range");
      int64_t i = *c < 0 ? *c + size : *c;
      if (l.kind == Kind::kIntList)
        set_int(0, l.ints[i]);
      else if (l.kind == Kind::kTensorList)
        set(0, RValue::Tensor(l.tensors[i]));
      else
        set(0, l.items[i]);
      return Status::Ok();
    }
    if (IsArith(kind)) {
      const sym::Expr* a = AsInt(in(0));
      if (!a) return Fail("operand is not an int");
      if (kind == NativeOp::kNeg) {
        set_int(0, -*a);
        return Status::Ok();
      }
      const sym::Expr* b = node.inputs.size() > 1 ? AsInt(in(1)) : nullptr;
      if (!b) return Fail("operand is not an int");
      sym::Expr r;
      if (kind == NativeOp::kAdd)
        r = *a + *b;
      else if (kind == NativeOp::kSub)
        r = *a - *b;
      else if (kind == NativeOp::kMul)
        r = *a * *b;
      else if (kind == NativeOp::kRemainder)
        r = sym::Mod(*a, *b);
      else
        r = sym::FloorDiv(*a, *b);
      set_int(0, r);
      return Status::Ok();
    }
  } catch (const sym::Error& e) {
    return Fail(e.what());
  }
  return Fail("not a native op");
}

bool PropagatesScalarValue(const ir::Node& node) {
  static const auto* kOps = new std::unordered_set<std::string_view>{
      "aten::add",  "aten::sub",          "aten::mul",
      "aten::div",  "aten::floor_divide", "aten::remainder",
      "aten::rsub", "aten::minimum",      "aten::maximum"};
  // NB: unary minus too (T5's position_bias[:, :, -seq_length:, :] traces
  // aten::neg of the length).
  return kOps->count(node.op) > 0 || node.op == "aten::neg";
}

void PropagateScalarValue(const ir::Node& node, std::vector<RValue>& values) {
  // NB: the output's kind is checked first: most outputs are tensors with
  // dims, which rules out the op's set lookup.
  if (node.outputs.empty()) return;
  RValue& out = values[node.outputs[0]];
  if (out.kind != Kind::kTensor || !out.t.shape.empty() ||
      IsFloatingPoint(out.t.dtype))
    return;
  const bool neg = node.op == "aten::neg";
  if (!PropagatesScalarValue(node) || node.inputs.size() < (neg ? 1u : 2u))
    return;
  if (neg) {
    if (const sym::Expr* a = AsInt(values[node.inputs[0]])) {
      out.t.has_scalar = true;
      out.t.scalar = sym::Expr(0) - *a;
    }
    return;
  }
  const sym::Expr* a = AsInt(values[node.inputs[0]]);
  const sym::Expr* b = AsInt(values[node.inputs[1]]);
  if (!a || !b) return;
  try {
    sym::Expr r;
    if (node.op == "aten::add")
      r = *a + *b;
    else if (node.op == "aten::sub")
      r = *a - *b;
    else if (node.op == "aten::rsub")
      r = *b - *a;
    else if (node.op == "aten::mul")
      r = *a * *b;
    else if (node.op == "aten::remainder")
      r = sym::Mod(*a, *b);
    else if (node.op == "aten::minimum")
      r = sym::Min(*a, *b);
    else if (node.op == "aten::maximum")
      r = sym::Max(*a, *b);
    // NB: trunc and floor agree on the non-negative sizes traced here.
    else
      r = sym::FloorDiv(*a, *b);
    out.t.has_scalar = true;
    out.t.scalar = r;
  } catch (const sym::Error&) {
    // Leave the value unknown: a divisor that is not provably positive, or an
    // overflow.
  }
}

}  // namespace torchcost::passes
