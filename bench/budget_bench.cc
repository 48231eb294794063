// Benchmarks of the budget's answer (BudgetEvaluator) on llama-7b-like in
// bf16 at S=2048 with 80 GiB: the analysis made once, then whether the step
// fits and the largest B that does, from the tensor peak's candidate moments
// or from replays of the step's allocations through the CUDA caching
// allocator model (allocator:1; allocator:2 with expandable segments); and a
// whole Llama-2-7B generate() (S=2048, T=512) under 24 GiB, replayed per B
// tried.
//
// Target: the allocator's answer within a few replays of the allocations
// (each O(events log n)); a budget line adds under 50 ms to a 7B report.
// Run with --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "bench_models.h"
#include "torchcost/budget.h"
#include "torchcost/generation.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using bench::Rules;

// The step of llama-7b-like in bf16 (the family's dtype), B and S symbolic;
// allocator 0: none, 1: the CUDA allocator model, 2: with expandable segments.
StepAnalysis Step(int64_t allocator) {
  auto built = builder::BuildNamedModel("llama-7b-like", "dtype=bf16");
  if (!built.ok()) std::abort();
  StepConfig config = StepConfigFor(*built);
  if (allocator > 0) config.allocator = "cuda";
  config.expandable_segments = allocator == 2;
  // NB: the allocator replays need every size: S bound, B searched.
  config.bindings = {{"S", 2048}, {"B", 1}};
  auto step = AnalyzeStep(built->graph, Rules(), config);
  if (!step.ok()) std::abort();
  return std::move(step).value();
}

void BM_BudgetStep(benchmark::State& state) {
  const StepAnalysis step = Step(state.range(0));
  BudgetQuestion q;
  q.budget_bytes = int64_t{80} << 30;
  for (auto _ : state) {
    const BudgetEvaluator budget(step.report);
    auto a = budget.Answer({{"S", 2048}}, q);
    if (!a.ok()) std::abort();
    benchmark::DoNotOptimize(a->largest);
  }
}
BENCHMARK(BM_BudgetStep)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("allocator")
    ->Unit(benchmark::kMillisecond);

void BM_BudgetWholeGeneration(benchmark::State& state) {
  StepConfig c;
  c.mode = "generate";
  c.allocator = "cuda";
  c.bindings = {{"S", 2048}, {"T", 512}};
  const std::string path = std::string(TORCHCOST_SOURCE_DIR) +
                           "/examples/configs/Llama-2-7b-hf.json";
  auto g = AnalyzeGeneration(path, "dtype=bf16", Rules(), c);
  if (!g.ok()) {
    state.SkipWithError(g.status().message().c_str());
    return;
  }
  BudgetQuestion q;
  q.budget_bytes = int64_t{24} << 30;
  for (auto _ : state) {
    const BudgetEvaluator budget(*g);
    auto a = budget.Answer({{"S", 2048}, {"T", 512}}, q);
    if (!a.ok()) std::abort();
    benchmark::DoNotOptimize(a->largest);
  }
}
BENCHMARK(BM_BudgetWholeGeneration)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
