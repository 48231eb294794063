// The torchcost command's flow: import, rules, analysis, report.
#ifndef TORCHCOST_SRC_CLI_DRIVER_H_
#define TORCHCOST_SRC_CLI_DRIVER_H_

#include <memory>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/outcome.h"
#include "torchcost/graph.h"
#include "torchcost/rules.h"
#include "torchcost/step.h"

namespace torchcost::cli {

// What every run needs before the analysis: the step's configuration (checked,
// inputs and symbols' values included), the base graph (imported or built)
// and the rules.
struct Prepared {
  StepConfig config;
  ir::Graph graph;
  // The built-in rules (shared by every Prepare of the process, so each rule
  // compiles once), or those plus --rules DIR's.
  std::shared_ptr<const RuleSet> rules;
  std::string model_name;
  // The built family's notes (a padded vocabulary).
  std::vector<std::string> notes;
};

// Reads the flags into `p.config` (checking it as the library does), then the
// model and the rules.
Outcome Prepare(const CommandLine& cl, Prepared& p);

// Analyses the step `p` holds under `config` (p.config with the caller's
// timing choices) and `cl`'s PEFT method (--lora or --peft), the graph moved
// out of `p`; the report gets the built model's name and notes. Errors keep the
// library's names (StepConfig.method).
Result<StepAnalysis> AnalyzePrepared(const CommandLine& cl, Prepared& p,
                                     StepConfig config);

// What a generation (--mode generate) needs before its analysis: the step's
// configuration with the --set values bound, the family's config (with
// --param-dtype as its dtype) and the rules.
struct PreparedGeneration {
  StepConfig config;
  std::string model_config;
  std::shared_ptr<const RuleSet> rules;
};

// Reads the flags of a generation into `p`, then the rules.
Outcome PrepareGeneration(const CommandLine& cl, PreparedGeneration& p);

// Runs `torchcost compare`: a row per configuration.
Outcome RunCompare(const CommandLine& cl, std::string& out);

// Runs one analysis as `cl` asks; on success `out` holds the report to print.
Outcome Run(const CommandLine& cl, std::string& out);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_DRIVER_H_
