// EvaluateAllocator (src/memory/allocator_replay.cc): recorded allocations
// replayed through the caching allocator model; expected numbers derived from
// the allocator's rules (caching_allocator_test.cc tests the rules themselves).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/allocation_events.h"
#include "testing/timeline.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using testing::Alloc;
using testing::Free;
using ::testing::HasSubstr;
using testing::kMiB;

TrainingReport ReportOf(std::vector<AllocationEvent> events) {
  TrainingReport tr;
  tr.cuda_allocator = CudaAllocatorOptions{};
  tr.cuda_allocator->context_bytes = 400 * kMiB;
  tr.allocations = std::move(events);
  for (int i = 0; i < 4; ++i) tr.timeline.push_back(TimelinePoint{});
  return tr;
}

TEST(EvaluateAllocatorTest, PeaksCategoriesAndFragmentation) {
  const TrainingReport tr = ReportOf({
      // 1024 bytes of a 2 MiB small segment.
      Alloc(0, sym::Expr(1000), MemCategory::kAct, 1),
      // A 20 MiB segment, split: 3 MiB allocated.
      Alloc(1, sym::Expr(3 * kMiB), MemCategory::kTemp, 2),
      // The 20 MiB block is free again (merged).
      Free(1),
      // Served by the cached 20 MiB block, split.
      Alloc(2, sym::Expr(11 * kMiB), MemCategory::kTemp, 3),
      // Empty: nothing allocated.
      Alloc(3, sym::Expr(0), MemCategory::kTemp, 3),
  });
  const AllocatorPeak a = EvaluateAllocator(tr, {});
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_EQ(a.allocated_peak, 1024 + 11 * kMiB);
  EXPECT_EQ(a.point, 3);
  EXPECT_EQ(a.at_peak[testing::kAct], 1024);
  EXPECT_EQ(a.at_peak[testing::kTemp], 11 * kMiB);
  EXPECT_EQ(a.category_max[testing::kTemp], 11 * kMiB);
  EXPECT_EQ(a.reserved_peak, 2 * kMiB + 20 * kMiB);
  // Reserved reaches 22 MiB with the second allocation, when 1024 + 3 MiB are
  // allocated.
  EXPECT_EQ(a.allocated_at_reserved_peak, 1024 + 3 * kMiB);
  // At the allocated peak both segments exist: 22 MiB reserved, 1024 + 11 MiB
  // of it allocated.
  EXPECT_EQ(a.reserved_at_allocated_peak, 22 * kMiB);
  EXPECT_EQ(a.fragmentation, 22 * kMiB - (1024 + 11 * kMiB));
  EXPECT_EQ(a.device_peak, 22 * kMiB + 400 * kMiB);
  EXPECT_EQ(a.segments, 2);
}

// A small request that opens a segment after the peak, when the large pool's
// blocks lie cached and free, raises the reserved bytes at a moment of little
// allocation; the fragmentation is the one at the allocated peak.
TEST(EvaluateAllocatorTest, FragmentationIsTakenAtTheAllocatedPeak) {
  const TrainingReport tr = ReportOf({
      // Two 12 MiB requests: a 12 MiB segment each (>= 10 MiB, 2 MiB-rounded).
      Alloc(0, sym::Expr(12 * kMiB), MemCategory::kAct, 1),
      Alloc(1, sym::Expr(12 * kMiB), MemCategory::kAct, 1),
      // 4 MiB: a 20 MiB segment, split; 28 MiB allocated of 44 MiB: the peak.
      Alloc(2, sym::Expr(4 * kMiB), MemCategory::kTemp, 2),
      Free(0),
      Free(1),
      Free(2),
      // 1000 bytes: the small pool has no block; a 2 MiB segment.
      Alloc(3, sym::Expr(1000), MemCategory::kTemp, 3),
  });
  const AllocatorPeak a = EvaluateAllocator(tr, {});
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_EQ(a.allocated_peak, 28 * kMiB);
  EXPECT_EQ(a.reserved_at_allocated_peak, 44 * kMiB);
  EXPECT_EQ(a.reserved_peak, 46 * kMiB);
  // The last segment came with 1024 bytes allocated...
  EXPECT_EQ(a.allocated_at_reserved_peak, 1024);
  // ... but at the peak 16 MiB of the 20 MiB segment lay free.
  EXPECT_EQ(a.fragmentation, 16 * kMiB);
}

// Under a memory limit the allocator releases its cached segments before it
// gives up, as PyTorch's malloc does when cudaMalloc fails; the replay stops at
// the allocation that finds no room even then.
TEST(EvaluateAllocatorTest, MemoryLimitReleasesCachedSegmentsThenFails) {
  const TrainingReport tr = ReportOf({
      // 12 MiB: its own segment; freed, it stays cached.
      Alloc(0, sym::Expr(12 * kMiB), MemCategory::kAct, 1),
      Free(0),
      // 14 MiB does not fit the cached 12 MiB block: a 14 MiB segment.
      Alloc(1, sym::Expr(14 * kMiB), MemCategory::kTemp, 2),
  });
  // Unlimited: 12 + 14 MiB reserved.
  EXPECT_EQ(EvaluateAllocator(tr, {}).reserved_peak, 26 * kMiB);
  // 20 MiB: 12 + 14 is past it, so the cached 12 MiB segment is released
  // first; 14 MiB then fits.
  const AllocatorPeak a = EvaluateAllocator(tr, {}, 20 * kMiB);
  ASSERT_TRUE(a.error.empty()) << a.error;
  EXPECT_EQ(a.memory_limit, 20 * kMiB);
  EXPECT_EQ(a.releases, 1);
  EXPECT_EQ(a.out_of_memory_point, -1);
  EXPECT_EQ(a.reserved_peak, 14 * kMiB);
  EXPECT_EQ(a.allocated_peak, 14 * kMiB);
  // 13 MiB: not even the released device holds 14 MiB; out of memory at the
  // second allocation's point, the first's peak kept.
  const AllocatorPeak b = EvaluateAllocator(tr, {}, 13 * kMiB);
  ASSERT_TRUE(b.error.empty()) << b.error;
  EXPECT_EQ(b.out_of_memory_point, 2);
  EXPECT_EQ(b.allocated_peak, 12 * kMiB);
}

TEST(EvaluateAllocatorTest, SymbolicSizesNeedBindings) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  const TrainingReport tr =
      ReportOf({Alloc(0, b * sym::Expr(3 * kMiB), MemCategory::kAct, 0)});
  EXPECT_THAT(EvaluateAllocator(tr, {}).error,
              HasSubstr("needs every size bound"));
  const AllocatorPeak a = EvaluateAllocator(tr, {{"B", 4}});
  ASSERT_TRUE(a.error.empty()) << a.error;
  // 12 MiB >= 10 MiB: its own 12 MiB segment, whole.
  EXPECT_EQ(a.allocated_peak, 12 * kMiB);
  EXPECT_EQ(a.reserved_peak, 12 * kMiB);
}

TEST(EvaluateAllocatorTest, NeedsTheModelAskedFor) {
  TrainingReport tr;
  EXPECT_THAT(EvaluateAllocator(tr, {}).error,
              HasSubstr("StepConfig.allocator cuda"));
}

}  // namespace
}  // namespace torchcost
