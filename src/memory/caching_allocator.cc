#include "memory/caching_allocator.h"

#include <algorithm>
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

int CachingAllocator::Splice(const Block& b) {
  const int id = NewBlock(b);
  if (b.prev >= 0) blocks_[b.prev].next = id;
  if (b.next >= 0) blocks_[b.next].prev = id;
  return id;
}

void CachingAllocator::Insert(int id) {
  const Block& b = blocks_[id];
  if (b.mapped) {
    pools_[b.small].emplace(b.size, b.ptr, id);
  } else {
    unmapped_[b.small].emplace(b.ptr, id);
  }
}

void CachingAllocator::Erase(int id) {
  const Block& b = blocks_[id];
  if (b.mapped) {
    pools_[b.small].erase({b.size, b.ptr, id});
  } else {
    unmapped_[b.small].erase({b.ptr, id});
  }
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
    // NB: a free block before an unmapped range counts as the size it can
    // grow to (expandable_size), and best fit moves on to the next larger
    // block while that one's expandable size is smaller (a greedy walk).
    auto expandable_size = [&](int id) {
      const Block& b = blocks_[id];
      const bool grows = b.next >= 0 && !blocks_[b.next].mapped;
      return b.size + (grows ? blocks_[b.next].size : 0);
    };
    for (auto next = std::next(it);
         next != pool.end() && expandable_size(std::get<2>(*next)) <
                                   expandable_size(std::get<2>(*it));
         ++next) {
      it = next;
    }
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

int CachingAllocator::AllocBlock(int64_t size, bool small) {
  if (options_.expandable_segments) {
    // try_allocate_expandable_block: map the range's unmapped blocks in turn
    // until the free block at its start holds `size`. NB: pages mapped before
    // a failing map stay mapped (the release that follows unmaps them).
    int id = FindExpandable(size, small);
    if (!blocks_[id].mapped && !MapBlock(id, std::min(blocks_[id].size, size)))
      return -1;
    while (blocks_[id].size < size) {
      // The free block `id` is followed by an unmapped one, which absorbs it.
      const int next = blocks_[id].next;
      if (!MapBlock(next,
                    std::min(size - blocks_[id].size, blocks_[next].size)))
        return -1;
      id = next;
    }
    Erase(id);
    return id;
  }
  const int64_t bytes = SegmentSize(size);
  if (reserved_ + bytes > memory_limit_) return -1;
  ++device_allocs_;
  Block b;
  b.ptr = next_ptr_;
  b.size = bytes;
  b.small = small;
  next_ptr_ += bytes;
  reserved_ += bytes;
  return NewBlock(b);
}

int CachingAllocator::FindExpandable(int64_t size, bool small) {
  for (const auto& [ptr, unmapped] : unmapped_[small]) {
    int start = unmapped;
    const int prev = blocks_[unmapped].prev;
    if (prev >= 0 && !blocks_[prev].allocated) start = prev;
    // has_available_address_space: free and unmapped bytes up to the next
    // allocated block.
    int64_t room = 0;
    for (int b = start; room < size && b >= 0 && !blocks_[b].allocated;
         b = blocks_[b].next) {
      room += blocks_[b].size;
    }
    if (room >= size) return start;
  }
  // A new segment: one unmapped block over its address space (in PyTorch
  // 1 1/8 of the device's memory; here 2^30 pages, in effect unbounded).
  Block b;
  b.ptr = es_base_[small] = next_ptr_;
  b.size = PageSize(small) << 30;
  b.small = small;
  b.mapped = false;
  next_ptr_ += b.size;
  const int id = NewBlock(b);
  Insert(id);
  return id;
}

bool CachingAllocator::MapBlock(int id, int64_t bytes) {
  const bool small = blocks_[id].small;
  const int64_t page = PageSize(small);
  // ceil(bytes / page) pages.
  const int64_t mapped = page * ((bytes + page - 1) / page);
  if (reserved_ + mapped > memory_limit_) return false;
  ++device_allocs_;
  reserved_ += mapped;
  Erase(id);
  blocks_[id].mapped = true;
  if (mapped < blocks_[id].size) {
    // The rest stays unmapped, after the newly mapped pages.
    Block rest = blocks_[id];
    rest.ptr += mapped;
    rest.size -= mapped;
    rest.mapped = false;
    rest.prev = id;
    Insert(Splice(rest));
    blocks_[id].size = mapped;
  }
  Merge(id, blocks_[id].prev);
  Merge(id, blocks_[id].next);
  Insert(id);
  return true;
}

void CachingAllocator::UnmapBlock(int id) {
  const Block b = blocks_[id];
  const int64_t page = PageSize(b.small), base = es_base_[b.small];
  // The whole pages inside [ptr, ptr + size): rounded inward.
  const int64_t lo = base + page * ((b.ptr - base + page - 1) / page);
  const int64_t hi = base + page * ((b.ptr + b.size - base) / page);
  if (lo >= hi) return;
  Erase(id);
  if (lo > b.ptr) {  // The part page before stays a free mapped block.
    Block before = b;
    before.size = lo - b.ptr;
    before.next = id;
    Insert(Splice(before));
  }
  if (hi < b.ptr + b.size) {  // And the part page after.
    Block after = b;
    after.ptr = hi;
    after.size = b.ptr + b.size - hi;
    after.prev = id;
    Insert(Splice(after));
  }
  blocks_[id].ptr = lo;
  blocks_[id].size = hi - lo;
  blocks_[id].mapped = false;
  reserved_ -= hi - lo;
  Merge(id, blocks_[id].prev);
  Merge(id, blocks_[id].next);
  Insert(id);
}

void CachingAllocator::ReleaseCached() {
  ++releases_;
  for (int small = 0; small < 2; ++small) {
    Pool& pool = pools_[small];
    if (options_.expandable_segments) {
      // release_blocks gathers every free block first: unmapping changes the
      // pool.
      std::vector<int> free;
      for (const auto& entry : pool) free.push_back(std::get<2>(entry));
      for (int id : free) {
        UnmapBlock(id);
        const Block& b = blocks_[id];
        if (!b.mapped && b.prev < 0 && b.next < 0) {
          // release_expandable_segment: nothing of the segment is left.
          Erase(id);
          unused_.push_back(id);
          es_base_[small] = -1;
        }
      }
      continue;
    }
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
    // NB: alloc_block fails (cudaMalloc or cuMemCreate finds no room), then
    // release_cached_blocks and alloc_block again. With the default
    // max_split_size, release_available_cached_blocks (tried first) releases
    // nothing; with one set, it frees just enough oversize blocks, where this
    // model frees every cached segment.
    id = AllocBlock(size, small);
    if (id < 0) {
      ReleaseCached();
      id = AllocBlock(size, small);
      if (id < 0) return -1;
    }
  }
  if (ShouldSplit(blocks_[id], size)) {
    // The block keeps the front `size` bytes; the rest is a new free block
    // after it.
    Block rest = blocks_[id];
    rest.ptr += size;
    rest.size -= size;
    rest.prev = id;
    const int r = Splice(rest);
    blocks_[id].size = size;
    Insert(r);
  }
  blocks_[id].allocated = true;
  allocated_ += blocks_[id].size;
  return id;
}

void CachingAllocator::Merge(int id, int other) {
  if (other < 0 || blocks_[other].allocated ||
      blocks_[other].mapped != blocks_[id].mapped)
    return;
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
