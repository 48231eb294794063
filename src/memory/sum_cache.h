// Sums and differences of expressions, each distinct pair computed once: a
// model repeats its layers, so the running totals of a step (a category's live
// bytes, a module's FLOPs) meet the same pairs of operands again and again,
// and an interned sum costs far more to build than to look up.
#ifndef TORCHCOST_SRC_MEMORY_SUM_CACHE_H_
#define TORCHCOST_SRC_MEMORY_SUM_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "torchcost/sym.h"

namespace torchcost::memory {

// a + b and a - b, remembered by their operands.
// NB: an expression is canonical and interned, so equal operands give the
// same result, and the cache answers exactly what sym's operators would;
// its results live in the operands' Context.
class SumCache {
 public:
  // Returns a + b.
  sym::Expr Add(const sym::Expr& a, const sym::Expr& b) {
    // NB: adding 0 (most nodes' transcendentals, many MACs) is a, and adding
    // to 0 (a timeline's pending bytes) is b, inline.
    if (b == sym::Expr(0)) return a;
    if (a == sym::Expr(0)) return b;
    return Get(a, b, /*subtract=*/false);
  }
  // Returns a - b.
  sym::Expr Sub(const sym::Expr& a, const sym::Expr& b) {
    if (b == sym::Expr(0)) return a;
    return Get(a, b, /*subtract=*/true);
  }
  // Returns how many distinct pairs it holds.
  size_t size() const { return size_; }

 private:
  // One remembered pair and its result; an empty slot has no result node and
  // a_node == kEmpty.
  struct Slot {
    const sym::Node* a_node;
    int64_t a_value;
    const sym::Node* b_node;
    int64_t b_value;
    sym::Expr result;
  };

  sym::Expr Get(const sym::Expr& a, const sym::Expr& b, bool subtract);
  void Grow();

  // NB: open addressing with linear probing in a power-of-two table, kept at
  // most half full: a lookup is a hash and a compare or two, with no
  // allocation per entry (a std::unordered_map's node cost as much as the
  // sum it saved).
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_SUM_CACHE_H_
