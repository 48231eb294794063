// ApplyAutocast that also hands out the shape propagation of the graph it
// returns, so the analysis after it need not propagate again.
#ifndef TORCHCOST_SRC_TRAINING_AUTOCAST_FACTS_H_
#define TORCHCOST_SRC_TRAINING_AUTOCAST_FACTS_H_

#include "passes/shape_prop.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"

namespace torchcost::training {

// ApplyAutocast; on success `facts` and `propagated` (values, node costs,
// unknown ops, assumptions, diagnostics) are PropagateShapes' output for the
// returned graph under `options`, as analysis::AnalyzePropagated takes them.
// NB: with options.param_dtype set, they describe the converted graph returned.
Result<ir::Graph> ApplyAutocastPropagated(const ir::Graph& graph, const RuleSet& rules, sym::Context& ctx,
                                          const AnalysisOptions& options, passes::ShapeFacts* facts,
                                          Report* propagated);

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_TRAINING_AUTOCAST_FACTS_H_
