// The JSON graph frontend: reads a "torchcost.graph" file
// (docs/graph-schema.md) into an ir::Graph.
//
// The file is what tools/export writes from torch.fx or aten-level graphs, or
// what a person writes by hand: tables of inputs, parameters, buffers and
// modules, then nodes in execution order whose arguments are named after the
// op's schema. Each argument is a reference to a value (a node output, a
// parameter, a buffer, a model input), a list of them, or a literal constant.
// Every literal becomes a constant ir::Value of its own (as a prim::Constant
// does in TorchScript); a {"list": [...]} argument becomes a
// prim::ListConstruct node in the node's module, placed before the node.
//
// No LibTorch header is included here: the importer links LibTorch only for
// the TorchScript frontend.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "import/graph_json_scan.h"
#include "import/table_value.h"
#include "torchcost/import.h"
#include "torchcost/key_index.h"

namespace torchcost {
namespace {

using import::FindNodesArray;
using import::ParseKind;
using import::SimpleArg;
using import::SimpleNode;
using import::SimpleScanner;
using Json = nlohmann::ordered_json;

constexpr char kFormat[] = "torchcost.graph";
constexpr int kVersion = 1;
// NB: a documented limit (docs/graph-schema.md): module paths nest at most
// this deep (torchvision's deepest model nests 6; a transformer about 5).
constexpr int kMaxModuleDepth = 1000;

// Thrown inside the importer with a message that names the place; caught at
// the top and prefixed with the file name.
struct ImportError {
  std::string message;
};

// NB: "refers to ..." reads as one phrase with its place:
// "nodes[3] (aten::add): arg 'self' refers to unknown value 'v99'".
[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  if (where.empty()) throw ImportError{what};
  throw ImportError{where + (what.rfind("refers to ", 0) == 0 ? " " : ": ") +
                    what};
}

// Returns a JSON value's type in words, for messages.
std::string TypeName(const Json& j) {
  if (j.is_null()) return "null";
  if (j.is_boolean()) return "a bool";
  if (j.is_number_integer()) return "an integer";
  if (j.is_number()) return "a number";
  if (j.is_string()) return "a string";
  if (j.is_array()) return "a list";
  return "an object";
}

// Returns a short rendering of a JSON value for messages.
std::string Brief(const Json& j) {
  std::string text = j.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

// Returns the first line of nlohmann's message without its
// "[json.exception.parse_error.101] " prefix.
std::string CleanJsonMessage(const std::string& what) {
  std::string m = what.substr(0, what.find('\n'));
  if (m.rfind("[json.exception.", 0) == 0) {
    const size_t close = m.find("] ");
    if (close != std::string::npos) m.erase(0, close + 2);
  }
  return m;
}

const Json& Field(const Json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) Fail(where, std::string("missing field '") + key + "'");
  return *it;
}

std::string StringField(const Json& obj, const char* key,
                        const std::string& where) {
  const Json& j = Field(obj, key, where);
  if (!j.is_string())
    Fail(where,
         std::string("'") + key + "' must be a string, not " + TypeName(j));
  return j.get<std::string>();
}

const Json& ArrayField(const Json& obj, const char* key,
                       const std::string& where) {
  const Json& j = Field(obj, key, where);
  if (!j.is_array())
    Fail(where,
         std::string("'") + key + "' must be a list, not " + TypeName(j));
  return j;
}

// An optional list field: an empty list when absent.
const Json& OptionalArray(const Json& obj, const char* key,
                          const std::string& where) {
  static const Json* kEmpty = new Json(Json::array());
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return *kEmpty;
  if (!it->is_array())
    Fail(where,
         std::string("'") + key + "' must be a list, not " + TypeName(*it));
  return *it;
}

DType ParseDTypeAt(const Json& j, const std::string& where) {
  if (!j.is_string()) Fail(where, "dtype must be a string, not " + TypeName(j));
  Result<DType> d = ParseDType(j.get<std::string>());
  if (!d.ok()) Fail(where, d.status().message());
  return *d;
}

std::vector<int64_t> ConcreteShape(const Json& j, const std::string& where) {
  if (!j.is_array()) Fail(where, "shape must be a list, not " + TypeName(j));
  std::vector<int64_t> shape;
  for (const Json& d : j) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) {
      Fail(where, "shape " + Brief(j) + " must list non-negative integers");
    }
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

// Splits FX / make_fx spellings of an op: "aten.linear.default" ->
// ("aten::linear", ""), "aten.add.Tensor" -> ("aten::add", "Tensor"),
// "aten::add.Tensor" -> ("aten::add", "Tensor").
void NormalizeOp(std::string_view text, std::string* op,
                 std::string* overload) {
  std::string_view name = text;
  std::string_view ns;
  const size_t colons = name.find("::");
  if (colons != std::string_view::npos) {
    ns = name.substr(0, colons);
    name = name.substr(colons + 2);
  } else {
    const size_t dot = name.find('.');
    if (dot != std::string_view::npos) {
      ns = name.substr(0, dot);
      name = name.substr(dot + 1);
    }
  }
  const size_t dot = name.find('.');
  if (dot != std::string_view::npos) {
    if (overload->empty()) overload->assign(name.substr(dot + 1));
    name = name.substr(0, dot);
  }
  if (*overload == "default") overload->clear();
  op->assign(ns.empty() ? std::string_view("aten") : ns)
      .append("::")
      .append(name);
}

// The graph's values by name, for node outputs.
// NB: a std::unordered_map<std::string, int> took a node of about 64 bytes,
// a copy of the name and a bucket per output: a 1M-node graph's import spent
// a tenth of its time there.
using NameIndex = KeyIndex<ir::Value, &ir::Value::name>;

class JsonImporter {
 public:
  explicit JsonImporter(std::string path) { graph_.source = std::move(path); }

  ir::Graph Run(const Json& doc) {
    Begin(doc);
    const Json& nodes = ArrayField(doc, "nodes", "");
    Reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) ReadNode(nodes[i], i);
    return Finish(doc);
  }

  // Reads what nodes refer to: the version, modules, tables and inputs; checks
  // that "nodes" is a list.
  void Begin(const Json& doc) {
    if (!doc.is_object())
      Fail("", "the top level must be an object, not " + TypeName(doc));
    CheckVersion(doc);
    ReadModules(doc);
    ReadTable(OptionalArray(doc, "params", ""), "params", /*is_param=*/true);
    ReadTable(OptionalArray(doc, "buffers", ""), "buffers", /*is_param=*/false);
    ReadInputs(ArrayField(doc, "inputs", ""));
    ArrayField(doc, "nodes", "");
  }

  // Makes room for about `nodes` more nodes of one output each.
  void Reserve(size_t nodes) {
    graph_.nodes.reserve(graph_.nodes.size() + nodes);
    graph_.values.reserve(graph_.values.size() + 2 * nodes);
    values_.Reserve(graph_.nodes.size() + nodes);
  }

  // Reads the outputs (after every node) and returns the graph.
  ir::Graph Finish(const Json& doc) {
    const Json& outputs = ArrayField(doc, "outputs", "");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string where = "outputs[" + std::to_string(i) + "]";
      const Json& o = outputs[i];
      graph_.outputs.push_back(o.is_string()
                                   ? LookupRef(o.get<std::string>(), where)
                                   : Reference(o, where));
    }
    return std::move(graph_);
  }

  // Reads nodes[i].
  void ReadNode(const Json& j, size_t i) {
    std::string where = "nodes[" + std::to_string(i) + "]";
    if (!j.is_object()) Fail(where, "must be an object, not " + TypeName(j));
    ir::Node n;
    const std::string op_text = StringField(j, "op", where);
    if (auto ov = j.find("overload"); ov != j.end() && !ov->is_null()) {
      if (!ov->is_string())
        Fail(where, "'overload' must be a string, not " + TypeName(*ov));
      n.overload = ov->get<std::string>();
    }
    NormalizeOp(op_text, &n.op, &n.overload);
    where += " (" + n.op + ")";
    n.scope = 0;
    if (auto m = j.find("module"); m != j.end() && !m->is_null()) {
      if (!m->is_string())
        Fail(where, "'module' must be a string, not " + TypeName(*m));
      n.scope = Scope(m->get<std::string>(), "", where);
    }
    const Json& args = Field(j, "args", where);
    n.inputs.reserve(args.size());
    if (args.is_object()) {
      n.input_names.reserve(args.size());
      for (auto it = args.begin(); it != args.end(); ++it) {
        n.input_names.push_back(it.key());
        const int known = KnownRef(it.value());
        n.inputs.push_back(
            known >= 0 ? known
                       : Argument(it.value(),
                                  where + ": arg '" + it.key() + "'", n.scope));
      }
    } else if (args.is_array()) {
      // Positional arguments (prim:: ops, which have no schema names).
      for (size_t a = 0; a < args.size(); ++a) {
        n.inputs.push_back(
            Argument(args[a], where + ": arg " + std::to_string(a), n.scope));
      }
    } else {
      Fail(where,
           "'args' must be an object (named) or a list (positional), not " +
               TypeName(args));
    }
    const Json& outputs = ArrayField(j, "outputs", where);
    std::vector<ir::Value> outs;
    outs.reserve(outputs.size());
    for (size_t o = 0; o < outputs.size(); ++o) {
      outs.push_back(outputs[o].is_string()
                         ? ReadOutput(outputs[o], "")
                         : ReadOutput(outputs[o],
                                      where + ": output " + std::to_string(o)));
    }
    AddNode(std::move(n), &outs, where);
  }

  // Reads nodes[i] in the form SimpleNode holds, as ReadNode reads the same
  // node parsed as JSON (same values, in the same order, and same errors).
  void ReadSimpleNode(SimpleNode& s, size_t i) {
    // NB: the place for messages is built in a buffer kept across nodes (no
    // allocation per node).
    std::string& where = where_;
    where.assign("nodes[").append(std::to_string(i)).append("]");
    ir::Node n;
    if (s.has_overload) n.overload.assign(s.overload);
    NormalizeOp(s.op, &n.op, &n.overload);
    where.append(" (").append(n.op).append(")");
    n.scope = 0;
    if (s.has_module) {
      scratch_.assign(s.module);
      n.scope = Scope(scratch_, "", where);
    }
    n.inputs.reserve(s.args.size());
    n.input_names =
        names_.Intern(s.args, [](const SimpleArg& a) { return a.name; });
    for (const SimpleArg& a : s.args) {
      if (a.kind == SimpleArg::Kind::kRef && !a.target_is_int) {
        if (const int known = values_.Find(graph_.values, a.text); known >= 0) {
          n.inputs.push_back(known);
          continue;
        }
      }
      n.inputs.push_back(Argument(
          a.ToJson(), where + ": arg '" + std::string(a.name) + "'", n.scope));
    }
    AddNode(std::move(n), &s.outputs, where);
  }

 private:
  void CheckVersion(const Json& doc) {
    const std::string format = StringField(doc, "format", "");
    if (format != kFormat)
      Fail("", "format is '" + format + "', expected '" + kFormat + "'");
    const Json& version = Field(doc, "version", "");
    if (!version.is_number_integer())
      Fail("", "version must be an integer, not " + TypeName(version));
    if (version.get<int64_t>() != kVersion) {
      Fail("", "unsupported version " + std::to_string(version.get<int64_t>()) +
                   "; this torchcost reads version " +
                   std::to_string(kVersion));
    }
  }

  // The root scope is named after "model"; "modules" lists the hierarchy,
  // parents before children.
  void ReadModules(const Json& doc) {
    auto model = doc.find("model");
    std::string name = "Model";
    if (model != doc.end()) {
      if (!model->is_string())
        Fail("", "'model' must be a string, not " + TypeName(*model));
      name = model->get<std::string>();
    }
    const int root = graph_.GetOrAddScope("", name);
    graph_.scopes[root].name = name;
    graph_.scopes[root].type = name;
    const Json& modules = OptionalArray(doc, "modules", "");
    for (size_t i = 0; i < modules.size(); ++i) {
      const std::string where = "modules[" + std::to_string(i) + "]";
      const Json& m = modules[i];
      if (!m.is_object()) Fail(where, "must be an object, not " + TypeName(m));
      const std::string path = StringField(m, "path", where);
      std::string type;
      if (auto t = m.find("type"); t != m.end() && t->is_string())
        type = t->get<std::string>();
      const int index = Scope(path, type, where);
      if (!type.empty()) graph_.scopes[index].type = type;
      if (path.empty() && !type.empty()) graph_.scopes[index].name = type;
    }
  }

  // Returns the scope of module `path`, created if new; a path nested deeper
  // than kMaxModuleDepth is an error at `where`.
  int Scope(const std::string& path, const std::string& type,
            const std::string& where) {
    if (std::count(path.begin(), path.end(), '.') >= kMaxModuleDepth) {
      Fail(where, "module path nests deeper than " +
                      std::to_string(kMaxModuleDepth) + " levels");
    }
    return graph_.GetOrAddScope(path, type);
  }

  void ReadTable(const Json& table, const char* key, bool is_param) {
    std::vector<ir::TensorEntry>& entries =
        is_param ? graph_.params : graph_.buffers;
    auto& names = is_param ? param_names_ : buffer_names_;
    for (size_t i = 0; i < table.size(); ++i) {
      const std::string where =
          std::string(key) + "[" + std::to_string(i) + "]";
      const Json& t = table[i];
      if (!t.is_object()) Fail(where, "must be an object, not " + TypeName(t));
      ir::TensorEntry e;
      e.name = StringField(t, "name", where);
      e.shape =
          ConcreteShape(Field(t, "shape", where), where + " (" + e.name + ")");
      e.dtype = t.contains("dtype") ? ParseDTypeAt(t["dtype"], where)
                                    : DType::kFloat32;
      e.requires_grad = is_param;
      if (auto rg = t.find("requires_grad"); rg != t.end()) {
        if (!rg->is_boolean())
          Fail(where, "'requires_grad' must be a bool, not " + TypeName(*rg));
        e.requires_grad = is_param && rg->get<bool>();
      }
      for (const Json& a : OptionalArray(t, "aliases", where)) {
        if (!a.is_string()) Fail(where, "aliases must be strings");
        e.aliases.push_back(a.get<std::string>());
      }
      const int index = static_cast<int>(entries.size());
      if (!names.emplace(e.name, index).second)
        Fail(where, "duplicate name '" + e.name + "'");
      for (const std::string& a : e.aliases) {
        if (!names.emplace(a, index).second)
          Fail(where, "duplicate name '" + a + "'");
      }
      entries.push_back(std::move(e));
    }
  }

  void ReadInputs(const Json& inputs) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::string where = "inputs[" + std::to_string(i) + "]";
      const Json& in = inputs[i];
      if (!in.is_object())
        Fail(where, "must be an object, not " + TypeName(in));
      ir::Value v;
      v.name = StringField(in, "name", where);
      v.role = ir::ValueRole::kInput;
      v.table_index = static_cast<int>(i);
      v.kind = ir::ValueKind::kTensor;
      if (in.contains("dtype")) v.dtype = ParseDTypeAt(in["dtype"], where);
      // Symbolic dims ("B") leave the shape to the analysis inputs
      // (StepConfig.inputs); a fully concrete shape, or the "traced_shape"
      // fallback, is recorded.
      bool concrete = false;
      if (auto s = in.find("shape"); s != in.end()) {
        if (!s->is_array())
          Fail(where, "shape must be a list, not " + TypeName(*s));
        concrete = true;
        for (const Json& d : *s) {
          if (d.is_string()) {
            concrete = false;
          } else if (!d.is_number_integer() || d.get<int64_t>() < 0) {
            Fail(where,
                 "shape " + Brief(*s) +
                     ": dims must be non-negative integers or symbol names");
          }
        }
        if (concrete) v.traced_shape = ConcreteShape(*s, where);
      }
      if (!concrete && in.contains("traced_shape")) {
        v.traced_shape = ConcreteShape(in["traced_shape"], where);
        concrete = true;
      }
      v.has_traced_shape = concrete;
      if (!input_names_.emplace(v.name, static_cast<int>(graph_.inputs.size()))
               .second) {
        Fail(where, "duplicate input name '" + v.name + "'");
      }
      graph_.inputs.push_back(graph_.AddValue(std::move(v)));
    }
  }

  // Returns the value of {"ref": name} when `name` is a known value, else -1
  // (Argument then reads `j`, with the place for its messages).
  int KnownRef(const Json& j) const {
    if (!j.is_object() || j.size() != 1) return -1;
    const auto first = j.begin();
    if (first.key() != "ref" || !first.value().is_string()) return -1;
    return values_.Find(graph_.values,
                        first.value().get_ref<const std::string&>());
  }

  int LookupRef(const std::string& name, const std::string& where) {
    const int known = values_.Find(graph_.values, name);
    if (known < 0) Fail(where, "refers to unknown value '" + name + "'");
    return known;
  }

  // Adds `outs` as the outputs of `n`, then `n` itself.
  void AddNode(ir::Node n, std::vector<ir::Value>* outs,
               const std::string& where) {
    n.outputs.reserve(outs->size());
    for (ir::Value& v : *outs) {
      const int index = graph_.AddValue(std::move(v));
      if (!values_.Insert(graph_.values, index))
        Fail(where,
             "output '" + graph_.values[index].name + "' is already defined");
      n.outputs.push_back(index);
    }
    n.debug_name = n.outputs.empty() ? "%" + std::to_string(graph_.nodes.size())
                                     : "%" + graph_.values[n.outputs[0]].name;
    graph_.AddNode(std::move(n));
  }

  // Resolves a reference object ({"ref"}, {"param"}, {"buffer"}, {"input"}).
  int Reference(const Json& j, const std::string& where) {
    if (!j.is_object() || j.size() != 1) {
      Fail(where,
           "expected a reference like {\"ref\": \"v1\"}, got " + Brief(j));
    }
    const std::string& key = j.begin().key();
    const Json& target = j.begin().value();
    if (key == "ref") {
      if (!target.is_string())
        Fail(where, "\"ref\" must name a value, not " + TypeName(target));
      return LookupRef(target.get<std::string>(), where);
    }
    if (key == "param" || key == "buffer") {
      const bool is_param = key == "param";
      if (!target.is_string())
        Fail(where, "\"" + key + "\" must be a name, not " + TypeName(target));
      const auto& names = is_param ? param_names_ : buffer_names_;
      auto it = names.find(target.get<std::string>());
      if (it == names.end()) {
        Fail(where, "refers to unknown " +
                        std::string(is_param ? "parameter" : "buffer") + " '" +
                        target.get<std::string>() + "'");
      }
      return import::TableValue(&graph_, is_param, it->second);
    }
    if (key == "input") {
      int position = -1;
      if (target.is_number_integer()) {
        position = static_cast<int>(target.get<int64_t>());
      } else if (target.is_string()) {
        auto it = input_names_.find(target.get<std::string>());
        if (it == input_names_.end())
          Fail(where,
               "refers to unknown input '" + target.get<std::string>() + "'");
        position = it->second;
      }
      if (position < 0 || position >= static_cast<int>(graph_.inputs.size())) {
        Fail(where, "refers to unknown input " + Brief(target));
      }
      return graph_.inputs[position];
    }
    Fail(where, "unknown reference kind '" + key +
                    "' (expected ref, param, buffer, input, list, dtype, float "
                    "or tensor)");
  }

  int AddConstant(ir::Value v) {
    v.role = ir::ValueRole::kConstant;
    v.has_constant = true;
    if (v.name.empty()) v.name = "c" + std::to_string(graph_.values.size());
    return graph_.AddValue(std::move(v));
  }

  // Converts an array literal of numbers or bools into a list constant.
  int ListConstant(const Json& j, const std::string& where) {
    ir::Value v;
    v.kind = ir::ValueKind::kList;
    bool all_int = true, all_bool = true, all_number = true;
    for (const Json& e : j) {
      all_int = all_int && e.is_number_integer();
      all_bool = all_bool && e.is_boolean();
      all_number = all_number && e.is_number();
    }
    if (all_int) {
      v.elem_kind = ir::ValueKind::kInt;
      v.constant = j.get<std::vector<int64_t>>();
    } else if (all_bool) {
      v.elem_kind = ir::ValueKind::kBool;
      std::vector<bool> bools;
      for (const Json& e : j) bools.push_back(e.get<bool>());
      v.constant = std::move(bools);
    } else if (all_number) {
      v.elem_kind = ir::ValueKind::kFloat;
      v.constant = j.get<std::vector<double>>();
    } else {
      Fail(where,
           "a literal list must hold only ints, floats or bools; write "
           "{\"list\": [...]} for a list of values, "
           "got " +
               Brief(j));
    }
    return AddConstant(std::move(v));
  }

  // Returns the value an argument stands for, creating constants and list
  // nodes.
  int Argument(const Json& j, const std::string& where, int scope) {
    ir::Value v;
    switch (j.type()) {
      case Json::value_t::null:
        v.kind = ir::ValueKind::kNone;
        v.constant = std::monostate();
        return AddConstant(std::move(v));
      case Json::value_t::boolean:
        v.kind = ir::ValueKind::kBool;
        v.constant = j.get<bool>();
        return AddConstant(std::move(v));
      case Json::value_t::number_integer:
      case Json::value_t::number_unsigned:
        v.kind = ir::ValueKind::kInt;
        v.constant = j.get<int64_t>();
        return AddConstant(std::move(v));
      case Json::value_t::number_float:
        v.kind = ir::ValueKind::kFloat;
        v.constant = j.get<double>();
        return AddConstant(std::move(v));
      case Json::value_t::string:
        v.kind = ir::ValueKind::kString;
        v.constant = j.get<std::string>();
        return AddConstant(std::move(v));
      case Json::value_t::array:
        return ListConstant(j, where);
      case Json::value_t::object:
        break;
      default:
        Fail(where, "unsupported argument " + Brief(j));
    }
    if (j.size() == 1 && j.contains("list"))
      return ListNode(j["list"], where, scope);
    if (j.size() == 1 && j.contains("dtype")) {
      // A ScalarType argument: TorchScript passes its c10::ScalarType code.
      v.kind = ir::ValueKind::kInt;
      v.constant = static_cast<int64_t>(ParseDTypeAt(j["dtype"], where));
      return AddConstant(std::move(v));
    }
    if (j.size() == 1 && j.contains("float")) {
      // Non-finite floats, which JSON cannot spell: {"float": "-inf"}.
      const Json& f = j["float"];
      const std::string text = f.is_string() ? f.get<std::string>() : "";
      v.kind = ir::ValueKind::kFloat;
      if (text == "inf" || text == "+inf") {
        v.constant = std::numeric_limits<double>::infinity();
      } else if (text == "-inf") {
        v.constant = -std::numeric_limits<double>::infinity();
      } else if (text == "nan") {
        v.constant = std::numeric_limits<double>::quiet_NaN();
      } else {
        Fail(where,
             "\"float\" must be \"inf\", \"-inf\" or \"nan\", got " + Brief(f));
      }
      return AddConstant(std::move(v));
    }
    if (j.size() == 1 && j.contains("tensor"))
      return TensorConstant(j["tensor"], where);
    return Reference(j, where);
  }

  // A constant tensor baked into the graph: {"tensor": {"shape": [], "dtype":
  // "float64", "value": 0.125}} (the value only for 0-dim tensors).
  int TensorConstant(const Json& t, const std::string& where) {
    if (!t.is_object())
      Fail(where, "\"tensor\" must be an object, not " + TypeName(t));
    ir::Value v;
    v.kind = ir::ValueKind::kTensor;
    v.traced_shape = ConcreteShape(Field(t, "shape", where), where);
    v.has_traced_shape = true;
    v.dtype =
        t.contains("dtype") ? ParseDTypeAt(t["dtype"], where) : DType::kFloat32;
    v.role = ir::ValueRole::kConstant;
    v.name = "c" + std::to_string(graph_.values.size());
    if (auto value = t.find("value"); value != t.end() && !value->is_null()) {
      if (!v.traced_shape.empty())
        Fail(where, "only a 0-dim tensor constant may give a value");
      if (value->is_number_integer()) {
        v.constant = value->get<int64_t>();
      } else if (value->is_number()) {
        v.constant = value->get<double>();
      } else if (value->is_boolean()) {
        v.constant = static_cast<int64_t>(value->get<bool>());
      } else {
        Fail(where, "a tensor constant's value must be a number, not " +
                        TypeName(*value));
      }
      v.has_constant = true;
    }
    return graph_.AddValue(std::move(v));
  }

  // Builds a prim::ListConstruct node from {"list": [...]}.
  int ListNode(const Json& items, const std::string& where, int scope) {
    if (!items.is_array())
      Fail(where, "\"list\" must be a list, not " + TypeName(items));
    ir::Node n;
    n.op = "prim::ListConstruct";
    n.scope = scope;
    bool all_tensor = !items.empty(), all_int = true;
    for (size_t i = 0; i < items.size(); ++i) {
      const int e =
          Argument(items[i], where + " element " + std::to_string(i), scope);
      n.inputs.push_back(e);
      all_tensor =
          all_tensor && graph_.values[e].kind == ir::ValueKind::kTensor;
      all_int = all_int && graph_.values[e].kind == ir::ValueKind::kInt;
    }
    ir::Value out;
    out.name = "list" + std::to_string(graph_.values.size());
    out.kind = ir::ValueKind::kList;
    out.elem_kind = all_tensor ? ir::ValueKind::kTensor
                    : all_int  ? ir::ValueKind::kInt
                               : ir::ValueKind::kOther;
    const int index = graph_.AddValue(std::move(out));
    n.outputs.push_back(index);
    n.debug_name = "%" + graph_.values[index].name;
    graph_.AddNode(std::move(n));
    return index;
  }

  // An output: "v3" (a tensor) or {"name", "type", "shape", "dtype"}.
  ir::Value ReadOutput(const Json& j, const std::string& where) {
    ir::Value v;
    v.kind = ir::ValueKind::kTensor;
    if (j.is_string()) {
      v.name = j.get<std::string>();
      return v;
    }
    if (!j.is_object())
      Fail(where, "must be a name or an object, not " + TypeName(j));
    v.name = StringField(j, "name", where);
    if (auto t = j.find("type"); t != j.end()) {
      if (!t->is_string() ||
          !ParseKind(t->get<std::string>(), &v.kind, &v.elem_kind)) {
        Fail(where, "unknown type " + Brief(*t) +
                        " (expected Tensor, int, float, bool, str, None, "
                        "Device, other, or one of them with [])");
      }
    }
    if (auto s = j.find("shape"); s != j.end() && !s->is_null()) {
      v.traced_shape = ConcreteShape(*s, where);
      v.has_traced_shape = v.kind == ir::ValueKind::kTensor;
    }
    if (auto d = j.find("dtype"); d != j.end() && !d->is_null())
      v.dtype = ParseDTypeAt(*d, where);
    return v;
  }

  ir::Graph graph_;
  NameIndex values_;  // Node outputs by name.
  // Names and aliases -> params index.
  std::unordered_map<std::string, int> param_names_;
  std::unordered_map<std::string, int> buffer_names_;
  std::unordered_map<std::string, int> input_names_;  // -> input position.
  std::string scratch_;  // A name being looked up (kept to reuse its buffer).
  // The argument-name lists of the nodes in the common form, one per distinct
  // sequence (a chain's nodes share one).
  ir::ArgNamesPool names_;
  // ReadSimpleNode's place for messages (kept to reuse its buffer).
  std::string where_;
};

// Reads the "nodes" array `array` node by node: a node in SimpleNode's form
// straight from the text, any other parsed as JSON on its own, read, and
// dropped, so no more than one node is held as JSON. Returns false if the
// array's text leaves JSON (the JSON parser throws for an element that does).
bool ReadNodes(std::string_view array, JsonImporter* importer) {
  SimpleScanner scan(array);
  SimpleNode node;
  if (!scan.Eat('[')) return false;
  size_t index = 0;
  if (!scan.Eat(']')) {
    do {
      const size_t start = scan.pos();
      if (scan.ParseNode(&node) && node.has_op && node.has_args &&
          node.has_outputs) {
        importer->ReadSimpleNode(node, index++);
        continue;
      }
      scan.set_pos(start);
      if (!scan.SkipValue()) return false;
      importer->ReadNode(Json::parse(array.substr(start, scan.pos() - start)),
                         index++);
    } while (scan.Eat(','));
    if (!scan.Eat(']')) return false;
  }
  return scan.AtEnd();
}

// Imports a well-formed graph without holding its nodes as JSON: the document
// without its "nodes" array is parsed first, then the array, each node read and
// dropped as soon as it is parsed (a 1M-node graph's JSON tree took 0.7 GB).
// Returns nullopt if the text is not valid JSON or does not import: the
// caller then reads the whole document, for the same error as always (a
// syntax error anywhere is reported before a bad node).
std::optional<ir::Graph> ImportStreaming(std::string_view text,
                                         const std::string& name) {
  size_t begin = std::string_view::npos, end = std::string_view::npos,
         count = 1;
  if (!FindNodesArray(text, &begin, &end, &count)) return std::nullopt;
  std::string rest;
  rest.reserve(text.size() - (end - begin) + 2);
  rest.append(text.substr(0, begin)).append("[]").append(text.substr(end));
  try {
    const Json doc = Json::parse(rest);
    JsonImporter importer(name);
    importer.Begin(doc);
    importer.Reserve(count);
    if (!ReadNodes(text.substr(begin, end - begin), &importer))
      return std::nullopt;
    return importer.Finish(doc);
  } catch (const ImportError&) {
    return std::nullopt;
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

}  // namespace

Result<ir::Graph> ImportGraphJson(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::NotFound(path + ": cannot read JSON graph: no such file");
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument(path +
                                   ": cannot read JSON graph: is a directory");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Status::InvalidArgument(
        path + ": cannot read JSON graph: permission denied or I/O error");
  std::string text;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec) text.resize(size);
  if (ec ||
      !file.read(text.data(), static_cast<std::streamsize>(text.size())) ||
      file.peek() != EOF) {
    // NB: a file whose size is not known ahead (a pipe) is read as a stream.
    file.clear();
    file.seekg(0);
    std::stringstream stream;
    stream << file.rdbuf();
    text = stream.str();
  }
  return ImportGraphJsonText(text, path);
}

Result<ir::Graph> ImportGraphJsonText(std::string_view text,
                                      const std::string& name) {
  if (std::optional<ir::Graph> g = ImportStreaming(text, name))
    return std::move(*g);
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::exception& e) {
    // NB: not only parse_error: a number beyond double's range ("9e998") is
    // out_of_range.
    return Status::ParseError(
        name + ": not valid JSON: " + CleanJsonMessage(e.what()));
  }
  try {
    JsonImporter importer(name);
    return importer.Run(doc);
  } catch (const ImportError& e) {
    return Status::InvalidArgument(name + ": " + e.message);
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(name + ": " + CleanJsonMessage(e.what()));
  }
}

}  // namespace torchcost
