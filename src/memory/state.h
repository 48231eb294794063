// The state the phases of the step's simulation share: the graph and what the
// passes found, the storages, the timeline, and what each phase leaves for
// the next (the backward path, saved tensors, checkpoint segments, gradient
// slots, the optimizer's locals).
#ifndef TORCHCOST_SRC_MEMORY_STATE_H_
#define TORCHCOST_SRC_MEMORY_STATE_H_

#include <array>
#include <map>
#include <utility>
#include <vector>

#include "memory/bytes_cache.h"
#include "memory/storages.h"
#include "memory/timeline.h"
#include "passes/autograd.h"
#include "passes/shape_prop.h"
#include "torchcost/analysis.h"
#include "training/galore_model.h"

namespace torchcost::memory {

// Checkpointing (torch.utils.checkpoint, use_reentrant=True): each node's
// recomputed segment (or -1), the segments starting and ending at each node,
// each segment's saved inputs, and what the segment being recomputed holds
// until it is done.
struct CheckpointState {
  std::vector<int> of, starting_at, ending_at;
  std::vector<std::vector<int>> inputs;
  std::vector<int> held, held_grads;
};

// Backward: the gradient slots of values and lists, and what the node being
// run frees when it is done.
struct BackwardState {
  // Per value: the storage of its gradient, or -1.
  std::vector<int> grad_of;
  // Per list value: its elements' gradients.
  std::vector<ir::SmallInts> list_grads;
  // Backward nodes still to add to each value's gradient.
  std::vector<int> grad_contributions;
  // Freed after the node (new gradients added elsewhere, workspace).
  std::vector<int> transient;
  // Gradients replaced by a join's sum, freed after the node.
  std::vector<int> joined;
};

// The optimizer's side: GradScaler's tensors, and GaLore's update loop (its
// local names and the parameter gradients accumulated at the node being run).
struct OptimizerState {
  // GradScaler tensor -> its storage.
  std::vector<int> scaler;
  // Bytes each local name holds.
  std::array<int64_t, training::kNumSlots> slot_bytes{};
  // TEMP bytes of the update running (slots included).
  int64_t update_temp = 0;
  // (parameter value, gradient storage)
  std::vector<std::pair<int, int>> accumulated;
  // Trainable parameter value -> its index in Graph::params.
  std::map<int, size_t> param_of_value;
};

// Everything one simulation of a step reads and writes.
struct StepState {
  // Reads the graph and the passes' facts; writes report->training.
  StepState(const ir::Graph& graph, const passes::ShapeFacts& shapes,
            const passes::AutogradFacts& grads, const TrainingOptions& options,
            Report* report);

  const ir::Graph& g;
  const passes::ShapeFacts& shapes;
  const passes::AutogradFacts& grads;
  const TrainingOptions& options;
  Report* report;
  TrainingReport& tr;

  StorageTable storages;
  // The bytes of the tensors the backward's gradients and the saved traced
  // constants stand for.
  BytesCache bytes;
  Timeline timeline;
  // Per node: storages whose last forward use it is.
  std::vector<ir::SmallInts> release_at;
  std::vector<bool> runs_backward;  // Per node: its backward runs.
  // Per node: the storages its backward holds.
  std::vector<ir::SmallInts> saved_storages;
  // Per node: the storages it saves in the forward.
  std::vector<ir::SmallInts> forward_saved;
  CheckpointState ckpt;
  BackwardState bwd;
  OptimizerState opt;

  // Allocates storage `s` on the timeline.
  void Alloc(int s) { timeline.Alloc(&storages[s]); }
  // Frees storage `s` on the timeline.
  void Free(int s) { timeline.Free(&storages[s]); }
  // Records a timeline point.
  void Point(StepPhase phase, int node) { timeline.Point(phase, node); }
  // Frees `s` if nothing holds it any more at node `now`: not pinned, saved, a
  // gradient, or read later.
  void Release(int s, int now);

  // Returns the node's workspace bytes (kernel scratch, layout copies) if any.
  const sym::Expr* Workspace(size_t ni, bool backward) const;
  // True if node `ni`'s rule writes into an argument (add_, copy_, index_put_).
  bool WritesInPlace(int ni) const;
  // True if the parameters' gradients exist before the forward.
  // NB: with zero_grad(set_to_none=False), or from the second micro-batch of
  // a gradient accumulation on, the parameters' gradients exist before the
  // forward and backward adds into them in place; the step modelled is then
  // such a micro-batch (it peaks at least as high as the first).
  bool GradsPresent() const;
  // True if GaLore's optimizer steps the parameters.
  bool Galore() const;
  // True if GaLore steps each parameter in backward, as its gradient is
  // accumulated.
  bool PerLayer() const;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_STATE_H_
