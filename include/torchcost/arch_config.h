// A built model whose config names architecture symbols ("hidden_size=H"):
// the step's totals as closed forms in those symbols and the inputs' B, S,
// from AnalyzeArchSpace's exact interpolation (docs/nas.md). The per-module
// tree and the memory timeline have no closed form here: only the totals.
#ifndef TORCHCOST_ARCH_CONFIG_H_
#define TORCHCOST_ARCH_CONFIG_H_

#include <memory>
#include <string>
#include <vector>

#include "torchcost/nas.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/step.h"
#include "torchcost/sym.h"

namespace torchcost {

// The closed forms of a step over a config with architecture symbols.
struct ArchConfigAnalysis {
  std::string model;         // The family, preset or config.json analysed.
  std::string model_config;  // Its config, with the symbols in it.
  // The symbols and interned expressions of `costs`.
  std::unique_ptr<sym::Context> context;
  // StepConfig::arch_symbols, parsed, in order.
  std::vector<ArchSymbol> symbols;
  ArchCosts costs;  // Totals and the peak's candidates.
  // StepConfig::bindings, checked: architecture symbols on their sample grids,
  // input symbols among the closed forms' symbols.
  sym::Bindings bindings;
};

// Returns true if `model_config` ("hidden_size=H*128,num_hidden_layers=2")
// has a value naming one of `config.arch_symbols`.
bool NamesArchSymbol(const std::string& model_config, const StepConfig& config);

// Analyses `model` (BuildNamedModel's name) with `model_config` whose values
// may be expressions in config.arch_symbols, as the step `config` describes
// (its options checked as CheckStepConfig does; an empty loss is the model's
// own). Errors: a bad option, a sample of a symbol's range at which the model
// does not build (named by the symbol), costs that are no polynomial in the
// symbols, a binding off its symbol's sample grid.
Result<ArchConfigAnalysis> AnalyzeArchConfig(const std::string& model,
                                             const std::string& model_config,
                                             const RuleSet& rules,
                                             const StepConfig& config);

// Returns the text report: the symbols' ranges, each total's closed form (and
// its value where `a.bindings` bind every symbol in it), and one line saying
// the per-module tree and the timeline are not available.
std::string RenderArchConfigText(const ArchConfigAnalysis& a);

// Returns the JSON report (docs/json-schema.md, "Architecture symbols").
std::string RenderArchConfigJson(const ArchConfigAnalysis& a);

}  // namespace torchcost

#endif  // TORCHCOST_ARCH_CONFIG_H_
