#include "memory/caching_allocator.h"

#include <limits>

namespace torchcost::memory {
namespace {

// Pages of an expandable segment: kSmallBuffer for the small pool, kLargeBuffer
// for the large.
int64_t PageSize(bool small) { return small ? kSmallBuffer : kLargeBuffer; }

}  // namespace

int64_t RoundSize(int64_t bytes) {
  if (bytes < kMinBlockSize) return kMinBlockSize;
  // ceil(bytes / 512) * 512.
  return kMinBlockSize * ((bytes + kMinBlockSize - 1) / kMinBlockSize);
}

int64_t SegmentSize(int64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  // ceil(size / 2 MiB) * 2 MiB.
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

CachingAllocator::CachingAllocator(const CudaAllocatorOptions& options)
    : options_(options) {}

int CachingAllocator::NewBlock(const Block& b) {
  if (!unused_.empty()) {
    const int id = unused_.back();
    unused_.pop_back();
    blocks_[id] = b;
    return id;
  }
  blocks_.push_back(b);
  return static_cast<int>(blocks_.size()) - 1;
}

void CachingAllocator::Insert(int id) {
  const Block& b = blocks_[id];
  pools_[b.small].emplace(b.size, b.ptr, id);
}

void CachingAllocator::Erase(int id) {
  const Block& b = blocks_[id];
  pools_[b.small].erase({b.size, b.ptr, id});
}

bool CachingAllocator::ShouldSplit(const Block& b, int64_t size) const {
  const int64_t remaining = b.size - size;
  if (b.small || options_.expandable_segments)
    return remaining >= kMinBlockSize;
  return size < options_.max_split_size && remaining > kSmallSize;
}

int CachingAllocator::FindFree(int64_t size, bool small) {
  Pool& pool = pools_[small];
  auto it = pool.lower_bound({size, std::numeric_limits<int64_t>::min(), -1});
  if (it == pool.end()) return -1;
  if (options_.expandable_segments) {
    // NB: the free block at the segment's end counts as the size it can grow
    // to (nearly unbounded), so best fit passes it over for the next larger
    // one.
    const int id = std::get<2>(*it);
    auto next = std::next(it);
    if (id == es_last_[small] && next != pool.end()) it = next;
  }
  const int64_t found = std::get<0>(*it);
  // An oversize block does not serve a request below max_split_size, and
  // serves a larger one only if it is less than kLargeBuffer too big.
  if (size < options_.max_split_size && found >= options_.max_split_size)
    return -1;
  if (size >= options_.max_split_size && found >= size + kLargeBuffer)
    return -1;
  const int id = std::get<2>(*it);
  pool.erase(it);
  return id;
}

int CachingAllocator::NewSegment(int64_t size, bool small) {
  ++device_allocs_;
  if (!options_.expandable_segments) {
    const int64_t bytes = SegmentSize(size);
    Block b;
    b.ptr = next_ptr_;
    b.size = bytes;
    b.small = small;
    next_ptr_ += bytes;
    reserved_ += bytes;
    return NewBlock(b);
  }
  // One segment per pool; new pages are mapped at its end, merged with the
  // free block there (find_expandable_block, map_block).
  if (es_base_[small] < 0) {
    es_base_[small] = next_ptr_;
    // The segment's address space (1 1/8 of the device's memory in PyTorch).
    next_ptr_ += int64_t{1} << 50;
  }
  int tail = es_last_[small];
  int64_t have = 0;
  if (tail >= 0 && !blocks_[tail].allocated) {
    have = blocks_[tail].size;
    Erase(tail);
  } else {
    tail = -1;
  }
  const int64_t page = PageSize(small);
  // The missing bytes in whole pages.
  const int64_t mapped = page * ((size - have + page - 1) / page);
  reserved_ += mapped;
  if (tail >= 0) {
    blocks_[tail].size += mapped;
    es_mapped_[small] += mapped;
    return tail;
  }
  Block b;
  b.ptr = es_base_[small] + es_mapped_[small];
  b.size = mapped;
  b.small = small;
  b.prev = es_last_[small];
  es_mapped_[small] += mapped;
  const int id = NewBlock(b);
  if (b.prev >= 0) blocks_[b.prev].next = id;
  es_last_[small] = id;
  return id;
}

int64_t CachingAllocator::SegmentGrowth(int64_t size, bool small) const {
  if (!options_.expandable_segments) return SegmentSize(size);
  // As NewSegment: the missing bytes, past the free tail block, in pages.
  const int tail = es_last_[small];
  const int64_t have =
      tail >= 0 && !blocks_[tail].allocated ? blocks_[tail].size : 0;
  const int64_t page = PageSize(small);
  return page * ((size - have + page - 1) / page);
}

void CachingAllocator::ReleaseCached() {
  ++releases_;
  if (options_.expandable_segments) return;
  for (Pool& pool : pools_) {
    for (auto it = pool.begin(); it != pool.end();) {
      const int id = std::get<2>(*it);
      const Block& b = blocks_[id];
      if (b.prev >= 0 || b.next >= 0) {
        ++it;
        continue;
      }
      reserved_ -= b.size;
      unused_.push_back(id);
      it = pool.erase(it);
    }
  }
}

int CachingAllocator::Malloc(int64_t bytes) {
  const int64_t size = RoundSize(bytes);
  const bool small = size <= kSmallSize;
  int id = FindFree(size, small);
  if (id < 0) {
    // NB: alloc_block fails (cudaMalloc finds no room), then
    // release_cached_blocks and alloc_block again. With the default
    // max_split_size, release_available_cached_blocks (tried first) releases
    // nothing; with one set, it frees just enough oversize blocks, where this
    // model frees every cached segment.
    if (reserved_ + SegmentGrowth(size, small) > memory_limit_) {
      ReleaseCached();
      if (reserved_ + SegmentGrowth(size, small) > memory_limit_) return -1;
    }
    id = NewSegment(size, small);
  }
  if (ShouldSplit(blocks_[id], size)) {
    // The block keeps the front `size` bytes; the rest is a new free block
    // after it.
    Block rest = blocks_[id];
    rest.ptr += size;
    rest.size -= size;
    rest.prev = id;
    const int r = NewBlock(rest);
    if (rest.next >= 0) blocks_[rest.next].prev = r;
    blocks_[id].next = r;
    blocks_[id].size = size;
    if (es_last_[small] == id) es_last_[small] = r;
    Insert(r);
  }
  blocks_[id].allocated = true;
  allocated_ += blocks_[id].size;
  return id;
}

void CachingAllocator::Merge(int id, int other) {
  if (other < 0 || blocks_[other].allocated) return;
  Erase(other);
  Block& b = blocks_[id];
  const Block& o = blocks_[other];
  if (b.prev == other) {  // [other b]
    b.ptr = o.ptr;
    b.prev = o.prev;
    if (b.prev >= 0) blocks_[b.prev].next = id;
  } else {  // [b other]
    b.next = o.next;
    if (b.next >= 0) blocks_[b.next].prev = id;
  }
  b.size += o.size;
  if (es_last_[b.small] == other) es_last_[b.small] = id;
  unused_.push_back(other);
}

void CachingAllocator::Free(int id) {
  Block& b = blocks_[id];
  b.allocated = false;
  allocated_ -= b.size;
  Merge(id, blocks_[id].prev);
  Merge(id, blocks_[id].next);
  Insert(id);
}

}  // namespace torchcost::memory
