// One data-parallel rank's memory: the single-device timeline of the step
// rewritten under a sharding strategy (DDP, ZeRO-1/2/3, FSDP) and master
// weights, with the rank's states and communication per step.
#ifndef TORCHCOST_SRC_ANALYSIS_SHARDING_H_
#define TORCHCOST_SRC_ANALYSIS_SHARDING_H_

#include <vector>

#include "torchcost/analysis.h"

namespace torchcost::training {

// Rewrites report->training.timeline (from SimulateStep) point by point into
// one rank's, in time linear in its length, and fills
// report->training.sharding. `trainable` is parallel to Graph::params,
// `requires_grad` to Graph::values. Does nothing unless the step trains with a
// sharding strategy or master weights.
Status ShardStep(const ir::Graph& graph, const std::vector<bool>& trainable,
                 const std::vector<bool>& requires_grad,
                 const TrainingOptions& options, Report* report);

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_ANALYSIS_SHARDING_H_
