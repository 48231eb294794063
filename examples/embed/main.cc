// A minimal architecture search over torchcost's public API: builds GPT-2-like
// candidates (depth x width) with the builder, analyses each training step
// (AdamW, the causal-LM loss) once with AnalyzeStep, batch B and sequence S
// symbolic, and evaluates the results at one batch size: parameters, FLOPs per
// step and the peak memory.
//
//   embed [B] [S]    (defaults 8 and 128)
#include <torchcost/analysis.h>
#include <torchcost/builder.h>
#include <torchcost/families.h>
#include <torchcost/rules.h>
#include <torchcost/status.h>
#include <torchcost/step.h>
#include <torchcost/sym.h>
#include <torchcost/training.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

// Prints `status` and exits 1 if it is an error.
void Check(const torchcost::Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "embed: %s\n", status.message().c_str());
  std::exit(1);
}

// Returns `e` evaluated under `bindings`, or exits.
int64_t At(const torchcost::sym::Expr& e,
           const torchcost::sym::Bindings& bindings) {
  torchcost::Result<int64_t> v = torchcost::sym::Evaluate(e, bindings);
  Check(v.status());
  return *v;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace torchcost;  // NOLINT: a short example.
  const sym::Bindings at = {{"B", argc > 1 ? std::atoll(argv[1]) : 8},
                            {"S", argc > 2 ? std::atoll(argv[2]) : 128}};

  // The rules compiled into the library.
  Result<RuleSet> rules = RuleSet::Builtin();
  Check(rules.status());

  std::printf("%-6s %-6s %12s %16s %14s\n", "layers", "hidden", "params",
              "step FLOPs", "peak MiB");
  for (int64_t layers : {2, 4}) {
    for (int64_t hidden : {128, 256}) {
      builder::Gpt2Config config;
      config.layers = layers;
      config.hidden = hidden;
      config.heads = hidden / 64;
      config.vocab = 1024;
      config.context = 512;
      Result<builder::BuiltModel> model = builder::BuildGpt2(config);
      Check(model.status());

      // The model's inputs (B, S) and its loss; the step's other options
      // (AdamW, ...) as their defaults.
      StepConfig step = StepConfigFor(*model);
      // The analysis owns its symbols, its graph (with the loss appended) and
      // its report.
      Result<StepAnalysis> analysis = AnalyzeStep(model->graph, *rules, step);
      Check(analysis.status());
      const Report* report = &analysis->report;

      const PeakInfo peak =
          EvaluatePeak(report->training, at, /*category_max=*/false);
      if (!peak.error.empty()) Check(Status::OutOfRange(peak.error));
      std::printf("%-6lld %-6lld %12lld %16lld %14.1f\n",
                  static_cast<long long>(layers),
                  static_cast<long long>(hidden),
                  static_cast<long long>(report->params),
                  static_cast<long long>(At(report->training.flops_step, at)),
                  static_cast<double>(At(peak.peak, at)) / (1 << 20));
    }
  }
  return 0;
}
