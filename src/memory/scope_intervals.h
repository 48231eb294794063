// The module tree in pre-order: a module's subtree is one interval of the
// numbering, so "is scope a inside module r" is two comparisons instead of a
// walk up a's ancestors.
#ifndef TORCHCOST_SRC_MEMORY_SCOPE_INTERVALS_H_
#define TORCHCOST_SRC_MEMORY_SCOPE_INTERVALS_H_

#include <vector>

#include "torchcost/graph.h"

namespace torchcost::memory {

// Pre-order numbers and subtree sizes of a graph's scopes, from their parents.
// NB: a subtree is numbered contiguously in pre-order, so scope a is in r's
// subtree iff first(r) <= first(a) < first(r) + size(r).
class ScopeIntervals {
 public:
  // Numbers the scopes of `g` (every scope reaches a root through its parents).
  explicit ScopeIntervals(const ir::Graph& g);

  // Returns true if `scope` is `root` or inside it, as memory::InSubtree.
  bool InSubtree(int scope, int root) const {
    // One unsigned comparison: first(scope) - first(root) in [0, size(root)).
    return static_cast<unsigned>(first_[scope] - first_[root]) <
           static_cast<unsigned>(size_[root]);
  }

  // Returns the pre-order number of `scope`.
  // NB: the scopes of a subtree number contiguously, so a set of scopes is
  // inside `root` iff its first and its last in this order are.
  int Order(int scope) const { return first_[scope]; }

 private:
  std::vector<int> first_;  // Pre-order number of each scope.
  std::vector<int> size_;   // Scopes in each subtree, itself included.
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_SCOPE_INTERVALS_H_
