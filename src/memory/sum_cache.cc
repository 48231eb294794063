#include "memory/sum_cache.h"

#include <cstdint>
#include <utility>

namespace torchcost::memory {
namespace {

// Marks an empty slot: no operand is this node.
const sym::Node* const kEmpty = reinterpret_cast<const sym::Node*>(1);

// Multiply-xor mixing of the operands' words (the constant is 2^64 / phi).
size_t Hash(const sym::Node* a_node, int64_t a_value, const sym::Node* b_node,
            int64_t b_value) {
  constexpr uint64_t kMix = 0x9e3779b97f4a7c15ull;
  uint64_t h =
      (reinterpret_cast<uintptr_t>(a_node) ^ static_cast<uint64_t>(a_value)) *
      kMix;
  h = (h ^ reinterpret_cast<uintptr_t>(b_node)) * kMix;
  h = (h ^ static_cast<uint64_t>(b_value)) * kMix;
  // The high bits, which every input bit reaches, folded into the low ones
  // that index the table.
  h = (h ^ (h >> 32)) * kMix;
  return static_cast<size_t>(h >> 32);
}

}  // namespace

sym::Expr SumCache::Get(const sym::Expr& a, const sym::Expr& b, bool subtract) {
  // Adding 0 is a; constants add without building anything (sym's operators
  // check the overflow and raise its error).
  if (b.IsConstant()) {
    const int64_t y = *b.AsConstant();
    if (y == 0) return a;
    // NB: sym subtracts by adding -b, which overflows for the least int64.
    if (a.IsConstant() && !(subtract && y == INT64_MIN)) {
      int64_t r;
      const bool overflow =
          subtract ? __builtin_sub_overflow(*a.AsConstant(), y, &r)
                   : __builtin_add_overflow(*a.AsConstant(), y, &r);
      if (!overflow) return sym::Expr(r);
      return subtract ? a - b : a + b;
    }
  }
  const int64_t a_value = a.IsConstant() ? *a.AsConstant() : 0;
  // NB: a difference is keyed as a sum with b's constant bit-flipped (and a
  // node tagged), so both share one table.
  const sym::Node* b_node = b.node();
  int64_t b_value = b.IsConstant() ? *b.AsConstant() : 0;
  if (subtract) {
    b_value = ~b_value;
    b_node = reinterpret_cast<const sym::Node*>(
        reinterpret_cast<uintptr_t>(b_node) | 2);
  }
  if (2 * (size_ + 1) > slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = Hash(a.node(), a_value, b_node, b_value) & mask;;
       i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.a_node == kEmpty) {
      s = {a.node(), a_value, b_node, b_value, subtract ? a - b : a + b};
      ++size_;
      return s.result;
    }
    if (s.a_node == a.node() && s.a_value == a_value && s.b_node == b_node &&
        s.b_value == b_value)
      return s.result;
  }
}

void SumCache::Grow() {
  // NB: 512 slots at first: a 32-layer model's timeline holds thousands.
  std::vector<Slot> old(slots_.empty() ? 512 : 2 * slots_.size(),
                        Slot{kEmpty, 0, nullptr, 0, sym::Expr()});
  old.swap(slots_);
  const size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.a_node == kEmpty) continue;
    size_t i = Hash(s.a_node, s.a_value, s.b_node, s.b_value) & mask;
    while (slots_[i].a_node != kEmpty) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

}  // namespace torchcost::memory
