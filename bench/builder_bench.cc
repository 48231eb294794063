// Benchmarks of the builder path: the llama-7b-like preset (32 layers) built
// and analysed for a training step with symbolic B and S, and the evaluation
// of its totals and peak at a new (B, S) through compiled sym::Programs.
//
// Targets (issue 4, point 6): the full training analysis under 50 ms; a new
// (B, S) under 50 us. Run with --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "bench_models.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/families.h"
#include "torchcost/loss.h"
#include "torchcost/method.h"
#include "torchcost/rules.h"
#include "torchcost/step.h"
#include "torchcost/sym.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using bench::Llama7b;
using bench::Rules;

AnalysisOptions TrainOptions(const builder::BuiltModel& m, sym::Context& ctx) {
  AnalysisOptions options;
  options.training.mode = StepMode::kTrain;
  options.training.optimizer = OptimizerKind::kAdam;
  for (const builder::InputDecl& in : m.inputs)
    options.inputs.push_back({builder::ResolveShape(m, in, ctx), in.dtype});
  return options;
}

// Building the graph of the preset from its config.
void BM_BuildLlama7b(benchmark::State& state) {
  for (auto _ : state) {
    auto m = builder::BuildNamedModel("llama-7b-like", "");
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_BuildLlama7b)->Unit(benchmark::kMillisecond);

// The full training analysis (forward, backward, Adam, memory timeline) with B
// and S unbound, then the symbolic peak (EvaluatePeak with no bindings).
void BM_AnalyzeTrainLlama7bSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    auto report = Analyze(m.graph, Rules(), ctx, options);
    if (!report.ok() || !report->unknown_ops.empty()) {
      state.SkipWithError("analysis failed or has unknown ops");
      break;
    }
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_AnalyzeTrainLlama7bSymbolic)->Unit(benchmark::kMillisecond);

// The same with every decoder layer checkpointed (--checkpoint blocks): the
// segments' forward is replayed in backward; it should cost about the same.
void BM_AnalyzeTrainLlama7bCheckpointSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.training.checkpoint = "blocks";
    auto report = Analyze(m.graph, Rules(), ctx, options);
    if (!report.ok() || report->training.checkpoint_segments.size() != 32) {
      state.SkipWithError("analysis failed or the 32 layers were not found");
      break;
    }
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_AnalyzeTrainLlama7bCheckpointSymbolic)
    ->Unit(benchmark::kMillisecond);

// The same under GaLore (--optimizer adamw --galore r=128, the default targets:
// 224 projected weights, an SVD step; arg 1: per-layer updates in backward):
// it should cost about the same as the plain training analysis.
void BM_AnalyzeTrainLlama7bGaloreSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.training.optimizer = OptimizerKind::kAdamW;
    options.training.galore = GaloreConfig();
    options.training.galore->per_layer = state.range(0) != 0;
    auto report = Analyze(m.graph, Rules(), ctx, options);
    if (!report.ok() || report->training.galore_params == 0) {
      state.SkipWithError("analysis failed or nothing projected");
      break;
    }
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_AnalyzeTrainLlama7bGaloreSymbolic)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// One iteration of the loss benchmarks: the loss appended to `graph`, the
// analysis of the grown graph and its symbolic peak; false (with the state
// marked) if a step failed.
bool AnalyzeWithLoss(benchmark::State& state, const ir::Graph& graph,
                     sym::Context& ctx, AnalysisOptions& options) {
  auto with_loss = ApplyLoss(graph, Rules(), ctx, &options);
  if (!with_loss.ok()) {
    state.SkipWithError("the loss was not applied");
    return false;
  }
  auto report = Analyze(*with_loss, Rules(), ctx, options);
  if (!report.ok() || !report->unknown_ops.empty()) {
    state.SkipWithError("analysis failed or has unknown ops");
    return false;
  }
  PeakInfo peak = EvaluatePeak(report->training, {});
  benchmark::DoNotOptimize(peak);
  return true;
}

// The same with the loss the family trains with (Hugging Face's causal-LM
// loss, arg 0; torchtune's chunked cross-entropy over 8 chunks, arg 8): the
// rewrite's shape propagation and the analysis of the grown graph.
void BM_AnalyzeTrainLlama7bLossSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  const LossSpec loss = *ParseLossSpec(
      state.range(0) > 0 ? "causal_lm:chunks=" + std::to_string(state.range(0))
                         : std::string("causal_lm"));
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.training.loss = loss;
    if (!AnalyzeWithLoss(state, m.graph, ctx, options)) break;
  }
}
BENCHMARK(BM_AnalyzeTrainLlama7bLossSymbolic)
    ->Arg(0)
    ->Arg(8)
    ->Unit(benchmark::kMillisecond);

// Issue 9, point 7: what LLM fine-tuning users ask about, end to end once the
// model is built: llama-7b-like in bfloat16 (the family's dtype=bf16, with
// Hugging Face's float32 islands), SDPA on the flash backend, LoRA r=8 on
// q_proj|v_proj, Hugging Face's causal-LM loss, AdamW, B and S symbolic; the
// rewrites, the analysis and the symbolic peak. Target: under 20 ms.
void BM_AnalyzeTrainLlama7bBf16LoraFlashLoss(benchmark::State& state) {
  static const builder::BuiltModel* m = [] {
    auto r = builder::BuildNamedModel("llama-7b-like", "dtype=bf16,attn=sdpa");
    if (!r.ok()) std::abort();
    return new builder::BuiltModel(std::move(r).value());
  }();
  const MethodSpec lora = *ParseMethodSpec("lora:r=8,targets=q_proj|v_proj");
  const LossSpec loss = *ParseLossSpec(m->default_loss);
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(*m, ctx);
    options.training.optimizer = OptimizerKind::kAdamW;
    options.attention_backend = "flash";
    options.training.loss = loss;
    auto adapted = ApplyMethod(m->graph, lora);
    if (!adapted.ok()) {
      state.SkipWithError("LoRA was not applied");
      break;
    }
    if (!AnalyzeWithLoss(state, *adapted, ctx, options)) break;
  }
}
BENCHMARK(BM_AnalyzeTrainLlama7bBf16LoraFlashLoss)
    ->Unit(benchmark::kMillisecond);

// The declared inputs of `m` as StepConfig reads them ("B,S:int64"), the loss
// sum.
StepConfig StepOf(const builder::BuiltModel& m) {
  StepConfig c = StepConfigFor(m);
  c.loss = "sum";
  return c;
}

// The same step through the pipeline (include/torchcost/step.h), as the CLI
// and the Python package run it: the options parsed and checked, the inputs
// parsed into the result's own context, then the stages above.
void BM_AnalyzeStepLlama7bBf16LoraFlashLoss(benchmark::State& state) {
  static const builder::BuiltModel* m = [] {
    auto r = builder::BuildNamedModel("llama-7b-like", "dtype=bf16,attn=sdpa");
    if (!r.ok()) std::abort();
    return new builder::BuiltModel(std::move(r).value());
  }();
  StepConfig config = StepOf(*m);
  config.method = "lora:r=8,targets=q_proj|v_proj";
  config.attention_backend = "flash";
  config.loss = m->default_loss;
  for (auto _ : state) {
    auto step = AnalyzeStep(m->graph, Rules(), config);
    if (!step.ok() || !step->report.unknown_ops.empty()) {
      state.SkipWithError("the step failed or has unknown ops");
      break;
    }
    PeakInfo peak = EvaluatePeak(step->report.training, {});
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_AnalyzeStepLlama7bBf16LoraFlashLoss)
    ->Unit(benchmark::kMillisecond);

// The pipeline with autocast fp16 (CUDA lists, GradScaler) and the family's
// loss: the autocast rewrite's rounds of shape propagation, then the analysis.
void BM_AnalyzeStepLlama7bAutocastLoss(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  StepConfig config = StepOf(m);
  config.autocast = "fp16";
  config.loss = m.default_loss;
  for (auto _ : state) {
    auto step = AnalyzeStep(m.graph, Rules(), config);
    if (!step.ok()) {
      state.SkipWithError("the step failed");
      break;
    }
    benchmark::DoNotOptimize(step->report.flops);
  }
}
BENCHMARK(BM_AnalyzeStepLlama7bAutocastLoss)->Unit(benchmark::kMillisecond);

// The same step at B=1, S=2048, without a GPU (arg 0) and with the roofline
// time on an A100 (arg 1): the bytes per node and the time are the difference.
void BM_AnalyzeStepLlama7bAutocastGpu(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  StepConfig config = StepOf(m);
  config.autocast = "bf16";
  config.loss = m.default_loss;
  config.bindings = {{"B", 1}, {"S", 2048}};
  if (state.range(0) == 1) config.gpu = "a100-80gb";
  for (auto _ : state) {
    auto step = AnalyzeStep(m.graph, Rules(), config);
    if (!step.ok()) {
      state.SkipWithError(step.status().message().c_str());
      break;
    }
    benchmark::DoNotOptimize(step->report.time.step_seconds);
  }
}
BENCHMARK(BM_AnalyzeStepLlama7bAutocastGpu)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// The same stages called by hand, as the CLI called them before the pipeline:
// the loss, autocast and the analysis each propagate shapes (4 propagations;
// the pipeline's 2: autocast's two rounds, the analysis taking the last).
void BM_AnalyzeHandLlama7bAutocastLoss(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.training.optimizer = OptimizerKind::kAdamW;
    options.autocast = DType::kFloat16;
    options.training.grad_scaler = true;
    options.training.loss = *ParseLossSpec(m.default_loss);
    auto with_loss = ApplyLoss(m.graph, Rules(), ctx, &options);
    auto cast = ApplyAutocast(*with_loss, Rules(), ctx, options);
    auto report = Analyze(*cast, Rules(), ctx, options);
    if (!report.ok()) {
      state.SkipWithError("the analysis failed");
      break;
    }
    benchmark::DoNotOptimize(report->flops);
  }
}
BENCHMARK(BM_AnalyzeHandLlama7bAutocastLoss)->Unit(benchmark::kMillisecond);

// resnet50 (the family's preset, B symbolic) with its cross-entropy loss:
// by hand, the loss propagates the model for its output's shape and the
// analysis the grown graph again; the pipeline extends the first propagation
// over the loss's ops (torchcost --model resnet50 runs this).
const builder::BuiltModel& Resnet50() {
  static const builder::BuiltModel* m = [] {
    auto r = builder::BuildNamedModel("resnet50", "");
    if (!r.ok()) std::abort();
    return new builder::BuiltModel(std::move(r).value());
  }();
  return *m;
}

void BM_AnalyzeHandResnet50Loss(benchmark::State& state) {
  const builder::BuiltModel& m = Resnet50();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.training.optimizer = OptimizerKind::kAdamW;
    options.training.loss = *ParseLossSpec(m.default_loss);
    auto with_loss = ApplyLoss(m.graph, Rules(), ctx, &options);
    auto report = Analyze(*with_loss, Rules(), ctx, options);
    if (!report.ok()) {
      state.SkipWithError("the analysis failed");
      break;
    }
    benchmark::DoNotOptimize(report->flops);
  }
}
BENCHMARK(BM_AnalyzeHandResnet50Loss)->Unit(benchmark::kMillisecond);

void BM_AnalyzeStepResnet50Loss(benchmark::State& state) {
  const builder::BuiltModel& m = Resnet50();
  StepConfig config = StepOf(m);
  config.loss = m.default_loss;
  for (auto _ : state) {
    auto step = AnalyzeStep(m.graph, Rules(), config);
    if (!step.ok()) {
      state.SkipWithError("the step failed");
      break;
    }
    benchmark::DoNotOptimize(step->report.flops);
  }
}
BENCHMARK(BM_AnalyzeStepResnet50Loss)->Unit(benchmark::kMillisecond);

// The parts of it: the forward analysis alone (inference), and the training
// analysis without the symbolic peak.
void BM_AnalyzeInferLlama7bSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.training.mode = StepMode::kInfer;
    auto report = Analyze(m.graph, Rules(), ctx, options);
    benchmark::DoNotOptimize(report);
  }
}
BENCHMARK(BM_AnalyzeInferLlama7bSymbolic)->Unit(benchmark::kMillisecond);

void BM_AnalyzeTrainNoPeakLlama7bSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    auto report = Analyze(m.graph, Rules(), ctx, options);
    benchmark::DoNotOptimize(report);
  }
}
BENCHMARK(BM_AnalyzeTrainNoPeakLlama7bSymbolic)->Unit(benchmark::kMillisecond);

// The training analysis under --autocast fp16 (CUDA lists, GradScaler): the
// autocast rewrite (shape propagation until no cast is added) plus the
// analysis of the rewritten graph; target: within 2x of the plain analysis.
void BM_AnalyzeTrainLlama7bAutocastSymbolic(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  for (auto _ : state) {
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(m, ctx);
    options.autocast = DType::kFloat16;
    options.training.grad_scaler = true;
    auto g = ApplyAutocast(m.graph, Rules(), ctx, options);
    if (!g.ok()) {
      state.SkipWithError("autocast failed");
      break;
    }
    auto report = Analyze(*g, Rules(), ctx, options);
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_AnalyzeTrainLlama7bAutocastSymbolic)
    ->Unit(benchmark::kMillisecond);

// Build + analysis + symbolic peak: what `torchcost --model llama-7b-like`
// does.
void BM_BuildAndAnalyzeLlama7b(benchmark::State& state) {
  for (auto _ : state) {
    auto m = builder::BuildNamedModel("llama-7b-like", "");
    sym::Context ctx;
    AnalysisOptions options = TrainOptions(*m, ctx);
    auto report = Analyze(m->graph, Rules(), ctx, options);
    PeakInfo peak = EvaluatePeak(report->training, {});
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_BuildAndAnalyzeLlama7b)->Unit(benchmark::kMillisecond);

// Issue 12, point 6: Mixtral-8x7B from its config.json (32 layers of 8
// experts, top-2 routing), built, the training step analysed through the
// pipeline with B and S unbound, and its symbolic peak: what `torchcost
// --model examples/configs/Mixtral-8x7B-v0.1.json` computes before it
// renders. Target: under 50 ms.
void BM_BuildAndAnalyzeMixtralSymbolic(benchmark::State& state) {
  const std::string path = std::string(TORCHCOST_SOURCE_DIR) +
                           "/examples/configs/Mixtral-8x7B-v0.1.json";
  for (auto _ : state) {
    auto m = builder::BuildNamedModel(path, "");
    if (!m.ok()) {
      state.SkipWithError(m.status().message().c_str());
      break;
    }
    StepConfig config = StepConfigFor(*m);
    auto step = AnalyzeStep(std::move(m->graph), Rules(), config);
    if (!step.ok() || !step->report.unknown_ops.empty()) {
      state.SkipWithError("the step failed or has unknown ops");
      break;
    }
    PeakInfo peak = EvaluatePeak(step->report.training, {});
    state.counters["candidates"] = static_cast<double>(peak.candidates.size());
    benchmark::DoNotOptimize(peak);
  }
}
BENCHMARK(BM_BuildAndAnalyzeMixtralSymbolic)->Unit(benchmark::kMillisecond);

// A new (B, S): the flops totals and every peak candidate, evaluated by two
// compiled programs; the peak is the largest candidate.
void BM_EvaluateLlama7bAtNewBS(benchmark::State& state) {
  const builder::BuiltModel& m = Llama7b();
  sym::Context ctx;
  AnalysisOptions options = TrainOptions(m, ctx);
  auto report = Analyze(m.graph, Rules(), ctx, options);
  if (!report.ok()) {
    state.SkipWithError("analysis failed");
    return;
  }
  const TrainingReport& t = report->training;
  const PeakInfo peak = EvaluatePeak(t, {});
  const std::vector<std::string> symbols = {"B", "S"};
  auto totals =
      sym::Program::Compile({t.flops_forward, t.flops_backward,
                             t.flops_optimizer, t.flops_step, t.saved_bytes},
                            symbols);
  auto candidates = sym::Program::Compile(peak.candidates, symbols);
  if (!totals.ok() || !candidates.ok()) {
    state.SkipWithError("compile failed");
    return;
  }
  std::vector<__int128> totals_out(totals->num_outputs()),
      cand_out(candidates->num_outputs());
  state.counters["candidates"] = static_cast<double>(peak.candidates.size());
  int64_t i = 0;
  for (auto _ : state) {
    // B in 1..8, S in 512..4096.
    const int64_t values[2] = {1 + (i & 7), 512 << (i & 3)};
    ++i;
    if (!totals->Run(values, totals_out.data()).ok() ||
        !candidates->Run(values, cand_out.data()).ok()) {
      state.SkipWithError("overflow");
      break;
    }
    __int128 best = cand_out.empty() ? 0 : cand_out[0];
    for (__int128 c : cand_out) best = c > best ? c : best;
    benchmark::DoNotOptimize(best);
    benchmark::DoNotOptimize(totals_out.data());
  }
}
BENCHMARK(BM_EvaluateLlama7bAtNewBS)->Unit(benchmark::kMicrosecond);

// One tensor-parallel rank (tp=8) of the preset: its training step analysed
// at B=1, S=4096 with its loss (the vocab-parallel cross entropy) and timed
// on an H100 SXM: the roofline, the graph's collectives (NCCL's tuner per
// call) and their overlap with the backward's GEMMs.
void BM_AnalyzeTimedTrainLlama7bTp8(benchmark::State& state) {
  auto built = builder::BuildNamedModel("llama-7b-like", "tp=8");
  if (!built.ok()) std::abort();
  StepConfig config = StepConfigFor(*built);
  config.gpu = "H100-SXM";
  config.bindings = {{"B", 1}, {"S", 4096}};
  for (auto _ : state) {
    auto step = AnalyzeStep(built->graph, Rules(), config);
    if (!step.ok() ||
        step->report.time.model_parallel_overlapped_seconds <= 0) {
      state.SkipWithError("analysis failed or nothing overlapped");
      break;
    }
    benchmark::DoNotOptimize(step->report.time.step_seconds);
  }
}
BENCHMARK(BM_AnalyzeTimedTrainLlama7bTp8)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
