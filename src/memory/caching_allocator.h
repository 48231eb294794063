// A model of PyTorch's CUDA caching allocator (DeviceCachingAllocator in
// c10/cuda/CUDACachingAllocator.cpp, pytorch/pytorch commit
// 001074d25084fdb87a799823e395a50f5ec044d3; the rules below are unchanged
// since v2.1): sizes rounded to 512 bytes, a small pool (requests up to 1 MiB,
// 2 MiB segments) and a large pool (20 MiB segments below 10 MiB, else the
// request rounded to 2 MiB), best fit over the pool's free blocks ordered by
// size then address, splitting (should_split), coalescing freed neighbours,
// max_split_size's oversize blocks, expandable segments (pages mapped into
// the lowest unmapped range with room, unmapped again on release); no release
// to the device (empty_cache) but where a memory limit is set: a segment past
// it first releases the cached segments (release_cached_blocks: whole free
// segments, the whole free pages of expandable ones), as malloc does when
// cudaMalloc or cuMemCreate fails, then fails.
// NB: one stream is assumed; blocks are never held by events of other streams.
#ifndef TORCHCOST_SRC_MEMORY_CACHING_ALLOCATOR_H_
#define TORCHCOST_SRC_MEMORY_CACHING_ALLOCATOR_H_

#include <cstdint>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

#include "torchcost/cuda_allocator.h"

namespace torchcost::memory {

// All sizes are rounded to at least 512 bytes.
inline constexpr int64_t kMinBlockSize = 512;
// The largest "small" request: 1 MiB.
inline constexpr int64_t kSmallSize = 1 << 20;
// Small requests are packed in 2 MiB segments.
inline constexpr int64_t kSmallBuffer = 2 << 20;
// Requests of 1 to 10 MiB share 20 MiB segments.
inline constexpr int64_t kLargeBuffer = 20 << 20;
// From 10 MiB on a request gets its own segment...
inline constexpr int64_t kMinLargeAlloc = 10 << 20;
inline constexpr int64_t kRoundLarge = 2 << 20;  // ... rounded up to 2 MiB.

// round_size: `bytes` rounded up to a multiple of 512 (at least 512).
// NB: roundup_power2_divisions (off by default) is not modelled.
int64_t RoundSize(int64_t bytes);
// get_allocation_size: the segment cudaMalloc'd for a rounded request that no
// free block serves.
int64_t SegmentSize(int64_t rounded);

// The allocator's state: segments, their blocks, the pools of free blocks.
class CachingAllocator {
 public:
  explicit CachingAllocator(const CudaAllocatorOptions& options);

  // malloc: serves a request of `bytes` (> 0); returns the block's id, or -1
  // if a new segment does not fit the memory limit even after releasing the
  // cached ones (out of memory).
  int Malloc(int64_t bytes);
  // free: returns block `id` to its pool, merged with its free neighbours.
  void Free(int id);
  // Returns the size of allocated block `id` (what allocated_bytes counts for
  // it).
  int64_t BlockSize(int id) const { return blocks_[id].size; }
  // Returns block `id`'s address (segments are laid out from 0 in the order
  // they are made).
  int64_t BlockAddress(int id) const { return blocks_[id].ptr; }

  // Bytes of allocated blocks (stats.allocated_bytes.current).
  int64_t allocated() const { return allocated_; }
  // Bytes of segments (stats.reserved_bytes.current).
  int64_t reserved() const { return reserved_; }
  // Segments cudaMalloc'd (expandable: page mappings).
  int64_t device_allocs() const { return device_allocs_; }

  // Sets the bytes the segments may take (the device's memory less the
  // context's); unlimited by default.
  void set_memory_limit(int64_t bytes) { memory_limit_ = bytes; }
  // Times the cached segments were released to make room under the limit.
  int64_t releases() const { return releases_; }

 private:
  struct Block {
    int64_t ptr = 0;
    int64_t size = 0;
    int prev = -1, next = -1;  // Neighbours in the segment.
    bool allocated = false;
    bool small = false;
    // False for a range of an expandable segment whose pages are not mapped
    // (never allocated; in unmapped_, not in pools_).
    bool mapped = true;
  };
  // A pool's free mapped blocks ordered as BlockComparatorSize: size, then
  // address.
  using Pool = std::set<std::tuple<int64_t, int64_t, int>>;
  // A pool's unmapped ranges ordered as BlockComparatorAddress: address.
  using Unmapped = std::set<std::pair<int64_t, int>>;

  int NewBlock(const Block& b);
  // Links a new block `b` between the neighbours it names; returns its id.
  int Splice(const Block& b);
  // Adds block `id` to its pool (mapped) or to the unmapped ranges.
  void Insert(int id);
  void Erase(int id);
  // get_free_block: the best fit for `size`, removed from the pool, or -1.
  int FindFree(int64_t size, bool small);
  // alloc_block: the free block serving `size` in a new segment (or,
  // expandable, in newly mapped pages), or -1 if the memory limit is passed.
  int AllocBlock(int64_t size, bool small);
  // find_expandable_block: the first range (by address) of free and unmapped
  // blocks with `size` bytes of room, starting at the free block before an
  // unmapped one; a new segment if none.
  int FindExpandable(int64_t size, bool small);
  // map_block: maps `bytes` (rounded up to pages) at the start of unmapped
  // block `id`, merged with its free neighbours; false past the limit.
  bool MapBlock(int id, int64_t bytes);
  // unmap_block: unmaps the whole pages inside free block `id`.
  void UnmapBlock(int id);
  // should_split.
  bool ShouldSplit(const Block& b, int64_t size) const;
  // try_merge_blocks of `id` with its free neighbour `other`, if both are
  // mapped or both unmapped.
  void Merge(int id, int other);
  // release_cached_blocks: frees every free block that is a whole segment
  // (no neighbours); unmaps the whole free pages of expandable segments.
  void ReleaseCached();

  CudaAllocatorOptions options_;
  std::vector<Block> blocks_;
  std::vector<int> unused_;  // Ids of blocks merged away, for reuse.
  Pool pools_[2];            // [0] large, [1] small.
  Unmapped unmapped_[2];
  // Where the next segment starts (addresses grow in cudaMalloc order).
  int64_t next_ptr_ = 0;
  // Expandable segments: per pool, the base of its one segment (-1: none).
  int64_t es_base_[2] = {-1, -1};
  int64_t allocated_ = 0, reserved_ = 0, device_allocs_ = 0;
  int64_t memory_limit_ = std::numeric_limits<int64_t>::max();
  int64_t releases_ = 0;
};

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_CACHING_ALLOCATOR_H_
