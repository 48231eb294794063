// Analyze, from a shape propagation already made (by the autocast rewrite's
// last round): the pipeline propagates each graph once.
#ifndef TORCHCOST_SRC_ANALYSIS_ANALYZE_PROPAGATED_H_
#define TORCHCOST_SRC_ANALYSIS_ANALYZE_PROPAGATED_H_

#include "passes/shape_prop.h"
#include "torchcost/analysis.h"

namespace torchcost::analysis {

// Returns what Analyze(graph, rules, ctx, options) returns, given `facts` and
// `propagated` as passes::PropagateShapes(graph, rules, ctx, options, ...)
// left them. options.param_dtype must be kUnknown (convert the graph first).
Result<Report> AnalyzePropagated(const ir::Graph& graph, const RuleSet& rules,
                                 sym::Context& ctx,
                                 const AnalysisOptions& options,
                                 passes::ShapeFacts facts, Report propagated);

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_ANALYZE_PROPAGATED_H_
