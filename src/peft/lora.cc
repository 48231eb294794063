#include <cstdlib>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <unordered_map>

#include "passes/graph_edit.h"
#include "passes/user_regex.h"
#include "peft/adapters.h"
#include "torchcost/peft.h"
#include "training/key_value_spec.h"

namespace torchcost {
namespace {

using passes::GraphEditor;
using passes::LeafName;
using passes::NodeArg;
using peft::AdapterSite;
using peft::LoraBranch;

// Reads a Linear (aten::linear or the 4-bit bnb::matmul_4bit) as an adapter
// site.
std::optional<AdapterSite> AsSite(const ir::Graph& g, const ir::Node& node) {
  AdapterSite s;
  s.scope = node.scope;
  s.path = g.scopes[node.scope].path;
  s.y = node.outputs[0];
  if (node.op != "aten::addmm" && node.op != "aten::mm") {
    s.x = NodeArg(node, "input", 0);
    s.weight = NodeArg(node, "weight", 1);
    if (s.x < 0 || s.weight < 0 ||
        g.values[s.weight].role != ir::ValueRole::kParam)
      return std::nullopt;
  }
  if (node.op == "aten::linear") {
    s.bias = NodeArg(node, "bias", 2);
    const ir::TensorEntry& w = g.params[g.values[s.weight].table_index];
    if (w.shape.size() != 2) return std::nullopt;
    s.out = w.shape[0];
    s.in = w.shape[1];
  } else if (node.op == "bnb::matmul_4bit") {
    s.bias = NodeArg(node, "bias", 5);
    const int shape = NodeArg(node, "weight_shape", 4);
    const auto* dims =
        shape >= 0
            ? std::get_if<std::vector<int64_t>>(&g.values[shape].constant)
            : nullptr;
    if (dims == nullptr || dims->size() != 2) return std::nullopt;
    s.out = (*dims)[0];
    s.in = (*dims)[1];
    s.quantized = true;
  } else if (node.op == "aten::addmm" || node.op == "aten::mm") {
    // An aten-level Linear (make_fx): addmm(bias, x, t(W)) or mm(x, t(W)) on
    // 2-D rows.
    const bool addmm = node.op == "aten::addmm";
    s.x = NodeArg(node, addmm ? "mat1" : "self", addmm ? 1 : 0);
    const int mat2 = NodeArg(node, "mat2", addmm ? 2 : 1);
    s.bias = addmm ? NodeArg(node, "self", 0) : -1;
    if (s.x < 0 || mat2 < 0) return std::nullopt;
    const int t = g.values[mat2].producer;
    if (g.values[mat2].role == ir::ValueRole::kParam) {
      // transformers' Conv1D: addmm(bias, x.view(-1, nx), weight), weight [in,
      // out].
      s.weight = mat2;
      s.fan_in_fan_out = true;
    } else if (t >= 0 &&
               (g.nodes[t].op == "aten::t" ||
                g.nodes[t].op == "aten::numpy_T") &&
               !g.nodes[t].inputs.empty()) {
      s.weight = g.nodes[t].inputs[0];
    } else {
      return std::nullopt;
    }
    if (g.values[s.weight].role != ir::ValueRole::kParam) return std::nullopt;
    const ir::TensorEntry& w = g.params[g.values[s.weight].table_index];
    if (w.shape.size() != 2) return std::nullopt;
    // Not a Linear's bias.
    if (s.bias >= 0 && g.values[s.bias].role != ir::ValueRole::kParam)
      return std::nullopt;
    s.out = w.shape[s.fan_in_fan_out ? 1 : 0];
    s.in = w.shape[s.fan_in_fan_out ? 0 : 1];
    if (s.fan_in_fan_out) {
      // NB: the module is named after its weight ("h.0.attn.c_attn.weight", or
      // "h.0.attn.c_attn_weight" where the projection is a parameter of the
      // attention module, as tools/make_fixtures.py's GPT2 and --model gpt2).
      const std::string& name = w.name;
      for (const char* suffix : {".weight", "_weight"}) {
        const size_t n = std::char_traits<char>::length(suffix);
        if (name.size() > n && name.compare(name.size() - n, n, suffix) == 0) {
          s.path = name.substr(0, name.size() - n);
          break;
        }
      }
    }
  } else if (node.op == "aten::_convolution" || node.op == "aten::conv2d") {
    s.bias = NodeArg(node, "bias", 2);
    const ir::TensorEntry& w = g.params[g.values[s.weight].table_index];
    const int groups =
        NodeArg(node, "groups", node.op == "aten::conv2d" ? 6 : 8);
    const int transposed =
        node.op == "aten::conv2d" ? -1 : NodeArg(node, "transposed", 6);
    auto constant_is = [&](int v, auto want) {
      using T = decltype(want);
      if (v < 0) return true;  // The default.
      const T* c = std::get_if<T>(&g.values[v].constant);
      return c != nullptr && *c == want;
    };
    // NB: peft's Conv2d adapter ignores groups and dilation; only plain
    // convolutions are adapted here.
    if (w.shape.size() != 4 || !constant_is(groups, int64_t{1}) ||
        !constant_is(transposed, false)) {
      return std::nullopt;
    }
    s.out = w.shape[0];
    s.in = w.shape[1];
    s.kernel = {w.shape[2], w.shape[3]};
    s.conv = node;
  } else {
    return std::nullopt;
  }
  if (s.bias >= 0 && g.values[s.bias].kind == ir::ValueKind::kNone) s.bias = -1;
  return s;
}

// Applies one key=value of a LoRA spec; returns false in *known if the key is
// not LoRA's.
Status ApplyLoraKey(const std::string& key, const std::string& value,
                    LoraConfig* c, bool* known) {
  *known = true;
  char* end = nullptr;
  if (key == "r" || key == "rank" || key == "alpha") {
    return ParseSpecPositive(key, value, key == "alpha" ? &c->alpha : &c->rank);
  } else if (key == "dropout") {
    double d = std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || d < 0 || d >= 1) {
      return Status::InvalidArgument("dropout=" + value + " must be in [0, 1)");
    }
    c->dropout = d;
  } else if (key == "targets") {
    c->targets = value;
  } else if (key == "dora" || key == "use_dora") {
    return ParseSpecBool(key, value, &c->use_dora);
  } else if (key == "dtype") {
    Result<DType> d = ParseDType(value);
    if (!d.ok() || !IsFloatingPoint(*d))
      return Status::InvalidArgument("dtype=" + value +
                                     " is not a float dtype");
    c->adapter_dtype = *d;
  } else {
    *known = false;
  }
  return Status::Ok();
}

// Calls `apply` on each key=value of `text`; an error is prefixed by `what`.
Status ForEachKeyValue(std::string_view text, const char* what,
                       const std::function<Status(const std::string&,
                                                  const std::string&)>& apply) {
  Status s = ForEachSpecItem(text, apply);
  if (s.ok()) return s;
  return Status::InvalidArgument(std::string(what) + ": " + s.message());
}

Result<std::regex> CompileTargets(const std::string& pattern,
                                  const char* what) {
  try {
    return passes::UserRegex(pattern);
  } catch (const std::regex_error&) {
    return Status::InvalidArgument(std::string(what) + " '" + pattern +
                                   "': not a valid regular expression");
  }
}

// Matches a module path against a targets regex: its last component, or the
// whole path when the pattern names a dotted path.
bool MatchesModule(const std::string& path, const std::string& pattern,
                   const std::regex& re) {
  if (path.empty()) return false;
  const bool whole = pattern.find('.') != std::string::npos &&
                     path.find('.') != std::string::npos;
  return std::regex_match(whole ? path : LeafName(path), re);
}

// Appends a copy of the site's convolution reading `x` with weight `w`, no
// bias, dilation 1, and the given arguments replaced (-1: the base's own).
int EmitConv(GraphEditor& ed, const AdapterSite& site, int x, int w,
             std::vector<std::pair<std::string, int>> replace, int scope) {
  const ir::Node& conv = *site.conv;
  std::vector<std::string> names(conv.input_names.begin(),
                                 conv.input_names.end());
  if (names.empty()) {
    names =
        conv.op == "aten::conv2d"
            ? std::vector<std::string>{"input",   "weight",   "bias",  "stride",
                                       "padding", "dilation", "groups"}
            : std::vector<std::string>{
                  "input",     "weight",    "bias",          "stride",
                  "padding",   "dilation",  "transposed",    "output_padding",
                  "groups",    "benchmark", "deterministic", "cudnn_enabled",
                  "allow_tf32"};
    names.resize(conv.inputs.size());
  }
  replace.push_back({"input", x});
  replace.push_back({"weight", w});
  replace.push_back({"bias", ed.None()});
  replace.push_back({"dilation", ed.Ints({1, 1})});
  std::vector<int> inputs(conv.inputs.begin(), conv.inputs.end());
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const auto& [name, value] : replace) {
      if (names[i] == name && value >= 0) inputs[i] = value;
    }
  }
  return ed.Op(conv.op, conv.overload, inputs, names, scope);
}

// Appends the LoRA (or DoRA) branch for `site`; returns the adapted output.
int EmitAdapter(GraphEditor& ed, const AdapterSite& site, const LoraConfig& c) {
  ir::Graph& g = ed.graph();
  LoraBranch lora;
  const char* type = site.conv.has_value() ? "Conv2d" : "Linear";
  if (site.fan_in_fan_out) g.GetOrAddScope(site.path, "Conv1D");
  lora.scope_a = g.GetOrAddScope(site.path + ".lora_A", type);
  lora.scope_b = g.GetOrAddScope(site.path + ".lora_B", type);
  const int s_drop = g.GetOrAddScope(site.path + ".lora_dropout",
                                     c.dropout > 0 ? "Dropout" : "Identity");
  // Linear: A [r, in], B [out, r]; Conv2d: A [r, in, kh, kw] (the base's
  // kernel), B [out, r, 1, 1].
  std::vector<int64_t> shape_a{c.rank, site.in}, shape_b{site.out, c.rank};
  shape_a.insert(shape_a.end(), site.kernel.begin(), site.kernel.end());
  if (site.conv.has_value()) shape_b.insert(shape_b.end(), {1, 1});
  lora.a =
      ed.Param(site.path + ".lora_A.weight", shape_a, c.adapter_dtype, true);
  lora.b =
      ed.Param(site.path + ".lora_B.weight", shape_b, c.adapter_dtype, true);
  // peft: scaling = lora_alpha / r
  lora.scaling = static_cast<double>(c.alpha) / c.rank;
  // NB: `h * self.scaling` multiplies by a Python float, which eager wraps into
  // a 0-dim float64 tensor that MulBackward0 saves (8 bytes of ACT per
  // adapter). x = self._cast_input_dtype(x, lora_A.weight.dtype): an alias when
  // the dtypes agree.
  const int x =
      ed.Op("aten::to", "dtype", {site.x, ed.ScalarType(c.adapter_dtype)},
            {"self", "dtype"}, site.scope);
  int h = x;
  if (c.dropout > 0) {
    h = ed.Op("aten::dropout", "", {x, ed.Float(c.dropout), ed.Bool(true)},
              {"input", "p", "train"}, s_drop);
  }
  int sum;
  if (site.conv.has_value()) {
    h = EmitConv(ed, site, h, lora.a, {{"stride", -1}, {"padding", -1}},
                 lora.scope_a);
    h = EmitConv(ed, site, h, lora.b,
                 {{"stride", ed.Ints({1, 1})}, {"padding", ed.Ints({0, 0})}},
                 lora.scope_b);
    h = ed.Op("aten::mul", "Tensor", {h, ed.WrappedNumber(DType::kFloat64)},
              {"self", "other"}, site.scope);
    sum = ed.Op("aten::add", "Tensor", {site.y, h, ed.Int(1)},
                {"self", "other", "alpha"}, site.scope);
  } else if (c.use_dora) {
    sum = peft::EmitDora(ed, site, c, lora, h);
  } else {
    const int none = ed.None();
    h = ed.Op("aten::linear", "", {h, lora.a, none},
              {"input", "weight", "bias"}, lora.scope_a);
    h = ed.Op("aten::linear", "", {h, lora.b, none},
              {"input", "weight", "bias"}, lora.scope_b);
    h = ed.Op("aten::mul", "Tensor", {h, ed.WrappedNumber(DType::kFloat64)},
              {"self", "other"}, site.scope);
    sum = ed.Op("aten::add", "Tensor", {site.y, h, ed.Int(1)},
                {"self", "other", "alpha"}, site.scope);
  }
  // result = result.to(torch_result_dtype): an alias unless the adapter
  // promoted it.
  return ed.Op("aten::type_as", "", {sum, site.y}, {"self", "other"},
               site.scope);
}

}  // namespace

Result<LoraConfig> ParseLoraConfig(std::string_view text) {
  LoraConfig c;
  Status s = ForEachKeyValue(
      text, "lora", [&](const std::string& key, const std::string& value) {
        bool known = false;
        Status st = ApplyLoraKey(key, value, &c, &known);
        if (st.ok() && !known) {
          return Status::InvalidArgument(
              "unknown key '" + key +
              "' (r, alpha, dropout, targets, dora, dtype)");
        }
        return st;
      });
  if (!s.ok()) return s;
  return c;
}

Result<QloraConfig> ParseQloraConfig(std::string_view text) {
  QloraConfig c;
  // NB: QLoRA adapts every Linear layer (the paper's setting) but the head.
  c.lora.targets = "all-linear";
  Status s = ForEachKeyValue(
      text, "qlora", [&](const std::string& key, const std::string& value) {
        bool known = false;
        Status st = ApplyLoraKey(key, value, &c.lora, &known);
        if (!st.ok() || known) return st;
        char* end = nullptr;
        if (key == "compute") {
          Result<DType> d = ParseDType(value);
          if (!d.ok() || !IsFloatingPoint(*d))
            return Status::InvalidArgument("compute=" + value +
                                           " is not a float dtype");
          c.compute_dtype = *d;
        } else if (key == "block") {
          long long v = std::strtoll(value.c_str(), &end, 10);
          if (value.empty() || *end != '\0' || v <= 0 || v % 2 != 0) {
            return Status::InvalidArgument("block=" + value +
                                           " must be a positive even integer");
          }
          c.block_size = v;
        } else if (key == "double_quant") {
          return ParseSpecBool(key, value, &c.double_quant);
        } else if (key == "skip") {
          c.skip = value;
        } else {
          return Status::InvalidArgument(
              "unknown key '" + key +
              "' (r, alpha, dropout, targets, dtype, compute, block, "
              "double_quant, skip)");
        }
        return Status::Ok();
      });
  if (!s.ok()) return s;
  if (c.lora.use_dora)
    return Status::InvalidArgument(
        "qlora: dora on 4-bit weights is not modelled");
  return c;
}

Result<ir::Graph> ApplyLora(const ir::Graph& graph, const LoraConfig& config) {
  // NB: "all-linear" is peft's: every Linear layer but the output layer (here
  // the graph's last Linear); no convolutions.
  const bool all_linear = config.targets == "all-linear";
  Result<std::regex> targets =
      CompileTargets(all_linear ? ".*" : config.targets, "lora: targets");
  if (!targets.ok()) return targets.status();
  static const std::set<std::string> kLinearOps = {
      "aten::linear", "bnb::matmul_4bit", "aten::addmm", "aten::mm"};
  int output_layer = -1;
  for (size_t ni = 0; ni < graph.nodes.size() && all_linear; ++ni) {
    if (kLinearOps.count(graph.nodes[ni].op) && AsSite(graph, graph.nodes[ni]))
      output_layer = static_cast<int>(ni);
  }
  ir::Graph g = graph;
  g.nodes.clear();
  for (auto& v : g.values) v.producer = -1;
  // NB: peft freezes the base model; only the adapters train.
  for (auto& p : g.params) p.requires_grad = false;
  GraphEditor ed(g);
  std::unordered_map<int, int> replaced;  // Old output -> the adapted output.
  auto remap = [&](int v) {
    auto it = replaced.find(v);
    return it == replaced.end() ? v : it->second;
  };
  int adapted = 0;
  // NB: one regex match per module, not per node (std::regex is slow).
  std::vector<int8_t> scope_matches(graph.scopes.size(), -1);
  for (size_t ni = 0; ni < graph.nodes.size(); ++ni) {
    ir::Node n = graph.nodes[ni];
    for (int& in : n.inputs) in = remap(in);
    const int index = g.AddNode(std::move(n));
    const int scope = g.nodes[index].scope;
    const std::string& op = g.nodes[index].op;
    const bool conv = op == "aten::_convolution" || op == "aten::conv2d";
    // NB: adapters on Megatron's sequence-parallel linear would need its
    // gathered input: not modelled.
    if (op == "torchcost::sp_linear" &&
        MatchesModule(graph.scopes[scope].path, config.targets, *targets)) {
      return Status::InvalidArgument(
          "lora: '" + graph.scopes[scope].path +
          "' is a sequence-parallel linear (sp=true): adapters on it are not "
          "modelled");
    }
    if (!kLinearOps.count(op) && !(conv && !all_linear)) continue;
    if (static_cast<int>(ni) == output_layer) continue;
    std::optional<AdapterSite> site;
    if (op == "aten::addmm" || op == "aten::mm")
      site = AsSite(g, g.nodes[index]);
    if (site && site->fan_in_fan_out) {
      // NB: Conv1D sites are matched by their own module path (several can
      // share a scope).
      if (!MatchesModule(site->path, config.targets, *targets)) continue;
    } else {
      if (scope_matches[scope] < 0) {
        scope_matches[scope] =
            MatchesModule(graph.scopes[scope].path, config.targets, *targets)
                ? 1
                : 0;
      }
      if (scope_matches[scope] == 0) continue;
      if (!site) site = AsSite(g, g.nodes[index]);
    }
    if (!site) continue;
    if (config.use_dora && (site->quantized || site->conv.has_value())) {
      return Status::InvalidArgument(
          "lora: dora on the " +
          std::string(site->quantized ? "4-bit" : "convolution") + " layer '" +
          site->path + "' is not modelled");
    }
    replaced[site->y] = EmitAdapter(ed, *site, config);
    ++adapted;
  }
  for (int& o : g.outputs) o = remap(o);
  if (adapted == 0) {
    return Status::InvalidArgument(
        "lora: no Linear or Conv1D layer in a module matching targets '" +
        config.targets + "'");
  }
  return g;
}

}  // namespace torchcost
