// The autograd pass: which values require gradients, which input gradients
// each node's backward computes (and at what FLOPs), and what each node saves
// for backward, following the rules' `saved` entries (derivatives.yaml).
#ifndef TORCHCOST_SRC_PASSES_AUTOGRAD_H_
#define TORCHCOST_SRC_PASSES_AUTOGRAD_H_

#include <cstdint>
#include <vector>

#include "passes/shape_prop.h"
#include "torchcost/graph.h"
#include "torchcost/training.h"

namespace torchcost::passes {

// A tensor a node keeps for its backward.
struct SavedRef {
  // The graph value saved (an argument or output), or -1 for a temporary.
  int value = -1;
  int temporary = -1;  // Index into the node's applied temporaries, or -1.
  int slot = -1;       // The rule's slot it was named by (for messages).
};

// What backward does at one node.
struct NodeAutograd {
  // Some differentiable input requires a gradient.
  bool has_grad_fn = false;
  // An op without a rule: its backward FLOPs and saved tensors are unknown.
  bool unknown_backward = false;
  // Values whose gradients this node's backward produces.
  ir::SmallInts grad_inputs;
  // Its saved tensors (only if has_grad_fn): AutogradFacts::saved[saved_begin,
  // saved_end).
  uint32_t saved_begin = 0, saved_end = 0;
  sym::Expr bwd_flops, bwd_transcendentals;
  // Scratch bytes of the backward beyond its gradients (the largest needed
  // phase).
  sym::Expr bwd_workspace;
};

// Everything the autograd pass found.
struct AutogradFacts {
  // Parallel to Graph::values (a list: any element).
  std::vector<bool> requires_grad;
  // Parallel to Graph::params, after freezing.
  std::vector<bool> param_trainable;
  std::vector<NodeAutograd> nodes;  // Parallel to Graph::nodes.
  // NB: the saved tensors of every node, node after node, in one list rather
  // than a vector per node (a heap block each: a 1M-node chain saves 1M).
  std::vector<SavedRef> saved;

  // The saved tensors of one node.
  struct SavedRange {
    const SavedRef* first;
    const SavedRef* last;
    const SavedRef* begin() const { return first; }
    const SavedRef* end() const { return last; }
    size_t size() const { return static_cast<size_t>(last - first); }
  };
  // Returns node `ni`'s saved tensors.
  SavedRange Saved(size_t ni) const {
    const NodeAutograd& na = nodes[ni];
    return {saved.data() + na.saved_begin, saved.data() + na.saved_end};
  }
};

// Runs the autograd pass. In inference nothing requires a gradient. Errors: a
// bad freeze regex.
Status RunAutograd(const ir::Graph& graph, const ShapeFacts& shapes,
                   const TrainingOptions& options, AutogradFacts* out);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_AUTOGRAD_H_
