#include "import/module_scopes.h"

#include <vector>

namespace torchcost::import {

std::string JoinModulePath(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

std::string ResolveChildScope(
    const ir::Graph& graph,
    const std::unordered_map<std::string, int>& scope_index,
    const std::string& parent, const std::string& name) {
  const std::string direct = JoinModulePath(parent, name);
  if (scope_index.count(direct)) return direct;
  auto parent_it = scope_index.find(parent);
  if (parent_it == scope_index.end()) return direct;
  std::vector<int> level = graph.scopes[parent_it->second].children;
  for (int depth = 0; depth < 2 && !level.empty(); ++depth) {
    std::string found;
    int matches = 0;
    std::vector<int> next;
    for (int c : level) {
      const std::string candidate = JoinModulePath(graph.scopes[c].path, name);
      if (scope_index.count(candidate)) {
        found = candidate;
        ++matches;
      }
      for (int g : graph.scopes[c].children) next.push_back(g);
    }
    if (matches == 1) return found;
    if (matches > 1) break;
    level.swap(next);
  }
  return direct;
}

}  // namespace torchcost::import
