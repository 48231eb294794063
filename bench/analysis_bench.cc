// Benchmarks of import and forward analysis on real traced models.
//
// The fixtures are generated on first use by tools/make_fixtures.py (Debian's
// system python3) into the build tree's fixtures/ directory.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include "bench_models.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/import.h"
#include "torchcost/rules.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using bench::Rules;

std::string FixturePath(const std::string& name) {
  const std::string dir = std::string(TORCHCOST_BINARY_DIR) + "/fixtures";
  const std::string path = dir + "/" + name + ".pt";
  if (!std::filesystem::exists(path)) {
    std::string cmd = "/usr/bin/python3 " + std::string(TORCHCOST_SOURCE_DIR) +
                      "/tools/make_fixtures.py " + dir + " --models " + name +
                      " > /dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0)
      std::fprintf(stderr, "could not generate %s\n", path.c_str());
  }
  return path;
}

const ir::Graph& Model(const std::string& name) {
  static std::map<std::string, std::unique_ptr<ir::Graph>> cache;
  auto& g = cache[name];
  if (!g) {
    auto r = ImportTorchScript(FixturePath(name));
    if (!r.ok()) {
      std::fprintf(stderr, "%s\n", r.status().message().c_str());
      std::abort();
    }
    g = std::make_unique<ir::Graph>(std::move(r).value());
  }
  return *g;
}

void BM_Import(benchmark::State& state, const char* name) {
  const std::string path = FixturePath(name);
  for (auto _ : state) {
    auto g = ImportTorchScript(path);
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK_CAPTURE(BM_Import, resnet50, "resnet50")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Import, vit_b_16, "vit_b_16")
    ->Unit(benchmark::kMillisecond);

// Runs the whole analysis of `name` with a symbolic batch in `mode`, and the
// peak of its memory timeline.
// With `autocast` float16/bfloat16, the graph is first rewritten by
// ApplyAutocast.
void AnalyzeOnce(benchmark::State& state, const ir::Graph& g, StepMode mode,
                 DType autocast = DType::kUnknown) {
  sym::Context ctx;
  AnalysisOptions options;
  options.training.mode = mode;
  options.training.optimizer = OptimizerKind::kAdam;
  options.inputs.push_back(*ParseInputSpec(ctx, "B,3,224,224"));
  Result<ir::Graph> rewritten = g;
  if (autocast != DType::kUnknown) {
    options.autocast = autocast;
    options.training.grad_scaler = autocast == DType::kFloat16;
    rewritten = ApplyAutocast(g, Rules(), ctx, options);
    if (!rewritten.ok()) {
      state.SkipWithError("autocast failed");
      return;
    }
  }
  auto report = Analyze(*rewritten, Rules(), ctx, options);
  if (!report.ok() || !report->unknown_ops.empty())
    state.SkipWithError("analysis failed or has unknown ops");
  PeakInfo peak = EvaluatePeak(report->training, {});
  benchmark::DoNotOptimize(peak);
}

// Forward analysis only (shape propagation, FLOPs, per-module aggregation,
// and the inference memory simulation) with a symbolic batch.
void BM_AnalyzeInfer(benchmark::State& state, const char* name) {
  const ir::Graph& g = Model(name);
  for (auto _ : state) AnalyzeOnce(state, g, StepMode::kInfer);
}
BENCHMARK_CAPTURE(BM_AnalyzeInfer, resnet50, "resnet50")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyzeInfer, vit_b_16, "vit_b_16")
    ->Unit(benchmark::kMillisecond);

// The whole training analysis: the forward analysis, the autograd pass,
// backward FLOPs, the memory simulation of the step (Adam), and its peak.
void BM_AnalyzeTrain(benchmark::State& state, const char* name) {
  const ir::Graph& g = Model(name);
  for (auto _ : state) AnalyzeOnce(state, g, StepMode::kTrain);
}
BENCHMARK_CAPTURE(BM_AnalyzeTrain, resnet50, "resnet50")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_AnalyzeTrain, vit_b_16, "vit_b_16")
    ->Unit(benchmark::kMillisecond);

// The training analysis under --autocast fp16 (the rewrite, then the analysis
// of the rewritten graph); target: within 2x of BM_AnalyzeTrain.
void BM_AnalyzeTrainAutocast(benchmark::State& state, const char* name) {
  const ir::Graph& g = Model(name);
  for (auto _ : state) AnalyzeOnce(state, g, StepMode::kTrain, DType::kFloat16);
}
BENCHMARK_CAPTURE(BM_AnalyzeTrainAutocast, resnet50, "resnet50")
    ->Unit(benchmark::kMillisecond);

// Re-evaluating the totals (MACs, FLOPs, transcendentals) for a new batch size.
void BM_ReevaluateTotals(benchmark::State& state) {
  const ir::Graph& g = Model("resnet50");
  sym::Context ctx;
  AnalysisOptions options;
  options.training.mode = StepMode::kInfer;
  options.inputs.push_back(*ParseInputSpec(ctx, "B,3,224,224"));
  auto report = Analyze(g, Rules(), ctx, options);
  auto program = sym::Program::Compile(
      {report->macs, report->flops, report->transcendentals}, {"B"});
  int64_t batch = 1;
  __int128 out[3];
  for (auto _ : state) {
    batch = batch % 256 + 1;
    if (!program->Run(&batch, out).ok()) state.SkipWithError("overflow");
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_ReevaluateTotals);

// The same through the interpreter: Evaluate on each total with a bindings map.
void BM_ReevaluateTotalsInterpreted(benchmark::State& state) {
  const ir::Graph& g = Model("resnet50");
  sym::Context ctx;
  AnalysisOptions options;
  options.inputs.push_back(*ParseInputSpec(ctx, "B,3,224,224"));
  auto report = Analyze(g, Rules(), ctx, options);
  int64_t batch = 1;
  for (auto _ : state) {
    batch = batch % 256 + 1;
    sym::Bindings b{{"B", batch}};
    auto m = sym::Evaluate128(report->macs, b);
    auto f = sym::Evaluate128(report->flops, b);
    auto t = sym::Evaluate128(report->transcendentals, b);
    benchmark::DoNotOptimize(m);
    benchmark::DoNotOptimize(f);
    benchmark::DoNotOptimize(t);
  }
}
BENCHMARK(BM_ReevaluateTotalsInterpreted);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
