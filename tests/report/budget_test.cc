// Tests of BudgetEvaluator (src/report/budget.cc): what fits a budget, from a
// peak whose closed form is written here, from the allocator's rules applied by
// hand, and, for a generation, against replaying every batch size.
#include "torchcost/budget.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "testing/allocation_events.h"
#include "testing/builtin_rules.h"
#include "testing/timeline.h"
#include "torchcost/generation_allocator.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using testing::Alloc;
using testing::Free;
using ::testing::HasSubstr;
using testing::kMiB;

// A step whose timeline holds `acts` activations, one point each, in B.
Report StepOf(const std::vector<sym::Expr>& acts) {
  Report r;
  r.symbols = {"B"};
  for (size_t i = 0; i < acts.size(); ++i) {
    TimelinePoint p;
    p.node = static_cast<int>(i);
    for (auto& c : p.live) c = sym::Expr(0);
    p.live[testing::kAct] = acts[i];
    p.total = acts[i];
    r.training.timeline.push_back(p);
  }
  return r;
}

BudgetQuestion Budget(int64_t bytes) {
  BudgetQuestion q;
  q.budget_bytes = bytes;
  return q;
}

TEST(BudgetTest, TensorPeakLargestBatchIsTheClosedForm) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  // The peak is 544 + 96 B (the second point); the first is smaller for B >= 1.
  const Report r = StepOf(
      {sym::Expr(500) + b * sym::Expr(40), sym::Expr(544) + b * sym::Expr(96)});
  const BudgetEvaluator budget(r);
  Result<BudgetAnswer> a = budget.Answer({}, Budget(10000));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_FALSE(a->allocator);
  EXPECT_EQ(a->symbol, "B");
  EXPECT_EQ(a->at, 1);  // Unbound: decided at B = 1.
  EXPECT_EQ(a->needed_bytes, 544 + 96);
  EXPECT_TRUE(a->fits);
  // 544 + 96 B <= 10000: B <= 98.5.
  EXPECT_EQ(a->largest, (10000 - 544) / 96);
  EXPECT_FALSE(a->search_stopped);
  a = budget.Answer({{"B", 99}}, Budget(10000));
  EXPECT_EQ(a->at, 99);
  EXPECT_EQ(a->needed_bytes, 544 + 96 * 99);
  EXPECT_FALSE(a->fits);
  EXPECT_EQ(a->largest, 98);
  // Not even B = 1 (640 bytes).
  EXPECT_EQ(budget.Answer({}, Budget(639))->largest, 0);
  EXPECT_EQ(budget.Answer({}, Budget(640))->largest, 1);
  // The search stops at its limit, and says so.
  BudgetQuestion q = Budget(int64_t{1} << 60);
  q.search_limit = 1000;
  a = budget.Answer({}, q);
  EXPECT_EQ(a->largest, 1000);
  EXPECT_TRUE(a->search_stopped);
  // Every limit from 1 to 200 against budgets around the boundary.
  for (int64_t limit = 1; limit <= 200; ++limit) {
    q.search_limit = limit;
    q.budget_bytes = 544 + 96 * 150;
    EXPECT_EQ(budget.Answer({}, q)->largest, std::min<int64_t>(limit, 150))
        << limit;
  }
  // No search where the symbol is not the analysis's, or none is asked for.
  q = Budget(10000);
  q.symbol = "N";
  a = budget.Answer({{"B", 2}}, q);
  EXPECT_TRUE(a->symbol.empty());
  EXPECT_EQ(a->largest, -1);
  EXPECT_EQ(a->needed_bytes, 544 + 96 * 2);
}

TEST(BudgetTest, ErrorsSayWhatIsMissing) {
  sym::Context ctx;
  const Report r = StepOf({ctx.Symbol("B") * ctx.Symbol("S") * sym::Expr(4)});
  const BudgetEvaluator budget(r);
  EXPECT_THAT(budget.Answer({}, Budget(1000)).status().message(),
              HasSubstr("bind every symbol but B"));
  EXPECT_THAT(budget.Answer({{"S", 8}}, Budget(0)).status().message(),
              HasSubstr("must be positive"));
  // S bound: 32 B bytes; 1000 holds B = 31.
  EXPECT_EQ(budget.Answer({{"S", 8}}, Budget(1000))->largest, 31);
}

// Derived from the allocator's rules: 12 B MiB, freed and cached, then 14 B
// MiB, each >= 10 MiB and so its own 2 MiB-rounded segment. Without a limit
// both segments stay reserved: 26 MiB + the context at B = 1. With 20 MiB for
// segments PyTorch releases the cached 12 MiB and retries: it fits. At B = 2
// the first request, 24 MiB, is past the limit with nothing to release.
TEST(BudgetTest, AllocatorReleasesItsCacheBeforeGivingUp) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  Report r = StepOf({b * sym::Expr(12 * kMiB), b * sym::Expr(14 * kMiB)});
  r.training.cuda_allocator = CudaAllocatorOptions{};
  r.training.cuda_allocator->context_bytes = 400 * kMiB;
  r.training.allocations = {
      Alloc(0, b * sym::Expr(12 * kMiB), MemCategory::kAct, 0), Free(0),
      Alloc(1, b * sym::Expr(14 * kMiB), MemCategory::kAct, 1)};
  const BudgetEvaluator budget(r);
  Result<BudgetAnswer> a = budget.Answer({}, Budget(420 * kMiB));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_TRUE(a->allocator);
  EXPECT_TRUE(a->fits);
  EXPECT_EQ(a->releases, 1);
  EXPECT_EQ(a->needed_bytes, 426 * kMiB);  // Reserved with nothing released.
  // The tensors alone would allow 420 / 14 = 30; the allocator allows 1.
  EXPECT_EQ(a->largest, 1);
  // 426 MiB: no release needed.
  a = budget.Answer({}, Budget(426 * kMiB));
  EXPECT_TRUE(a->fits);
  EXPECT_EQ(a->releases, 0);
  // 413 MiB: 13 MiB for segments does not hold 14 MiB.
  a = budget.Answer({}, Budget(413 * kMiB));
  EXPECT_FALSE(a->fits);
  EXPECT_EQ(a->releases, 0);
  EXPECT_EQ(a->needed_bytes, 426 * kMiB);
  EXPECT_EQ(a->largest, 0);
  // Below the context the segments get nothing.
  EXPECT_FALSE(budget.Answer({}, Budget(100 * kMiB))->fits);
  // B = 3 with 400 + 42 + 36 MiB: 36 MiB, released, then 42 MiB; B = 4 needs
  // 56 MiB.
  a = budget.Answer({{"B", 3}}, Budget(442 * kMiB));
  EXPECT_TRUE(a->fits);
  EXPECT_EQ(a->largest, 3);
}

// A whole generation under the allocator: the search's answer is the boundary
// found by replaying every batch size under the same limit.
TEST(BudgetTest, GenerationLargestBatchMatchesReplayingEachBatch) {
  StepConfig c;
  c.mode = "generate";
  c.allocator = "cuda";
  c.cuda_context_bytes = 0;
  c.bindings = {{"S", 64}, {"T", 16}};
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama",
                        "layers=2,hidden=64,heads=4,kv_heads=2,intermediate="
                        "128,vocab=256,attn=eager",
                        testing::BuiltinRules(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const BudgetEvaluator budget(*g);
  const int64_t bytes = 24 * kMiB;
  Result<BudgetAnswer> a = budget.Answer(g->decode.bindings, Budget(bytes));
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_GT(a->largest, 1);
  auto fits = [&](int64_t batch) {
    sym::Bindings at = g->decode.bindings;
    at["B"] = batch;
    const GenerationAllocatorPeak w = EvaluateGenerationAllocator(
        g->prefill.report.training, g->decode.report.training, at, bytes);
    EXPECT_TRUE(w.error.empty()) << w.error;
    return w.out_of_memory_step < 0;
  };
  for (int64_t batch = 1; batch <= a->largest + 4; ++batch)
    EXPECT_EQ(fits(batch), batch <= a->largest) << "B = " << batch;
  // The tensors' bound is never below the allocator's.
  StepConfig plain = c;
  plain.allocator.clear();
  plain.cuda_context_bytes = -1;
  Result<GenerationAnalysis> t =
      AnalyzeGeneration("llama",
                        "layers=2,hidden=64,heads=4,kv_heads=2,intermediate="
                        "128,vocab=256,attn=eager",
                        testing::BuiltinRules(), plain);
  ASSERT_TRUE(t.ok());
  EXPECT_GE(
      BudgetEvaluator(*t).Answer(t->decode.bindings, Budget(bytes))->largest,
      a->largest);
}

}  // namespace
}  // namespace torchcost
