// The top-k module types at one depth, as DeepSpeed's profiler prints them:
// "Top 3 modules by FLOPs at depth 2: {'Conv2d': '824.04 KFLOPs', ...}".
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/text_sections.h"

namespace torchcost::report {
namespace {

// The summed cost of the modules of one type at the chosen depth.
struct TypeTotal {
  std::string type;
  sym::Expr flops;
  int64_t params = 0;
  bool exact = true;  // False if summing the FLOPs overflowed.
};

// Returns "{'A': 'x', 'B': 'y'}" for the first `k` entries of `items`.
std::string PythonDict(
    const std::vector<std::pair<std::string, std::string>>& items, size_t k) {
  std::string out = "{";
  for (size_t i = 0; i < items.size() && i < k; ++i) {
    if (i > 0) out += ", ";
    out += "'" + items[i].first + "': '" + items[i].second + "'";
  }
  return out + "}";
}

}  // namespace

std::string RenderTopModules(const ir::Graph& graph, const Report& report,
                             const TextOptions& options) {
  if (options.top_k <= 0) return "";
  int depth = options.top_depth;
  if (depth < 0) {
    depth = 0;
    for (const ir::Scope& s : graph.scopes) depth = std::max(depth, s.depth);
  }
  std::map<std::string, TypeTotal> by_type;
  for (size_t s = 0; s < graph.scopes.size(); ++s) {
    const ir::Scope& scope = graph.scopes[s];
    if (scope.depth != depth) continue;
    const ModuleStats* stats = FindModuleStats(report, static_cast<int>(s));
    if (stats == nullptr) continue;
    TypeTotal& t = by_type[scope.type];
    t.type = scope.type;
    t.params += stats->params;
    try {
      t.flops += stats->flops;
    } catch (const std::exception&) {
      t.exact = false;  // An int64 overflow: the sum is shown as unknown, never
                        // wrapped.
    }
  }
  std::vector<TypeTotal> by_name;
  for (auto& [type, t] : by_type) by_name.push_back(t);

  const sym::Bindings& b = options.bindings;
  const size_t k = static_cast<size_t>(options.top_k);
  const std::string top = "Top " + std::to_string(k) + " modules by ";
  const std::string at = " at depth " + std::to_string(depth) + ": ";
  std::string out;

  // Ties keep type-name order (std::map order, then a stable sort).
  std::vector<TypeTotal> totals = by_name;
  std::stable_sort(totals.begin(), totals.end(),
                   [&](const TypeTotal& x, const TypeTotal& y) {
                     return RankValue(x.flops, b) > RankValue(y.flops, b);
                   });
  std::vector<std::pair<std::string, std::string>> items;
  for (const TypeTotal& t : totals) {
    items.push_back(
        {t.type, t.exact ? HumanExpr(t.flops, b, Unit::kFlops) : "?"});
  }
  out += top + "FLOPs" + at + PythonDict(items, k) + "\n";

  totals = by_name;
  std::stable_sort(totals.begin(), totals.end(),
                   [](const TypeTotal& x, const TypeTotal& y) {
                     return x.params > y.params;
                   });
  items.clear();
  for (const TypeTotal& t : totals)
    items.push_back({t.type, Human(t.params, Unit::kCount)});
  out += top + "params" + at + PythonDict(items, k) + "\n";
  return out;
}

}  // namespace torchcost::report
