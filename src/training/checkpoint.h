// Activation checkpointing: which nodes of a graph form the segments that
// torch.utils.checkpoint runs under no_grad and recomputes in backward.
#ifndef TORCHCOST_SRC_ANALYSIS_CHECKPOINT_H_
#define TORCHCOST_SRC_ANALYSIS_CHECKPOINT_H_

#include <vector>

#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "torchcost/training.h"

namespace torchcost::training {

// Returns the scopes "blocks" stands for: the model's repeated blocks. NB:
// a candidate is a module whose name is an index ("0", or ends in "_0" like
// torchvision ViT's "encoder_layer_0") and that no other candidate contains
// (so resnet's downsample.0 inside layer2.0 is not one); the candidates of
// the most common module type win (ties: the type seen first). Empty if none.
std::vector<int> RepeatedBlocks(const ir::Graph& graph);

// Returns the segments of `options.checkpoint` (empty if none): each maximal
// run of consecutive nodes under one call of a matching module (the
// outermost, if nested modules match; the root never matches) is one call,
// and `options.checkpoint_group` consecutive calls form one segment, with any
// nodes between them. `recomputed` is left false (the step simulation sets it).
// "selective" stands for Megatron's selective recomputation: one segment
// per attention core (passes/attention_core.h), its Q, K, V saved as the
// segment's inputs, its S x S tensors recomputed.
// Errors name the flag: a bad regular expression, a pattern that matches no
// module with nodes, a group below 1, no attention core for "selective".
Result<std::vector<CheckpointSegment>> FindCheckpointSegments(
    const ir::Graph& graph, const TrainingOptions& options);

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_ANALYSIS_CHECKPOINT_H_
