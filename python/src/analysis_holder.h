// The state one Python analysis keeps alive: the library's StepAnalysis (the
// symbols' context, the analysed graph and its report) and the inputs' symbols.
#ifndef TORCHCOST_PYTHON_SRC_ANALYSIS_HOLDER_H_
#define TORCHCOST_PYTHON_SRC_ANALYSIS_HOLDER_H_

#include <optional>
#include <string>
#include <vector>

#include "cli/outcome.h"
#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/step.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost::python {

// One analysed step.
class AnalysisHolder {
 public:
  AnalysisHolder() = default;
  AnalysisHolder(const AnalysisHolder&) = delete;
  AnalysisHolder& operator=(const AnalysisHolder&) = delete;

  // Analyses what the command-line arguments `args` (no program name) describe;
  // `name`, if not empty, names the model in the reports instead of its file.
  cli::Outcome Run(const std::vector<std::string>& args,
                   const std::string& name);

  // The analysed graph (after PEFT, loss and autocast rewrites).
  const ir::Graph& graph() const { return step_.graph; }
  // The analysis of graph().
  const Report& report() const { return step_.report; }
  // The symbol values given with --set.
  const sym::Bindings& bindings() const { return step_.bindings; }
  // The free symbols of the inputs, sorted.
  const std::vector<std::string>& symbols() const { return symbols_; }
  // The GPU the analysis times on (gpu= or gpu_file=), or nullptr.
  const TimedOn* timing() const {
    return step_.timed_on ? &*step_.timed_on : nullptr;
  }

 private:
  StepAnalysis step_;
  std::vector<std::string> symbols_;
};

// Runs `torchcost compare` with `args` (no program name, no "compare"); `out`
// gets its output.
cli::Outcome RunCompareArgs(const std::vector<std::string>& args,
                            std::string& out);

// Runs `torchcost --arch-symbol ... --json` (AnalyzeArchConfig) on `args`;
// on success `out` holds the torchcost.arch_config JSON.
cli::Outcome RunArchConfigArgs(const std::vector<std::string>& args,
                               std::string& out);

// Runs `torchcost --mode generate --json` on `args` (a built model's
// generation) into `out`.
cli::Outcome RunGenerateArgs(const std::vector<std::string>& args,
                             std::string& out);

}  // namespace torchcost::python

#endif  // TORCHCOST_PYTHON_SRC_ANALYSIS_HOLDER_H_
