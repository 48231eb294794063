// Checkpoint replay (torch.utils.checkpoint, use_reentrant=True): a segment's
// forward runs under no_grad, saving only its inputs; when backward reaches
// it, its forward runs again with grad enabled into fresh storages, which
// live until the segment's backward is done.
#ifndef TORCHCOST_SRC_MEMORY_CHECKPOINT_REPLAY_H_
#define TORCHCOST_SRC_MEMORY_CHECKPOINT_REPLAY_H_

#include <vector>

#include "memory/state.h"

namespace torchcost::memory {

// Marks the segments some gradient flows through
// (CheckpointSegment::recomputed) and sums their forward FLOPs, which backward
// runs again (tr.flops_recompute). NB: in inference too nothing is recomputed:
// nothing runs backward.
void PlanCheckpoints(StepState* state);

// Saves segment `i`'s tensor arguments, as CheckpointFunction does: every
// storage its nodes read that was made outside it, parameters and buffers
// aside; `unique` marks, per storage id, those counted in tr.saved_bytes.
void SaveCheckpointInputs(int i, std::vector<bool>* unique, StepState* state);

// Backward reached segment `i`: its forward runs again with grad enabled,
// into fresh storages (TEMP, as MemTracker counts tensors made in backward);
// its nodes save as usual, and the outputs, and the gradients that came for
// them, stay until the segment's backward is done (FinishSegment).
void ReplaySegment(int i, StepState* state);

// Segment `i`'s backward is done: CheckpointFunction returns, dropping the
// recomputed outputs, the output gradients, and its saved inputs.
void FinishSegment(int i, StepState* state);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_CHECKPOINT_REPLAY_H_
