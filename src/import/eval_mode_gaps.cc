#include "import/eval_mode_gaps.h"

#include <sstream>

namespace torchcost::import {

void NoteStochasticDepth(const ModuleFacts& facts, ir::Graph* graph) {
  for (const ir::Scope& scope : graph->scopes) {
    if (scope.type != "StochasticDepth" || !facts.traced_in_eval(scope.path))
      continue;
    const std::optional<double> p = facts.number(scope.path, "p");
    if (p && *p <= 0) continue;
    std::ostringstream prob;
    if (p) prob << " (p=" << *p << ")";
    graph->train_gaps.push_back("StochasticDepth '" + scope.path + "'" +
                                prob.str() +
                                ": not in an eval-mode trace, so its mask and "
                                "product are not counted (trace in "
                                "train mode)");
  }
}

void NoteUnknownAttentionDropout(const std::string& path, ir::Graph* graph) {
  graph->train_gaps.push_back(
      "MultiheadAttention '" + path +
      "': its attention dropout is not in an eval-mode trace and its `dropout` "
      "was "
      "not recorded (tools/export/module_attrs.py), so it is not counted");
}

}  // namespace torchcost::import
