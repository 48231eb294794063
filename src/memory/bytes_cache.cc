#include "memory/bytes_cache.h"

#include "memory/storages.h"

namespace torchcost::memory {

sym::Expr BytesCache::Of(const rules::TensorType& t) {
  size_t h = static_cast<size_t>(t.dtype);
  for (const auto& d : t.shape) h = h * 1000003u ^ d.Hash();
  // NB: try_emplace, not emplace, which allocates a node even when the hash
  // is there.
  auto [it, inserted] = head_.try_emplace(h, -1);
  for (int e = it->second; e >= 0; e = entries_[e].next) {
    const Entry& x = entries_[e];
    if (x.dtype == t.dtype && *x.shape == t.shape) return x.bytes;
  }
  entries_.push_back({&t.shape, t.dtype, BytesOf(t), it->second});
  it->second = static_cast<int>(entries_.size()) - 1;
  return entries_.back().bytes;
}

}  // namespace torchcost::memory
