// Benchmarks of one rank's memory under sharding: the llama-7b-like training
// analysis with ZeRO-3 and FSDP over N = 8 ranks (bf16 parameters, fp32
// master weights), beside the unsharded analysis, all with B and S symbolic
// and the symbolic peak evaluated. The timeline rewrite is linear in the
// timeline's length, so the sharded cases should cost little more than the
// unsharded one; timing the step on a GPU, its collectives included, adds
// the bytes each node moves and one pass over the nodes.
// Run with --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "bench_models.h"
#include "torchcost/analysis.h"
#include "torchcost/families.h"
#include "torchcost/gpu.h"
#include "torchcost/roofline.h"
#include "torchcost/rules.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using bench::Llama7b;
using bench::Rules;

// The analysis of `strategy` over N = 8 ranks (64 if `timed`) and, if
// `timed`, its step time on an H100 at B = 1, S = 2048 over a 50 GB/s
// network.
void AnalyzeSharded(benchmark::State& state, ShardStrategy strategy,
                    bool timed = false) {
  const builder::BuiltModel& m = Llama7b();
  GpuSpec gpu = *FindGpu("H100-SXM");
  gpu.interconnect.network = 50e9;
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options;
    options.training.optimizer = OptimizerKind::kAdam;
    options.param_dtype = DType::kBFloat16;
    options.training.master_weights = true;
    options.training.sharding.strategy = strategy;
    options.training.sharding.world = strategy == ShardStrategy::kNone ? 1
                                      : timed                          ? 64
                                                                       : 8;
    options.moved_bytes = timed;
    for (const builder::InputDecl& in : m.inputs)
      options.inputs.push_back({builder::ResolveShape(m, in, ctx), in.dtype});
    auto report = Analyze(m.graph, Rules(), ctx, options);
    if (!report.ok()) {
      state.SkipWithError(report.status().message().c_str());
      break;
    }
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
    if (timed) {
      Result<TimeReport> t =
          EstimateTime(m.graph, *report, gpu, {{"B", 1}, {"S", 2048}});
      if (!t.ok() || !(t->communication_seconds > 0)) {
        state.SkipWithError("the FSDP step's collectives are not timed");
        break;
      }
      benchmark::DoNotOptimize(t->step_seconds);
    }
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

void BM_Llama7bFsdpN64Timed(benchmark::State& state) {
  AnalyzeSharded(state, ShardStrategy::kFsdp, /*timed=*/true);
}
BENCHMARK(BM_Llama7bFsdpN64Timed)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
