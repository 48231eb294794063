#include <algorithm>
#include <string>
#include <utility>

#include "analysis/analyze_propagated.h"
#include "passes/shape_prop.h"
#include "step/step_config.h"
#include "torchcost/analysis.h"
#include "torchcost/autocast.h"
#include "torchcost/loss.h"
#include "torchcost/method.h"
#include "torchcost/roofline.h"
#include "torchcost/step.h"
#include "training/propagated.h"

namespace torchcost {
namespace {

// A failed stage: sets `*failed` if asked and returns `status`.
Status Fail(StepStage stage, Status status, StepStage* failed) {
  if (failed != nullptr) *failed = stage;
  return status;
}

// The graph a stage works on: the caller's until a stage rewrites it, then
// the rewrite's own (no copy until something changes).
class StagedGraph {
 public:
  explicit StagedGraph(const ir::Graph& original) : original_(original) {}
  // Takes the caller's graph: no stage copies it.
  explicit StagedGraph(ir::Graph&& owned)
      : original_(graph_), graph_(std::move(owned)), owned_(true) {}
  const ir::Graph& get() const { return owned_ ? graph_ : original_; }
  ir::Graph& Mutable() {
    if (!owned_) {
      graph_ = original_;
      owned_ = true;
    }
    return graph_;
  }
  void Set(ir::Graph g) {
    graph_ = std::move(g);
    owned_ = true;
  }
  ir::Graph Take() && { return owned_ ? std::move(graph_) : original_; }

 private:
  const ir::Graph& original_;
  ir::Graph graph_;
  bool owned_ = false;
};

}  // namespace

std::string_view StepStageName(StepStage stage) {
  switch (stage) {
    case StepStage::kOptions:
      return "options";
    case StepStage::kInputs:
      return "inputs";
    case StepStage::kDtypes:
      return "dtypes";
    case StepStage::kMethod:
      return "method";
    case StepStage::kLoss:
      return "loss";
    case StepStage::kAutocast:
      return "autocast";
    case StepStage::kAnalysis:
      return "analysis";
  }
  return "?";
}

StepConfig StepConfigFor(const builder::BuiltModel& model) {
  StepConfig config;
  for (const builder::InputDecl& decl : model.inputs) {
    std::string text;
    for (const builder::Dim& d : decl.shape) {
      text += (text.empty() ? "" : ",") +
              (d.is_symbol() ? d.symbol() : std::to_string(d.size()));
    }
    config.inputs.push_back(text + ":" + std::string(DTypeName(decl.dtype)));
  }
  config.symbol_bounds = model.symbol_bounds;
  config.hidden_size = model.hidden_size;
  if (!model.default_loss.empty()) config.loss = model.default_loss;
  return config;
}

Result<std::optional<TimedOn>> StepTiming(const StepConfig& config) {
  Result<step::ParsedStep> parsed = step::ParseOptions(config);
  if (!parsed.ok()) return parsed.status();
  return step::TimingOf(config, *parsed);
}

Status CheckStepConfig(const StepConfig& config) {
  Result<step::ParsedStep> parsed = step::ParseOptions(config);
  if (!parsed.ok()) return parsed.status();
  sym::Context scratch;
  std::vector<InputSpec> inputs;
  sym::Bindings bindings;
  return step::ParseInputs(config, scratch, &inputs, &bindings);
}

namespace {

Result<StepAnalysis> AnalyzeStaged(StagedGraph& g, const RuleSet& rules,
                                   const StepConfig& config,
                                   StepStage* failed) {
  // 1. Options.
  Result<step::ParsedStep> parsed = step::ParseOptions(config);
  if (!parsed.ok()) return Fail(StepStage::kOptions, parsed.status(), failed);
  if (config.mode == "generate") {
    return Fail(
        StepStage::kOptions,
        Status::InvalidArgument("StepConfig.mode generate analyses a built "
                                "model's prefill and decode "
                                "phases (AnalyzeGeneration), not one graph"),
        failed);
  }
  if (!config.arch_symbols.empty()) {
    return Fail(
        StepStage::kOptions,
        Status::InvalidArgument(
            "StepConfig.arch_symbols give closed forms of a built model "
            "(AnalyzeArchConfig), not one graph's analysis"),
        failed);
  }
  StepAnalysis out;
  out.context = std::make_unique<sym::Context>();
  sym::Context& ctx = *out.context;
  AnalysisOptions& options = out.options;
  options = std::move(parsed->options);
  // 2. Inputs, in the result's context.
  if (Status s = step::ParseInputs(config, ctx, &options.inputs, &out.bindings);
      !s.ok()) {
    return Fail(StepStage::kInputs, s, failed);
  }
  // 3. Dtypes. NB: the base model is converted before a PEFT rewrite adds its
  // adapters (peft keeps them in float32 on a half-precision base).
  // The report names it (below); Analyze no longer sees it.
  const DType param_dtype = options.param_dtype;
  if (options.param_dtype != DType::kUnknown) {
    ir::Graph& m = g.Mutable();
    for (auto* table : {&m.params, &m.buffers}) {
      for (auto& e : *table) {
        if (IsFloatingPoint(e.dtype)) e.dtype = options.param_dtype;
      }
    }
    options.param_dtype = DType::kUnknown;
  }
  // 4. The method's rewrite (GaLore's settings were set with the options).
  if (parsed->method && parsed->method->kind != MethodSpec::Kind::kFull &&
      parsed->method->kind != MethodSpec::Kind::kGalore) {
    Result<ir::Graph> rewritten = ApplyMethod(g.get(), *parsed->method);
    if (!rewritten.ok()) {
      return Fail(StepStage::kMethod,
                  rewritten.status().WithPrefix("StepConfig.method"), failed);
    }
    g.Set(std::move(rewritten).value());
  }
  // 5. The loss's ops, for a training step. NB: the propagation of the base
  // graph it needs (for the output's shape) is extended over its ops, and
  // handed to the stages after it.
  passes::ShapeFacts facts;
  Report propagated;
  bool have_facts = false;
  if (LossAppendsOps(options.training.loss) &&
      options.training.mode == StepMode::kTrain) {
    Result<ir::Graph> with_loss = training::ApplyLossPropagated(
        g.get(), rules, ctx, &options, &facts, &propagated, &have_facts);
    if (!with_loss.ok()) {
      return Fail(StepStage::kLoss,
                  with_loss.status().WithPrefix("StepConfig.loss " +
                                                options.training.loss.text),
                  failed);
    }
    g.Set(std::move(with_loss).value());
  }
  // 6. Autocast's casts, from that propagation. NB: its last round of shape
  // propagation is of the graph it returns: the analysis takes it.
  if (options.autocast != DType::kUnknown) {
    Result<ir::Graph> cast = training::ApplyAutocastPropagated(
        g.get(), rules, ctx, options, &facts, &propagated, have_facts);
    if (!cast.ok()) {
      const Status& s = cast.status();
      // NB: an error that names its option (StepConfig.freeze) says so itself.
      return Fail(StepStage::kAutocast,
                  s.message().rfind("StepConfig.", 0) == 0
                      ? s
                      : s.WithPrefix("StepConfig.autocast " + config.autocast),
                  failed);
    }
    g.Set(std::move(cast).value());
    have_facts = true;
  }
  out.graph = std::move(g).Take();
  // 7. The analysis, leniently: strict mode is judged on its report.
  options.strict = false;
  Result<Report> report =
      have_facts
          ? analysis::AnalyzePropagated(out.graph, rules, ctx, options,
                                        std::move(facts), std::move(propagated))
          : Analyze(out.graph, rules, ctx, options);
  options.strict = config.strict;
  if (!report.ok()) return Fail(StepStage::kAnalysis, report.status(), failed);
  out.report = std::move(report).value();
  // NB: the parameters were converted in step 3, so Analyze named the precision
  // of unconverted (float32) parameters; name the configured one.
  if (param_dtype != DType::kUnknown) {
    options.param_dtype = param_dtype;
    out.report.training.precision = PrecisionName(options);
    options.param_dtype = DType::kUnknown;
  }
  out.report.budget_bytes = config.budget_bytes;
  if (!config.budget_symbol.empty()) {
    const std::vector<std::string>& symbols = out.report.symbols;
    if (std::find(symbols.begin(), symbols.end(), config.budget_symbol) ==
        symbols.end()) {
      std::string names;
      for (const std::string& s : symbols)
        names += (names.empty() ? "" : ", ") + s;
      return Fail(StepStage::kInputs,
                  Status::InvalidArgument(
                      "StepConfig.budget_symbol '" + config.budget_symbol +
                      "' is not a symbol of the inputs (" +
                      (names.empty() ? "none" : names) + ")"),
                  failed);
    }
    out.report.budget_symbol = config.budget_symbol;
  }
  for (std::string& note : parsed->notes)
    out.report.diagnostics.push_back({Diagnostic::Severity::kNote, note});
  // 8. The time on a GPU, under the bindings.
  out.timed_on = step::TimingOf(config, *parsed);
  if (out.timed_on && config.evaluate_time) {
    Result<TimeReport> time =
        EstimateTime(out.graph, out.report, *out.timed_on, out.bindings);
    if (!time.ok()) {
      return Fail(
          StepStage::kAnalysis,
          Status::InvalidArgument(
              (config.gpu_file.empty()
                   ? "StepConfig.gpu " + config.gpu
                   : "StepConfig.gpu_file " + config.gpu_file) +
              ": the time needs every symbol bound (StepConfig.bindings): " +
              time.status().message()),
          failed);
    }
    out.report.time = std::move(time).value();
  }
  // 9. Strict mode: ops without rules fail it (the message Analyze gives in
  // strict mode).
  if (config.strict && !out.report.unknown_ops.empty()) {
    std::string ops;
    for (const UnknownOp& u : out.report.unknown_ops) {
      ops += (ops.empty() ? "" : ", ") + u.op + " (x" +
             std::to_string(u.count) + ")";
    }
    out.strict =
        Status::Unimplemented(out.graph.source + ": " +
                              std::to_string(out.report.unknown_ops.size()) +
                              " operators without rules: " + ops);
    return out;
  }
  // A shape error (a wrong-rank input, say) means the inputs do not fit the
  // model.
  for (const Diagnostic& d : out.report.diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) {
      return Fail(StepStage::kAnalysis, Status::InvalidArgument(d.message),
                  failed);
    }
  }
  return out;
}

}  // namespace

Result<StepAnalysis> AnalyzeStep(const ir::Graph& graph, const RuleSet& rules,
                                 const StepConfig& config, StepStage* failed) {
  StagedGraph g(graph);
  return AnalyzeStaged(g, rules, config, failed);
}

Result<StepAnalysis> AnalyzeStep(ir::Graph&& graph, const RuleSet& rules,
                                 const StepConfig& config, StepStage* failed) {
  StagedGraph g(std::move(graph));
  return AnalyzeStaged(g, rules, config, failed);
}

}  // namespace torchcost
