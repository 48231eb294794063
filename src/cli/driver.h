// The torchcost command's flow: import, rules, analysis, report.
#ifndef TORCHCOST_SRC_CLI_DRIVER_H_
#define TORCHCOST_SRC_CLI_DRIVER_H_

#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/outcome.h"
#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/method.h"
#include "torchcost/rules.h"

namespace torchcost::cli {

// What every run needs before the analysis: the options, the symbols' values,
// the base graph (imported or built, parameters converted by --param-dtype)
// and the rules.
struct Prepared {
  AnalysisOptions options;
  sym::Bindings bindings;
  ir::Graph graph;
  RuleSet rules;
  std::string model_name;
  std::vector<std::string> notes;  // The built family's notes (a padded vocabulary).
};

// Reads the flags, the model and the rules into `p`.
Outcome Prepare(const CommandLine& cl, sym::Context& ctx, Prepared& p);

// Sets `graph` (and `options`) to what `method` trains; `flag` names it in errors.
Outcome ApplyPeft(const MethodSpec& method, const std::string& flag, const Prepared& p, ir::Graph& graph,
                  AnalysisOptions& options);

// Appends the loss to `graph` (and its targets to `options`' inputs) for --loss or the model's default.
Outcome MaybeLoss(const Prepared& p, sym::Context& ctx, AnalysisOptions& options, ir::Graph& graph);

// Rewrites `graph` for --autocast, if given.
Outcome MaybeAutocast(const CommandLine& cl, const Prepared& p, sym::Context& ctx, const AnalysisOptions& options,
                      ir::Graph& graph);

// Runs `torchcost compare`: a row per configuration.
Outcome RunCompare(const CommandLine& cl, std::string& out);

// Runs one analysis as `cl` asks; on success `out` holds the report to print.
Outcome Run(const CommandLine& cl, std::string& out);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_DRIVER_H_
