// Graph construction helpers and diagnostics text.
#include "torchcost/graph.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchcost::ir {
namespace {

// Appends the scope at `path` (its own name from `name_start` on) as the last
// child of `parent`, indexes it, and returns its index.
int AddScope(Graph& g, int parent, std::string path, size_t name_start,
             const std::string& type) {
  Scope scope;
  scope.name = path.substr(name_start);
  scope.path = std::move(path);
  scope.type = type;
  scope.parent = parent;
  scope.depth = g.scopes[parent].depth + 1;
  g.scopes.push_back(std::move(scope));
  const int index = static_cast<int>(g.scopes.size()) - 1;
  g.scopes[parent].children.push_back(index);
  g.scope_index_.Insert(g.scopes, index);
  return index;
}

}  // namespace

int Graph::AddValue(Value v) {
  values.push_back(std::move(v));
  return static_cast<int>(values.size()) - 1;
}

int Graph::AddNode(Node n) {
  const int index = static_cast<int>(nodes.size());
  for (int out : n.outputs) {
    if (out >= 0 && out < static_cast<int>(values.size())) {
      values[out].producer = index;
    }
  }
  nodes.push_back(std::move(n));
  return index;
}

int Graph::GetOrAddScope(const std::string& path, const std::string& type) {
  // NB: the index is rebuilt whenever it disagrees with `scopes` (a graph
  // copied, or scopes edited by hand), so lookups stay O(1) amortized.
  auto reindex = [this] {
    scope_index_.Clear();
    for (size_t i = 0; i < scopes.size(); ++i)
      scope_index_.Insert(scopes, static_cast<int>(i));
  };
  if (scope_index_.size() != scopes.size()) reindex();
  if (const int found = scope_index_.Find(scopes, path); found >= 0)
    return found;
  if (path.empty()) {
    // NB: the root is always scopes[0]; a graph without one gets it here,
    // named after its type as Scope::name documents.
    Scope root;
    root.name = type;
    root.type = type;
    scopes.insert(scopes.begin(), std::move(root));
    // Shift every index that pointed at the old scopes.
    for (size_t i = 1; i < scopes.size(); ++i) {
      if (scopes[i].parent >= 0) ++scopes[i].parent;
      for (int& child : scopes[i].children) ++child;
    }
    for (Node& node : nodes) ++node.scope;
    for (size_t i = 1; i < scopes.size(); ++i) {
      if (scopes[i].parent < 0) {
        scopes[i].parent = 0;
        scopes[0].children.push_back(static_cast<int>(i));
      }
    }
    reindex();  // Every index moved by one.
    return 0;
  }
  // Walk up to the nearest existing ancestor (iteratively: paths may be deep),
  // then create the missing ones top-down.
  // NB: missing ancestors are created with an empty type; only `path` gets
  // `type`.
  struct Missing {
    size_t end;         // Length of its path: path.substr(0, end).
    size_t name_start;  // Where its own name starts in `path`.
  };
  std::vector<Missing> missing;  // Deepest first.
  int parent = -1;
  for (size_t end = path.size(); parent < 0;) {
    const size_t dot = end == 0 ? std::string::npos : path.rfind('.', end - 1);
    missing.push_back({end, dot == std::string::npos ? 0 : dot + 1});
    if (dot == std::string::npos) {
      parent = GetOrAddScope("", "");
    } else if (const int found = scope_index_.Find(
                   scopes, std::string_view(path).substr(0, dot));
               found >= 0) {
      parent = found;
    } else {
      end = dot;
    }
  }
  for (auto m = missing.rbegin(); m != missing.rend(); ++m) {
    parent = AddScope(*this, parent, path.substr(0, m->end), m->name_start,
                      m->end == path.size() ? type : "");
  }
  return parent;
}

int Graph::GetOrAddChildScope(int parent, std::string path,
                              const std::string& type) {
  if (scope_index_.size() != scopes.size() || parent < 0 ||
      parent >= static_cast<int>(scopes.size()))
    return GetOrAddScope(path, type);
  if (const int found = scope_index_.Find(scopes, path); found >= 0)
    return found;
  // Not a child's path of `parent`: the general walk up the ancestors.
  const std::string& up = scopes[parent].path;
  const size_t start = up.empty() ? 0 : up.size() + 1;
  if (path.size() <= start || path.find('.', start) != std::string::npos ||
      (!up.empty() &&
       (path.compare(0, up.size(), up) != 0 || path[up.size()] != '.')))
    return GetOrAddScope(path, type);
  return AddScope(*this, parent, std::move(path), start, type);
}

std::string Graph::NodeLocation(int node) const {
  if (node < 0 || node >= static_cast<int>(nodes.size())) {
    return "node #" + std::to_string(node);
  }
  const Node& n = nodes[node];
  std::string text = "node ";
  text += n.debug_name.empty() ? "#" + std::to_string(node) : n.debug_name;
  text += " (" + n.op;
  if (n.scope >= 0 && n.scope < static_cast<int>(scopes.size())) {
    const Scope& s = scopes[n.scope];
    // The root has an empty path; it is shown by its name (the model's type).
    text += ", module " + (s.path.empty() ? s.name : s.path);
  }
  text += ")";
  return text;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool InSubtree(const Graph& g, int scope, int root) {
  for (int s = scope; s >= 0; s = g.scopes[s].parent) {
    if (s == root) return true;
  }
  return false;
}

int64_t CountedElements(const TensorEntry& entry) {
  return entry.counted_elements >= 0 ? entry.counted_elements
                                     : Numel(entry.shape);
}

}  // namespace torchcost::ir
