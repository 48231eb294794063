// Symbolic shape propagation: gives every value of a graph its symbolic type
// and every node its forward cost, by applying the rules in graph order.
#ifndef TORCHCOST_SRC_PASSES_SHAPE_PROP_H_
#define TORCHCOST_SRC_PASSES_SHAPE_PROP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/small_ints.h"
#include "rules/apply.h"
#include "rules/value.h"
#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/rules.h"

namespace torchcost::passes {

// Returns the empty rule result, which NodeFacts::applied points at by default.
const rules::Applied* NoApplied();

// The per-node outcome of shape propagation, kept for later passes (autograd,
// memory).
struct NodeFacts {
  // nullptr: native op, unknown op, or skipped.
  const rules::OpRule* rule = nullptr;
  // The rule's result, valid if rule != nullptr and ok; never null (NoApplied()
  // if none). NB: nodes that bound the same values share one result, owned by
  // ShapeFacts::applied (a 1M-node chain holds two, not a million); its
  // outputs are copied to ShapeFacts::values and then dropped.
  const rules::Applied* applied = NoApplied();
  // Schema argument index -> graph value (-1: default used); six in place
  // (NB: aten::to, aten::slice and aten::arange bind five, so a transformer's
  // nodes but attention need no heap block for them).
  ir::InlineInts<6> arg_values;
  // False if the node failed or was skipped.
  bool ok = false;
  // No rule covers the op (and it is not known to cost nothing): its cost is
  // unknown; its outputs' shapes, if known, came from the frontend.
  bool no_rule = false;
};

// Everything shape propagation found.
struct ShapeFacts {
  std::vector<rules::RValue> values;  // Parallel to Graph::values.
  std::vector<NodeFacts> nodes;       // Parallel to Graph::nodes.
  // The distinct rule results the nodes point at (NodeFacts::applied); held
  // by pointer so that they stay put when the facts move.
  std::vector<std::unique_ptr<rules::Applied>> applied;
  // True if a rule read the attention backend.
  bool attention_backend_read = false;
  // The device the rules were applied for (AnalysisOptions::device).
  std::string device = "cuda";
  // The nodes whose facts were copied from a run they repeat (ir::RepeatSpan)
  // rather than found again: a measure of the work saved, not a fact.
  int64_t copied_nodes = 0;
};

// Returns true for an argument that a training step sets to true (batch_norm's
// `training`, dropout's `train`), whatever the trace recorded.
bool IsTrainingFlag(const std::string& arg_name);

// Propagates shapes through `graph`. Fills report->values, nodes, unknown_ops,
// assumptions and diagnostics; returns an error only for bad options.
Status PropagateShapes(const ir::Graph& graph, const RuleSet& rules,
                       sym::Context& ctx, const AnalysisOptions& options,
                       ShapeFacts* facts, Report* report);

// Extends `facts` and `report`, PropagateShapes' output for a graph, to
// `grown`: that graph with values and nodes appended after its own, which are
// unchanged (AppendLoss's graph; its new inputs take their shapes from
// `options`). The result equals PropagateShapes(grown, ...) but for the
// examples of symbols only the appended inputs name (unknown ops' inference).
Status ExtendShapes(const ir::Graph& grown, const RuleSet& rules,
                    sym::Context& ctx, const AnalysisOptions& options,
                    ShapeFacts* facts, Report* report);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_SHAPE_PROP_H_
