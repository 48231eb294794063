// The autograd pass: which values require gradients, which input gradients
// each node's backward computes (and at what FLOPs), and what each node saves
// for backward, following the rules' `saved` entries (derivatives.yaml).
#ifndef TORCHCOST_SRC_PASSES_AUTOGRAD_H_
#define TORCHCOST_SRC_PASSES_AUTOGRAD_H_

#include <vector>

#include "passes/shape_prop.h"
#include "torchcost/graph.h"
#include "torchcost/training.h"

namespace torchcost::passes {

// A tensor a node keeps for its backward.
struct SavedRef {
  int value = -1;      // The graph value saved (an argument or output), or -1 for a temporary.
  int temporary = -1;  // Index into the node's applied temporaries, or -1.
  int slot = -1;       // The rule's slot it was named by (for messages).
};

// What backward does at one node.
struct NodeAutograd {
  bool has_grad_fn = false;       // Some differentiable input requires a gradient.
  bool unknown_backward = false;  // An op without a rule: its backward FLOPs and saved tensors are unknown.
  ir::SmallInts grad_inputs;      // Values whose gradients this node's backward produces.
  std::vector<SavedRef> saved;    // Saved tensors (only if has_grad_fn).
  sym::Expr bwd_flops, bwd_transcendentals;
  sym::Expr bwd_workspace;        // Scratch bytes of the backward beyond its gradients (the largest needed phase).
};

// Everything the autograd pass found.
struct AutogradFacts {
  std::vector<bool> requires_grad;  // Parallel to Graph::values (a list: any element).
  std::vector<bool> param_trainable;  // Parallel to Graph::params, after freezing.
  std::vector<NodeAutograd> nodes;  // Parallel to Graph::nodes.
};

// Runs the autograd pass. In inference nothing requires a gradient. Errors: a bad freeze regex.
Status RunAutograd(const ir::Graph& graph, const ShapeFacts& shapes, const TrainingOptions& options,
                   AutogradFacts* out);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_AUTOGRAD_H_
