// The memory simulation of a training step (or an inference forward) over
// storages: setup, forward, backward and optimizer step as events, giving
// the timeline of live bytes per category.
#ifndef TORCHCOST_SRC_MEMORY_STEP_H_
#define TORCHCOST_SRC_MEMORY_STEP_H_

#include "passes/autograd.h"
#include "passes/shape_prop.h"
#include "torchcost/analysis.h"

namespace torchcost::memory {

// Simulates the step and fills report->training (timeline, saved bytes,
// per-module activation bytes). NB: the modelled step is
// `opt.zero_grad(set_to_none=True); out = model(x); loss.backward();
// opt.step()` in steady state (optimizer states exist), with loss = out.sum()
// (options.loss sum) or the graph's first output (any other loss; the second
// output, the model's own, is then kept to the end).
void SimulateStep(const ir::Graph& graph, const passes::ShapeFacts& shapes,
                  const passes::AutogradFacts& grads,
                  const TrainingOptions& options, Report* report);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_STEP_H_
