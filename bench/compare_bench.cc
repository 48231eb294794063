// Benchmark of `torchcost compare` in-process: the llama-7b-like preset built
// once, then the five configurations (full, LoRA, DoRA, GaLore,
// QLoRA) each rewritten (or, for GaLore, set on the optimizer), analysed for
// a bf16 training step with its loss (the family's: causal_lm) and B and S
// symbolic, and evaluated into a row at
// S=2048 with a 24 GiB budget (which searches the largest batch that fits).
//
// Targets: five configurations under 200 ms in total (issue 5, point 9), under
// 150 ms with the loss and the bf16 family (issue 9, point 7).
// Run with --benchmark_repetitions=5 and read the median.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/compare.h"
#include "torchcost/families.h"
#include "torchcost/galore.h"
#include "torchcost/loss.h"
#include "torchcost/method.h"
#include "torchcost/rules.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

void BM_CompareFiveLlama7b(benchmark::State& state) {
  auto rules = RuleSet::Builtin();
  if (!rules.ok()) std::abort();
  const std::vector<std::string> configs = {
      "full", "lora:r=8,targets=q_proj|v_proj",
      "dora:r=8,targets=q_proj|v_proj", "galore:r=128", "qlora:r=16"};
  for (auto _ : state) {
    // NB: bfloat16 as `--param-dtype bf16` builds it: the family's dtype, so
    // activations are bf16 with Hugging Face's float32 islands.
    auto built = builder::BuildNamedModel("llama-7b-like", "dtype=bf16");
    if (!built.ok()) std::abort();
    // As `torchcost compare` runs it: one StepConfig, its method set per row.
    // Its inputs and its loss, as `torchcost compare` applies it (Hugging
    // Face's causal-LM loss).
    StepConfig config = StepConfigFor(*built);
    CompareOptions compare;
    compare.bindings = {{"S", 2048}};
    compare.budget_bytes = int64_t{24} << 30;
    for (const std::string& text : configs) {
      config.method = text;
      auto step = AnalyzeStep(built->graph, *rules, config);
      if (!step.ok()) std::abort();
      auto row = EvaluateCompareRow(step->report, text, compare);
      if (!row.ok()) std::abort();
      benchmark::DoNotOptimize(row->peak);
    }
  }
}
BENCHMARK(BM_CompareFiveLlama7b)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
