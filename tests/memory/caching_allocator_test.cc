// The caching allocator model against hand-derived sequences; each expected
// number follows from the rules of c10/cuda/CUDACachingAllocator.cpp
// (pytorch/pytorch 001074d25084fdb87a799823e395a50f5ec044d3): round_size,
// get_allocation_size, get_free_block, should_split, free_block, and for
// expandable segments find_expandable_block, map_block, release_blocks and
// unmap_block.
#include "memory/caching_allocator.h"

#include <gtest/gtest.h>

namespace torchcost::memory {
namespace {

constexpr int64_t kMiB = 1 << 20;

CudaAllocatorOptions Defaults() { return CudaAllocatorOptions{}; }

TEST(RoundSizeTest, RoundsUpTo512) {
  EXPECT_EQ(RoundSize(1), 512);
  EXPECT_EQ(RoundSize(512), 512);
  EXPECT_EQ(RoundSize(513), 2 * 512);
  EXPECT_EQ(RoundSize(4000), 8 * 512);  // ceil(4000 / 512) = 8.
}

TEST(SegmentSizeTest, PoolsAndLargeRounding) {
  EXPECT_EQ(SegmentSize(512), 2 * kMiB);   // Small: a 2 MiB segment.
  EXPECT_EQ(SegmentSize(kMiB), 2 * kMiB);  // 1 MiB is still small.
  // 1 to 10 MiB: a 20 MiB segment.
  EXPECT_EQ(SegmentSize(kMiB + 512), 20 * kMiB);
  EXPECT_EQ(SegmentSize(10 * kMiB - 512), 20 * kMiB);
  // From 10 MiB: rounded to 2 MiB.
  EXPECT_EQ(SegmentSize(10 * kMiB), 10 * kMiB);
  EXPECT_EQ(SegmentSize(10 * kMiB + 512), 12 * kMiB);
}

TEST(CachingAllocatorTest, SmallRequestsShareTwoMiBSegments) {
  CachingAllocator a(Defaults());
  // 1024 bytes of a new 2 MiB segment; the rest (>= 512) split off.
  a.Malloc(1000);
  EXPECT_EQ(a.allocated(), 1024);
  EXPECT_EQ(a.reserved(), 2 * kMiB);
  // 2048 blocks of 1 KiB fill the segment exactly.
  for (int i = 1; i < 2048; ++i) a.Malloc(1024);
  EXPECT_EQ(a.allocated(), 2048 * 1024);
  EXPECT_EQ(a.reserved(), 2 * kMiB);
  a.Malloc(1);  // The 2049th needs a second segment.
  EXPECT_EQ(a.reserved(), 4 * kMiB);
  EXPECT_EQ(a.allocated(), 2 * kMiB + 512);
}

TEST(CachingAllocatorTest, LargeRemainderSplitOnlyAboveOneMiB) {
  CachingAllocator a(Defaults());
  a.Malloc(2 * kMiB);  // A 20 MiB segment; 18 MiB remain (> 1 MiB): split.
  EXPECT_EQ(a.allocated(), 2 * kMiB);
  // Best fit: the 18 MiB remainder; 1 MiB left is not > 1 MiB: not split.
  const int b = a.Malloc(17 * kMiB);
  EXPECT_EQ(a.BlockSize(b), 18 * kMiB);
  EXPECT_EQ(a.allocated(), 20 * kMiB);
  EXPECT_EQ(a.reserved(), 20 * kMiB);
}

TEST(CachingAllocatorTest, LargeRequestGetsItsOwnRoundedSegment) {
  CachingAllocator a(Defaults());
  // >= 10 MiB: a segment of ceil(11 / 2) * 2 = 12 MiB, 1 MiB left unsplit.
  const int b = a.Malloc(11 * kMiB);
  EXPECT_EQ(a.reserved(), 12 * kMiB);
  EXPECT_EQ(a.BlockSize(b), 12 * kMiB);
  EXPECT_EQ(a.allocated(), 12 * kMiB);
}

TEST(CachingAllocatorTest, BestFitTakesTheSmallestBlockThatFits) {
  CachingAllocator a(Defaults());
  const int x = a.Malloc(30 * kMiB);
  const int y = a.Malloc(24 * kMiB);
  a.Free(x);
  a.Free(y);
  // 24 MiB fits best; 1 MiB left: not split.
  const int z = a.Malloc(23 * kMiB);
  EXPECT_EQ(a.BlockSize(z), 24 * kMiB);
  EXPECT_EQ(a.reserved(), (30 + 24) * kMiB);
  a.Malloc(29 * kMiB);  // Then the 30 MiB block.
  EXPECT_EQ(a.reserved(), (30 + 24) * kMiB);
  EXPECT_EQ(a.allocated(), (30 + 24) * kMiB);
}

TEST(CachingAllocatorTest, FreedNeighboursCoalesce) {
  CachingAllocator a(Defaults());
  // [x 4][y 4][free 12] in one 20 MiB segment.
  const int x = a.Malloc(4 * kMiB);
  const int y = a.Malloc(4 * kMiB);
  a.Free(x);
  // x's 4 MiB is too small: the 12 MiB remainder serves it.
  a.Malloc(5 * kMiB);
  EXPECT_EQ(a.reserved(), 20 * kMiB);
  a.Free(y);  // y merges with x's free block: 8 MiB.
  const int z = a.Malloc(8 * kMiB);
  EXPECT_EQ(a.BlockSize(z), 8 * kMiB);
  EXPECT_EQ(a.reserved(), 20 * kMiB);
}

TEST(CachingAllocatorTest, WholeSegmentReassembledAndReused) {
  CachingAllocator a(Defaults());
  const int x = a.Malloc(4 * kMiB);
  const int y = a.Malloc(4 * kMiB);
  a.Free(x);
  // [x y rest] merge back into the 20 MiB block.
  a.Free(y);
  // >= 10 MiB, but the cached 20 MiB block serves it, 1 MiB unsplit.
  const int z = a.Malloc(19 * kMiB);
  EXPECT_EQ(a.BlockSize(z), 20 * kMiB);
  EXPECT_EQ(a.reserved(), 20 * kMiB);
}

TEST(CachingAllocatorTest, NothingIsReleased) {
  CachingAllocator a(Defaults());
  a.Free(a.Malloc(100 * kMiB));
  a.Malloc(50 * kMiB);  // Split from the cached 100 MiB block.
  EXPECT_EQ(a.reserved(), 100 * kMiB);
  // Only 50 MiB free: a new 60 MiB segment; the cache is never returned.
  a.Malloc(60 * kMiB);
  EXPECT_EQ(a.reserved(), 160 * kMiB);
  EXPECT_EQ(a.allocated(), 110 * kMiB);
}

TEST(CachingAllocatorTest, AtTheMemoryLimitTheCacheIsReleasedThenMallocFails) {
  // malloc: get_free_block fails, alloc_block fails (cudaMalloc finds no
  // room), release_cached_blocks frees every free block that is a whole
  // segment, alloc_block again; it fails only if that made no room.
  CachingAllocator a(Defaults());
  a.set_memory_limit(100 * kMiB);
  a.Free(a.Malloc(40 * kMiB));  // A cached 40 MiB segment.
  const int half = a.Malloc(30 * kMiB);
  // The cached 40 MiB segment, split: 30 MiB allocated, 10 MiB free (not a
  // whole segment: never released).
  EXPECT_EQ(a.reserved(), 40 * kMiB);
  a.Free(a.Malloc(50 * kMiB));  // 40 + 50 <= 100: a new segment, cached.
  EXPECT_EQ(a.reserved(), 90 * kMiB);
  EXPECT_EQ(a.releases(), 0);
  // 56 MiB: no free block fits; 90 + 56 > 100, so the cached 50 MiB segment
  // is released (the 10 MiB free block shares its segment with `half`), and
  // 40 + 56 <= 100.
  const int big = a.Malloc(56 * kMiB);
  ASSERT_GE(big, 0);
  EXPECT_EQ(a.releases(), 1);
  EXPECT_EQ(a.reserved(), 96 * kMiB);
  EXPECT_EQ(a.allocated(), 86 * kMiB);
  // 6 MiB: the free 10 MiB block beside `half` serves it (split: 4 MiB left);
  // no segment is needed.
  EXPECT_GE(a.Malloc(6 * kMiB), 0);
  EXPECT_EQ(a.reserved(), 96 * kMiB);
  // 8 MiB more: nothing free fits (4 MiB left beside it), a new 20 MiB
  // segment passes the limit, no whole segment is cached: out of memory.
  EXPECT_EQ(a.Malloc(8 * kMiB), -1);
  EXPECT_EQ(a.releases(), 2);
  EXPECT_EQ(a.reserved(), 96 * kMiB);
}

TEST(CachingAllocatorTest, SmallAndLargePoolsAreSeparate) {
  CachingAllocator a(Defaults());
  a.Free(a.Malloc(20 * kMiB));
  a.Malloc(kMiB);  // Small: the free 20 MiB large block does not serve it.
  EXPECT_EQ(a.reserved(), 22 * kMiB);
}

TEST(CachingAllocatorTest, OversizeBlocksWithMaxSplitSize) {
  CudaAllocatorOptions o;
  o.max_split_size = 64 * kMiB;
  CachingAllocator a(o);
  a.Free(a.Malloc(100 * kMiB));
  // Below max_split_size: the oversize 100 MiB block is not used.
  a.Malloc(50 * kMiB);
  EXPECT_EQ(a.reserved(), 150 * kMiB);
  a.Malloc(70 * kMiB);  // 100 >= 70 + 20: too big to serve it either.
  EXPECT_EQ(a.reserved(), 220 * kMiB);
  // 100 < 90 + 20: served, whole (oversize blocks are not split).
  const int z = a.Malloc(90 * kMiB);
  EXPECT_EQ(a.BlockSize(z), 100 * kMiB);
  EXPECT_EQ(a.reserved(), 220 * kMiB);
}

TEST(CachingAllocatorTest, ExpandableSegmentsGrowInPages) {
  CudaAllocatorOptions o;
  o.expandable_segments = true;
  CachingAllocator a(o);
  a.Malloc(3 * kMiB);  // One 20 MiB page mapped; 17 MiB free at the end.
  EXPECT_EQ(a.reserved(), 20 * kMiB);
  a.Malloc(30 * kMiB);  // 17 MiB free + ceil(13 / 20) = 1 more page.
  EXPECT_EQ(a.reserved(), 40 * kMiB);
  EXPECT_EQ(a.allocated(), 33 * kMiB);
  a.Malloc(kMiB);  // Small pool: its own segment of 2 MiB pages.
  EXPECT_EQ(a.reserved(), 42 * kMiB);
  // Without expandable segments: 20 MiB + 30 MiB + 2 MiB.
  CachingAllocator b(Defaults());
  b.Malloc(3 * kMiB);
  b.Malloc(30 * kMiB);
  b.Malloc(kMiB);
  EXPECT_EQ(b.reserved(), 52 * kMiB);
}

TEST(CachingAllocatorTest, ExpandableBestFitPassesOverTheGrowableEnd) {
  CudaAllocatorOptions o;
  o.expandable_segments = true;
  CachingAllocator a(o);
  const int x = a.Malloc(8 * kMiB);  // [x 8][free 12] of one 20 MiB page.
  a.Malloc(5 * kMiB);                // [x 8][5][free 7 at the end].
  a.Free(x);                         // Free: 8 MiB inside, 7 MiB at the end.
  // The end's 7 MiB counts as unbounded: the 8 MiB block serves it.
  a.Malloc(6 * kMiB);
  EXPECT_EQ(a.reserved(), 20 * kMiB);
  // Free: 2 MiB inside, 7 MiB at the end: grows by one page.
  a.Malloc(8 * kMiB);
  EXPECT_EQ(a.reserved(), 40 * kMiB);
}

TEST(CachingAllocatorTest, ExpandableReleaseUnmapsWholeFreePagesOnly) {
  // release_blocks unmaps the whole pages inside every free block
  // (ExpandableSegment::unmap rounds inward); find_expandable_block then
  // maps into the lowest-addressed unmapped range with room. Pages of the
  // large pool: 20 MiB; addresses in MiB from the segment's base (0).
  CudaAllocatorOptions o;
  o.expandable_segments = true;
  CachingAllocator a(o);
  const int x = a.Malloc(25 * kMiB);  // Pages [0, 40): x [0, 25).
  // The free 15 MiB before the unmapped rest + ceil(50 / 20) = 3 pages:
  // y [25, 90), free [90, 100).
  const int y = a.Malloc(65 * kMiB);
  const int z = a.Malloc(10 * kMiB);  // Exactly the free [90, 100).
  EXPECT_EQ(a.BlockAddress(x), 0);
  EXPECT_EQ(a.BlockAddress(y), 25 * kMiB);
  EXPECT_EQ(a.BlockAddress(z), 90 * kMiB);
  EXPECT_EQ(a.reserved(), 100 * kMiB);
  a.Free(y);  // Free [25, 90) between two live blocks.
  // 70 MiB: no free block fits, and the 4 pages at the end would make 180
  // MiB. The release unmaps [40, 80), the whole pages inside [25, 90): 60
  // MiB reserved, and 60 + 80 <= 140.
  CachingAllocator b = a;
  b.set_memory_limit(140 * kMiB - 1);
  EXPECT_EQ(b.Malloc(70 * kMiB), -1);  // 60 + 80 > 140 - 1.
  EXPECT_EQ(b.releases(), 1);
  EXPECT_EQ(b.reserved(), 60 * kMiB);
  a.set_memory_limit(140 * kMiB);
  const int w = a.Malloc(70 * kMiB);
  ASSERT_GE(w, 0);
  EXPECT_EQ(a.releases(), 1);
  EXPECT_EQ(a.reserved(), 140 * kMiB);
  // The hole [40, 80) with free [25, 40) before it and [80, 90) after has 65
  // MiB of room: too little for 70, so the end served it.
  EXPECT_EQ(a.BlockAddress(w), 100 * kMiB);
  // 50 MiB: the hole has room (65), and it comes first by address: its 2
  // pages are mapped and merge with both free neighbours, [25, 90); the
  // request takes its front.
  a.set_memory_limit(180 * kMiB);
  const int v = a.Malloc(50 * kMiB);
  EXPECT_EQ(a.BlockAddress(v), 25 * kMiB);
  EXPECT_EQ(a.reserved(), 180 * kMiB);
  EXPECT_EQ(a.releases(), 1);
}

}  // namespace
}  // namespace torchcost::memory
