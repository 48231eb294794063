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
  if (!cl.lora.empty() && !cl.peft.empty())
    return cli::Outcome::Usage("--lora and --peft: give one of them");
  StepConfig config = p.config;
  if (!cl.lora.empty() || !cl.peft.empty())
    config.method = cl.lora.empty() ? cl.peft : "lora:" + cl.lora;
  // NB: one analysis serves many bindings (sweep): with a GPU it is timed
  // below where set= binds every symbol, and a sweep times each point.
  Result<std::optional<TimedOn>> timing = StepTiming(config);
  if (!timing.ok()) return cli::Outcome::Usage(timing.status().message());
  timing_ = *timing;
  config.evaluate_time = false;
  Result<StepAnalysis> step = AnalyzeStep(p.graph, *p.rules, config);
  if (!step.ok()) return cli::Outcome::Usage(step.status().message());
  if (!step->strict.ok())
    return cli::Outcome::Strict("strict mode: " + step->strict.message());
  step_ = std::move(step).value();
  Report& report = step_.report;
  if (!name.empty()) report.model = name;
  if (report.model.empty()) report.model = p.model_name;
  for (const std::string& note : p.notes)
    report.diagnostics.push_back({Diagnostic::Severity::kNote, note});
  report.inactive_params = p.inactive_params;
  symbols_ = cli::InputSymbols(step_.options.inputs);
  std::sort(symbols_.begin(), symbols_.end());
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end()), symbols_.end());
  const bool bound = std::all_of(
      symbols_.begin(), symbols_.end(),
      [&](const std::string& s) { return step_.bindings.count(s) > 0; });
  if (timing_ && bound) {
    Result<TimeReport> time =
        EstimateTime(step_.graph, report, *timing_, step_.bindings);
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
