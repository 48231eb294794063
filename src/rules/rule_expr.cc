// Evaluation of parsed rule expressions over RValues; see rule_expr.h. Its
// recursion is bounded by the parser's limit on tree depth (kMaxNesting in
// rule_expr_parse.cc).
#include "rules/rule_expr.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "rules/einsum.h"

namespace torchcost::rules {
namespace {

using Op = AstNode::Op;

// NB: a documented limit: ones(n) allocates its list, so n past any tensor's
// rank (PyTorch's CUDA kernels take at most 25 dims) is an error rather than
// an allocation of n * sizeof(Expr) bytes.
constexpr int64_t kMaxOnes = 1024;

const char* KindName(RValue::Kind k) {
  switch (k) {
    case RValue::Kind::kUnknown:
      return "unknown";
    case RValue::Kind::kNone:
      return "None";
    case RValue::Kind::kInt:
      return "int";
    case RValue::Kind::kFloat:
      return "float";
    case RValue::Kind::kBool:
      return "bool";
    case RValue::Kind::kString:
      return "str";
    case RValue::Kind::kIntList:
      return "int list";
    case RValue::Kind::kTensor:
      return "tensor";
    case RValue::Kind::kTensorList:
      return "tensor list";
    case RValue::Kind::kList:
      return "list";
  }
  return "?";
}

sym::Truth Not(sym::Truth t) {
  if (t == sym::Truth::kTrue) return sym::Truth::kFalse;
  if (t == sym::Truth::kFalse) return sym::Truth::kTrue;
  return t;
}

RValue TruthValue(sym::Truth t) {
  RValue v = RValue::Bool(t == sym::Truth::kTrue);
  v.unknown = t == sym::Truth::kUnknown;
  return v;
}

}  // namespace

std::string DescribeValue(const RValue& v) {
  switch (v.kind) {
    case RValue::Kind::kInt:
      return v.i.ToString();
    case RValue::Kind::kIntList:
      return ShapeToString(v.ints);
    case RValue::Kind::kTensor:
      return "tensor " + ShapeToString(v.t.shape);
    case RValue::Kind::kBool:
      return v.unknown ? "unknown" : (v.b ? "true" : "false");
    case RValue::Kind::kFloat:
      return std::to_string(v.f);
    case RValue::Kind::kString:
      return "'" + v.s + "'";
    default:
      return KindName(v.kind);
  }
}

sym::Expr Evaluator::AsInt(const RValue& v, int col, const char* what) const {
  if (v.kind == RValue::Kind::kInt) return v.i;
  if (v.kind == RValue::Kind::kBool && !v.unknown)
    return sym::Expr(v.b ? 1 : 0);
  if (v.kind == RValue::Kind::kTensor && v.t.has_scalar) return v.t.scalar;
  throw RuleError(std::string(what) + " needs an int, got " + KindName(v.kind) +
                      " " + DescribeValue(v),
                  col);
}

const RValue& Evaluator::EvalRef(int node, RValue& tmp) const {
  const AstNode& n = pool_.nodes[node];
  if (n.op == Op::kName) {
    const RValue* v = slots_[n.slot];
    if (v == nullptr)
      throw RuleError("name '" + n.sval + "' is not bound yet", n.col);
    return *v;
  }
  tmp = Eval(node);
  return tmp;
}

RValue Evaluator::Eval(int node) const {
  const AstNode& n = pool_.nodes[node];
  switch (n.op) {
    case Op::kInt:
      return RValue::Int(sym::Expr(n.ival));
    case Op::kFloat:
      return RValue::Float(n.fval);
    case Op::kString:
      return RValue::Str(n.sval);
    case Op::kTrue:
      return RValue::Bool(true);
    case Op::kFalse:
      return RValue::Bool(false);
    case Op::kName: {
      RValue tmp;
      return EvalRef(node, tmp);
    }
    case Op::kList: {
      sym::Shape out;
      out.reserve(n.kids.size());
      for (size_t i = 0; i < n.kids.size(); ++i) {
        RValue tmp;
        const RValue& v = EvalRef(n.kids[i], tmp);
        if (n.splat[i]) {
          if (v.kind == RValue::Kind::kIntList)
            out.insert(out.end(), v.ints.begin(), v.ints.end());
          else if (v.kind == RValue::Kind::kTensor)
            out.insert(out.end(), v.t.shape.begin(), v.t.shape.end());
          else
            throw RuleError(
                "'*' needs a list, got " + std::string(KindName(v.kind)),
                pool_.nodes[n.kids[i]].col);
        } else {
          out.push_back(AsInt(v, pool_.nodes[n.kids[i]].col, "a list item"));
        }
      }
      return RValue::IntList(std::move(out));
    }
    case Op::kIndex: {
      RValue tmp;
      const RValue& base = EvalRef(n.kids[0], tmp);
      const sym::Shape* list = nullptr;
      if (base.kind == RValue::Kind::kIntList)
        list = &base.ints;
      else if (base.kind == RValue::Kind::kTensor)
        list = &base.t.shape;
      if (base.kind == RValue::Kind::kTensorList) {
        auto idx = AsInt(Eval(n.kids[1]), n.col, "an index").AsConstant();
        int64_t size = static_cast<int64_t>(base.tensors.size());
        if (!idx || *idx < -size || *idx >= size)
          throw RuleError("index out of range", n.col);
        return RValue::Tensor(base.tensors[*idx < 0 ? *idx + size : *idx]);
      }
      if (list == nullptr)
        throw RuleError("cannot index a " + std::string(KindName(base.kind)),
                        n.col);
      auto idx = AsInt(Eval(n.kids[1]), n.col, "an index").AsConstant();
      int64_t size = static_cast<int64_t>(list->size());
      if (!idx) throw RuleError("index must be a constant", n.col);
      if (*idx < -size || *idx >= size)
        throw RuleError("index " + std::to_string(*idx) + " out of range for " +
                            ShapeToString(*list),
                        n.col);
      return RValue::Int((*list)[*idx < 0 ? *idx + size : *idx]);
    }
    case Op::kSlice: {
      RValue tmp;
      const RValue& base = EvalRef(n.kids[0], tmp);
      const sym::Shape* list = nullptr;
      if (base.kind == RValue::Kind::kIntList)
        list = &base.ints;
      else if (base.kind == RValue::Kind::kTensor)
        list = &base.t.shape;
      else
        throw RuleError("cannot slice a " + std::string(KindName(base.kind)),
                        n.col);
      int64_t size = static_cast<int64_t>(list->size());
      auto bound = [&](int kid, int64_t dflt) {
        if (kid < 0) return dflt;
        auto c = AsInt(Eval(kid), n.col, "a slice bound").AsConstant();
        if (!c) throw RuleError("slice bounds must be constants", n.col);
        int64_t v = *c < 0 ? *c + size : *c;
        return std::max<int64_t>(0, std::min(v, size));
      };
      int64_t start = bound(n.kids[1], 0), end = bound(n.kids[2], size);
      sym::Shape out;
      for (int64_t i = start; i < end; ++i) out.push_back((*list)[i]);
      return RValue::IntList(std::move(out));
    }
    case Op::kCall:
      return EvalCall(n);
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kPow: {
      RValue ta, tb;
      const RValue& a = EvalRef(n.kids[0], ta);
      const RValue& b = EvalRef(n.kids[1], tb);
      return Arith(n.op, a, b, n.col);
    }
    case Op::kNeg: {
      RValue tmp;
      const RValue& a = EvalRef(n.kids[0], tmp);
      if (a.kind == RValue::Kind::kFloat) return RValue::Float(-a.f);
      return Arith(Op::kSub, RValue::Int(0), a, n.col);
    }
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe:
    case Op::kAnd:
    case Op::kOr:
    case Op::kNot:
      return TruthValue(EvalTruth(node));
  }
  throw RuleError("bad expression node", n.col);
}

sym::Truth Evaluator::EvalTruth(int node) const {
  const AstNode& n = pool_.nodes[node];
  switch (n.op) {
    case Op::kAnd: {
      sym::Truth a = EvalTruth(n.kids[0]);
      // Short-circuit, so guards like has(x) and x[0] work.
      if (a == sym::Truth::kFalse) return a;
      sym::Truth b = EvalTruth(n.kids[1]);
      if (b == sym::Truth::kFalse) return b;
      return (a == sym::Truth::kTrue && b == sym::Truth::kTrue)
                 ? sym::Truth::kTrue
                 : sym::Truth::kUnknown;
    }
    case Op::kOr: {
      sym::Truth a = EvalTruth(n.kids[0]);
      if (a == sym::Truth::kTrue) return a;
      sym::Truth b = EvalTruth(n.kids[1]);
      if (b == sym::Truth::kTrue) return b;
      return (a == sym::Truth::kFalse && b == sym::Truth::kFalse)
                 ? sym::Truth::kFalse
                 : sym::Truth::kUnknown;
    }
    case Op::kNot:
      return Not(EvalTruth(n.kids[0]));
    case Op::kEq:
    case Op::kNe:
    case Op::kLt:
    case Op::kLe:
    case Op::kGt:
    case Op::kGe: {
      RValue ta, tb;
      const RValue& a = EvalRef(n.kids[0], ta);
      const RValue& b = EvalRef(n.kids[1], tb);
      return Compare(n.op, a, b, n.col);
    }
    default: {
      RValue v = Eval(node);
      if (v.kind == RValue::Kind::kBool)
        return v.unknown ? sym::Truth::kUnknown
                         : (v.b ? sym::Truth::kTrue : sym::Truth::kFalse);
      if (v.kind == RValue::Kind::kNone) return sym::Truth::kFalse;
      if (v.kind == RValue::Kind::kInt)
        return ctx_.ProveEq(v.i, 0) == sym::Truth::kTrue ? sym::Truth::kFalse
               : ctx_.ProveEq(v.i, 0) == sym::Truth::kFalse
                   ? sym::Truth::kTrue
                   : sym::Truth::kUnknown;
      throw RuleError(
          "a condition needs a bool, got " + std::string(KindName(v.kind)),
          n.col);
    }
  }
}

// NB: ind(c) is 1 where c holds and 0 where it does not, as an exact integer
// expression, so a condition on symbolic dims (N > 1) need not be decided:
// a > b is min(max(a - b, 0), 1) on integers; and/or/not are min/max/1 - x.
sym::Expr Evaluator::Indicator(int node) const {
  const AstNode& n = pool_.nodes[node];
  auto clamp01 = [](const sym::Expr& x) { return sym::Min(sym::Max(x, 0), 1); };
  auto operands = [&](sym::Expr* a, sym::Expr* b) {
    RValue ta, tb;
    *a = AsInt(EvalRef(n.kids[0], ta), n.col, "ind()");
    *b = AsInt(EvalRef(n.kids[1], tb), n.col, "ind()");
  };
  sym::Truth decided = sym::Truth::kUnknown;
  try {
    decided = EvalTruth(node);
  } catch (const RuleError&) {
    decided = sym::Truth::kUnknown;
  }
  if (decided != sym::Truth::kUnknown)
    return sym::Expr(decided == sym::Truth::kTrue ? 1 : 0);
  sym::Expr a, b;
  switch (n.op) {
    case Op::kNot:
      return 1 - Indicator(n.kids[0]);
    case Op::kAnd:
      return sym::Min(Indicator(n.kids[0]), Indicator(n.kids[1]));
    case Op::kOr:
      return sym::Max(Indicator(n.kids[0]), Indicator(n.kids[1]));
    case Op::kGt:
      operands(&a, &b);
      return clamp01(a - b);
    case Op::kGe:
      operands(&a, &b);
      return clamp01(a - b + 1);
    case Op::kLt:
      operands(&a, &b);
      return clamp01(b - a);
    case Op::kLe:
      operands(&a, &b);
      return clamp01(b - a + 1);
    case Op::kEq:
      operands(&a, &b);
      return 1 - clamp01(sym::Max(a - b, b - a));
    case Op::kNe:
      operands(&a, &b);
      return clamp01(sym::Max(a - b, b - a));
    default:
      break;
  }
  throw RuleError("ind() needs a comparison, and, or or not", n.col);
}

sym::Truth Evaluator::Compare(AstNode::Op op, const RValue& a, const RValue& b,
                              int col) const {
  // None compares equal only to None (so `dtype == None` style guards work).
  if (a.kind == RValue::Kind::kNone || b.kind == RValue::Kind::kNone) {
    bool eq = a.kind == b.kind;
    if (op == Op::kEq) return eq ? sym::Truth::kTrue : sym::Truth::kFalse;
    if (op == Op::kNe) return eq ? sym::Truth::kFalse : sym::Truth::kTrue;
    throw RuleError("cannot order None", col);
  }
  if (a.kind == RValue::Kind::kString || b.kind == RValue::Kind::kString) {
    if (a.kind != b.kind)
      return op == Op::kNe ? sym::Truth::kTrue : sym::Truth::kFalse;
    bool eq = a.s == b.s;
    if (op == Op::kEq) return eq ? sym::Truth::kTrue : sym::Truth::kFalse;
    if (op == Op::kNe) return eq ? sym::Truth::kFalse : sym::Truth::kTrue;
    throw RuleError("cannot order strings", col);
  }
  if (a.kind == RValue::Kind::kFloat || b.kind == RValue::Kind::kFloat) {
    auto as_double = [&](const RValue& v) {
      if (v.kind == RValue::Kind::kFloat) return v.f;
      auto c = AsInt(v, col, "a comparison").AsConstant();
      if (!c)
        throw RuleError("cannot compare a float with a symbolic int", col);
      return static_cast<double>(*c);
    };
    double x = as_double(a), y = as_double(b);
    bool r = op == Op::kEq   ? x == y
             : op == Op::kNe ? x != y
             : op == Op::kLt ? x < y
             : op == Op::kLe ? x <= y
             : op == Op::kGt ? x > y
                             : x >= y;
    return r ? sym::Truth::kTrue : sym::Truth::kFalse;
  }
  if (a.kind == RValue::Kind::kIntList || b.kind == RValue::Kind::kIntList) {
    if (a.kind != b.kind)
      throw RuleError(
          "cannot compare a list with a " + std::string(KindName(b.kind)), col);
    if (op != Op::kEq && op != Op::kNe)
      throw RuleError("lists compare only with == and !=", col);
    sym::Truth all =
        a.ints.size() == b.ints.size() ? sym::Truth::kTrue : sym::Truth::kFalse;
    for (size_t i = 0; all != sym::Truth::kFalse && i < a.ints.size(); ++i) {
      sym::Truth t = ctx_.ProveEq(a.ints[i], b.ints[i]);
      if (t == sym::Truth::kFalse)
        all = t;
      else if (t == sym::Truth::kUnknown)
        all = t;
    }
    return op == Op::kEq ? all : Not(all);
  }
  if (a.kind == RValue::Kind::kBool && b.kind == RValue::Kind::kBool &&
      !a.unknown && !b.unknown) {
    bool eq = a.b == b.b;
    if (op == Op::kEq) return eq ? sym::Truth::kTrue : sym::Truth::kFalse;
    if (op == Op::kNe) return eq ? sym::Truth::kFalse : sym::Truth::kTrue;
  }
  sym::Expr x = AsInt(a, col, "a comparison"),
            y = AsInt(b, col, "a comparison");
  switch (op) {
    case Op::kEq:
      return ctx_.ProveEq(x, y);
    case Op::kNe:
      return Not(ctx_.ProveEq(x, y));
    case Op::kLt:
      return ctx_.ProveLt(x, y);
    case Op::kLe:
      return ctx_.ProveLe(x, y);
    case Op::kGt:
      return ctx_.ProveLt(y, x);
    case Op::kGe:
      return ctx_.ProveLe(y, x);
    default:
      break;
  }
  throw RuleError("bad comparison", col);
}

RValue Evaluator::Arith(AstNode::Op op, const RValue& a, const RValue& b,
                        int col) const {
  const bool la = a.kind == RValue::Kind::kIntList,
             lb = b.kind == RValue::Kind::kIntList;
  if (la || lb) {
    // NB: a list of length 1 broadcasts like a scalar, as ATen expands
    // "stride=[2]".
    if (la && lb && a.ints.size() != b.ints.size() && a.ints.size() != 1 &&
        b.ints.size() != 1) {
      throw RuleError("elementwise arithmetic on lists of different lengths: " +
                          ShapeToString(a.ints) + " vs " +
                          ShapeToString(b.ints),
                      col);
    }
    // A list of length 1 against an empty one gives an empty list.
    size_t n = la && lb ? (a.ints.size() == 1 ? b.ints.size() : a.ints.size())
               : la     ? a.ints.size()
                        : b.ints.size();
    sym::Shape out;
    out.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      RValue x = RValue::Int(la ? a.ints[a.ints.size() == 1 ? 0 : i]
                                : AsInt(a, col, "arithmetic"));
      RValue y = RValue::Int(lb ? b.ints[b.ints.size() == 1 ? 0 : i]
                                : AsInt(b, col, "arithmetic"));
      out.push_back(Arith(op, x, y, col).i);
    }
    return RValue::IntList(std::move(out));
  }
  if (a.kind == RValue::Kind::kFloat || b.kind == RValue::Kind::kFloat) {
    auto as_double = [&](const RValue& v) {
      if (v.kind == RValue::Kind::kFloat) return v.f;
      auto c = AsInt(v, col, "arithmetic").AsConstant();
      if (!c) throw RuleError("float arithmetic with a symbolic int", col);
      return static_cast<double>(*c);
    };
    double x = as_double(a), y = as_double(b);
    switch (op) {
      case Op::kAdd:
        return RValue::Float(x + y);
      case Op::kSub:
        return RValue::Float(x - y);
      case Op::kMul:
        return RValue::Float(x * y);
      default:
        throw RuleError("unsupported float operation", col);
    }
  }
  sym::Expr x = AsInt(a, col, "arithmetic"), y = AsInt(b, col, "arithmetic");
  try {
    switch (op) {
      case Op::kAdd:
        return RValue::Int(x + y);
      case Op::kSub:
        return RValue::Int(x - y);
      case Op::kMul:
        return RValue::Int(x * y);
      case Op::kPow: {
        auto e = y.AsConstant();
        if (!e || *e < 0)
          throw RuleError("'^' needs a non-negative constant exponent", col);
        return RValue::Int(sym::Pow(x, *e));
      }
      default:
        break;
    }
  } catch (const sym::Error& e) {
    throw RuleError(e.what(), col);
  }
  throw RuleError("bad arithmetic", col);
}

RValue Evaluator::EvalCall(const AstNode& n) const {
  auto elementwise = [&](auto fn) -> RValue {
    RValue ta, tb;
    const RValue& a = EvalRef(n.kids[0], ta);
    const RValue& b = EvalRef(n.kids[1], tb);
    const bool la = a.kind == RValue::Kind::kIntList,
               lb = b.kind == RValue::Kind::kIntList;
    try {
      if (!la && !lb)
        return RValue::Int(fn(AsInt(a, n.col, n.sval.c_str()),
                              AsInt(b, n.col, n.sval.c_str())));
      if (la && lb && a.ints.size() != b.ints.size() && a.ints.size() != 1 &&
          b.ints.size() != 1)
        throw RuleError(n.sval + "() on lists of different lengths: " +
                            ShapeToString(a.ints) + " vs " +
                            ShapeToString(b.ints),
                        n.col);
      size_t len = std::max(la ? a.ints.size() : 0, lb ? b.ints.size() : 0);
      sym::Shape out;
      out.reserve(len);
      for (size_t i = 0; i < len; ++i) {
        out.push_back(fn(la ? a.ints[a.ints.size() == 1 ? 0 : i]
                            : AsInt(a, n.col, n.sval.c_str()),
                         lb ? b.ints[b.ints.size() == 1 ? 0 : i]
                            : AsInt(b, n.col, n.sval.c_str())));
      }
      return RValue::IntList(std::move(out));
    } catch (const sym::Error& e) {
      throw RuleError(n.sval + "(): " + e.what(), n.col);
    }
  };
  auto list_arg = [&](RValue& tmp) -> const sym::Shape& {
    const RValue& v = EvalRef(n.kids[0], tmp);
    if (v.kind == RValue::Kind::kIntList) return v.ints;
    if (v.kind == RValue::Kind::kTensor) return v.t.shape;
    throw RuleError(n.sval + "() needs a list, got " + KindName(v.kind), n.col);
  };
  auto tensor_arg = [&](RValue& tmp) -> const TensorType& {
    const RValue& v = EvalRef(n.kids[0], tmp);
    if (v.kind != RValue::Kind::kTensor)
      throw RuleError(n.sval + "() needs a tensor, got " + KindName(v.kind),
                      n.col);
    return v.t;
  };
  switch (n.fn) {
    case Fn::kFloorDiv:
      return elementwise([](const sym::Expr& a, const sym::Expr& b) {
        return sym::FloorDiv(a, b);
      });
    case Fn::kCeilDiv:
      return elementwise([](const sym::Expr& a, const sym::Expr& b) {
        return sym::CeilDiv(a, b);
      });
    case Fn::kMod:
      return elementwise([](const sym::Expr& a, const sym::Expr& b) {
        return sym::Mod(a, b);
      });
    case Fn::kMin:
      return elementwise([](const sym::Expr& a, const sym::Expr& b) {
        return sym::Min(a, b);
      });
    case Fn::kMax:
      return elementwise([](const sym::Expr& a, const sym::Expr& b) {
        return sym::Max(a, b);
      });
    case Fn::kExactDiv:
      return elementwise([&](const sym::Expr& a, const sym::Expr& b) {
        sym::Expr m = sym::Mod(a, b);
        sym::Truth t = ctx_.ProveEq(m, 0);
        if (t == sym::Truth::kFalse)
          throw RuleError("exact_div(" + a.ToString() + ", " + b.ToString() +
                              "): not divisible",
                          n.col);
        if (t == sym::Truth::kUnknown && assumptions_)
          assumptions_->push_back(a.ToString() + " divisible by " +
                                  b.ToString());
        return sym::FloorDiv(a, b);
      });
    case Fn::kProd:
    case Fn::kSum: {
      RValue tmp;
      const auto& l = list_arg(tmp);
      sym::Expr acc(n.fn == Fn::kProd ? 1 : 0);
      try {
        for (const auto& e : l) acc = n.fn == Fn::kProd ? acc * e : acc + e;
      } catch (const sym::Error& e) {
        throw RuleError(e.what(), n.col);
      }
      return RValue::Int(acc);
    }
    case Fn::kLen: {
      RValue tmp;
      const RValue& v = EvalRef(n.kids[0], tmp);
      if (v.kind == RValue::Kind::kTensorList)
        return RValue::Int(static_cast<int64_t>(v.tensors.size()));
      if (v.kind == RValue::Kind::kList)
        return RValue::Int(static_cast<int64_t>(v.items.size()));
      return RValue::Int(static_cast<int64_t>(list_arg(tmp).size()));
    }
    case Fn::kOnes: {
      auto c = AsInt(Eval(n.kids[0]), n.col, "ones()").AsConstant();
      if (!c || *c < 0)
        throw RuleError("ones() needs a non-negative constant", n.col);
      if (*c > kMaxOnes)
        throw RuleError("ones(" + std::to_string(*c) + ") is longer than " +
                            std::to_string(kMaxOnes) + ", past any rank",
                        n.col);
      return RValue::IntList(sym::Shape(*c, sym::Expr(1)));
    }
    case Fn::kBroadcast: {
      RValue ta, tb;
      const RValue& a = EvalRef(n.kids[0], ta);
      const RValue& b = EvalRef(n.kids[1], tb);
      auto as_list = [&](const RValue& v) -> const sym::Shape& {
        if (v.kind == RValue::Kind::kIntList) return v.ints;
        if (v.kind == RValue::Kind::kTensor) return v.t.shape;
        throw RuleError("broadcast() needs shapes", n.col);
      };
      const auto& x = as_list(a);
      const auto& y = as_list(b);
      size_t r = std::max(x.size(), y.size());
      sym::Shape out(r);
      for (size_t i = 0; i < r; ++i) {
        bool hx = i < x.size(), hy = i < y.size();
        const sym::Expr dx = hx ? x[x.size() - 1 - i] : sym::Expr(1);
        const sym::Expr dy = hy ? y[y.size() - 1 - i] : sym::Expr(1);
        sym::Expr d;
        if (dx == dy || dy == sym::Expr(1))
          d = dx;
        else if (dx == sym::Expr(1))
          d = dy;
        else {
          sym::Truth t = ctx_.ProveEq(dx, dy);
          if (t == sym::Truth::kFalse)
            throw RuleError("shapes " + ShapeToString(x) + " and " +
                                ShapeToString(y) + " do not broadcast",
                            n.col);
          // NB: unknown equality is trusted, as TVM does, and recorded.
          d = dx;
          if (assumptions_) {
            assumptions_->push_back("broadcast dims " + dx.ToString() +
                                    " == " + dy.ToString() + " (shapes " +
                                    ShapeToString(x) + " and " +
                                    ShapeToString(y) + ")");
          }
        }
        out[r - 1 - i] = d;
      }
      return RValue::IntList(std::move(out));
    }
    case Fn::kShape: {
      RValue tmp;
      return RValue::IntList(tensor_arg(tmp).shape);
    }
    case Fn::kRank: {
      RValue tmp;
      const RValue& v = EvalRef(n.kids[0], tmp);
      if (v.kind == RValue::Kind::kIntList)
        return RValue::Int(static_cast<int64_t>(v.ints.size()));
      return RValue::Int(static_cast<int64_t>(tensor_arg(tmp).shape.size()));
    }
    case Fn::kNumel: {
      RValue tmp;
      const auto& t = tensor_arg(tmp);
      sym::Expr acc(1);
      try {
        for (const auto& e : t.shape) acc = acc * e;
      } catch (const sym::Error& e) {
        throw RuleError(e.what(), n.col);
      }
      return RValue::Int(acc);
    }
    case Fn::kHas: {
      RValue tmp;
      const RValue& v = EvalRef(n.kids[0], tmp);
      return RValue::Bool(v.kind != RValue::Kind::kNone &&
                          v.kind != RValue::Kind::kUnknown);
    }
    case Fn::kIsList: {
      // True for a list of integers (or of values), false for a tensor or
      // anything else.
      RValue tmp;
      const RValue& v = EvalRef(n.kids[0], tmp);
      return RValue::Bool(v.kind == RValue::Kind::kIntList ||
                          v.kind == RValue::Kind::kList);
    }
    case Fn::kIf: {
      sym::Truth t = EvalTruth(n.kids[0]);
      if (t == sym::Truth::kUnknown)
        throw RuleError(
            "if(): the condition cannot be decided; use cases and require",
            n.col);
      return Eval(t == sym::Truth::kTrue ? n.kids[1] : n.kids[2]);
    }
    case Fn::kDevice:
      return RValue::Str(std::string(settings_.device));
    case Fn::kAttentionBackend:
      if (read_attention_backend_ != nullptr) *read_attention_backend_ = true;
      return RValue::Str(std::string(settings_.attention_backend));
    case Fn::kTorchVersion:
      return RValue::Str(std::string(settings_.torch_version));
    case Fn::kDType: {
      // A tensor's dtype, or a ScalarType argument's, as a name ("float32");
      // None: "none".
      RValue tmp;
      const RValue& v = EvalRef(n.kids[0], tmp);
      if (v.kind == RValue::Kind::kTensor)
        return RValue::Str(std::string(DTypeName(v.t.dtype)));
      if (v.kind == RValue::Kind::kNone || v.kind == RValue::Kind::kUnknown)
        return RValue::Str("none");
      if (v.kind == RValue::Kind::kInt) {
        auto c = v.i.AsConstant();
        if (c) {
          DType d = DTypeFromScalarTypeCode(*c);
          if (d != DType::kUnknown)
            return RValue::Str(std::string(DTypeName(d)));
        }
      }
      if (v.kind == RValue::Kind::kString) {
        Result<DType> d = ParseDType(v.s);
        if (d.ok()) return RValue::Str(std::string(DTypeName(*d)));
      }
      throw RuleError(
          std::string("dtype() needs a tensor or a ScalarType, got ") +
              KindName(v.kind),
          n.col);
    }
    case Fn::kItemSize: {
      // Bytes per element of a tensor's dtype.
      RValue tmp;
      const RValue& v = EvalRef(n.kids[0], tmp);
      if (v.kind != RValue::Kind::kTensor) {
        throw RuleError(
            std::string("itemsize() needs a tensor, got ") + KindName(v.kind),
            n.col);
      }
      return RValue::Int(sym::Expr(ElementSize(
          v.t.dtype == DType::kUnknown ? DType::kFloat32 : v.t.dtype)));
    }
    case Fn::kEinsumSizes: {
      RValue te, tl;
      const RValue& eq = EvalRef(n.kids[0], te);
      const RValue& l = EvalRef(n.kids[1], tl);
      if (eq.kind != RValue::Kind::kString)
        throw RuleError("einsum_sizes() needs an equation string", n.col);
      std::vector<sym::Shape> shapes;
      if (l.kind == RValue::Kind::kTensorList) {
        for (const auto& t : l.tensors) shapes.push_back(t.shape);
      } else if (l.kind == RValue::Kind::kList) {
        for (const auto& item : l.items) {
          if (item.kind != RValue::Kind::kTensor)
            throw RuleError("einsum_sizes() needs a list of tensors", n.col);
          shapes.push_back(item.t.shape);
        }
      } else {
        throw RuleError(
            std::string("einsum_sizes() needs a list of tensors, got ") +
                KindName(l.kind),
            n.col);
      }
      Result<EinsumInfo> info = ParseEinsum(eq.s, shapes, ctx_);
      if (!info.ok()) throw RuleError(info.status().message(), n.col);
      return RValue::IntList(std::move(info->sizes));
    }
    case Fn::kInd:
      try {
        return RValue::Int(Indicator(n.kids[0]));
      } catch (const sym::Error& e) {
        throw RuleError(std::string("ind(): ") + e.what(), n.col);
      }
    case Fn::kNormDim: {
      auto d = AsInt(Eval(n.kids[0]), n.col, "normdim()").AsConstant();
      auto r = AsInt(Eval(n.kids[1]), n.col, "normdim()").AsConstant();
      if (!d || !r) throw RuleError("normdim() needs constants", n.col);
      int64_t rank = std::max<int64_t>(*r, 1);
      if (*d < -rank || *d >= rank)
        throw RuleError("dim " + std::to_string(*d) +
                            " out of range for a tensor of rank " +
                            std::to_string(*r),
                        n.col);
      return RValue::Int(*d < 0 ? *d + rank : *d);
    }
  }
  throw RuleError("bad call", n.col);
}

}  // namespace torchcost::rules
