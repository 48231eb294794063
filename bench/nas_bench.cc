// Benchmarks of architecture search (issue 11, point 5): candidates per
// second, reported as items_per_second.
//
// Targets on the 2-core reference machine, one core: >= 100,000 candidate
// evaluations per second for a symbolic space (BM_NasEvaluateGpt2Space,
// BM_NasEvaluateLlamaSpace); >= 2,000 per second for resnet50-sized graphs
// whose structure differs (BM_NasComposeResnet50Depths, ...DepthsAndKernels).
// Run with --benchmark_repetitions=5 and read the medians. The one-time costs
// (the grid of analyses, the probes) are BM_NasLearn*.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bench_models.h"
#include "torchcost/evaluator.h"
#include "torchcost/nas.h"

namespace torchcost {
namespace {

using bench::Rules;

// GPT-2 small's structure (12 layers, vocabulary 50257, context 1024, AdamW)
// with heads H in [4, 16] and head dim 16 D, D in [1, 8] (hidden up to 2048).
ArchSpace Gpt2Space() {
  ArchSpace s;
  s.model = "gpt2";
  s.config = "layers=12,heads=H,hidden=16*H*D";
  s.symbols = {{"H", 4, 16, 1}, {"D", 1, 8, 1}};
  return s;
}

// A LLaMA-like space: 16 layers, kv heads K in [2, 8], groups G in [2, 4],
// head dim 8 R (R in [2, 16]: flash-attention takes head dims that are
// multiples of 8, so the kernel, and the graph's structure, stays),
// intermediate 256 I (I in [4, 64]), bf16.
ArchSpace LlamaSpace() {
  ArchSpace s;
  s.model = "llama";
  s.config =
      "layers=16,kv_heads=K,heads=K*G,hidden=K*G*8*R,intermediate=256*I,dtype="
      "bf16";
  s.symbols = {
      {"K", 2, 8, 1}, {"G", 2, 4, 1}, {"R", 2, 16, 1}, {"I", 4, 64, 1}};
  return s;
}

struct Compiled {
  sym::Context ctx;
  ArchCosts costs;
  Evaluator evaluator;
};

std::unique_ptr<Compiled> Compile(const ArchSpace& space) {
  auto c = std::make_unique<Compiled>();
  Result<ArchCosts> costs = AnalyzeArchSpace(space, Rules(), c->ctx);
  if (!costs.ok()) {
    std::fprintf(stderr, "%s\n", costs.status().message().c_str());
    std::abort();
  }
  c->costs = std::move(costs).value();
  Result<Evaluator> ev = Evaluator::Compile(c->costs.costs, c->costs.symbols);
  if (!ev.ok()) std::abort();
  c->evaluator = std::move(ev).value();
  return c;
}

// Random candidates: each architecture symbol within its range, then B in
// [1, 64] and S in [128, 1024], one row per candidate.
std::vector<int64_t> Candidates(const ArchSpace& space,
                                const std::vector<std::string>& symbols,
                                size_t n) {
  std::mt19937_64 rng(42);
  std::vector<int64_t> values;
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& name : symbols) {
      int64_t lo = 1, hi = 64;
      if (name == "S") lo = 128, hi = 1024;
      for (const ArchSymbol& s : space.symbols) {
        if (s.name == name) lo = s.lo, hi = s.hi;
      }
      values.push_back(lo + static_cast<int64_t>(
                                rng() % static_cast<uint64_t>(hi - lo + 1)));
    }
  }
  return values;
}

void EvaluateSpace(benchmark::State& state, const ArchSpace& space,
                   const Compiled& c) {
  constexpr size_t kBatch = 1024;
  const std::vector<int64_t> values =
      Candidates(space, c.costs.symbols, kBatch);
  std::vector<CandidateCosts> out(kBatch);
  for (auto _ : state) {
    c.evaluator.Evaluate(values.data(), kBatch, out.data());
    benchmark::DoNotOptimize(out.data());
  }
  for (const CandidateCosts& o : out) {
    if (!o.ok) state.SkipWithError("a candidate failed");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
  state.counters["peak_candidates"] =
      static_cast<double>(c.evaluator.num_peak_candidates());
}

const Compiled& Gpt2Compiled() {
  static Compiled* c = Compile(Gpt2Space()).release();
  return *c;
}

const Compiled& LlamaCompiled() {
  static Compiled* c = Compile(LlamaSpace()).release();
  return *c;
}

// One batch of 1,024 GPT-2 candidates (H, D, B, S): params, FLOPs, peak.
void BM_NasEvaluateGpt2Space(benchmark::State& state) {
  EvaluateSpace(state, Gpt2Space(), Gpt2Compiled());
}
BENCHMARK(BM_NasEvaluateGpt2Space)->Unit(benchmark::kMicrosecond);

// One batch of 1,024 LLaMA candidates (K, G, R, I, B, S).
void BM_NasEvaluateLlamaSpace(benchmark::State& state) {
  EvaluateSpace(state, LlamaSpace(), LlamaCompiled());
}
BENCHMARK(BM_NasEvaluateLlamaSpace)->Unit(benchmark::kMicrosecond);

// Learning the GPT-2 space's closed forms (the grid of concrete analyses).
void BM_NasLearnGpt2Space(benchmark::State& state) {
  for (auto _ : state) {
    sym::Context ctx;
    Result<ArchCosts> costs = AnalyzeArchSpace(Gpt2Space(), Rules(), ctx);
    if (!costs.ok()) state.SkipWithError(costs.status().message().c_str());
    state.counters["analyses"] = costs.ok() ? costs->analyses : 0;
  }
}
BENCHMARK(BM_NasLearnGpt2Space)->Unit(benchmark::kMillisecond);

// ResNets of torchvision's Bottleneck at 224x224, B = 32, with 1-8 blocks per
// stage (resnet50 is 3:4:6:3) and a kernel size of 3, 5 or 7 per stage: each
// candidate a different graph, composed from the cache of per-block
// contributions.
const ResnetStructureComposer& Resnet50Composer() {
  static ResnetStructureComposer* c = [] {
    ResnetStructureSpace space;
    space.batch = 32;
    space.kernels = {3, 5, 7};
    auto r = ResnetStructureComposer::Create(space, Rules());
    if (!r.ok()) std::abort();
    return new ResnetStructureComposer(std::move(r).value());
  }();
  return *c;
}

// Candidates that differ in blocks per stage (1..8) and, with kernels, in each
// stage's kernel size.
void ComposeResnet50s(benchmark::State& state, bool kernels) {
  const ResnetStructureComposer& composer = Resnet50Composer();
  constexpr size_t kBatch = 1024;
  std::mt19937_64 rng(42);
  std::vector<std::array<int64_t, 4>> depths(kBatch), sizes(kBatch);
  for (size_t i = 0; i < kBatch; ++i) {
    for (int64_t& v : depths[i]) v = 1 + static_cast<int64_t>(rng() % 8);
    for (int64_t& v : sizes[i])
      v = kernels ? 3 + 2 * static_cast<int64_t>(rng() % 3) : 3;
  }
  int64_t sum = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < kBatch; ++i) {
      Result<StructuralCosts> c = composer.Evaluate(depths[i], sizes[i]);
      sum += c->peak_upper;
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * kBatch));
}

void BM_NasComposeResnet50Depths(benchmark::State& state) {
  ComposeResnet50s(state, false);
}
BENCHMARK(BM_NasComposeResnet50Depths)->Unit(benchmark::kMicrosecond);

void BM_NasComposeResnet50DepthsAndKernels(benchmark::State& state) {
  ComposeResnet50s(state, true);
}
BENCHMARK(BM_NasComposeResnet50DepthsAndKernels)->Unit(benchmark::kMicrosecond);

// Filling the cache: 1 + 4 * (2 * 3 - 1) = 21 whole-graph analyses of
// Bottleneck ResNets.
void BM_NasLearnResnet50Structures(benchmark::State& state) {
  for (auto _ : state) {
    ResnetStructureSpace space;
    space.batch = 32;
    space.kernels = {3, 5, 7};
    auto r = ResnetStructureComposer::Create(space, Rules());
    if (!r.ok()) state.SkipWithError(r.status().message().c_str());
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_NasLearnResnet50Structures)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace torchcost

BENCHMARK_MAIN();
