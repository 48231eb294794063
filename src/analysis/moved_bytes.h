// The bytes each node reads and writes in forward and backward, and the
// optimizer step's, for the time model (docs/calibration.md).
#ifndef TORCHCOST_SRC_ANALYSIS_MOVED_BYTES_H_
#define TORCHCOST_SRC_ANALYSIS_MOVED_BYTES_H_

#include "passes/autograd.h"
#include "passes/shape_prop.h"
#include "torchcost/analysis.h"
#include "torchcost/graph.h"

namespace torchcost::analysis {

// Returns the class of a node ruled by `rule` in `variant`: the variant's
// `class:`, else by the rule file's family (matmul, conv, rnn: matmul;
// attention; reduction, norm, loss: reduction; any other: pointwise).
OpClass ClassOf(const rules::OpRule& rule, const rules::Variant& variant);

// Fills NodeCost::bytes and op_class of every node, Report::collectives (the
// rules' `collectives:`), and in a training step
// TrainingReport::node_bwd_bytes and optimizer_bytes. Defaults: a forward
// moves its distinct tensor inputs, outputs and temporaries (a view nothing),
// and a batched matmul also reads and writes its fold copies
// (memory::MatmulFoldCopyBytes);
// a backward, per input gradient, reads the output gradients and writes the
// input's gradient, and reads each saved tensor once; a rule's `bytes:` wins.
void FillMovedBytes(const ir::Graph& graph, const passes::ShapeFacts& facts,
                    const passes::AutogradFacts& grads,
                    const TrainingOptions& options, Report* report);

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_MOVED_BYTES_H_
