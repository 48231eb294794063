// StepConfig's strings parsed into the analysis's own option types, with every
// check of single options and of their combinations in one place.
#ifndef TORCHCOST_SRC_STEP_STEP_CONFIG_H_
#define TORCHCOST_SRC_STEP_STEP_CONFIG_H_

#include <optional>

#include "torchcost/analysis.h"
#include "torchcost/gpu.h"
#include "torchcost/method.h"
#include "torchcost/nas.h"
#include "torchcost/status.h"
#include "torchcost/step.h"
#include "torchcost/time.h"

namespace torchcost::step {

// A checked StepConfig: the analysis options (inputs not yet parsed: they need
// the result's context) and the fine-tuning method, if one is given.
struct ParsedStep {
  AnalysisOptions options;
  std::optional<MethodSpec> method;
  std::optional<GpuSpec> gpu;  // StepConfig::gpu or gpu_file's, if given.
  std::vector<ArchSymbol> arch_symbols;  // StepConfig::arch_symbols, parsed.
  // Notes for the report (StepConfig::deepspeed's keys not modelled).
  std::vector<std::string> notes;
};

// Parses and checks every option of `config` but the inputs and bindings, in
// the order a reader meets them in StepConfig's groups, after applying
// StepConfig::deepspeed's file; the first problem is the error.
Result<ParsedStep> ParseOptions(const StepConfig& config);

// The GPU `parsed` holds (from config.gpu or gpu_file) and its source's name,
// nullopt if none.
std::optional<TimedOn> TimingOf(const StepConfig& config,
                                const ParsedStep& parsed);

// Parses config.inputs into `ctx` (their symbols bounded by
// config.symbol_bounds) and checks config.bindings against their symbols.
// NB: with architecture symbols the model declares its inputs, and
// AnalyzeArchConfig checks the bindings against the closed forms' symbols.
Status ParseInputs(const StepConfig& config, sym::Context& ctx,
                   std::vector<InputSpec>* inputs, sym::Bindings* bindings);

}  // namespace torchcost::step

#endif  // TORCHCOST_SRC_STEP_STEP_CONFIG_H_
