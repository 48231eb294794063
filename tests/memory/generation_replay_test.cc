// EvaluateGenerationAllocator (src/memory/generation_replay.cc): a prefill and
// its decode steps replayed through one caching allocator model, the KV
// cache's blocks handed from step to step. Every expected number is derived
// below from the allocator's rules (caching_allocator_test.cc tests them).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/allocation_events.h"
#include "torchcost/generation_allocator.h"

namespace torchcost {
namespace {

using testing::Alloc;
using testing::Free;
using ::testing::HasSubstr;
using testing::kMiB;

// A model of 30 MiB of parameters whose cache takes 1 MiB per token, as its
// prefill and decode phases record their allocations: the token ids (512
// bytes), the cache, the logits (1 MiB, a small-pool request).
struct Phases {
  sym::Context ctx;  // NB: the events' symbolic sizes live in it.
  TrainingReport prefill, decode;
  Phases() {
    const sym::Expr s = ctx.Symbol("S"), t = ctx.Symbol("T");
    for (TrainingReport* r : {&prefill, &decode})
      r->cuda_allocator = CudaAllocatorOptions{};
    prefill.allocations = {
        Alloc(0, sym::Expr(30 * kMiB), MemCategory::kParam),
        Alloc(1, sym::Expr(512), MemCategory::kTemp),
        Alloc(2, s * kMiB, MemCategory::kBuffer),  // The cache: S tokens.
        Alloc(3, sym::Expr(kMiB), MemCategory::kTemp),
    };
    prefill.cache_output_storages = {2};
    // Decode step j at T = j + 1: the cache of S + T - 2 tokens handed in,
    // cat's S + T - 1 tokens out, the old one freed after the cat.
    decode.allocations = {
        Alloc(0, sym::Expr(30 * kMiB), MemCategory::kParam),
        Alloc(1, sym::Expr(512), MemCategory::kTemp),
        Alloc(2, (s + t - 2) * kMiB, MemCategory::kBuffer),
        Alloc(3, (s + t - 1) * kMiB, MemCategory::kBuffer),
        Free(2),
        Alloc(4, sym::Expr(kMiB), MemCategory::kTemp),
    };
    decode.cache_input_storages = {2};
    decode.cache_output_storages = {3};
  }
};

// At S = 12, T = 5: the prefill reserves the parameters' 30 MiB segment, a
// 2 MiB small segment (token ids, logits) and the cache's 12 MiB: 44 MiB.
// Each decode step's cache (13, 14, 15, 16 MiB) fits no cached block (the
// freed older caches are smaller), so it opens a segment of its size rounded
// to 2 MiB (14, 14, 16, 16 MiB; a 1 MiB remainder is not split off).
const sym::Bindings kAt = {{"B", 1}, {"S", 12}, {"T", 5}};

TEST(GenerationAllocatorTest, EachLongerCacheOpensASegment) {
  const Phases p;
  const GenerationAllocatorPeak g =
      EvaluateGenerationAllocator(p.prefill, p.decode, kAt);
  ASSERT_TRUE(g.error.empty()) << g.error;
  EXPECT_EQ(g.reserved_peak, (44 + 14 + 14 + 16 + 16) * kMiB);
  EXPECT_EQ(g.reserved_peak_step, 4);
  // Step 4, before the old cache is freed: the parameters, the token ids'
  // 512 bytes, the old cache's 16 MiB block and the new one's.
  EXPECT_EQ(g.allocated_peak, (30 + 16 + 16) * kMiB + 512);
  EXPECT_EQ(g.allocated_peak_step, 4);
  EXPECT_EQ(g.releases, 0);
  EXPECT_EQ(g.out_of_memory_step, -1);
  EXPECT_EQ(g.device_peak, g.reserved_peak);  // No context here.
}

TEST(GenerationAllocatorTest, AtTheLimitTheCachedSegmentsAreReleased) {
  const Phases p;
  // 80 MiB: steps 1 and 2 reach 58 and 72 MiB; step 3's 16 MiB would make
  // 88, so the cached whole segments go (the prefill's 12 MiB cache, step
  // 1's 14 MiB; the small segment holds the token ids): 46 + 16 = 62; step
  // 4 adds 16: 78.
  const GenerationAllocatorPeak g =
      EvaluateGenerationAllocator(p.prefill, p.decode, kAt, 80 * kMiB);
  ASSERT_TRUE(g.error.empty()) << g.error;
  EXPECT_EQ(g.releases, 1);
  EXPECT_EQ(g.reserved_peak, 78 * kMiB);
  EXPECT_EQ(g.reserved_peak_step, 4);
  EXPECT_EQ(g.allocated_peak, (30 + 16 + 16) * kMiB + 512);
  EXPECT_EQ(g.out_of_memory_step, -1);
  EXPECT_EQ(g.memory_limit, 80 * kMiB);

  // 50 MiB: step 1's 14 MiB would make 58 and no whole segment lies free.
  const GenerationAllocatorPeak oom =
      EvaluateGenerationAllocator(p.prefill, p.decode, kAt, 50 * kMiB);
  ASSERT_TRUE(oom.error.empty()) << oom.error;
  EXPECT_EQ(oom.out_of_memory_step, 1);
  EXPECT_FALSE(oom.out_of_memory_in_weights);
  EXPECT_EQ(oom.reserved_peak, 44 * kMiB);
  EXPECT_EQ(oom.reserved_peak_step, 0);

  // 20 MiB: the parameters' 30 MiB segment itself finds no room.
  const GenerationAllocatorPeak weights =
      EvaluateGenerationAllocator(p.prefill, p.decode, kAt, 20 * kMiB);
  ASSERT_TRUE(weights.error.empty()) << weights.error;
  EXPECT_EQ(weights.out_of_memory_step, 0);
  EXPECT_TRUE(weights.out_of_memory_in_weights);
  EXPECT_EQ(weights.reserved_peak, 0);
}

TEST(GenerationAllocatorTest, NeedsTheModelAndEveryBinding) {
  Phases p;
  EXPECT_THAT(
      EvaluateGenerationAllocator(p.prefill, p.decode, {{"B", 1}, {"S", 12}})
          .error,
      HasSubstr("needs T bound"));
  EXPECT_THAT(
      EvaluateGenerationAllocator(p.prefill, p.decode, {{"B", 1}, {"T", 5}})
          .error,
      HasSubstr("needs B, S and T bound"));
  // A generation too long to replay: T - 1 steps of 6 allocations past the
  // budget.
  const int64_t too_long = kMaxGenerationReplayEvents / 6 + 2;
  EXPECT_THAT(
      EvaluateGenerationAllocator(p.prefill, p.decode,
                                  {{"B", 1}, {"S", 12}, {"T", too_long}})
          .error,
      HasSubstr("not replayed: T - 1 = " + std::to_string(too_long - 1) +
                " decode steps of 6 allocations"));
  p.decode.cuda_allocator.reset();
  EXPECT_THAT(EvaluateGenerationAllocator(p.prefill, p.decode, kAt).error,
              HasSubstr("StepConfig.allocator cuda"));
}

}  // namespace
}  // namespace torchcost
