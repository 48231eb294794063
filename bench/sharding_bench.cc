// Benchmarks of one rank's memory under sharding: the llama-7b-like training
// analysis with ZeRO-3 and FSDP over N = 8 ranks (bf16 parameters, fp32
// master weights), beside the unsharded analysis, all with B and S symbolic
// and the symbolic peak evaluated. The timeline rewrite is linear in the
// timeline's length, so the sharded cases should cost little more than the
// unsharded one. Run with --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "bench_models.h"
#include "torchcost/analysis.h"
#include "torchcost/families.h"
#include "torchcost/rules.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using bench::Llama7b;
using bench::Rules;

void AnalyzeSharded(benchmark::State& state, ShardStrategy strategy) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options;
    options.training.optimizer = OptimizerKind::kAdam;
    options.param_dtype = DType::kBFloat16;
    options.training.master_weights = true;
    options.training.sharding.strategy = strategy;
    options.training.sharding.world = strategy == ShardStrategy::kNone ? 1 : 8;
    for (const builder::InputDecl& in : m.inputs)
      options.inputs.push_back({builder::ResolveShape(m, in, ctx), in.dtype});
    auto report = Analyze(m.graph, Rules(), ctx, options);
    if (!report.ok()) {
      state.SkipWithError(report.status().message().c_str());
      break;
    }
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
  }
}

void BM_Llama7bUnsharded(benchmark::State& state) {
  AnalyzeSharded(state, ShardStrategy::kNone);
}
BENCHMARK(BM_Llama7bUnsharded)->Unit(benchmark::kMillisecond);

void BM_Llama7bZero3N8(benchmark::State& state) {
  AnalyzeSharded(state, ShardStrategy::kZero3);
}
BENCHMARK(BM_Llama7bZero3N8)->Unit(benchmark::kMillisecond);

void BM_Llama7bFsdpN8(benchmark::State& state) {
  AnalyzeSharded(state, ShardStrategy::kFsdp);
}
BENCHMARK(BM_Llama7bFsdpN8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
