// Benchmarks of generation with a KV cache (AnalyzeGeneration): Llama-2-7B and
// Mistral-7B from their config.json (examples/configs), both phases analysed
// with B, S and T symbolic, then the report at a binding; and a sweep over the
// context 1k..128k from that one analysis; the same generation timed on a GPU,
// a batch sweep timed per point, and the caching allocator over a whole
// generate(); the generation timed with the host's launch cost, and one
// tensor-parallel rank's with its collectives.
//
// Target (issue 12, point 6): a generation analysis under 10 ms. Run with
// --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "bench_models.h"
#include "torchcost/generation.h"
#include "torchcost/generation_allocator.h"
#include "torchcost/generation_report.h"
#include "torchcost/report.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using bench::Rules;

std::string Config(const char* name) {
  return std::string(TORCHCOST_SOURCE_DIR) + "/examples/configs/" + name;
}

StepConfig Generate() {
  StepConfig c;
  c.mode = "generate";
  return c;
}

// Both phases of a 32-layer model, symbolic, with the JSON object at B=8,
// S=4096, T=512.
void BM_GenerateSymbolic(benchmark::State& state, const char* file) {
  const RuleSet& rules = Rules();
  const std::string path = Config(file);
  const sym::Bindings at = {{"B", 8}, {"S", 4096}, {"T", 512}};
  for (auto _ : state) {
    Result<GenerationAnalysis> g =
        AnalyzeGeneration(path, "", rules, Generate());
    if (!g.ok()) {
      state.SkipWithError(g.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(RenderGenerationJson(*g, at));
  }
}
BENCHMARK_CAPTURE(BM_GenerateSymbolic, llama2_7b, "Llama-2-7b-hf.json")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GenerateSymbolic, mistral_7b, "Mistral-7B-v0.1.json")
    ->Unit(benchmark::kMillisecond);

// What fits: S = 1k..128k (8 points) at B=8, T=512 from one analysis, analysis
// included.
void BM_GenerateSweepContext(benchmark::State& state) {
  const RuleSet& rules = Rules();
  const std::string path = Config("Llama-2-7b-hf.json");
  SweepSpec s = std::move(ParseSweep("S=1024:131072:x2")).value();
  StepConfig c = Generate();
  c.budget_bytes = int64_t{80} << 30;
  for (auto _ : state) {
    Result<GenerationAnalysis> g = AnalyzeGeneration(path, "", rules, c);
    if (!g.ok()) {
      state.SkipWithError(g.status().message().c_str());
      return;
    }
    Result<std::string> out =
        RenderGenerationSweep(*g, {s}, {{"B", 8}, {"T", 512}}, true);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_GenerateSweepContext)->Unit(benchmark::kMillisecond);

// Times `file`'s generation (its config keys overridden by `keys`) under `c`
// at B=8, S=4096, T=512.
void TimeGeneration(benchmark::State& state, const char* file, StepConfig c,
                    const char* keys = "") {
  const RuleSet& rules = Rules();
  const std::string path = Config(file);
  c.bindings = {{"B", 8}, {"S", 4096}, {"T", 512}};
  for (auto _ : state) {
    Result<GenerationAnalysis> g = AnalyzeGeneration(path, keys, rules, c);
    if (!g.ok()) {
      state.SkipWithError(g.status().message().c_str());
      return;
    }
    benchmark::DoNotOptimize(g->time.decode_seconds);
  }
}

// The same generation timed on an H100 at B=8, S=4096, T=512: both phases'
// roofline and the 511 decode steps summed over their cache lengths.
void BM_GenerateTimed(benchmark::State& state, const char* file) {
  StepConfig c = Generate();
  c.gpu = "H100-SXM";
  TimeGeneration(state, file, std::move(c));
}
BENCHMARK_CAPTURE(BM_GenerateTimed, llama2_7b, "Llama-2-7b-hf.json")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GenerateTimed, mistral_7b, "Mistral-7B-v0.1.json")
    ->Unit(benchmark::kMillisecond);

// One rank of tp=8 timed: its collectives (65 all-reduces and the logits'
// gather per decode step) as NCCL calls, in each of the 511 decode steps.
void BM_GenerateTimedTp8(benchmark::State& state) {
  StepConfig c = Generate();
  c.gpu = "H100-SXM";
  TimeGeneration(state, "Llama-2-7b-hf.json", std::move(c), "tp=8");
}
BENCHMARK(BM_GenerateTimedTp8)->Unit(benchmark::kMillisecond);

// The same with a calibration file's host cost per forward kernel (15 us:
// the decode steps' 1368 kernels take 20.5 ms, between the first step's
// 19.5 ms on the device and the last's 21.4 ms), so that the decode sum
// bisects for the first step the device bounds.
void BM_GenerateTimedWithHost(benchmark::State& state) {
  const std::string file =
      (std::filesystem::temp_directory_path() / "torchcost-h100-host.json")
          .string();
  {
    std::ofstream out(file);
    out << R"({"roofline": {"device": "cuda", "gpu": "h100"},
               "fit": {"efficiency": {},
                       "host": {"forward_kernel_seconds": 1.5e-5}}})";
  }
  StepConfig c = Generate();
  c.gpu_file = file;
  c.param_dtype = "bf16";
  TimeGeneration(state, "Llama-2-7b-hf.json", std::move(c));
}
BENCHMARK(BM_GenerateTimedWithHost)->Unit(benchmark::kMillisecond);

// Throughput against batch: B = 1..64 (7 points) at S=4096, T=512, each point
// timed, from one analysis (included).
void BM_GenerateSweepBatchTimed(benchmark::State& state) {
  const RuleSet& rules = Rules();
  const std::string path = Config("Llama-2-7b-hf.json");
  SweepSpec s = std::move(ParseSweep("B=1:64:x2")).value();
  StepConfig c = Generate();
  c.gpu = "H100-SXM";
  c.evaluate_time = false;
  c.budget_bytes = int64_t{80} << 30;
  Result<std::optional<TimedOn>> on = StepTiming(c);
  if (!on.ok() || !*on) {
    state.SkipWithError("no GPU");
    return;
  }
  for (auto _ : state) {
    Result<GenerationAnalysis> g = AnalyzeGeneration(path, "", rules, c);
    if (!g.ok()) {
      state.SkipWithError(g.status().message().c_str());
      return;
    }
    Result<std::string> out =
        RenderGenerationSweep(*g, {s}, {{"S", 4096}, {"T", 512}}, true, &**on);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_GenerateSweepBatchTimed)->Unit(benchmark::kMillisecond);

// The caching allocator over a whole generate(): Llama-2-7B in bf16 at B=8,
// S=512, T=2048 on an RTX 4090 (the cached segments released at its memory),
// the prefill and 2047 decode steps replayed; the phases analysed once,
// outside the loop.
void BM_GenerateWholeAllocator(benchmark::State& state) {
  StepConfig c = Generate();
  c.allocator = "cuda";
  c.param_dtype = "bf16";
  c.bindings = {{"B", 8}, {"S", 512}, {"T", 2048}};
  Result<GenerationAnalysis> g =
      AnalyzeGeneration(Config("Llama-2-7b-hf.json"), "", Rules(), c);
  if (!g.ok()) {
    state.SkipWithError(g.status().message().c_str());
    return;
  }
  const int64_t limit = (int64_t{24} << 30) - (int64_t{400} << 20);
  for (auto _ : state) {
    const GenerationAllocatorPeak p = EvaluateGenerationAllocator(
        g->prefill.report.training, g->decode.report.training,
        g->decode.bindings, limit);
    benchmark::DoNotOptimize(p.reserved_peak);
  }
}
BENCHMARK(BM_GenerateWholeAllocator)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
