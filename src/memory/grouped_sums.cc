#include "memory/grouped_sums.h"

namespace torchcost::memory {
namespace {

// Multiply-xor mixing of the group and the expression's hash (the constant is
// 2^64 / phi); the high bits, which every input bit reaches, index the table.
size_t Hash(int group, const sym::Expr& e) {
  constexpr uint64_t kMix = 0x9e3779b97f4a7c15ull;
  uint64_t h = (static_cast<uint64_t>(group) ^ e.Hash()) * kMix;
  h = (h ^ (h >> 32)) * kMix;
  return static_cast<size_t>(h >> 32);
}

}  // namespace

void GroupedSums::Add(int group, const sym::Expr& e) {
  if (2 * (entries_.size() + 1) > table_.size()) Grow();
  const size_t mask = table_.size() - 1;
  for (size_t i = Hash(group, e) & mask;; i = (i + 1) & mask) {
    const int k = table_[i];
    if (k < 0) {
      table_[i] = static_cast<int>(entries_.size());
      entries_.push_back({group, e, 1});
      return;
    }
    Entry& x = entries_[k];
    if (x.group == group && x.e == e) {
      ++x.count;
      return;
    }
  }
}

void GroupedSums::AddTo(std::vector<sym::Expr>* sums) {
  for (const Entry& x : entries_) {
    sym::Expr& sum = (*sums)[x.group];
    sum += x.count == 1 ? x.e : x.e * sym::Expr(x.count);
  }
  entries_.clear();
  table_.assign(table_.size(), -1);
}

void GroupedSums::Grow() {
  table_.assign(table_.empty() ? 64 : 2 * table_.size(), -1);
  const size_t mask = table_.size() - 1;
  for (size_t k = 0; k < entries_.size(); ++k) {
    size_t i = Hash(entries_[k].group, entries_[k].e) & mask;
    while (table_[i] >= 0) i = (i + 1) & mask;
    table_[i] = static_cast<int>(k);
  }
}

}  // namespace torchcost::memory
