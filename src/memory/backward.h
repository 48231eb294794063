// Backward: which nodes' backward runs, and the replay of the backward pass
// in reverse graph order: gradients allocated, joined and handed on, saved
// tensors released as each node's backward is done.
#ifndef TORCHCOST_SRC_MEMORY_BACKWARD_H_
#define TORCHCOST_SRC_MEMORY_BACKWARD_H_

#include "memory/state.h"

namespace torchcost::memory {

// Finds the nodes whose backward runs (StepState::runs_backward): those on a
// differentiable path to the first output (the loss is its sum). Unpins the
// outputs the step drops and pins the ones it keeps.
// NB: other outputs are dropped by the step, and with them the graph that
// only they reach (LeNet5's probs). An in-place write into a storage
// (`attn[:, :, 1:, 1:] += rel_pos`: add_ and copy_ on views of attn) changes
// what every later reader of that storage sees, so it is on the path when a
// needed value read after it lives there (PyTorch's CopySlices routes the
// base's gradient into the write).
void FindBackwardNodes(StepState* state);

// Replays the backward: the loss and its gradient, then each node from the
// last, replaying checkpoint segments as backward reaches them.
// NB: an output of unknown shape (after an op without a rule) still runs
// backward, so that the parameters get their gradients.
void RunBackward(StepState* state);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_BACKWARD_H_
