#include "import/ts_compile.h"

#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/eval_mode_gaps.h"
#include "import/module_attrs.h"
#include "import/module_scopes.h"
#include "import/ts_convert.h"
#include "import/ts_emit.h"
#include "import/ts_module_tree.h"
#include "import/ts_passes.h"
#include "import/ts_pickle.h"
#include "import/ts_program.h"
#include "import/ts_source.h"
#include "import/ts_types.h"
#include "import/value_names.h"

namespace torchcost::import {
namespace {

using ts::ConstantElementSize;
using ts::Decline;
using ts::Expr;
using ts::ExprPtr;
using ts::InnerType;
using ts::Module;
using ts::Nd;
using ts::Program;
using ts::ShortClassName;
using ts::SubtypeOf;
using ts::Val;

// One inlined call: the attribute its module was read from and the module's
// class.
struct Call {
  std::string instance;
  std::string cls;
};

class Compiler {
 public:
  Compiler(const ZipArchive& archive, std::string path)
      : archive_(archive), path_(std::move(path)), tree_(archive) {}

  Result<ir::Graph> Run() {
    const std::string& root = archive_.root();
    TORCHCOST_ASSIGN_OR_RETURN(std::string data,
                               archive_.Read(root + "data.pkl"));
    TORCHCOST_ASSIGN_OR_RETURN(data_, Unpickle(data));
    if (archive_.Contains(root + "constants.pkl")) {
      TORCHCOST_ASSIGN_OR_RETURN(std::string consts,
                                 archive_.Read(root + "constants.pkl"));
      TORCHCOST_ASSIGN_OR_RETURN(constants_, Unpickle(consts));
      if (constants_->kind != PickleValue::Kind::kTuple)
        return Decline("constants.pkl is not a tuple");
    }
    const std::string extra = root + "extra/" + kModuleAttrsFile;
    if (archive_.Contains(extra)) {
      TORCHCOST_ASSIGN_OR_RETURN(std::string text, archive_.Read(extra));
      if (!text.empty()) {
        TORCHCOST_ASSIGN_OR_RETURN(
            recorded_, ParseModuleAttrs(text, path_ + ": " + kModuleAttrsFile));
      }
    }
    if (data_->kind != PickleValue::Kind::kObject)
      return Decline("data.pkl does not hold a module");
    TORCHCOST_ASSIGN_OR_RETURN(Module top, tree_.ModuleOf(*data_));
    const ts::Method* forward = top.cls->FindMethod("forward");
    if (forward == nullptr)
      return Status::InvalidArgument(
          path_ + ": TorchScript module has no forward method");
    TORCHCOST_RETURN_IF_ERROR(
        tree_.Build(top, &graph_, &scope_index_, &tensor_slot_));
    // The top-level forward: `self` and the inputs.
    Val self;
    self.src = Val::Src::kModule;
    self.type = top.cls->name;
    self.object = top.object;
    const int self_id = emit_.AddVal(std::move(self));
    std::vector<int> args;
    for (size_t i = 1; i < forward->params.size(); ++i) {
      const auto& [name, type] = forward->params[i];
      if (type != "Tensor")
        return Decline("forward takes a " + type + " input");
      Val in;
      in.src = Val::Src::kInput;
      in.type = type;
      in.name = name;
      in.input_position = static_cast<int>(i) - 1;
      args.push_back(emit_.AddVal(std::move(in)));
      inputs_.push_back(args.back());
    }
    if (forward->params.empty() || forward->params[0].first != "self")
      return Decline("forward without self");
    TORCHCOST_ASSIGN_OR_RETURN(int result, Inline(*forward, self_id, args, {}));
    prog_.output = result;
    TORCHCOST_RETURN_IF_ERROR(Peephole(&prog_));
    TORCHCOST_RETURN_IF_ERROR(FoldConstants(prog_));
    TORCHCOST_RETURN_IF_ERROR(EliminateDeadCode(&prog_));
    TORCHCOST_RETURN_IF_ERROR(RestoreAttentionDropout());
    NoteStochasticDepth(Facts(), &graph_);
    return Convert();
  }

 private:
  // --- Compiling a method body, inlined at its call site
  // -------------------------

  // Compiles `method` of the module value `self` with `args`; returns the value
  // it returns.
  Result<int> Inline(const ts::Method& method, int self,
                     const std::vector<int>& args, std::optional<Call> call) {
    if (method.params.size() != args.size() + 1)
      return Decline("method " + method.name + " called with other arguments");
    if (call) {
      if (++depth_ > 64) return Decline("calls nested too deeply");
      calls_.push_back(static_cast<int>(call_info_.size()));
      call_info_.push_back(*call);
    }
    std::unordered_map<std::string, int> env;
    env[method.params[0].first] = self;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& type = method.params[i + 1].second;
      if (!SubtypeOf(prog_.vals[args[i]].type, type)) {
        return Decline("method " + method.name + " takes " + type + ", given " +
                       prog_.vals[args[i]].type);
      }
      env[method.params[i + 1].first] = args[i];
    }
    std::optional<int> result;
    for (const ts::Stmt& s : method.body) {
      if (result) return Decline("statements after return");
      inlined_result_ = -1;
      Result<int> v = Emit(*s.value, env, "");
      if (!v.ok()) {
        if (v.status().code() == Status::Code::kUnimplemented) {
          return Decline(v.status().message() + " (in " + method.name +
                         ", line " + std::to_string(s.line) + ")");
        }
        return v.status();
      }
      switch (s.kind) {
        case ts::Stmt::Kind::kReturn:
          result = *v;
          break;
        case ts::Stmt::Kind::kExpr:
          break;
        case ts::Stmt::Kind::kAssign:
          if (!s.unpack) {
            Assign(s.targets[0], *v, inlined_result_ == *v);
            env[s.targets[0]] = *v;
          } else {
            TORCHCOST_ASSIGN_OR_RETURN(std::vector<int> parts,
                                       Unpack(*v, s.targets.size()));
            for (size_t k = 0; k < parts.size(); ++k) {
              Assign(s.targets[k], parts[k], false);
              env[s.targets[k]] = parts[k];
            }
          }
          break;
      }
    }
    if (!result) return Decline("method " + method.name + " does not return");
    if (prog_.vals[*result].src == Val::Src::kPending)
      return Decline("a method returning an op's several results");
    if (call) {
      calls_.pop_back();
      --depth_;
    }
    return *result;
  }

  // NB: a source name that is "meaningful" to TorchScript (not starting with
  // '_') names a value that has none; the result of an inlined call takes its
  // caller's name (the inliner copies it over the callee's).
  void Assign(const std::string& name, int v, bool call_result) {
    if (name.empty() || name[0] == '_') return;
    Val& val = prog_.vals[v];
    if (val.src == Val::Src::kModule || val.src == Val::Src::kTensorAttr)
      return;
    if (call_result || val.name.empty()) val.name = name;
  }

  Result<std::vector<int>> Unpack(int v, size_t n) {
    if (prog_.vals[v].src == Val::Src::kPending) {
      if (prog_.vals[v].parts.size() != n)
        return Decline("unpacking the results of an op into another count");
      return prog_.vals[v].parts;
    }
    const std::string& type = prog_.vals[v].type;
    std::string elem;
    Nd node;
    std::vector<std::string> types;
    if (InnerType(type, "Tuple", &elem)) {
      node.op = "prim::TupleUnpack";
      node.input_names = {"tup"};
      types = SplitTypes(elem);
    } else if (InnerType(type, "List", &elem)) {
      node.op = "prim::ListUnpack";
      types.assign(n, elem);
    } else {
      return Decline("unpacking a " + type);
    }
    if (types.size() != n)
      return Decline("unpacking " + std::to_string(types.size()) +
                     " values into " + std::to_string(n));
    if (prog_.vals[v].src == Val::Src::kConst)
      return Decline("unpacking a constant");
    node.inputs = {v};
    const int index = emit_.AddNode(std::move(node), types);
    return prog_.nodes[index].outputs;
  }

  static std::vector<std::string> SplitTypes(const std::string& text) {
    std::vector<std::string> out;
    int depth = 0;
    std::string cur;
    for (char c : text) {
      if (c == '[') ++depth;
      if (c == ']') --depth;
      if (c == ',' && depth == 0) {
        out.push_back(cur);
        cur.clear();
        continue;
      }
      if (c == ' ' && cur.empty()) continue;
      cur += c;
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  }

  // Reads attribute `name` of module value `m`: a submodule or a parameter or
  // buffer.
  Result<int> GetAttr(int m, const std::string& name) {
    const Val& mv = prog_.vals[m];
    if (mv.src != Val::Src::kModule)
      return Decline("attribute '" + name + "' of a non-module");
    const Module* mod = tree_.Find(mv.path);
    if (mod == nullptr)
      return Decline("module '" + mv.path + "' is not in the module tree");
    TORCHCOST_ASSIGN_OR_RETURN(const PickleValue* v,
                               tree_.Attribute(*mod, name));
    Val out;
    out.path = JoinModulePath(mv.path, name);
    out.attr_name = name;
    out.object = v;
    if (v->kind == PickleValue::Kind::kObject) {
      out.src = Val::Src::kModule;
      out.type = v->s;
    } else if (v->kind == PickleValue::Kind::kTensor) {
      out.src = Val::Src::kTensorAttr;
      out.type = "Tensor";
    } else {
      return Decline("module attribute '" + out.path +
                     "' is not a module or tensor");
    }
    return emit_.AddVal(std::move(out));
  }

  Result<int> Emit(const Expr& e,
                   const std::unordered_map<std::string, int>& env,
                   const std::string& hint) {
    switch (e.kind) {
      case Expr::Kind::kName: {
        auto it = env.find(e.text);
        if (it == env.end()) return Decline("unknown name '" + e.text + "'");
        return it->second;
      }
      case Expr::Kind::kNone:
      case Expr::Kind::kBool:
      case Expr::Kind::kInt:
      case Expr::Kind::kFloat:
      case Expr::Kind::kString:
        return emit_.Literal(e, hint);
      case Expr::Kind::kList: {
        std::vector<int> items;
        for (const ExprPtr& item : e.items) {
          TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*item, env, ""));
          items.push_back(v);
        }
        std::string elem;
        if (InnerType(hint, "List", &elem)) {
          // NB: a list literal under annotate() takes the annotated element
          // type, if every item is of it.
          for (int v : items) {
            if (!SubtypeOf(prog_.vals[v].type, elem))
              return Decline("a list annotated as " + hint);
          }
        } else if (items.empty()) {
          elem = "Tensor";
        } else {
          elem = prog_.vals[items[0]].type;
          for (int v : items) {
            if (prog_.vals[v].type != elem)
              return Decline("a list of mixed types");
          }
        }
        Nd node;
        node.op = "prim::ListConstruct";
        node.inputs = items;
        const int index =
            emit_.AddNode(std::move(node), {"List[" + elem + "]"});
        return prog_.nodes[index].outputs[0];
      }
      case Expr::Kind::kTuple: {
        std::vector<int> items;
        std::string types;
        for (const ExprPtr& item : e.items) {
          TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*item, env, ""));
          if (prog_.vals[v].src == Val::Src::kModule ||
              prog_.vals[v].src == Val::Src::kPending) {
            return Decline(
                "a tuple holding a module or an op's several results");
          }
          items.push_back(v);
          types += (types.empty() ? "" : ", ") + prog_.vals[v].type;
        }
        Nd node;
        node.op = "prim::TupleConstruct";
        node.inputs = items;
        const int index =
            emit_.AddNode(std::move(node), {"Tuple[" + types + "]"});
        return prog_.nodes[index].outputs[0];
      }
      case Expr::Kind::kAttr: {
        if (e.base->kind == Expr::Kind::kName && e.base->text == "CONSTANTS")
          return TensorConstant(e.text);
        TORCHCOST_ASSIGN_OR_RETURN(int base, Emit(*e.base, env, ""));
        return GetAttr(base, e.text);
      }
      case Expr::Kind::kCall:
        return EmitCall(e, env);
      case Expr::Kind::kSubscript:
        return Decline("subscripts");
    }
    return Decline("an unsupported expression");
  }

  // CONSTANTS.cN: a tensor constant from constants.pkl.
  Result<int> TensorConstant(const std::string& name) {
    if (name.size() < 2 || name[0] != 'c' || !constants_)
      return Decline("unknown constant " + name);
    const size_t index = std::strtoul(name.c_str() + 1, nullptr, 10);
    if (std::to_string(index) != name.substr(1) ||
        index >= constants_->items.size())
      return Decline("unknown constant " + name);
    const PickleValue& c = *constants_->items[index];
    if (c.kind != PickleValue::Kind::kTensor)
      return Decline("constant " + name + " is not a tensor");
    const PickledTensor& t = c.tensor;
    Val v;
    v.src = Val::Src::kConst;
    v.type = "Tensor";
    v.is_tensor_constant = true;
    v.tensor_shape = t.sizes;
    v.tensor_scalar_type = t.scalar_type;
    v.group = emit_.group();
    v.storage = t.storage_key + "@" + std::to_string(t.offset);
    TORCHCOST_RETURN_IF_ERROR(tree_.CheckStorage(t, "constants/"));
    if (t.sizes.empty()) {
      // NB: the LibTorch reader keeps a 0-dim constant's value (double for
      // floating types, else int64).
      const int size = ConstantElementSize(t.scalar_type);
      if (size == 0)
        return Decline("a 0-dim constant of scalar type " +
                       std::to_string(t.scalar_type));
      TORCHCOST_ASSIGN_OR_RETURN(
          std::string bytes,
          archive_.Read(archive_.root() + "constants/" + t.storage_key));
      if (t.offset < 0 ||
          static_cast<uint64_t>(t.offset) >= bytes.size() / size) {
        return Status::InvalidArgument("constant " + name +
                                       " lies outside its storage");
      }
      const size_t at = static_cast<size_t>(t.offset) * size;
      const char* p = bytes.data() + at;
      switch (t.scalar_type) {
        case 6: {
          float x;
          std::memcpy(&x, p, 4);
          v.constant = static_cast<double>(x);
          break;
        }
        case 7: {
          double x;
          std::memcpy(&x, p, 8);
          v.constant = x;
          break;
        }
        case 0:
          v.constant = static_cast<int64_t>(static_cast<uint8_t>(*p));
          break;
        case 1:
          v.constant = static_cast<int64_t>(static_cast<int8_t>(*p));
          break;
        case 11:
          v.constant = static_cast<int64_t>(*p != 0);
          break;
        case 2: {
          int16_t x;
          std::memcpy(&x, p, 2);
          v.constant = static_cast<int64_t>(x);
          break;
        }
        case 3: {
          int32_t x;
          std::memcpy(&x, p, 4);
          v.constant = static_cast<int64_t>(x);
          break;
        }
        case 4: {
          int64_t x;
          std::memcpy(&x, p, 8);
          v.constant = x;
          break;
        }
        default:
          return Decline("a 0-dim constant of scalar type " +
                         std::to_string(t.scalar_type));
      }
      v.has_constant = true;
    }
    return emit_.AddVal(std::move(v));
  }

  Result<int> EmitCall(const Expr& e,
                       const std::unordered_map<std::string, int>& env) {
    const std::string callee = e.base->Dotted();
    // A submodule's method: (conv1).forward(x, ).
    if (e.base->kind == Expr::Kind::kAttr &&
        (callee.empty() ||
         (callee.rfind("torch.", 0) != 0 && callee.rfind("ops.", 0) != 0))) {
      TORCHCOST_ASSIGN_OR_RETURN(int m, Emit(*e.base->base, env, ""));
      if (prog_.vals[m].src == Val::Src::kModule) {
        if (!e.kwargs.empty()) return Decline("keyword arguments to a method");
        if (prog_.vals[m].attr_name.empty())
          return Decline("a method called on self");
        std::vector<int> args;
        for (const ExprPtr& a : e.items) {
          TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*a, env, ""));
          args.push_back(v);
        }
        const Module* found = tree_.Find(prog_.vals[m].path);
        if (found == nullptr)
          return Decline("module '" + prog_.vals[m].path +
                         "' is not in the module tree");
        const Module& mod = *found;
        const ts::Method* method = mod.cls->FindMethod(e.base->text);
        if (method == nullptr)
          return Decline("no method " + e.base->text + " in " + mod.cls->name);
        TORCHCOST_ASSIGN_OR_RETURN(
            int result, Inline(*method, m, args,
                               Call{prog_.vals[m].attr_name, mod.cls->name}));
        inlined_result_ = result;
        return result;
      }
      return Decline("a method of a non-module");
    }
    if (callee == "getattr") {
      if (e.items.size() != 2 || e.items[1]->kind != Expr::Kind::kString ||
          !e.kwargs.empty())
        return Decline("getattr");
      TORCHCOST_ASSIGN_OR_RETURN(int base, Emit(*e.items[0], env, ""));
      return GetAttr(base, e.items[1]->text);
    }
    if (callee == "annotate") {
      if (e.items.size() != 2 || !e.kwargs.empty()) return Decline("annotate");
      const std::string type = TypeText(*e.items[0]);
      TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*e.items[1], env, type));
      if (SubtypeOf(prog_.vals[v].type, type)) return v;
      if (prog_.vals[v].type == "Tensor" &&
          (type == "number" || type == "int" || type == "float")) {
        const char* op = type == "number" ? "aten::ScalarImplicit"
                         : type == "int"  ? "aten::IntImplicit"
                                          : "aten::FloatImplicit";
        return emit_.Builtin(op, {v}, {});
      }
      return Decline("annotate(" + type + ", " + prog_.vals[v].type + ")");
    }
    if (callee == "int" || callee == "float" || callee == "bool") {
      if (e.items.size() != 1 || !e.kwargs.empty())
        return Decline(callee + "()");
      TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*e.items[0], env, ""));
      if (prog_.vals[v].type == callee) return v;
      const std::string op = callee == "int"     ? "aten::Int"
                             : callee == "float" ? "aten::Float"
                                                 : "aten::Bool";
      return emit_.Builtin(op, {v}, {});
    }
    if (callee == "torch.device") {
      if (e.items.size() != 1 || e.items[0]->kind != Expr::Kind::kString ||
          !e.kwargs.empty())
        return Decline("torch.device");
      return emit_.Const(e.items[0]->text, "Device");
    }
    std::string op;
    if (callee.rfind("torch.", 0) == 0 &&
        callee.find('.', 6) == std::string::npos) {
      op = "aten::" + callee.substr(6);
    } else if (callee.rfind("ops.aten.", 0) == 0 &&
               callee.find('.', 9) == std::string::npos) {
      op = "aten::" + callee.substr(9);
    } else if (callee == "ops.prim.NumToTensor") {
      op = "prim::NumToTensor";
    } else {
      return Decline("call of '" +
                     (callee.empty() ? std::string("an expression") : callee) +
                     "'");
    }
    std::vector<int> args;
    for (const ExprPtr& a : e.items) {
      TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*a, env, ""));
      args.push_back(v);
    }
    std::vector<std::pair<std::string, int>> kwargs;
    for (const auto& [key, a] : e.kwargs) {
      TORCHCOST_ASSIGN_OR_RETURN(int v, Emit(*a, env, ""));
      kwargs.emplace_back(key, v);
    }
    return emit_.Builtin(op, args, kwargs);
  }

  static std::string TypeText(const Expr& e) {
    if (e.kind == Expr::Kind::kName || e.kind == Expr::Kind::kAttr)
      return e.Dotted();
    if (e.kind == Expr::Kind::kNone) return "NoneType";
    if (e.kind == Expr::Kind::kSubscript && !e.items.empty()) {
      std::string inner;
      const Expr& index = *e.items[0];
      if (index.kind == Expr::Kind::kTuple) {
        for (const ExprPtr& item : index.items)
          inner += (inner.empty() ? "" : ", ") + TypeText(*item);
      } else {
        inner = TypeText(index);
      }
      return TypeText(*e.base) + "[" + inner + "]";
    }
    return "?";
  }

  // --- Scopes, as the LibTorch reader derives them from inlined call stacks
  // ---------------

  int ScopeOf(const Nd& n) {
    if (n.calls.empty()) return 0;
    std::string path, innermost;
    for (int c : n.calls) {
      const Call& call = call_info_[c];
      path = ResolveChildScope(graph_, scope_index_, path, call.instance);
      innermost = call.cls;
    }
    auto it = scope_index_.find(path);
    if (it != scope_index_.end()) return it->second;
    // NB: a call resolved to no module of the tree (a module handed to
    // another's forward, as DoRA's magnitude layer is given lora_A) is named
    // from LibTorch's call stacks, which the source does not show: Convert
    // declines it.
    if (outside_tree_.empty()) outside_tree_ = path;
    const int index = graph_.GetOrAddScope(path, ShortClassName(innermost));
    scope_index_[path] = index;
    return index;
  }

  // --- Attention dropout and stochastic depth, as the LibTorch reader puts
  // them back -----------

  std::optional<double> ModuleNumber(const std::string& path,
                                     const std::string& name) const {
    auto rec = recorded_.find(path);
    if (rec != recorded_.end()) {
      auto it = rec->second.numbers.find(name);
      if (it != rec->second.numbers.end()) return it->second;
    }
    if (const Module* m = tree_.Find(path)) {
      const PickleValue* v = m->object->Attr(name);
      if (v != nullptr && v->kind == PickleValue::Kind::kFloat) return v->f;
    }
    return std::nullopt;
  }

  bool TracedInEval(const std::string& path) const {
    const Module* m = tree_.Find(path);
    if (m == nullptr) return false;
    const PickleValue* t = m->object->Attr("training");
    return t != nullptr && t->kind == PickleValue::Kind::kBool && !t->b;
  }

  Status RestoreAttentionDropout() {
    for (size_t i = 0; i < prog_.nodes.size(); ++i) {
      if (prog_.nodes[i].dead || prog_.nodes[i].op != "aten::softmax") continue;
      const ir::Scope& scope = graph_.scopes[ScopeOf(prog_.nodes[i])];
      if (scope.type != "MultiheadAttention" || !TracedInEval(scope.path))
        continue;
      const int weights = prog_.nodes[i].outputs[0];
      bool to_bmm = false, dropped = false;
      for (int u : UsesOf(prog_, weights)) {
        to_bmm |= prog_.nodes[u].op == "aten::bmm";
        dropped |= prog_.nodes[u].op == "aten::dropout" ||
                   prog_.nodes[u].op == "aten::dropout_";
      }
      if (!to_bmm || dropped) continue;
      const std::optional<double> p = ModuleNumber(scope.path, "dropout");
      if (!p) {
        NoteUnknownAttentionDropout(scope.path, &graph_);
        continue;
      }
      if (*p <= 0) continue;
      Nd drop;
      drop.op = "aten::dropout";
      const int p_const = emit_.Const(*p, "float"),
                train_const = emit_.Const(false, "bool");
      // NB: inserted after pooling.
      prog_.vals[p_const].group = prog_.vals[train_const].group =
          -2 - static_cast<int>(i);
      drop.inputs = {weights, p_const, train_const};
      drop.input_names = {"input", "p", "train"};
      drop.calls = prog_.nodes[i].calls;
      Val out;
      out.type = "Tensor";
      out.producer = static_cast<int>(i) + 1;
      const int out_id = emit_.AddVal(std::move(out));
      drop.outputs = {out_id};
      for (size_t k = i + 1; k < prog_.nodes.size(); ++k) {
        for (int& in : prog_.nodes[k].inputs) {
          if (in == weights) in = out_id;
        }
      }
      prog_.nodes.insert(
          prog_.nodes.begin() + static_cast<std::ptrdiff_t>(i) + 1,
          std::move(drop));
      for (size_t k = i + 2; k < prog_.nodes.size(); ++k) {
        for (int o : prog_.nodes[k].outputs)
          prog_.vals[o].producer = static_cast<int>(k);
      }
      ++i;
    }
    return Status::Ok();
  }

  // What the module tree says, for the train gaps of an eval-mode trace.
  ModuleFacts Facts() const {
    return {[this](const std::string& path) { return TracedInEval(path); },
            [this](const std::string& path, const std::string& name) {
              return ModuleNumber(path, name);
            }};
  }

  // --- Conversion to the IR (ts_convert.h), each node in the scope of its
  // inlined calls ------------

  Result<ir::Graph> Convert() {
    graph_.source = path_;
    auto scope_of = [this](const Nd& nd) -> Result<int> {
      const int scope = ScopeOf(nd);
      if (!outside_tree_.empty())
        return Decline("a call to module '" + outside_tree_ +
                       "' outside the module tree");
      return scope;
    };
    TORCHCOST_RETURN_IF_ERROR(
        ConvertProgram(prog_, inputs_, scope_of, &tensor_slot_, &graph_));
    CanonicalizeValueNames(&graph_);
    return std::move(graph_);
  }

  const ZipArchive& archive_;
  std::string path_;
  PickleRef data_, constants_;
  ModuleAttrsMap recorded_;
  ts::ModuleTree tree_;
  ir::Graph graph_;
  std::unordered_map<std::string, int> scope_index_;
  // The first call path ScopeOf found outside the module tree.
  std::string outside_tree_;
  std::unordered_map<std::string, ts::TensorSlot> tensor_slot_;
  Program prog_;
  std::vector<int> inputs_;
  // The inlined calls being compiled, outermost first.
  std::vector<int> calls_;
  std::vector<Call> call_info_;
  ts::Emitter emit_{&prog_, &calls_};
  int depth_ = 0;
  // The value the last inlined call of the statement being compiled returned.
  int inlined_result_ = -1;
};

}  // namespace

Result<ir::Graph> CompileTorchScript(const ZipArchive& archive,
                                     const std::string& path) {
  Compiler compiler(archive, path);
  return compiler.Run();
}

}  // namespace torchcost::import
