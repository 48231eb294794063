#include "memory/scope_intervals.h"

#include <utility>

namespace torchcost::memory {

ScopeIntervals::ScopeIntervals(const ir::Graph& g) {
  const int n = static_cast<int>(g.scopes.size());
  first_.assign(n, 0);
  size_.assign(n, 1);
  // Children by parent, as offsets into one array (a counting sort).
  std::vector<int> begin(n + 1, 0), children(n);
  for (int s = 0; s < n; ++s) {
    if (g.scopes[s].parent >= 0) ++begin[g.scopes[s].parent + 1];
  }
  for (int s = 0; s < n; ++s) begin[s + 1] += begin[s];
  {
    std::vector<int> next(begin.begin(), begin.end() - 1);
    for (int s = 0; s < n; ++s) {
      if (g.scopes[s].parent >= 0) children[next[g.scopes[s].parent]++] = s;
    }
  }
  // Depth-first from each root, numbering on entry; a scope's size is known
  // when its subtree is done: the numbers given since its entry.
  int number = 0;
  std::vector<std::pair<int, int>> stack;  // (scope, next child offset)
  for (int root = 0; root < n; ++root) {
    if (g.scopes[root].parent >= 0) continue;
    first_[root] = number++;
    stack.emplace_back(root, begin[root]);
    while (!stack.empty()) {
      auto& [s, k] = stack.back();
      if (k < begin[s + 1]) {
        const int c = children[k++];
        first_[c] = number++;
        stack.emplace_back(c, begin[c]);
      } else {
        size_[s] = number - first_[s];
        stack.pop_back();
      }
    }
  }
}

}  // namespace torchcost::memory
