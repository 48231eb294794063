#include "import/value_names.h"

#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

namespace torchcost::import {
namespace {

bool AllDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

bool Identifier(const std::string& s, size_t end) {
  if (end == 0 ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (size_t i = 1; i < end; ++i) {
    if (!(std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_'))
      return false;
  }
  return true;
}

// Returns true if `name` is a reader-made name ("x", "x.3", "17") and sets
// `base` to its variable ("x", or "" for a number).
bool ReaderName(const std::string& name, std::string* base) {
  if (name.empty() || AllDigits(name, 0)) {
    base->clear();
    return true;
  }
  const size_t dot = name.find('.');
  if (dot == std::string::npos) {
    if (!Identifier(name, name.size())) return false;
    *base = name;
    return true;
  }
  if (!Identifier(name, dot) || !AllDigits(name, dot + 1)) return false;
  *base = name.substr(0, dot);
  return true;
}

}  // namespace

void CanonicalizeValueNames(ir::Graph* graph) {
  ir::Graph& g = *graph;
  std::vector<bool> done(g.values.size(), false);
  // By base name: how many values took it.
  std::unordered_map<std::string, int> uses;
  int unnamed = 0, constants = 0;
  auto visit = [&](int index) {
    if (index < 0 || index >= static_cast<int>(g.values.size()) || done[index])
      return;
    done[index] = true;
    ir::Value& v = g.values[index];
    if (v.role == ir::ValueRole::kParam || v.role == ir::ValueRole::kBuffer)
      return;
    std::string base;
    if (!ReaderName(v.name, &base)) return;
    if (v.role == ir::ValueRole::kConstant) {
      v.name = "c" + std::to_string(constants++);
    } else if (base.empty()) {
      v.name = std::to_string(unnamed++);
    } else {
      const int n = uses[base]++;
      v.name = n == 0 ? base : base + "." + std::to_string(n);
    }
  };
  for (int in : g.inputs) visit(in);
  for (const ir::Node& n : g.nodes) {
    for (int in : n.inputs) visit(in);
    for (int out : n.outputs) visit(out);
  }
  for (int out : g.outputs) visit(out);
  for (size_t i = 0; i < g.values.size(); ++i) visit(static_cast<int>(i));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ir::Node& n = g.nodes[i];
    n.debug_name = n.outputs.empty() ? "%" + std::to_string(i)
                                     : "%" + g.values[n.outputs[0]].name;
  }
}

}  // namespace torchcost::import
