// The loss and autocast rewrites, handing out the shape propagation they made
// of the graph they return, so that the pipeline (AnalyzeStep) propagates each
// graph once: the loss extends the base graph's propagation over its ops;
// autocast starts from it and ends with its last round's, which the analysis
// takes (training::AnalyzePropagated).
#ifndef TORCHCOST_SRC_TRAINING_PROPAGATED_H_
#define TORCHCOST_SRC_TRAINING_PROPAGATED_H_

#include "passes/shape_prop.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/loss.h"

namespace torchcost::training {

// ApplyLoss. If `extended` is given, it is set to true when `facts` and
// `propagated` (values, node costs, unknown ops, assumptions, diagnostics)
// are PropagateShapes' output for the returned graph under the updated
// `*options` (not for a causal LM's loss, which needs no propagation, nor
// with options->param_dtype set).
Result<ir::Graph> ApplyLossPropagated(const ir::Graph& graph,
                                      const RuleSet& rules, sym::Context& ctx,
                                      AnalysisOptions* options,
                                      passes::ShapeFacts* facts,
                                      Report* propagated, bool* extended);

// ApplyAutocast. If `given`, `facts` and `propagated` already hold the
// propagation of `graph` under `options` (its first round is skipped). On
// success they hold the propagation of the returned graph.
// NB: with options.param_dtype set, they describe the converted graph returned.
Result<ir::Graph> ApplyAutocastPropagated(
    const ir::Graph& graph, const RuleSet& rules, sym::Context& ctx,
    const AnalysisOptions& options, passes::ShapeFacts* facts,
    Report* propagated, bool given = false);

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_TRAINING_PROPAGATED_H_
