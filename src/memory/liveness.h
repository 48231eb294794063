// Liveness: when the forward is done with each storage, read off the
// nodes' uses of values, with eager PyTorch's rule that
// a module's argument lives until the module call that reads it returns.
#ifndef TORCHCOST_SRC_MEMORY_LIVENESS_H_
#define TORCHCOST_SRC_MEMORY_LIVENESS_H_

#include <cstddef>
#include <vector>

#include "memory/storages.h"
#include "torchcost/graph.h"

namespace torchcost::memory {

// Returns true if `scope` is `root` or inside it (ir::InSubtree).
using ir::InSubtree;

// For each node and each of its enclosing modules (innermost first, root
// excluded), the last node of the module call it belongs to; a call is a
// maximal run of consecutive nodes in the module's subtree.
// NB: flat, one buffer for the whole graph: node i's call ends are
// ends[offsets[i]] .. ends[offsets[i + 1] - 1].
struct CallEndTable {
  std::vector<size_t> offsets;  // One per node, then the total.
  std::vector<int> ends;
  // Returns the first of node `node`'s call ends (its innermost module's).
  const int* Of(int node) const { return ends.data() + offsets[node]; }
  // Returns how many modules enclose node `node` (the root excluded).
  int Depth(int node) const {
    return static_cast<int>(offsets[node + 1] - offsets[node]);
  }
};

// Returns every node's call ends.
CallEndTable CallEnds(const ir::Graph& g);

// Sets each storage's last forward use (Storage::last_use) and returns, per
// node, the storages whose last forward use it is.
// NB: eager PyTorch frees a tensor when Python drops it, not at its last use:
// a module's argument is held by the caller until the call returns
// (`x = self.block(x)`), so it lives to the end of every module call that
// reads it from outside. A container without a forward (ModuleList,
// ModuleDict) is never called: it holds nothing.
std::vector<ir::SmallInts> ComputeLastUses(const ir::Graph& g,
                                           StorageTable* table);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_LIVENESS_H_
