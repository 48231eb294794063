#include "cli/driver.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/built_model.h"
#include "cli/flag_names.h"
#include "cli/inputs.h"
#include "torchcost/analysis.h"
#include "torchcost/arch_config.h"
#include "torchcost/compare.h"
#include "torchcost/generation.h"
#include "torchcost/generation_report.h"
#include "torchcost/import.h"
#include "torchcost/report.h"
#include "torchcost/rules.h"
#include "torchcost/step.h"

namespace torchcost::cli {
namespace {

namespace fs = std::filesystem;

Outcome CheckReadable(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Outcome::Usage("cannot read '" + path + "': no such file");
  if (!fs::is_regular_file(path, ec))
    return Outcome::Usage("cannot read '" + path + "': not a file");
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return Outcome::Usage("cannot read '" + path +
                          "': permission denied or I/O error");
  return Outcome::Ok();
}

// Loads the built-in rules and those of `dir`; `check_all` compiles every
// built-in rule now (--strict) instead of each on first use.
Outcome LoadRules(const std::string& dir, bool check_all,
                  std::shared_ptr<const RuleSet>& rules) {
  // NB: one built-in set per process: a Python session or a compare loop
  // compiles each rule it uses once. Never freed (no exit-time destructor).
  static const Result<RuleSet>* const kBuiltin =
      new Result<RuleSet>(RuleSet::Builtin());
  if (!kBuiltin->ok())
    return Outcome::Usage("built-in rules: " + kBuiltin->status().message());
  if (check_all) {
    if (Status s = kBuiltin->value().CompileAll(); !s.ok())
      return Outcome::Usage("built-in rules: " + s.message());
  }
  if (dir.empty()) {
    rules = std::shared_ptr<const RuleSet>(std::shared_ptr<const RuleSet>(),
                                           &kBuiltin->value());
    return Outcome::Ok();
  }
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Outcome::Usage("--rules " + dir + ": not a directory");
  Result<RuleSet> builtin = RuleSet::Builtin();
  if (!builtin.ok())
    return Outcome::Usage("built-in rules: " + builtin.status().message());
  auto own = std::make_shared<RuleSet>(std::move(builtin).value());
  Status added = own->AddDirectory(dir);
  if (!added.ok()) return Outcome::Usage(added.message());
  rules = std::move(own);
  return Outcome::Ok();
}

// Writes the memory timeline of `report` to `path` as SVG; every symbol of the
// timeline must be bound.
Outcome WriteTimeline(const std::string& path, const ir::Graph& graph,
                      const Report& report, const sym::Bindings& bindings) {
  const std::vector<std::string> unbound =
      UnboundTimelineSymbols(report, bindings);
  if (!unbound.empty()) {
    std::string sets;
    for (const std::string& s : unbound) sets += " --set " + s + "=...";
    return Outcome::Usage("--timeline needs every symbol bound:" + sets);
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file << RenderTimelineSvg(graph, report, bindings);
  if (file) file.close();
  if (!file) {
    std::error_code ec;
    const bool is_dir = fs::is_directory(path, ec);
    return Outcome::Usage("--timeline: cannot write '" + path + "'" +
                          (is_dir ? ": is a directory" : ""));
  }
  return Outcome::Ok();
}

// The flags that are memory sizes (--cuda-context, --budget), parsed into
// `config`.
Outcome ParseMemoryFlags(const CommandLine& cl, StepConfig& config) {
  const std::pair<const std::string*, int64_t*> sizes[] = {
      {&cl.cuda_context, &config.cuda_context_bytes},
      {&cl.budget, &config.budget_bytes}};
  const char* const names[] = {"--cuda-context", "--budget"};
  for (int i = 0; i < 2; ++i) {
    if (sizes[i].first->empty()) continue;
    Result<int64_t> bytes = ParseMemorySize(*sizes[i].first);
    if (!bytes.ok())
      return Outcome::Usage(std::string(names[i]) + ": " +
                            bytes.status().message());
    *sizes[i].second = *bytes;
  }
  return Outcome::Ok();
}

}  // namespace

// The flags that describe the step, as the library's configuration.
StepConfig ConfigFromFlags(const CommandLine& cl) {
  StepConfig c;
  c.input_dtype = cl.dtype;
  c.strict = cl.strict;
  c.mode = cl.mode;
  c.optimizer = cl.optimizer;
  c.freeze = cl.freeze;
  c.inputs_require_grad = cl.inputs_require_grad;
  c.device = cl.device;
  c.attention_backend = cl.attention_backend;
  c.torch_version = cl.torch_version;
  c.accumulate = cl.accumulate;
  c.set_to_none = cl.zero_grad == "none";
  c.shard = cl.shard;
  c.world = cl.world;
  c.ddp_bucket_mib = cl.ddp_bucket_mib;
  c.ddp_bucket_view = cl.ddp_bucket_view;
  c.fsdp_unit = cl.fsdp_unit;
  c.fsdp_sharding = cl.fsdp_sharding;
  c.shard_group = cl.shard_group;
  c.prefetch = !cl.no_prefetch;
  c.offload = cl.offload;
  c.deepspeed = cl.deepspeed;
  c.reduce_bucket = cl.reduce_bucket;
  c.zero3_prefetch_bucket = cl.zero3_prefetch_bucket;
  c.zero3_max_live = cl.zero3_max_live;
  c.zero3_max_reuse = cl.zero3_max_reuse;
  c.zero3_persistence = cl.zero3_persistence;
  c.overlap_comm = cl.overlap_comm;
  c.contiguous_gradients = !cl.no_contiguous_gradients;
  c.master_weights = cl.master_weights;
  c.optimizer_impl = cl.optimizer_impl;
  c.galore = cl.galore;
  c.paged = cl.paged;
  c.state_dtype = cl.state_dtype;
  c.checkpoint = cl.checkpoint;
  c.checkpoint_group = cl.checkpoint_group;
  c.param_dtype = cl.param_dtype;
  c.autocast = cl.autocast;
  c.gpu = cl.gpu;
  c.gpu_file = cl.gpu_file;
  c.network_gbs = cl.network_gbs;
  c.node_gpus = cl.node_gpus;
  c.weight_quant = cl.weight_quant;
  c.cache_dtype = cl.cache_dtype;
  c.allocator = cl.allocator;
  c.budget_symbol = cl.budget_symbol;
  c.max_split_size_mb = cl.max_split_size_mb;
  c.expandable_segments = cl.expandable_segments;
  c.arch_symbols = cl.arch_symbols;
  return c;
}

Outcome Prepare(const CommandLine& cl, Prepared& p) {
  std::vector<SymbolValue> sets;
  if (Outcome o = ParseSets(cl.sets, sets); !o.ok()) return o;
  if (Outcome o = CheckModelSource(cl); !o.ok()) return o;
  std::optional<builder::BuiltModel> built;  // --model: built, not read.
  if (Outcome o = BuildNamed(cl, built); !o.ok()) return o;
  if (!built) {
    if (Outcome o = CheckReadable(cl.model); !o.ok()) return o;
  }
  StepConfig& config = p.config;
  config = ConfigFromFlags(cl);
  if (built) config.hidden_size = built->hidden_size;
  if (Outcome o = ParseMemoryFlags(cl, config); !o.ok()) return o;
  // NB: built families train with their task's loss unless --loss says
  // otherwise; model files with out.sum().
  config.loss = !cl.loss.empty()                        ? cl.loss
                : built && !built->default_loss.empty() ? built->default_loss
                                                        : "sum";
  // The options first, before the inputs are read: a bad flag is named before a
  // missing sidecar.
  if (Status s = CheckStepConfig(config); !s.ok())
    return Outcome::Usage(WithFlagNames(s.message()));
  if (built && cl.inputs.empty()) {
    DeclaredInputs(*built, config.inputs, config.symbol_bounds);
  } else if (Outcome o = InputTexts(cl.inputs, cl.model, config.inputs);
             !o.ok()) {
    return o;
  }
  for (const SymbolValue& sv : sets)
    config.bindings.emplace_back(sv.name, sv.value);
  if (Status s = CheckStepConfig(config); !s.ok())
    return Outcome::Usage(WithFlagNames(s.message()));

  Result<ir::Graph> graph = built ? Result<ir::Graph>(std::move(built->graph))
                                  : ImportGraphFile(cl.model);
  if (!graph.ok()) return Outcome::Usage(graph.status().message());
  p.graph = std::move(graph).value();
  p.model_name = built ? cl.builder_model : cl.model;
  if (built) p.notes = built->notes;
  return LoadRules(cl.rules_dir, cl.strict, p.rules);
}

Result<StepAnalysis> AnalyzePrepared(const CommandLine& cl, Prepared& p,
                                     StepConfig config) {
  if (!cl.lora.empty() && !cl.peft.empty())
    return Status::InvalidArgument("--lora and --peft: give one of them");
  if (!cl.lora.empty() || !cl.peft.empty())
    config.method = cl.lora.empty() ? cl.peft : "lora:" + cl.lora;
  // NB: the graph is handed over (a 1M-node graph is about 400 MB): p.graph is
  // not read after.
  Result<StepAnalysis> step = AnalyzeStep(std::move(p.graph), *p.rules, config);
  if (!step.ok()) return step;
  Report& report = step->report;
  if (report.model.empty()) report.model = p.model_name;
  for (const std::string& note : p.notes)
    report.diagnostics.push_back({Diagnostic::Severity::kNote, note});
  return step;
}

Outcome PrepareGeneration(const CommandLine& cl, PreparedGeneration& p) {
  if (cl.builder_model.empty()) {
    return Outcome::Usage(
        "--mode generate needs --model (a family, preset or config.json), not "
        "a model file");
  }
  if (!cl.model.empty())
    return Outcome::Usage("--mode generate takes --model, not a MODEL file ('" +
                          cl.model + "')");
  if (!cl.inputs.empty())
    return Outcome::Usage(
        "--mode generate: the phases declare their inputs; drop --input");
  std::vector<SymbolValue> sets;
  if (Outcome o = ParseSets(cl.sets, sets); !o.ok()) return o;
  p.config = ConfigFromFlags(cl);
  if (Outcome o = ParseMemoryFlags(cl, p.config); !o.ok()) return o;
  p.config.loss = "sum";
  for (const SymbolValue& sv : sets)
    p.config.bindings.emplace_back(sv.name, sv.value);
  p.model_config = cl.builder_config;
  // --param-dtype sets the family's compute dtype, as for other built models.
  if (!cl.param_dtype.empty()) {
    p.model_config +=
        (p.model_config.empty() ? "dtype=" : ",dtype=") + cl.param_dtype;
    p.config.param_dtype.clear();
  }
  return LoadRules(cl.rules_dir, cl.strict, p.rules);
}

// --mode generate: the built model's prefill and last decode step
// (AnalyzeGeneration).
Outcome RunGenerate(const CommandLine& cl, std::string& out) {
  PreparedGeneration p;
  if (Outcome o = PrepareGeneration(cl, p); !o.ok()) return o;
  // A sweep times each of its points: the analysis derives moved bytes
  // without timing itself (the swept symbols stay free).
  if (!cl.sweeps.empty()) p.config.evaluate_time = false;
  Result<GenerationAnalysis> g =
      AnalyzeGeneration(cl.builder_model, p.model_config, *p.rules, p.config);
  if (!g.ok()) return Outcome::Usage(WithFlagNames(g.status().message()));
  if (!g->prefill.strict.ok())
    return Outcome::Strict("strict mode: " + g->prefill.strict.message());
  if (!g->decode.strict.ok())
    return Outcome::Strict("strict mode: " + g->decode.strict.message());
  const sym::Bindings& bindings = g->decode.bindings;
  if (!cl.sweeps.empty()) {
    std::vector<SweepSpec> sweeps;
    if (Outcome o = ParseGenerationSweeps(cl.sweeps, sweeps); !o.ok()) return o;
    Result<std::string> table = RenderGenerationSweep(
        *g, sweeps, bindings, cl.json,
        g->decode.timed_on ? &*g->decode.timed_on : nullptr);
    if (!table.ok())
      return Outcome::Usage(WithFlagNames(table.status().message()));
    out = std::move(table).value();
    return Outcome::Ok();
  }
  Report& report = g->prefill.report;
  report.model = cl.builder_model;
  if (cl.json) {
    // The prefill's report, with the generation's object as its last key.
    out = RenderJson(g->prefill.graph, report, bindings);
    const size_t end = out.rfind('}');
    if (end == std::string::npos)
      return Outcome::Usage("--json: the report is not an object");
    out = out.substr(0, end);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    out += ",\n  \"generation\": " + RenderGenerationJson(*g, bindings, 2) +
           "\n}\n";
    return Outcome::Ok();
  }
  out = RenderGenerationText(*g, bindings);
  return Outcome::Ok();
}

// --arch-symbol: the built model's closed forms in its config's symbols
// (AnalyzeArchConfig).
Outcome RunArchConfig(const CommandLine& cl, std::string& out) {
  if (cl.builder_model.empty())
    return Outcome::Usage(
        "--arch-symbol needs --model (a family, preset or config.json)");
  if (!cl.model.empty())
    return Outcome::Usage("--arch-symbol takes --model, not a MODEL file ('" +
                          cl.model + "')");
  if (!cl.sweeps.empty() || !cl.timeline_svg.empty() || !cl.lora.empty() ||
      !cl.peft.empty()) {
    return Outcome::Usage(
        "--arch-symbol prints closed-form totals: no --sweep, --timeline, "
        "--lora or --peft");
  }
  std::vector<SymbolValue> sets;
  if (Outcome o = ParseSets(cl.sets, sets); !o.ok()) return o;
  StepConfig config = ConfigFromFlags(cl);
  config.loss = cl.loss;  // Empty: the model's own.
  for (const SymbolValue& sv : sets)
    config.bindings.emplace_back(sv.name, sv.value);
  std::string model_config = cl.builder_config;
  // --param-dtype sets the family's compute dtype, as for other built models.
  if (!cl.param_dtype.empty()) {
    model_config +=
        (model_config.empty() ? "dtype=" : ",dtype=") + cl.param_dtype;
    config.param_dtype.clear();
  }
  std::shared_ptr<const RuleSet> rules;
  if (Outcome o = LoadRules(cl.rules_dir, cl.strict, rules); !o.ok()) return o;
  Result<ArchConfigAnalysis> a =
      AnalyzeArchConfig(cl.builder_model, model_config, *rules, config);
  if (!a.ok()) return Outcome::Usage(WithFlagNames(a.status().message()));
  out = cl.json ? RenderArchConfigJson(*a) : RenderArchConfigText(*a);
  return Outcome::Ok();
}

Outcome Run(const CommandLine& cl, std::string& out) {
  if (cl.compare && !cl.arch_symbols.empty()) {
    return Outcome::Usage(
        "torchcost compare takes concrete configs; --arch-symbol gives one "
        "analysis's closed forms");
  }
  if (cl.compare) return RunCompare(cl, out);
  if (!cl.arch_symbols.empty()) return RunArchConfig(cl, out);
  if (cl.mode == "generate") return RunGenerate(cl, out);
  Prepared p;
  if (Outcome o = Prepare(cl, p); !o.ok()) return o;
  StepConfig config = p.config;
  const FlagOverrides method_flag = {
      {"StepConfig.method", cl.lora.empty() ? "--peft" : "--lora"}};
  // A sweep times each of its points (the swept symbols stay free).
  if (!cl.sweeps.empty()) config.evaluate_time = false;
  Result<StepAnalysis> step = AnalyzePrepared(cl, p, config);
  if (!step.ok())
    return Outcome::Usage(WithFlagNames(step.status().message(), method_flag));
  if (!step->strict.ok())
    return Outcome::Strict("strict mode: " +
                           WithFlagNames(step->strict.message()));
  const ir::Graph& graph = step->graph;
  Report& report = step->report;
  const AnalysisOptions& options = step->options;
  const sym::Bindings& bindings = step->bindings;
  for (Diagnostic& d : report.diagnostics)
    d.message = WithFlagNames(d.message, method_flag);

  // A memory figure that cannot be evaluated (bytes past int64 under --set)
  // is an error, never a report without it. NB: evaluated once, as the
  // reports show it (with the category maxima), and handed to them.
  std::optional<PeakInfo> peak;
  if (!report.training.timeline.empty() && cl.sweeps.empty()) {
    peak = EvaluatePeak(report.training, bindings);
    if (!peak->error.empty()) return Outcome::Usage(peak->error);
  }
  if (!cl.timeline_svg.empty()) {
    if (Outcome o = WriteTimeline(cl.timeline_svg, graph, report, bindings);
        !o.ok())
      return o;
  }
  if (!cl.sweeps.empty()) {
    std::vector<SweepSpec> sweeps;
    for (const std::string& text : cl.sweeps) {
      Result<SweepSpec> spec = ParseSweep(text);
      if (!spec.ok())
        return Outcome::Usage(WithFlagNames(spec.status().message()));
      const std::vector<std::string> known = InputSymbols(options.inputs);
      if (std::find(known.begin(), known.end(), spec->symbol) == known.end()) {
        std::string names;
        for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
        return Outcome::Usage(
            "--sweep " + text + ": unknown symbol '" + spec->symbol +
            "'; symbols: " + (names.empty() ? "none" : names));
      }
      sweeps.push_back(std::move(spec).value());
    }
    const TimedOn* time = step->timed_on ? &*step->timed_on : nullptr;
    Result<std::string> table =
        cl.json ? RenderSweepJson(graph, report, sweeps, bindings, time)
                : RenderSweepText(graph, report, sweeps, bindings, time);
    if (!table.ok())
      return Outcome::Usage(WithFlagNames(table.status().message()));
    out = std::move(table).value();
    return Outcome::Ok();
  }
  if (cl.json) {
    out = RenderJson(graph, report, bindings, peak ? &*peak : nullptr);
  } else {
    TextOptions text;
    text.depth = cl.depth;
    text.top_k = cl.top_k;
    text.top_depth = cl.top_depth;
    text.bindings = bindings;
    text.peak = peak ? &*peak : nullptr;
    // The memory table's hint names --set.
    out = WithFlagNames(RenderText(graph, report, text));
  }
  return Outcome::Ok();
}

}  // namespace torchcost::cli
