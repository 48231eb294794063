// DeepSpeed ZeRO-3's parameter schedule: which parameters a rank holds
// gathered at each point of the step, replaying the module trace of the
// step's timeline through the rules of DeepSpeed's
// PartitionedParameterCoordinator (deepspeed/runtime/zero/
// partitioned_param_coordinator.py at deepspeedai/DeepSpeed edaa722): a
// module's entry gathers its parameters and prefetches those the trace uses
// next; its exit releases them unless they are used again soon or are
// persistent.
// NB: the steady state is modelled: DeepSpeed prefetches and keeps parameters
// for reuse only once it has recorded the trace (from the third step on); the
// first steps gather each module alone.
#ifndef TORCHCOST_SRC_TRAINING_ZERO3_SCHEDULE_H_
#define TORCHCOST_SRC_TRAINING_ZERO3_SCHEDULE_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "torchcost/graph.h"
#include "torchcost/training.h"
#include "training/shard_plan.h"

namespace torchcost::training {

// What ZeRO-3's schedule gathers over one step.
class Zero3Schedule {
 public:
  // Replays the trace of `timeline` (its forward and backward points' module
  // scopes) for the ZeRO-3 `plan` of `graph` under `options`;
  // `requires_grad` is parallel to Graph::values.
  Zero3Schedule(const ir::Graph& graph, const ShardPlan& plan,
                const std::vector<bool>& requires_grad,
                const TimelinePoints& timeline, const ShardingOptions& options);

  // Returns the bytes of non-persistent parameters gathered at timeline point
  // `i` (0 outside the forward and backward).
  int64_t GatheredAt(size_t i) const;
  // Returns the bytes all-gathered over the step (persistent ones excluded).
  int64_t all_gather_bytes() const { return all_gather_bytes_; }
  // Returns the all-gather calls over the step: per module fetched, one for
  // its parameters and one for those it prefetches, where any.
  int all_gather_calls() const { return all_gather_calls_; }
  // Returns the most bytes gathered at once.
  int64_t peak_gathered_bytes() const { return peak_gathered_bytes_; }

 private:
  // (first point, gathered bytes from it on), by point.
  std::vector<std::pair<size_t, int64_t>> changes_;
  int64_t all_gather_bytes_ = 0;
  int all_gather_calls_ = 0;
  int64_t peak_gathered_bytes_ = 0;
};

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_TRAINING_ZERO3_SCHEDULE_H_
