// Sums of many expressions with few distinct ones: a model repeats its
// layers, so the tensors a module saves have a handful of sizes, and adding
// each distinct size once, times how often it came, builds far fewer
// interned sums than adding every tensor's bytes in turn.
#ifndef TORCHCOST_SRC_MEMORY_GROUPED_SUMS_H_
#define TORCHCOST_SRC_MEMORY_GROUPED_SUMS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::memory {

// Per group (a module, a storage table): the sum of the expressions added to
// it, kept as counts of distinct expressions until AddTo.
// NB: sums of expressions are canonical, so adding count * e once gives the
// same expression as adding e count times, in any order.
class GroupedSums {
 public:
  // Adds `e` to group `group`'s sum (group >= 0).
  void Add(int group, const sym::Expr& e);
  // Adds each group's sum to (*sums)[group], which must exist, and starts
  // over empty.
  void AddTo(std::vector<sym::Expr>* sums);
  // Returns how many distinct (group, expression) pairs it holds.
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    int group;
    sym::Expr e;
    int64_t count;
  };

  void Grow();

  // In the order first added.
  std::vector<Entry> entries_;
  // NB: open addressing with linear probing over indices into entries_ (-1:
  // empty), a power of two kept at most half full: no allocation per entry.
  std::vector<int> table_;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_GROUPED_SUMS_H_
