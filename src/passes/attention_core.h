// The attention cores of a graph, found by its structure: what Megatron-LM's
// selective activation recomputation (Korthikanti et al. 2022, Sec. 5)
// recomputes in backward instead of keeping.
#ifndef TORCHCOST_SRC_PASSES_ATTENTION_CORE_H_
#define TORCHCOST_SRC_PASSES_ATTENTION_CORE_H_

#include <string>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::passes {

// One attention core: the nodes from its Q K^T product to its A V product.
struct AttentionCore {
  // The first node: the Q K^T product's, or the layout ops' before it.
  int first = -1;
  int last = -1;     // The A V node (or the fused attention node), inclusive.
  int product = -1;  // The Q K^T node (or the fused attention node).
  // A scaled_dot_product_attention node (math, flash or efficient).
  bool fused = false;
};

// Returns the graph's attention cores in node order. A core is either
// - a product (matmul, bmm, baddbmm, einsum, mm) that reaches a softmax only
//   through elementwise ops, casts, masks and views (scale, mask, softcap),
//   whose output reaches a second product's input only through dropout, casts
//   and views: the node range from the first product to the second; or
// - one scaled_dot_product_attention node (any backend's aten op).
// The range then extends back over the layout ops just before it (views,
// transposes, expand, clone, split, and int plumbing) whose results only the
// core reads, as Megatron's core-attention module reshapes q, k, v itself.
// NB: nodes inside the range that are not on that path (a mask built between
// the products) belong to the core too: torch.utils.checkpoint reruns
// whatever the region runs. Overlapping cores are merged.
std::vector<AttentionCore> FindAttentionCores(const ir::Graph& graph);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_ATTENTION_CORE_H_
