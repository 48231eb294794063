// A GPT-2 architecture search under a memory budget and a FLOP target:
// layers (a structural choice: one symbolic space per depth), heads and head
// dim (symbols), at batch 8 x 1024 tokens, evaluated for every candidate from
// the closed forms with torchcost::Evaluator, then the Pareto front of
// (parameters: more is better; peak memory: less is better) among the
// candidates that fit.
//
//   ./build/nas_example                 # 24 GiB, 40 TFLOPs per step
//   ./build/nas_example 16 20           # 16 GiB, 20 TFLOPs
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "torchcost/evaluator.h"
#include "torchcost/nas.h"
#include "torchcost/rules.h"

namespace {

struct Candidate {
  int64_t layers, heads, head_dim, batch;
  torchcost::CandidateCosts costs;
};

double GiB(int64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace torchcost;
  const double budget_gib = argc > 1 ? std::atof(argv[1]) : 24.0;
  const double target_tflops = argc > 2 ? std::atof(argv[2]) : 40.0;
  if (budget_gib <= 0 || target_tflops <= 0) {
    std::fprintf(stderr,
                 "usage: nas_example [BUDGET_GIB > 0] [TFLOPS_PER_STEP > 0]\n");
    return 2;
  }
  const int64_t budget = static_cast<int64_t>(budget_gib * 1024 * 1024 * 1024);
  const double target = target_tflops * 1e12;
  Result<RuleSet> rules = RuleSet::Builtin();
  if (!rules.ok()) {
    std::fprintf(stderr, "%s\n", rules.status().message().c_str());
    return 1;
  }

  const auto start = std::chrono::steady_clock::now();
  constexpr int64_t kBatch = 8, kSeq = 1024;
  std::vector<Candidate> all;
  int analyses = 0;
  for (int64_t layers : {6, 12, 24}) {
    // Heads H in [4, 16], head dim 16 * D with D in [2, 8]; S = 1024, AdamW,
    // fp32.
    ArchSpace space;
    space.model = "gpt2";
    space.config =
        "layers=" + std::to_string(layers) + ",heads=H,hidden=16*H*D";
    space.symbols = {{"H", 4, 16, 1}, {"D", 2, 8, 1}};
    sym::Context ctx;
    Result<ArchCosts> costs = AnalyzeArchSpace(space, *rules, ctx);
    if (!costs.ok()) {
      std::fprintf(stderr, "%s\n", costs.status().message().c_str());
      return 1;
    }
    analyses += costs->analyses;
    // Symbols H, D, B, S.
    Result<Evaluator> ev = Evaluator::Compile(costs->costs, costs->symbols);
    if (!ev.ok()) {
      std::fprintf(stderr, "%s\n", ev.status().message().c_str());
      return 1;
    }
    std::vector<int64_t> values;
    std::vector<Candidate> batch;
    for (int64_t h = 4; h <= 16; ++h) {
      for (int64_t d = 2; d <= 8; ++d) {
        values.insert(values.end(), {h, d, kBatch, kSeq});
        batch.push_back({layers, h, 16 * d, kBatch, {}});
      }
    }
    std::vector<CandidateCosts> out(batch.size());
    ev->Evaluate(values.data(), batch.size(), out.data());
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i].costs = out[i];
      all.push_back(batch[i]);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  // Feasible: the peak fits and one step (forward + backward) is within the
  // FLOP target.
  std::vector<Candidate> fit;
  for (const Candidate& c : all) {
    const double flops = static_cast<double>(c.costs.flops_forward) +
                         static_cast<double>(c.costs.flops_backward);
    if (c.costs.ok && c.costs.peak_bytes <= budget && flops <= target)
      fit.push_back(c);
  }
  // Pareto front: no other feasible candidate has >= params and <= peak with
  // one strict.
  std::sort(fit.begin(), fit.end(), [](const Candidate& a, const Candidate& b) {
    return a.costs.peak_bytes != b.costs.peak_bytes
               ? a.costs.peak_bytes < b.costs.peak_bytes
               : a.costs.params > b.costs.params;
  });
  std::vector<Candidate> front;
  for (const Candidate& c : fit) {
    if (front.empty() || c.costs.params > front.back().costs.params)
      front.push_back(c);
  }
  std::printf(
      "GPT-2 space: layers {6, 12, 24} x heads 4..16 x head dim 32..128, B = "
      "8, S = 1024, AdamW fp32\n");
  std::printf(
      "%zu candidates from %d analyses in %.3f s; %zu fit %.1f GiB and %.0f "
      "TFLOPs per step\n",
      all.size(), analyses, seconds, fit.size(), budget_gib, target_tflops);
  std::printf("Pareto front (params up, peak down):\n");
  std::printf("%7s %6s %9s %7s %10s %14s %10s\n", "layers", "heads", "head_dim",
              "hidden", "params(M)", "TFLOPs/step", "peak(GiB)");
  for (const Candidate& c : front) {
    std::printf(
        "%7lld %6lld %9lld %7lld %10.1f %14.2f %10.2f\n",
        static_cast<long long>(c.layers), static_cast<long long>(c.heads),
        static_cast<long long>(c.head_dim),
        static_cast<long long>(c.heads * c.head_dim), c.costs.params / 1e6,
        (static_cast<double>(c.costs.flops_forward) +
         static_cast<double>(c.costs.flops_backward)) /
            1e12,
        GiB(c.costs.peak_bytes));
  }
  return 0;
}
