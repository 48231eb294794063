// `torchcost compare`: the model once, then one analysis per configuration.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>

#include "cli/driver.h"
#include "cli/flag_names.h"
#include "cli/inputs.h"
#include "torchcost/compare.h"
#include "torchcost/generation.h"
#include "torchcost/method.h"
#include "torchcost/report.h"
#include "torchcost/step.h"
#include "torchcost/weight_quant.h"

namespace torchcost::cli {
namespace {

// The settings shared by every row, in words ("adamw; train; cuda; B=...").
std::string SettingText(const CommandLine& cl, const std::string& loss) {
  std::string s =
      "optimizer " + cl.optimizer + "; " + cl.mode + "; device " + cl.device;
  if (!cl.param_dtype.empty()) s += "; params " + cl.param_dtype;
  if (!cl.autocast.empty()) s += "; autocast " + cl.autocast;
  if (!cl.checkpoint.empty()) s += "; checkpoint " + cl.checkpoint;
  if (loss != "sum") s += "; loss " + loss;
  if (cl.accumulate > 1) s += "; accumulate " + std::to_string(cl.accumulate);
  if (!cl.state_dtype.empty()) s += "; optimizer states " + cl.state_dtype;
  if (cl.paged) s += "; paged optimizer states (on the host, not in the peaks)";
  if (cl.shard != "none")
    s += "; " + cl.shard + " over " + std::to_string(cl.world) +
         " ranks (per rank)";
  if (cl.allocator == "cuda") {
    s += "; CUDA caching allocator";
    if (cl.expandable_segments) s += " (expandable segments)";
    if (cl.max_split_size_mb > 0)
      s += " (max_split_size_mb " + std::to_string(cl.max_split_size_mb) + ")";
  }
  return s;
}

// Writes the --chart SVG if asked, and the table (text or JSON) into `out`.
Outcome RenderRows(const CommandLine& cl, const std::string& model,
                   const std::vector<CompareRow>& rows,
                   const CompareOptions& compare, const std::string& setting,
                   std::string& out) {
  if (!cl.chart_svg.empty()) {
    std::ofstream file(cl.chart_svg, std::ios::binary | std::ios::trunc);
    if (file) file << RenderCompareSvg(model, rows, compare, setting);
    if (file) file.close();
    if (!file)
      return Outcome::Usage("--chart: cannot write '" + cl.chart_svg + "'");
  }
  out = cl.json
            ? RenderCompareJson(model, rows, compare, setting)
            // Its notes name --strict.
            : WithFlagNames(RenderCompareText(model, rows, compare, setting));
  return Outcome::Ok();
}

// A serving configuration, "full" or a weight-only format (int8, int4, nf4,
// fp8), optionally ":cache=DTYPE" (the KV cache's dtype), into `config`.
Outcome ParseServingConfig(const std::string& text, StepConfig& config) {
  const size_t colon = text.find(':');
  const std::string weights = text.substr(0, colon);
  if (weights != "full") {
    if (Result<WeightQuant> q = ParseWeightQuant(weights); !q.ok()) {
      return Outcome::Usage("compare " + text + ": '" + weights +
                            "' is not a serving configuration (full, int8, "
                            "int4, nf4 or fp8, then :cache=DTYPE)");
    }
    config.weight_quant = weights;
  }
  if (colon == std::string::npos) return Outcome::Ok();
  const std::string option = text.substr(colon + 1);
  if (option.rfind("cache=", 0) != 0) {
    return Outcome::Usage("compare " + text + ": unknown option '" + option +
                          "'; a serving configuration takes cache=DTYPE");
  }
  config.cache_dtype = option.substr(6);
  return Outcome::Ok();
}

// --gpu / --gpu-file: each row timed at its own bindings; the analyses derive
// the bytes each node moves without timing themselves (a searched symbol
// stays free there).
Outcome SetCompareTime(StepConfig& config, CompareOptions& compare) {
  if (config.gpu.empty() && config.gpu_file.empty()) return Outcome::Ok();
  Result<std::optional<TimedOn>> on = StepTiming(config);
  if (!on.ok()) return Outcome::Usage(WithFlagNames(on.status().message()));
  compare.time = *on;
  config.evaluate_time = false;
  return Outcome::Ok();
}

// `torchcost compare --mode generate`: one generation per serving
// configuration; with --budget, the largest B (or the one of S, T that --set
// leaves free) whose generation peak fits.
Outcome RunGenerateCompare(const CommandLine& cl,
                           const std::vector<std::string>& configs,
                           std::string& out) {
  PreparedGeneration p;
  if (Outcome o = PrepareGeneration(cl, p); !o.ok()) return o;
  CompareOptions compare;
  compare.generation = true;
  if (Outcome o = SetCompareTime(p.config, compare); !o.ok()) return o;
  if (!cl.budget.empty()) {
    Result<int64_t> b = ParseMemorySize(cl.budget);
    if (!b.ok()) return Outcome::Usage("--budget: " + b.status().message());
    compare.budget_bytes = *b;
  }
  // --sweep: every point of the grid of B, S and T values, the last sweep
  // varying fastest, as the torchcost command's sweep.
  std::vector<SweepSpec> sweeps;
  if (Outcome o = ParseGenerationSweeps(cl.sweeps, sweeps); !o.ok()) return o;
  std::vector<std::vector<std::pair<std::string, int64_t>>> points;
  if (!sweeps.empty()) points.push_back({});
  for (const SweepSpec& sweep : sweeps) {
    std::vector<std::vector<std::pair<std::string, int64_t>>> next;
    for (const auto& point : points) {
      for (int64_t v : sweep.values) {
        next.push_back(point);
        next.back().emplace_back(sweep.symbol, v);
      }
    }
    points = std::move(next);
  }
  auto swept = [&](const std::string& name) {
    return std::any_of(sweeps.begin(), sweeps.end(),
                       [&](const SweepSpec& s) { return s.symbol == name; });
  };
  for (const auto& [name, value] : p.config.bindings) {
    if (!swept(name)) compare.bindings[name] = value;
  }
  compare.batch_symbol = cl.batch_symbol;
  if (compare.batch_symbol != "B" && compare.batch_symbol != "S" &&
      compare.batch_symbol != "T") {
    return Outcome::Usage("--batch-symbol " + cl.batch_symbol +
                          ": --mode generate searches B, S or T");
  }
  // NB: with B bound (set or swept), the one of S and T left free is searched
  // (the largest context that fits).
  auto bound = [&](const std::string& name) {
    return compare.bindings.count(name) > 0 || swept(name);
  };
  if (compare.batch_symbol == "B" && bound("B")) {
    const bool s_free = !bound("S"), t_free = !bound("T");
    if (s_free != t_free) compare.batch_symbol = s_free ? "S" : "T";
  }
  // The searched and the swept symbols stay free in the analysis, so its peak
  // is a function of them.
  StepConfig base = p.config;
  base.bindings.erase(std::remove_if(base.bindings.begin(), base.bindings.end(),
                                     [&](const auto& b) {
                                       return b.first == compare.batch_symbol ||
                                              swept(b.first);
                                     }),
                      base.bindings.end());
  // Parse every row first: a typo fails before any analysis runs.
  std::vector<StepConfig> serving;
  for (const std::string& text : configs) {
    StepConfig c = base;
    if (Outcome o = ParseServingConfig(text, c); !o.ok()) return o;
    // The bindings are checked against the phases' symbols by
    // AnalyzeGeneration.
    StepConfig options = c;
    options.bindings.clear();
    if (Status st = CheckStepConfig(options); !st.ok()) {
      const FlagOverrides row_keys = {{"StepConfig.cache_dtype", "cache"},
                                      {"StepConfig.weight_quant", "weights"}};
      return Outcome::Usage("compare " + text + ": " +
                            WithFlagNames(st.message(), row_keys));
    }
    serving.push_back(std::move(c));
  }
  std::vector<CompareRow> rows;
  std::vector<std::string> notes;  // The built family's (one rank of tp).
  for (size_t i = 0; i < configs.size(); ++i) {
    Result<GenerationAnalysis> g = AnalyzeGeneration(
        cl.builder_model, p.model_config, *p.rules, serving[i]);
    if (!g.ok())
      return Outcome::Usage(configs[i] + ": " +
                            WithFlagNames(g.status().message()));
    if (!g->prefill.strict.ok())
      return Outcome::Strict("strict mode: " + g->prefill.strict.message());
    if (!g->decode.strict.ok())
      return Outcome::Strict("strict mode: " + g->decode.strict.message());
    if (i == 0) notes = g->notes;
    if (!points.empty()) {
      Result<std::vector<CompareRow>> swept_rows =
          EvaluateGenerationCompareSweep(*g, configs[i], compare, points);
      if (!swept_rows.ok())
        return Outcome::Usage(configs[i] + ": " +
                              WithFlagNames(swept_rows.status().message()));
      for (CompareRow& row : *swept_rows) rows.push_back(std::move(row));
      continue;
    }
    Result<CompareRow> row =
        EvaluateGenerationCompareRow(*g, configs[i], compare);
    if (!row.ok())
      return Outcome::Usage(configs[i] + ": " +
                            WithFlagNames(row.status().message()));
    rows.push_back(std::move(row).value());
  }
  std::string setting = "generate (greedy, KV cache); device " + cl.device;
  if (!cl.param_dtype.empty()) setting += "; params " + cl.param_dtype;
  for (const std::string& text : cl.sweeps) setting += "; sweep " + text;
  for (const std::string& note : notes) setting += "; " + note;
  const std::string model =
      std::filesystem::path(cl.builder_model).filename().string();
  return RenderRows(cl, model, rows, compare, setting, out);
}

}  // namespace

Outcome RunCompare(const CommandLine& cl, std::string& out) {
  CommandLine base = cl;
  std::vector<std::string> configs = cl.compare_args;
  if (base.builder_model.empty()) {
    if (configs.empty())
      return Outcome::Usage(
          "compare: give MODEL.pt (or --model NAME) and configurations");
    base.model = configs.front();
    configs.erase(configs.begin());
  }
  if (configs.empty())
    return Outcome::Usage(
        "compare: give at least one configuration (full, lora:r=8, ...)");
  if (cl.mode == "generate") return RunGenerateCompare(cl, configs, out);
  if (!cl.sweeps.empty()) {
    return Outcome::Usage(
        "compare: --sweep sweeps serving configurations (--mode generate); "
        "for one training configuration run torchcost MODEL --sweep ...");
  }
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
  if (Outcome o = SetCompareTime(p.config, compare); !o.ok()) return o;
  for (const auto& [name, value] : p.config.bindings)
    compare.bindings[name] = value;
  std::vector<CompareRow> rows;
  for (const MethodSpec& method : methods) {
    StepConfig config = p.config;
    config.method = method.text;
    StepStage stage = StepStage::kOptions;
    Result<StepAnalysis> step = AnalyzeStep(p.graph, *p.rules, config, &stage);
    if (!step.ok()) {
      const std::string& m = step.status().message();
      // NB: a method that cannot apply (its rewrite, GaLore's settings) fails
      // its row only.
      if (stage == StepStage::kOptions || stage == StepStage::kMethod) {
        CompareRow failed;
        failed.label = method.text;
        failed.error = WithFlagNames(m, {{"StepConfig.method ", ""},
                                         {"StepConfig.method", method.text}});
        // NB: the row's notes name it: "lora:r=8: lora: no Linear ...", not
        // "lora:r=8: lora:r=8: lora: ...".
        const std::string own = method.text + ": ";
        if (failed.error.rfind(own, 0) == 0)
          failed.error = failed.error.substr(own.size());
        rows.push_back(failed);
        continue;
      }
      if (stage == StepStage::kLoss || stage == StepStage::kAutocast)
        return Outcome::Usage(WithFlagNames(m));
      return Outcome::Usage(method.text + ": " + WithFlagNames(m));
    }
    if (!step->strict.ok())
      return Outcome::Usage(method.text + ": " +
                            WithFlagNames(step->strict.message()));
    Result<CompareRow> row = EvaluateCompareRow(*step, method.text, compare);
    if (!row.ok())
      return Outcome::Usage(method.text + ": " +
                            WithFlagNames(row.status().message()));
    rows.push_back(std::move(row).value());
  }
  std::string setting = SettingText(cl, p.config.loss);
  // The built family's (a padded vocabulary).
  for (const std::string& note : p.notes) setting += "; " + note;
  const std::string model =
      std::filesystem::path(p.model_name).filename().string();
  return RenderRows(cl, model, rows, compare, setting, out);
}

}  // namespace torchcost::cli
