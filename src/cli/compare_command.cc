// `torchcost compare`: the model once, then one analysis per configuration.
#include <filesystem>
#include <fstream>

#include "cli/driver.h"
#include "cli/flag_names.h"
#include "torchcost/compare.h"
#include "torchcost/method.h"
#include "torchcost/step.h"

namespace torchcost::cli {
namespace {

// The settings shared by every row, in words ("adamw; train; cuda; B=...").
std::string SettingText(const CommandLine& cl, const std::string& loss) {
  std::string s = "optimizer " + cl.optimizer + "; " + cl.mode + "; device " + cl.device;
  if (!cl.param_dtype.empty()) s += "; params " + cl.param_dtype;
  if (!cl.autocast.empty()) s += "; autocast " + cl.autocast;
  if (!cl.checkpoint.empty()) s += "; checkpoint " + cl.checkpoint;
  if (loss != "sum") s += "; loss " + loss;
  if (cl.accumulate > 1) s += "; accumulate " + std::to_string(cl.accumulate);
  if (!cl.state_dtype.empty()) s += "; optimizer states " + cl.state_dtype;
  if (cl.paged) s += "; paged optimizer states (on the host, not in the peaks)";
  if (cl.shard != "none") s += "; " + cl.shard + " over " + std::to_string(cl.world) + " ranks (per rank)";
  if (cl.allocator == "cuda") {
    s += "; CUDA caching allocator";
    if (cl.expandable_segments) s += " (expandable segments)";
    if (cl.max_split_size_mb > 0) s += " (max_split_size_mb " + std::to_string(cl.max_split_size_mb) + ")";
  }
  return s;
}

}  // namespace

Outcome RunCompare(const CommandLine& cl, std::string& out) {
  CommandLine base = cl;
  std::vector<std::string> configs = cl.compare_args;
  if (base.builder_model.empty()) {
    if (configs.empty()) return Outcome::Usage("compare: give MODEL.pt (or --model NAME) and configurations");
    base.model = configs.front();
    configs.erase(configs.begin());
  }
  if (configs.empty()) return Outcome::Usage("compare: give at least one configuration (full, lora:r=8, ...)");
  if (!cl.gpu.empty() || !cl.gpu_file.empty())
    return Outcome::Usage(
        "compare: --gpu and --gpu-file are not shown here; run torchcost MODEL --gpu NAME "
        "--set ...");
  // NB: compare's rows are training methods over one graph; a generation is
  // two phase graphs, whose "what fits" the main command's --budget and --sweep answer.
  if (cl.mode == "generate")
    return Outcome::Usage(
        "compare: --mode generate is not supported; run torchcost --model NAME --mode generate --budget SIZE "
        "--sweep B=1,2,4,... (or S=, T=) for what fits");
  // Parse every row first: a typo fails before any analysis runs.
  std::vector<MethodSpec> methods;
  for (const std::string& text : configs) {
    Result<MethodSpec> m = ParseMethodSpec(text);
    if (!m.ok()) return Outcome::Usage("compare: " + m.status().message());
    methods.push_back(std::move(m).value());
  }
  CompareOptions compare;
  if (!cl.budget.empty()) {
    Result<int64_t> b = ParseMemorySize(cl.budget);
    if (!b.ok()) return Outcome::Usage("--budget: " + b.status().message());
    compare.budget_bytes = *b;
  }
  compare.batch_symbol = cl.batch_symbol;

  Prepared p;
  if (Outcome o = Prepare(base, p); !o.ok()) return o;
  for (const auto& [name, value] : p.config.bindings) compare.bindings[name] = value;
  std::vector<CompareRow> rows;
  for (const MethodSpec& method : methods) {
    StepConfig config = p.config;
    config.method = method.text;
    StepStage stage = StepStage::kOptions;
    Result<StepAnalysis> step = AnalyzeStep(p.graph, *p.rules, config, &stage);
    if (!step.ok()) {
      const std::string& m = step.status().message();
      // NB: a method that cannot apply (its rewrite, GaLore's settings) fails its row only.
      if (stage == StepStage::kOptions || stage == StepStage::kMethod) {
        CompareRow failed;
        failed.label = method.text;
        failed.error = WithFlagNames(m, {{"StepConfig.method ", ""}, {"StepConfig.method", method.text}});
        rows.push_back(failed);
        continue;
      }
      if (stage == StepStage::kLoss || stage == StepStage::kAutocast) return Outcome::Usage(WithFlagNames(m));
      return Outcome::Usage(method.text + ": " + WithFlagNames(m));
    }
    if (!step->strict.ok()) return Outcome::Usage(method.text + ": " + WithFlagNames(step->strict.message()));
    Result<CompareRow> row = EvaluateCompareRow(step->report, method.text, compare);
    if (!row.ok()) return Outcome::Usage(method.text + ": " + WithFlagNames(row.status().message()));
    rows.push_back(std::move(row).value());
  }
  std::string setting = SettingText(cl, p.config.loss);
  for (const std::string& note : p.notes) setting += "; " + note;  // The built family's (a padded vocabulary).
  const std::string model = std::filesystem::path(p.model_name).filename().string();
  if (!cl.chart_svg.empty()) {
    std::ofstream file(cl.chart_svg, std::ios::binary | std::ios::trunc);
    if (file) file << RenderCompareSvg(model, rows, compare, setting);
    if (file) file.close();
    if (!file) return Outcome::Usage("--chart: cannot write '" + cl.chart_svg + "'");
  }
  out = cl.json ? RenderCompareJson(model, rows, compare, setting)
                : WithFlagNames(RenderCompareText(model, rows, compare, setting));  // Its notes name --strict.
  return Outcome::Ok();
}

}  // namespace torchcost::cli
