// Saved tensors: what autograd keeps from the forward for the backward, which
// makes a forward storage ACT rather than TEMP, and each module's share.
#ifndef TORCHCOST_SRC_MEMORY_SAVED_H_
#define TORCHCOST_SRC_MEMORY_SAVED_H_

#include "memory/state.h"

namespace torchcost::memory {

// Marks what every node whose backward runs saves (and what checkpoint
// segments save, checkpoint_replay.h); fills tr.saved, tr.saved_bytes and
// tr.module_act_bytes. Needs the backward path and the checkpoint plan.
// NB: a checkpointed node runs under no_grad: it saves only when recomputed.
void MarkSaved(StepState* state);

// Fills tr.module_act_bytes: the saved bytes of each module's subtree, each
// storage once per module whose nodes save it; parameters and buffers aside.
void AttributeActivations(StepState* state);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_SAVED_H_
