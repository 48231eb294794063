// Reports of a generation (AnalyzeGeneration): the KV cache, FLOPs per phase
// and per decoded token, each phase's peak with its breakdown, and sweeps over
// batch and context that say what fits a memory budget.
#ifndef TORCHCOST_GENERATION_REPORT_H_
#define TORCHCOST_GENERATION_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "torchcost/generation.h"
#include "torchcost/report.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost {

// One phase's peak under bindings: its total and breakdown, with the KV cache
// apart.
struct GenerationPeak {
  bool decided =
      false;  // False if the moment of the peak depends on unbound symbols.
  sym::Expr peak;  // The peak (a max(...) expression if not decided).
  // At the peak (if decided): param, buffer (the model's), act, temp, other,
  // kv_cache; they sum to peak.
  sym::Expr param, buffer, act, temp, other, kv_cache;
  std::string
      error;  // Non-empty if the bytes overflow int64 under the bindings.
};

// Returns the peak of `phase` (a phase of a GenerationAnalysis) under
// `bindings`.
GenerationPeak PhasePeak(const StepAnalysis& phase,
                         const sym::Bindings& bindings);

// Returns the generation's text: the model's name and parameters, then the
// section "Generation": cache, FLOPs, peaks by phase.
std::string RenderGenerationText(const GenerationAnalysis& g,
                                 const sym::Bindings& bindings);

// Returns the JSON object written as the report's "generation" key
// (docs/json-schema.md), indented by `indent` spaces after its first line.
std::string RenderGenerationJson(const GenerationAnalysis& g,
                                 const sym::Bindings& bindings, int indent = 2);

// Returns a table (or a "torchcost.sweep" JSON document with a "generation"
// flag) of the KV cache and both phases' peaks at every point of the sweeps,
// from the one analysis; with the CUDA allocator model, the whole generate()
// call's device total (reserved + context); with StepConfig::budget_bytes,
// whether each point fits (BudgetEvaluator); with `time`, each point's time
// to the first token, last decode step and new tokens per second
// (EstimateGenerationTime: the phases analysed with a GPU).
Result<std::string> RenderGenerationSweep(const GenerationAnalysis& g,
                                          const std::vector<SweepSpec>& sweeps,
                                          const sym::Bindings& base, bool json,
                                          const TimedOn* time = nullptr);

}  // namespace torchcost

#endif  // TORCHCOST_GENERATION_REPORT_H_
