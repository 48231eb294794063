#include "cli/driver.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/built_model.h"
#include "cli/galore_flags.h"
#include "cli/inputs.h"
#include "cli/sharding_flags.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/import.h"
#include "torchcost/loss.h"
#include "torchcost/peft.h"
#include "torchcost/report.h"
#include "torchcost/rules.h"

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

Outcome LoadRules(const std::string& dir, RuleSet& rules) {
  Result<RuleSet> builtin = RuleSet::Builtin();
  if (!builtin.ok())
    return Outcome::Usage("built-in rules: " + builtin.status().message());
  rules = std::move(builtin).value();
  if (dir.empty()) return Outcome::Ok();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return Outcome::Usage("--rules " + dir + ": not a directory");
  Status added = rules.AddDirectory(dir);
  if (!added.ok()) return Outcome::Usage(added.message());
  return Outcome::Ok();
}

// Runs the analysis. In strict mode a failure is rerun leniently: if that
// succeeds, only strictness failed (exit 1); otherwise the options were bad
// (exit 2).
Outcome AnalyzeModel(const ir::Graph& graph, const RuleSet& rules,
                     sym::Context& ctx, const AnalysisOptions& options,
                     Report& report) {
  Result<Report> result = Analyze(graph, rules, ctx, options);
  if (result.ok()) {
    report = std::move(result).value();
    return Outcome::Ok();
  }
  if (!options.strict) return Outcome::Usage(result.status().message());
  AnalysisOptions lenient = options;
  lenient.strict = false;
  Result<Report> again = Analyze(graph, rules, ctx, lenient);
  if (!again.ok()) return Outcome::Usage(again.status().message());
  return Outcome::Strict("strict mode: " + result.status().message());
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

}  // namespace

Outcome Prepare(const CommandLine& cl, sym::Context& ctx, Prepared& p) {
  Result<DType> dtype = ParseDType(cl.dtype);
  if (!dtype.ok())
    return Outcome::Usage("--dtype " + cl.dtype + ": " +
                          dtype.status().message());
  std::vector<SymbolValue> sets;
  if (Outcome o = ParseSets(cl.sets, sets); !o.ok()) return o;
  if (Outcome o = CheckModelSource(cl); !o.ok()) return o;
  std::optional<build::BuiltModel> built;  // --model: built, not read.
  if (Outcome o = BuildNamed(cl, built); !o.ok()) return o;
  if (!built) {
    if (Outcome o = CheckReadable(cl.model); !o.ok()) return o;
  }

  AnalysisOptions& options = p.options;
  options.strict = cl.strict;
  {
    auto mode = ParseStepMode(cl.mode);
    if (!mode.ok()) return Outcome::Usage("--mode: " + mode.status().message());
    auto opt = ParseOptimizer(cl.optimizer);
    if (!opt.ok()) return Outcome::Usage("--optimizer: " + opt.status().message());
    options.training.mode = *mode;
    options.training.optimizer = *opt;
    options.training.freeze = cl.freeze;
    options.training.inputs_require_grad = cl.inputs_require_grad;
    options.device = cl.device;
    options.attention_backend = cl.attention_backend;
    options.training.accumulate = cl.accumulate;
    options.training.set_to_none = cl.zero_grad == "none";
    if (Outcome o = ApplyShardingFlags(cl, options.training); !o.ok()) return o;
    if (cl.optimizer_impl == "foreach") {
      if (!HasForeach(options.training.optimizer)) {
        return Outcome::Usage("--optimizer-impl foreach: " + cl.optimizer + " has no torch foreach implementation");
      }
      if (options.training.sharding.strategy != ShardStrategy::kNone) {
        return Outcome::Usage("--optimizer-impl foreach with --shard is not modelled");
      }
      options.training.foreach = true;
    }
    if (!cl.galore.empty()) {
      if (Outcome o = ApplyGalore("--galore", cl.galore, options.training); !o.ok()) return o;
    }
    if (cl.paged) {
      options.training.paged = true;
      if (Status st = CheckOptimizerSettings(options.training); !st.ok()) return Outcome::Usage("--paged: " + st.message());
    }
    if (!cl.state_dtype.empty()) {
      auto d = ParseDType(cl.state_dtype);
      if (!d.ok()) return Outcome::Usage("--state-dtype: " + d.status().message());
      options.training.state_dtype = *d;
      if (Status st = CheckOptimizerSettings(options.training); !st.ok()) {
        return Outcome::Usage("--state-dtype: " + st.message());
      }
    }
    options.training.checkpoint = cl.checkpoint;
    options.training.checkpoint_group = cl.checkpoint_group;
    if (!cl.param_dtype.empty()) {
      auto d = ParseDType(cl.param_dtype);
      if (!d.ok()) return Outcome::Usage("--param-dtype: " + d.status().message());
      options.param_dtype = *d;
    }
    if (!cl.autocast.empty()) {
      options.autocast = cl.autocast == "fp16" ? DType::kFloat16 : DType::kBFloat16;
      // NB: float16 training pairs autocast with a GradScaler (bfloat16 needs none).
      options.training.grad_scaler = options.autocast == DType::kFloat16;
    }
  }
  {
    // NB: built families train with their task's loss unless --loss says otherwise; model files with out.sum().
    const std::string loss = !cl.loss.empty() ? cl.loss : built && !built->default_loss.empty() ? built->default_loss
                                                                                                 : "sum";
    Result<LossSpec> spec = ParseLossSpec(loss);
    if (!spec.ok()) return Outcome::Usage("--loss: " + spec.status().message());
    options.training.loss = *spec;
  }
  if (built && cl.inputs.empty()) {
    DeclaredInputs(*built, ctx, options.inputs);
  } else if (Outcome o = BuildInputs(ctx, cl.inputs, cl.model, *dtype, options.inputs);
             !o.ok()) {
    return o;
  }
  if (Outcome o =
          BindSymbols(ctx, sets, InputSymbols(options.inputs), p.bindings);
      !o.ok())
    return o;

  Result<ir::Graph> graph =
      built ? Result<ir::Graph>(std::move(built->graph)) : ImportGraphFile(cl.model);
  if (!graph.ok()) return Outcome::Usage(graph.status().message());
  p.graph = std::move(graph).value();
  p.model_name = built ? cl.builder_model : cl.model;
  if (built) p.notes = built->notes;
  // NB: --param-dtype converts the base model before a PEFT rewrite adds its
  // adapters (peft keeps them in float32 on a half-precision base).
  if (options.param_dtype != DType::kUnknown) {
    for (auto* table : {&p.graph.params, &p.graph.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = options.param_dtype;
      }
    }
    options.param_dtype = DType::kUnknown;
  }
  return LoadRules(cl.rules_dir, p.rules);
}

Outcome ApplyPeft(const MethodSpec& method, const std::string& flag, const Prepared& p, ir::Graph& graph,
                  AnalysisOptions& options) {
  Result<ir::Graph> g = ApplyMethod(p.graph, method);
  if (!g.ok()) return Outcome::Usage(flag + ": " + g.status().message());
  graph = std::move(g).value();
  if (method.kind == MethodSpec::Kind::kGalore) {
    return ApplyGalore(flag == method.text ? flag : flag + " " + method.text, method.settings, options.training);
  }
  return Outcome::Ok();
}

Outcome MaybeLoss(const Prepared& p, sym::Context& ctx, AnalysisOptions& options, ir::Graph& graph) {
  if (!LossAppendsOps(options.training.loss) || options.training.mode != StepMode::kTrain) return Outcome::Ok();
  Result<ir::Graph> g = ApplyLoss(graph, p.rules, ctx, &options);
  if (!g.ok()) return Outcome::Usage("--loss " + options.training.loss.text + ": " + g.status().message());
  graph = std::move(g).value();
  return Outcome::Ok();
}

// Applies autocast to `graph` if the options ask for it.
Outcome MaybeAutocast(const CommandLine& cl, const Prepared& p, sym::Context& ctx, const AnalysisOptions& options,
                      ir::Graph& graph) {
  if (options.autocast == DType::kUnknown) return Outcome::Ok();
  Result<ir::Graph> g = ApplyAutocast(graph, p.rules, ctx, options);
  if (!g.ok()) {
    const std::string& m = g.status().message();
    return Outcome::Usage(m.rfind("--", 0) == 0 ? m : "--autocast " + cl.autocast + ": " + m);  // --freeze names itself.
  }
  graph = std::move(g).value();
  return Outcome::Ok();
}

Outcome Run(const CommandLine& cl, std::string& out) {
  if (cl.compare) return RunCompare(cl, out);
  sym::Context ctx;
  Prepared p;
  if (Outcome o = Prepare(cl, ctx, p); !o.ok()) return o;
  AnalysisOptions options = p.options;
  const sym::Bindings& bindings = p.bindings;
  const RuleSet& rules = p.rules;
  Result<ir::Graph> graph = p.graph;
  if (!cl.lora.empty() && !cl.peft.empty()) return Outcome::Usage("--lora and --peft: give one of them");
  if (!cl.lora.empty() || !cl.peft.empty()) {
    const std::string flag = cl.lora.empty() ? "--peft" : "--lora";
    Result<MethodSpec> method = ParseMethodSpec(cl.lora.empty() ? cl.peft : "lora:" + cl.lora);
    if (!method.ok()) return Outcome::Usage(flag + ": " + method.status().message());
    if (Outcome o = ApplyPeft(*method, flag, p, *graph, options); !o.ok()) return o;
  }
  if (Outcome o = MaybeLoss(p, ctx, options, *graph); !o.ok()) return o;
  if (Outcome o = MaybeAutocast(cl, p, ctx, options, *graph); !o.ok()) return o;

  Report report;
  if (Outcome o = AnalyzeModel(*graph, rules, ctx, options, report); !o.ok())
    return o;
  if (report.model.empty()) report.model = p.model_name;
  for (const std::string& note : p.notes) report.diagnostics.push_back({Diagnostic::Severity::kNote, note});
  // A shape error (a wrong-rank input, say) means the user's inputs do not fit
  // the model.
  for (const Diagnostic& d : report.diagnostics) {
    if (d.severity == Diagnostic::Severity::kError)
      return Outcome::Usage(d.message);
  }
  if (cl.strict && !report.unknown_ops.empty()) {
    std::string ops;
    for (const UnknownOp& op : report.unknown_ops) {
      ops +=
          (ops.empty() ? "" : ", ") + op.op + " x" + std::to_string(op.count);
    }
    return Outcome::Strict("strict mode: ops without rules: " + ops);
  }

  // A memory figure that cannot be evaluated (bytes past int64 under --set)
  // is an error, never a report without it.
  if (!report.training.timeline.empty() && cl.sweeps.empty()) {
    const PeakInfo peak = EvaluatePeak(report.training, bindings, /*category_max=*/false);
    if (!peak.error.empty()) return Outcome::Usage(peak.error);
  }
  if (!cl.timeline_svg.empty()) {
    if (Outcome o = WriteTimeline(cl.timeline_svg, *graph, report, bindings);
        !o.ok())
      return o;
  }
  if (!cl.sweeps.empty()) {
    std::vector<SweepSpec> sweeps;
    for (const std::string& text : cl.sweeps) {
      Result<SweepSpec> spec = ParseSweep(text);
      if (!spec.ok()) return Outcome::Usage(spec.status().message());
      const std::vector<std::string> known = InputSymbols(options.inputs);
      if (std::find(known.begin(), known.end(), spec->symbol) == known.end()) {
        std::string names;
        for (const auto& k : known) names += (names.empty() ? "" : ", ") + k;
        return Outcome::Usage("--sweep " + text + ": unknown symbol '" + spec->symbol + "'; symbols: " +
                              (names.empty() ? "none" : names));
      }
      sweeps.push_back(std::move(spec).value());
    }
    Result<std::string> table = cl.json ? RenderSweepJson(*graph, report, sweeps, bindings)
                                        : RenderSweepText(*graph, report, sweeps, bindings);
    if (!table.ok()) return Outcome::Usage(table.status().message());
    out = std::move(table).value();
    return Outcome::Ok();
  }
  if (cl.json) {
    out = RenderJson(*graph, report, bindings);
  } else {
    TextOptions text;
    text.depth = cl.depth;
    text.top_k = cl.top_k;
    text.top_depth = cl.top_depth;
    text.bindings = bindings;
    out = RenderText(*graph, report, text);
  }
  return Outcome::Ok();
}

}  // namespace torchcost::cli
