// Emitting values, nodes and builtin calls into a compiled TorchScript
// program, each overload picked as TorchScript's compiler picks it
// (ts_emit.h).
#include "import/ts_emit.h"

#include <utility>
#include <variant>
#include <vector>

#include "import/ts_schema.h"
#include "import/ts_types.h"

namespace torchcost::import::ts {
namespace {

// NB: TorchScript's compiler replaces aliases by their canonical ops (its
// NormalizeOps pass: swapaxes by transpose, rsub of two tensors by sub with
// the arguments swapped, ...); those calls are declined.
bool RenamedByLibTorch(const std::string& op) {
  static const char* const kAliases[] = {
      "absolute",      "clip",        "det",        "matrix_power",
      "matrix_exp",    "ger",         "arccos",     "arcsin",
      "arctan",        "arctan2",     "arccosh",    "arcsinh",
      "arctanh",       "fix",         "negative",   "subtract",
      "greater_equal", "greater",     "less_equal", "less",
      "not_equal",     "divide",      "multiply",   "linalg_matmul",
      "inverse",       "true_divide", "concat",     "concatenate",
      "row_stack",     "swapdims",    "swapaxes",   "moveaxis",
      "orgqr",         "adjoint",     "degrees",    "radians",
      "rsub"};
  std::string bare = op.substr(op.find("::") + 2);
  if (bare.rfind("special_", 0) == 0) return true;
  if (!bare.empty() && bare.back() == '_') bare.pop_back();
  for (const char* a : kAliases) {
    // NB: only rsub.Tensor is rewritten; rsub.Scalar is kept below.
    if (bare == a) return op != "aten::rsub";
  }
  return false;
}

// True if `type` holds a type variable ("t", "List[t]", "Optional[t1]") or
// Any.
bool IsGenericType(const std::string& type) {
  std::string t = type, inner;
  while (InnerType(t, "Optional", &inner) || InnerType(t, "List", &inner))
    t = inner;
  return t == "t" || t == "t1" || t == "t2" || t == "tVal" || t == "Any" ||
         t.rfind("Dict", 0) == 0;
}

bool Generic(const Schema& s) {
  for (const SchemaArg& a : s.args) {
    if (IsGenericType(a.type)) return true;
  }
  for (const std::string& r : s.returns) {
    if (IsGenericType(r)) return true;
  }
  return false;
}

}  // namespace

int Emitter::AddVal(Val v) {
  prog_->vals.push_back(std::move(v));
  return static_cast<int>(prog_->vals.size()) - 1;
}

int Emitter::Const(ir::Constant c, const std::string& type) {
  Val v;
  v.src = Val::Src::kConst;
  v.type = type;
  v.has_constant = true;
  v.constant = std::move(c);
  v.group = group();
  return AddVal(std::move(v));
}

int Emitter::AddNode(Nd n, const std::vector<std::string>& out_types) {
  const int index = static_cast<int>(prog_->nodes.size());
  for (const std::string& t : out_types) {
    Val v;
    v.type = t;
    v.producer = index;
    n.outputs.push_back(AddVal(std::move(v)));
  }
  n.calls = *calls_;
  prog_->nodes.push_back(std::move(n));
  return index;
}

Result<int> Emitter::Literal(const Expr& e, const std::string& hint) {
  switch (e.kind) {
    case Expr::Kind::kNone:
      return Const(std::monostate(), "NoneType");
    case Expr::Kind::kBool:
      return Const(e.b, "bool");
    case Expr::Kind::kInt:
      return Const(e.i, "int");
    case Expr::Kind::kFloat:
      return Const(e.f, "float");
    case Expr::Kind::kString:
      return Const(e.text, "str");
    case Expr::Kind::kList: {
      std::string t = hint, inner, elem;
      if (InnerType(t, "Optional", &inner)) t = inner;
      InnerType(t, "List", &elem);
      if (elem == "int") {
        std::vector<int64_t> xs;
        for (const ExprPtr& item : e.items) {
          if (item->kind != Expr::Kind::kInt)
            return Decline("a default list of non-ints");
          xs.push_back(item->i);
        }
        return Const(std::move(xs), "List[int]");
      }
      if (elem == "float") {
        std::vector<double> xs;
        for (const ExprPtr& item : e.items) {
          if (item->kind != Expr::Kind::kFloat &&
              item->kind != Expr::Kind::kInt)
            return Decline("a default list");
          xs.push_back(item->kind == Expr::Kind::kFloat
                           ? item->f
                           : static_cast<double>(item->i));
        }
        return Const(std::move(xs), "List[float]");
      }
      if (elem == "bool") {
        std::vector<bool> xs;
        for (const ExprPtr& item : e.items) {
          if (item->kind != Expr::Kind::kBool)
            return Decline("a default list of non-bools");
          xs.push_back(item->b);
        }
        return Const(std::move(xs), "List[bool]");
      }
      return Decline("a default list of " + hint);
    }
    default:
      return Decline("an unsupported default");
  }
}

Result<int> Emitter::Builtin(
    const std::string& op, const std::vector<int>& args,
    const std::vector<std::pair<std::string, int>>& kwargs) {
  if (op == "prim::NumToTensor") {
    if (args.size() != 1 || !kwargs.empty()) return Decline("NumToTensor");
    const std::string& t = prog_->vals[args[0]].type;
    if (t != "int" && t != "float" && t != "number")
      return Decline("NumToTensor of " + t);
    Nd node;
    node.op = op;
    node.overload = "Scalar";
    node.inputs = args;
    node.input_names = {"a"};
    const int index = AddNode(std::move(node), {"Tensor"});
    return prog_->nodes[index].outputs[0];
  }
  if (RenamedByLibTorch(op)) return Decline(op + ", which LibTorch renames");
  const std::vector<Schema>& schemas = SchemasFor(op);
  if (schemas.empty()) return Decline("no schema for " + op);
  for (bool conversions : {false, true}) {
    // NB: one schema is matched with conversions at once.
    if (schemas.size() == 1 && !conversions) continue;
    for (const Schema& s : schemas) {
      TORCHCOST_ASSIGN_OR_RETURN(std::optional<int> out,
                                 TryMatch(s, args, kwargs, conversions));
      if (out) return *out;
    }
  }
  std::string types;
  for (int a : args) types += (types.empty() ? "" : ", ") + prog_->vals[a].type;
  return Decline("no overload of " + op + " takes (" + types + ")");
}

Result<std::optional<int>> Emitter::TryMatch(
    const Schema& s, const std::vector<int>& args,
    const std::vector<std::pair<std::string, int>>& kwargs, bool conversions) {
  struct Bound {
    int value = -1;                  // An existing value, or
    const SchemaArg* def = nullptr;  // a default to insert,
    // or a scalar repeated into a list of this size,
    int repeat = 0;
    std::string convert;  // or a value converted by this op.
  };
  std::vector<Bound> bound;
  size_t used = 0;
  std::vector<bool> kw_used(kwargs.size(), false);
  if (Generic(s)) {
    // NB: overloads over type variables (aten::add.t for lists) are not
    // matched here; one that could take these arguments would be LibTorch's
    // choice, so the call is declined.
    bool could = args.size() + kwargs.size() <= s.args.size();
    for (size_t i = 0; could && i < args.size(); ++i) {
      const std::string& want = s.args[i].type;
      could = IsGenericType(want)
                  ? (want.find("List[") != 0 ||
                     prog_->vals[args[i]].type.find("List[") == 0)
                  : SubtypeOf(prog_->vals[args[i]].type, want);
    }
    if (could)
      return Decline("a call that a generic overload " + s.name + "." +
                     s.overload + " may take");
    return std::optional<int>();
  }
  for (const SchemaArg& arg : s.args) {
    const std::string& type = arg.type;
    int v = -1;
    if (!arg.kwarg_only && used < args.size()) {
      v = args[used++];
    } else {
      for (size_t k = 0; k < kwargs.size(); ++k) {
        if (kwargs[k].first == arg.name) {
          v = kwargs[k].second;
          kw_used[k] = true;
        }
      }
    }
    Bound b;
    if (v < 0) {
      if (!arg.has_default) return std::optional<int>();
      b.def = &arg;
      bound.push_back(b);
      continue;
    }
    const std::string& actual = prog_->vals[v].type;
    b.value = v;
    std::string elem;
    if (arg.n > 0 && InnerType(type, "List", &elem) &&
        (elem == "int" || elem == "float") && actual == elem) {
      b.repeat = arg.n;
    } else if (!SubtypeOf(actual, type)) {
      std::string target = type, inner;
      if (InnerType(target, "Optional", &inner) && actual != "NoneType")
        target = inner;
      if (!conversions) return std::optional<int>();
      if (actual == "Tensor" &&
          (target == "float" || target == "int" || target == "number")) {
        b.convert = target == "float" ? "aten::FloatImplicit"
                    : target == "int" ? "aten::IntImplicit"
                                      : "aten::ScalarImplicit";
      } else if ((actual == "number" || actual == "bool") &&
                 (target == "float" || target == "int")) {
        b.convert = target == "float" ? "aten::Float" : "aten::Int";
      } else if (actual == "bool" && target == "number") {
        b.convert = "aten::Int";
      } else {
        return std::optional<int>();
      }
    }
    bound.push_back(b);
  }
  if (used < args.size()) return std::optional<int>();
  for (bool u : kw_used) {
    if (!u) return std::optional<int>();
  }
  if (s.name == "aten::rsub" && s.overload == "Tensor")
    return Decline("aten::rsub.Tensor, which LibTorch rewrites as sub");
  // Matched: emit conversions, repeated lists and defaults, then the node.
  Nd node;
  node.op = s.name;
  node.overload = s.overload;
  for (size_t i = 0; i < bound.size(); ++i) {
    const Bound& b = bound[i];
    int v = b.value;
    if (b.def != nullptr) {
      TORCHCOST_ASSIGN_OR_RETURN(ExprPtr lit, ParseExpr(b.def->default_text));
      TORCHCOST_ASSIGN_OR_RETURN(v, Literal(*lit, b.def->type));
    } else if (b.repeat > 0) {
      Nd list;
      list.op = "prim::ListConstruct";
      list.inputs.assign(b.repeat, b.value);
      const int index =
          AddNode(std::move(list), {"List[" + prog_->vals[b.value].type + "]"});
      v = prog_->nodes[index].outputs[0];
    } else if (!b.convert.empty()) {
      TORCHCOST_ASSIGN_OR_RETURN(v, Builtin(b.convert, {b.value}, {}));
    }
    node.inputs.push_back(v);
    node.input_names.push_back(s.args[i].name);
  }
  if (s.returns.empty()) return Decline(s.name + " returns nothing");
  const int index = AddNode(std::move(node), s.returns);
  if (s.returns.size() == 1)
    return std::optional<int>(prog_->nodes[index].outputs[0]);
  // NB: TorchScript packs several returns into a tuple
  // (prim::TupleConstruct); its cleanup passes remove the tuple where the
  // same method unpacks it at once. Only that use is read here (Unpack).
  Val tuple;
  tuple.src = Val::Src::kPending;
  std::string types;
  for (const std::string& r : s.returns)
    types += (types.empty() ? "" : ", ") + r;
  tuple.type = "Tuple[" + types + "]";
  tuple.parts = prog_->nodes[index].outputs;
  return std::optional<int>(AddVal(std::move(tuple)));
}

}  // namespace torchcost::import::ts
