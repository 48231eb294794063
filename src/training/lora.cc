#include <cstdlib>
#include <regex>
#include <unordered_map>

#include "torchcost/peft.h"

namespace torchcost {
namespace {

int AddConstant(ir::Graph& g, ir::ValueKind kind, ir::Constant c) {
  ir::Value v;
  v.kind = kind;
  v.role = ir::ValueRole::kConstant;
  v.has_constant = true;
  v.constant = std::move(c);
  return g.AddValue(std::move(v));
}

int AddParam(ir::Graph& g, const std::string& name, std::vector<int64_t> shape, DType dtype) {
  ir::TensorEntry e;
  e.name = name;
  e.shape = std::move(shape);
  e.dtype = dtype;
  e.requires_grad = true;
  ir::Value v;
  v.name = name;
  v.kind = ir::ValueKind::kTensor;
  v.role = ir::ValueRole::kParam;
  v.dtype = dtype;
  v.has_traced_shape = true;
  v.traced_shape = e.shape;
  v.table_index = static_cast<int>(g.params.size());
  const int value = g.AddValue(std::move(v));
  e.value = value;
  g.params.push_back(std::move(e));
  return value;
}

// Appends a node with named inputs and one tensor output; returns the output.
int AddOp(ir::Graph& g, const std::string& op, const std::string& overload, std::vector<int> inputs,
          std::vector<std::string> names, int scope) {
  ir::Value out;
  out.kind = ir::ValueKind::kTensor;
  out.name = "lora" + std::to_string(g.values.size());
  const int o = g.AddValue(std::move(out));
  ir::Node n;
  n.op = op;
  n.overload = overload;
  n.inputs = std::move(inputs);
  n.input_names = std::move(names);
  n.outputs = {o};
  n.scope = scope;
  n.debug_name = "%" + g.values[o].name;
  g.AddNode(std::move(n));
  return o;
}

}  // namespace

Result<LoraConfig> ParseLoraConfig(std::string_view text) {
  LoraConfig c;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    start = comma == std::string_view::npos ? text.size() : comma + 1;
    if (item.empty()) continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos) return Status::InvalidArgument("lora: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char* end = nullptr;
    if (key == "r" || key == "rank" || key == "alpha") {
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || v <= 0) {
        return Status::InvalidArgument("lora: " + key + "=" + value + " must be a positive integer");
      }
      (key == "alpha" ? c.alpha : c.rank) = v;
    } else if (key == "dropout") {
      double d = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || d < 0 || d >= 1) {
        return Status::InvalidArgument("lora: dropout=" + value + " must be in [0, 1)");
      }
      c.dropout = d;
    } else if (key == "targets") {
      c.targets = value;
    } else {
      return Status::InvalidArgument("lora: unknown key '" + key + "' (r, alpha, dropout, targets)");
    }
  }
  return c;
}

Result<ir::Graph> ApplyLora(const ir::Graph& graph, const LoraConfig& config) {
  std::regex targets;
  try {
    targets = std::regex(config.targets, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::InvalidArgument("lora: targets '" + config.targets + "': not a valid regular expression");
  }
  ir::Graph g = graph;
  g.nodes.clear();
  for (auto& v : g.values) v.producer = -1;
  // NB: peft freezes the base model; only the adapters train.
  for (auto& p : g.params) p.requires_grad = false;
  std::unordered_map<int, int> replaced;  // Old output -> the adapted output.
  auto remap = [&](int v) {
    auto it = replaced.find(v);
    return it == replaced.end() ? v : it->second;
  };
  int adapted = 0;
  for (const ir::Node& original : graph.nodes) {
    ir::Node n = original;
    for (int& in : n.inputs) in = remap(in);
    const int index = g.AddNode(n);
    const ir::Node& node = g.nodes[index];
    const ir::Scope& scope = graph.scopes[node.scope];
    const std::string& path = scope.path;
    const std::string leaf = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
    const bool match = node.op == "aten::linear" && !path.empty() &&
                       std::regex_match(path.find('.') != std::string::npos && config.targets.find('.') != std::string::npos
                                            ? path
                                            : leaf,
                                        targets);
    if (!match) continue;
    // The base weight [out, in], read by name from the node.
    int x = -1, w = -1;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const std::string& name = i < node.input_names.size() ? node.input_names[i] : (i == 0 ? "input" : "weight");
      if (name == "input") x = node.inputs[i];
      if (name == "weight") w = node.inputs[i];
    }
    if (x < 0 || w < 0 || g.values[w].role != ir::ValueRole::kParam) continue;
    const ir::TensorEntry& weight = g.params[g.values[w].table_index];
    if (weight.shape.size() != 2) continue;
    const int64_t out = weight.shape[0], in = weight.shape[1];
    const int y = node.outputs[0];
    const int s_drop = g.GetOrAddScope(path + ".lora_dropout", config.dropout > 0 ? "Dropout" : "Identity");
    const int s_a = g.GetOrAddScope(path + ".lora_A", "Linear");
    const int s_b = g.GetOrAddScope(path + ".lora_B", "Linear");
    const int a = AddParam(g, path + ".lora_A.weight", {config.rank, in}, weight.dtype);
    const int b = AddParam(g, path + ".lora_B.weight", {out, config.rank}, weight.dtype);
    const int none = AddConstant(g, ir::ValueKind::kNone, std::monostate());
    int h = x;
    if (config.dropout > 0) {
      h = AddOp(g, "aten::dropout", "", {x, AddConstant(g, ir::ValueKind::kFloat, config.dropout),
                                         AddConstant(g, ir::ValueKind::kBool, true)},
                {"input", "p", "train"}, s_drop);
    }
    h = AddOp(g, "aten::linear", "", {h, a, none}, {"input", "weight", "bias"}, s_a);
    h = AddOp(g, "aten::linear", "", {h, b, none}, {"input", "weight", "bias"}, s_b);
    // scaling = alpha / r, a Python float in peft.
    h = AddOp(g, "aten::mul", "Scalar",
              {h, AddConstant(g, ir::ValueKind::kFloat, static_cast<double>(config.alpha) / config.rank)},
              {"self", "other"}, node.scope);
    const int sum = AddOp(g, "aten::add", "Tensor", {y, h, AddConstant(g, ir::ValueKind::kInt, int64_t{1})},
                          {"self", "other", "alpha"}, node.scope);
    replaced[y] = sum;
    ++adapted;
  }
  for (int& o : g.outputs) o = remap(o);
  if (adapted == 0) {
    return Status::InvalidArgument("lora: no aten::linear in a module matching targets '" + config.targets + "'");
  }
  // Scopes added after their parents: rebuild the children lists' order is kept by GetOrAddScope.
  return g;
}

}  // namespace torchcost
