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

namespace torchcost {
namespace {

void BM_CompareFiveLlama7b(benchmark::State& state) {
  auto rules = RuleSet::Builtin();
  if (!rules.ok()) std::abort();
  const std::vector<std::string> configs = {"full", "lora:r=8,targets=q_proj|v_proj", "dora:r=8,targets=q_proj|v_proj",
                                            "galore:r=128", "qlora:r=16"};
  for (auto _ : state) {
    // NB: bfloat16 as `--param-dtype bf16` builds it: the family's dtype, so
    // activations are bf16 with Hugging Face's float32 islands.
    auto built = build::BuildNamedModel("llama-7b-like", "dtype=bf16");
    if (!built.ok()) std::abort();
    sym::Context ctx;
    AnalysisOptions options;
    for (const build::InputDecl& in : built->inputs) options.inputs.push_back({build::ResolveShape(*built, in, ctx), in.dtype});
    CompareOptions compare;
    compare.bindings = {{"S", 2048}};
    compare.budget_bytes = int64_t{24} << 30;
    for (const std::string& text : configs) {
      auto method = ParseMethodSpec(text);
      auto graph = ApplyMethod(built->graph, *method);
      AnalysisOptions row_options = options;
      if (method->kind == MethodSpec::Kind::kGalore) row_options.training.galore = *ParseGaloreConfig(method->settings);
      // The family's loss, as `torchcost compare` applies it (Hugging Face's causal-LM loss).
      row_options.training.loss = *ParseLossSpec(built->default_loss);
      auto with_loss = ApplyLoss(*graph, *rules, ctx, &row_options);
      if (!with_loss.ok()) std::abort();
      auto report = Analyze(*with_loss, *rules, ctx, row_options);
      auto row = EvaluateCompareRow(*report, text, compare);
      if (!row.ok()) std::abort();
      benchmark::DoNotOptimize(row->peak);
    }
  }
}
BENCHMARK(BM_CompareFiveLlama7b)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
