#include "python/src/analysis_holder.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/driver.h"
#include "cli/inputs.h"
#include "torchcost/roofline.h"

namespace torchcost::python {
namespace {

// Parses `args` as the torchcost command would (`prefix` first, e.g.
// "compare").
cli::Outcome Parse(std::vector<std::string> args, const char* prefix,
                   cli::CommandLine& cl) {
  args.insert(args.begin(), "torchcost");
  if (prefix != nullptr) args.insert(args.begin() + 1, prefix);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::optional<cli::Outcome> done =
      cli::ParseCommandLine(static_cast<int>(argv.size()), argv.data(), cl);
  if (done)
    return done->ok() ? cli::Outcome::Usage(
                            "nothing to analyse (help or version asked)")
                      : *done;
  return cli::Outcome::Ok();
}

}  // namespace

// NB: the flags become a StepConfig as the command makes it (cli::Prepare);
// the library's AnalyzeStep runs the step. Its messages keep the library's
// names (StepConfig.galore), which the Python package turns into keywords.
cli::Outcome AnalysisHolder::Run(const std::vector<std::string>& args,
                                 const std::string& name) {
  cli::CommandLine cl;
  if (cli::Outcome o = Parse(args, nullptr, cl); !o.ok()) return o;
  cli::Prepared p;
  if (cli::Outcome o = cli::Prepare(cl, p); !o.ok()) return o;
  StepConfig config = p.config;
  // NB: one analysis serves many bindings (sweep): with a GPU it is timed
  // below where set= binds every symbol, and a sweep times each point on
  // step_.timed_on.
  config.evaluate_time = false;
  Result<StepAnalysis> step = cli::AnalyzePrepared(cl, p, config);
  if (!step.ok()) return cli::Outcome::Usage(step.status().message());
  if (!step->strict.ok())
    return cli::Outcome::Strict("strict mode: " + step->strict.message());
  step_ = std::move(step).value();
  Report& report = step_.report;
  if (!name.empty()) report.model = name;
  symbols_ = cli::InputSymbols(step_.options.inputs);
  std::sort(symbols_.begin(), symbols_.end());
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end()), symbols_.end());
  const bool bound = std::all_of(
      symbols_.begin(), symbols_.end(),
      [&](const std::string& s) { return step_.bindings.count(s) > 0; });
  if (step_.timed_on && bound) {
    Result<TimeReport> time =
        EstimateTime(step_.graph, report, *step_.timed_on, step_.bindings);
    if (!time.ok()) return cli::Outcome::Usage(time.status().message());
    report.time = std::move(time).value();
  }
  return cli::Outcome::Ok();
}

cli::Outcome RunGenerateArgs(const std::vector<std::string>& args,
                             std::string& out) {
  cli::CommandLine cl;
  if (cli::Outcome o = Parse(args, nullptr, cl); !o.ok()) return o;
  cl.mode = "generate";
  cl.json = true;
  return cli::Run(cl, out);
}

cli::Outcome RunArchConfigArgs(const std::vector<std::string>& args,
                               std::string& out) {
  cli::CommandLine cl;
  if (cli::Outcome o = Parse(args, nullptr, cl); !o.ok()) return o;
  if (cl.arch_symbols.empty())
    return cli::Outcome::Usage(
        "--arch-symbol: give at least one symbol and its range");
  cl.json = true;
  return cli::Run(cl, out);
}

cli::Outcome RunCompareArgs(const std::vector<std::string>& args,
                            std::string& out) {
  cli::CommandLine cl;
  if (cli::Outcome o = Parse(args, "compare", cl); !o.ok()) return o;
  return cli::RunCompare(cl, out);
}

}  // namespace torchcost::python
