// AnalyzeGeneration: the prefill and the last decode step of Hugging Face's
// generate(), each analysed by AnalyzeStep as a no_grad forward of the built
// model's phase graph (LlamaConfig::phase), and the totals over T new tokens.
#include "torchcost/generation.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "sym/linear_pieces.h"
#include "torchcost/dtype.h"
#include "torchcost/families.h"
#include "torchcost/roofline.h"
#include "torchcost/weight_quant.h"

namespace torchcost {
namespace {

// Builds `model`'s generation phase `phase`; a family without phases is named.
Result<builder::BuiltModel> BuildPhase(const std::string& model,
                                       const std::string& model_config,
                                       const std::string& phase) {
  Result<builder::BuiltModel> built = builder::BuildNamedModel(
      model,
      model_config + (model_config.empty() ? "" : ",") + "phase=" + phase);
  if (!built.ok() &&
      built.status().message().find("'phase'") != std::string::npos) {
    return Status::InvalidArgument(
        "StepConfig.mode generate: model '" + model +
        "' has no generation phases (the llama, gpt2 and gpt_neox families and "
        "the config.json "
        "model_types built as them: llama, mistral, mixtral, qwen2, qwen2_moe, "
        "qwen3, qwen3_moe, gemma, gemma2, gemma3_text, granite, olmo2, phi3, "
        "gpt2, "
        "gpt_neox)");
  }
  return built;
}

// One phase's StepConfig: `config` as a no_grad forward of the phase's declared
// inputs, the cache handed in and kept where the builder put it.
StepConfig PhaseConfig(const StepConfig& config,
                       const builder::BuiltModel& phase, bool decode) {
  StepConfig c = config;
  // Both are applied by AnalyzeGeneration, to the built phases.
  c.weight_quant.clear();
  c.cache_dtype.clear();
  const StepConfig declared = StepConfigFor(phase);
  c.mode = "infer";
  c.loss = "sum";
  c.inputs = declared.inputs;
  c.symbol_bounds = declared.symbol_bounds;
  for (const auto& bound : config.symbol_bounds)
    c.symbol_bounds.push_back(bound);
  // The prefill has no T: its binding is dropped there.
  c.bindings.clear();
  for (const auto& b : config.bindings) {
    if (decode || b.first != "T") c.bindings.push_back(b);
  }
  c.cache_inputs_from = phase.cache_inputs_from;
  c.cache_outputs_from = phase.cache_outputs_from;
  // NB: the searched symbol may be T, which the prefill lacks: the generation
  // answers the budget (AnalyzeGeneration sets it on both reports).
  c.budget_symbol.clear();
  return c;
}

// The generation's time from its prefill's and last decode step's forward
// seconds: decode step j = 1..T-1 is the decode phase's forward at T := j + 1
// (S + j - 1 cached).
Result<GenerationTime> FinishTime(const GenerationAnalysis& g,
                                  const GpuSpec& gpu, const sym::Bindings& b,
                                  const TimeReport& prefill,
                                  const TimeReport& last) {
  auto bound = [&](const char* name) -> Result<int64_t> {
    auto it = b.find(name);
    if (it == b.end())
      return Status::InvalidArgument(
          std::string("the time needs every symbol bound: unbound ") + name);
    return it->second;
  };
  TORCHCOST_ASSIGN_OR_RETURN(const int64_t batch, bound("B"));
  TORCHCOST_ASSIGN_OR_RETURN(const int64_t tokens, bound("T"));
  GenerationTime t;
  t.present = true;
  t.source = prefill.source;
  t.prefill_seconds = prefill.forward_seconds;
  if (tokens >= 2) {
    t.decode_steps = tokens - 1;
    t.last_step_seconds = last.forward_seconds;
    TORCHCOST_ASSIGN_OR_RETURN(
        t.first_step_seconds,
        SumForwardSeconds(g.decode.graph, g.decode.report, gpu, b, "T", 2, 2));
    TORCHCOST_ASSIGN_OR_RETURN(
        t.decode_seconds, SumForwardSeconds(g.decode.graph, g.decode.report,
                                            gpu, b, "T", 2, tokens));
  }
  // NB: the decode steps' collectives are those of the last step's graph,
  // so what cannot be timed there cannot be in any.
  t.communication_untimed = !prefill.communication_untimed.empty()
                                ? prefill.communication_untimed
                                : last.communication_untimed;
  t.total_seconds = t.prefill_seconds + t.decode_seconds;
  t.new_tokens = static_cast<double>(batch) * static_cast<double>(tokens);
  if (t.total_seconds > 0) t.tokens_per_second = t.new_tokens / t.total_seconds;
  if (t.decode_seconds > 0) {
    t.decode_tokens_per_second = static_cast<double>(batch) *
                                 static_cast<double>(tokens - 1) /
                                 t.decode_seconds;
  }
  return t;
}

}  // namespace

Result<GenerationAnalysis> AnalyzeGeneration(const std::string& model,
                                             const std::string& model_config,
                                             const RuleSet& rules,
                                             const StepConfig& config) {
  // The bindings are checked against the phases' symbols (B, S, T), not here.
  StepConfig options = config;
  options.bindings.clear();
  if (Status s = CheckStepConfig(options); !s.ok()) return s;
  for (const auto& [name, value] : config.bindings) {
    if (name != "B" && name != "S" && name != "T") {
      return Status::InvalidArgument("StepConfig.bindings: unknown symbol '" +
                                     name + "'; symbols: B, S, T");
    }
  }
  if (config.mode != "generate") {
    return Status::InvalidArgument("StepConfig.mode " + config.mode +
                                   ": AnalyzeGeneration needs mode generate");
  }
  if (!config.inputs.empty()) {
    return Status::InvalidArgument(
        "StepConfig.inputs: mode generate takes the inputs its phases declare "
        "(idx [B, S]; idx [B, 1] and the cache); give none");
  }
  if (!config.method.empty() || !config.autocast.empty() ||
      config.shard != "none" || !config.checkpoint.empty() ||
      !config.deepspeed.empty()) {
    return Status::InvalidArgument(
        "StepConfig.mode generate models inference: StepConfig.method, "
        "autocast, shard, checkpoint and deepspeed do not apply");
  }
  // The cache dtype is the family's config key cache_dtype
  // (docs/generation.md).
  const std::string phase_config =
      config.cache_dtype.empty()
          ? model_config
          : model_config + (model_config.empty() ? "" : ",") +
                "cache_dtype=" + config.cache_dtype;
  Result<builder::BuiltModel> prefill =
      BuildPhase(model, phase_config, "prefill");
  if (!prefill.ok()) return prefill.status();
  Result<builder::BuiltModel> decode =
      BuildPhase(model, phase_config, "decode");
  if (!decode.ok()) return decode.status();
  GenerationAnalysis g;
  // The builder's notes (a config.json key not modelled, a padded vocabulary,
  // one rank of tp) are the same for both phases.
  g.notes = prefill->notes;
  const std::vector<int64_t> windows = decode->cache_windows;
  for (int64_t w : windows) g.window = std::max(g.window, w);
  // NB: cache_windows has one entry per cached tensor, keys and values.
  g.layers = static_cast<int64_t>(windows.size()) / 2;
  for (size_t i = 0; i < windows.size(); i += 2)
    g.windowed_layers += windows[i] > 0;
  if (!config.weight_quant.empty()) {
    // The same Linear weights quantized in both phases (CheckStepConfig parsed
    // the format).
    const WeightQuant format = ParseWeightQuant(config.weight_quant).value();
    for (builder::BuiltModel* phase : {&*prefill, &*decode}) {
      Result<ir::Graph> q = QuantizeWeights(phase->graph, format);
      if (!q.ok())
        return q.status().WithPrefix("StepConfig.weight_quant " +
                                     config.weight_quant);
      phase->graph = std::move(q).value();
    }
  }
  const StepConfig pc = PhaseConfig(config, *prefill, false),
                   dc = PhaseConfig(config, *decode, true);
  Result<StepAnalysis> p = AnalyzeStep(std::move(prefill->graph), rules, pc);
  if (!p.ok()) return p.status().WithPrefix("generate: prefill");
  Result<StepAnalysis> d = AnalyzeStep(std::move(decode->graph), rules, dc);
  if (!d.ok()) return d.status().WithPrefix("generate: decode");
  g.prefill = std::move(p).value();
  g.decode = std::move(d).value();
  if (!config.budget_symbol.empty()) {
    g.prefill.report.budget_symbol = config.budget_symbol;
    g.decode.report.budget_symbol = config.budget_symbol;
  }
  for (const std::string& note : g.notes)
    g.prefill.report.diagnostics.push_back({Diagnostic::Severity::kNote, note});
  sym::Context& ctx = *g.decode.context;

  // The cache's bytes per token: each cache output [B, kv_heads, len, head_dim]
  // gives kv_heads x head_dim x bytes.
  const ir::Graph& dg = g.decode.graph;
  const sym::Expr b = ctx.Symbol("B"), s = ctx.Symbol("S"), t = ctx.Symbol("T");
  const int first_cache = decode->cache_outputs_from;
  if (first_cache < 0 || windows.size() + first_cache != dg.outputs.size())
    return Status::Internal("generate: cache outputs and windows differ");
  g.kv_cache_bytes = sym::Expr(0);
  for (size_t i = first_cache; i < dg.outputs.size(); ++i) {
    const ValueInfo& v = g.decode.report.values[dg.outputs[i]];
    if (v.shape.size() != 4)
      return Status::Internal("generate: cache output " + std::to_string(i) +
                              " is not 4-d");
    const std::optional<int64_t> heads = v.shape[1].AsConstant(),
                                 hd = v.shape[3].AsConstant();
    if (!heads || !hd)
      return Status::Internal("generate: cache output " + std::to_string(i) +
                              " has symbolic heads");
    const int64_t per_token = *heads * *hd * ElementSize(v.dtype);
    g.kv_bytes_per_token += per_token;
    g.cache_dtype = std::string(DTypeName(v.dtype));
    // Tokens at the end: the prompt and the new ones; a sliding window keeps
    // the last `window`.
    const int64_t w = windows[i - first_cache];
    const sym::Expr tokens = w > 0 ? sym::Min(s + t, sym::Expr(w)) : s + t;
    // kv_heads x head_dim x bytes x tokens x B, summed over layers' keys and
    // values.
    g.kv_cache_bytes = g.kv_cache_bytes + sym::Expr(per_token) * tokens * b;
  }
  // NB: fp8 is carried as a 1-byte uint8.
  if (g.cache_dtype == "uint8") g.cache_dtype = "fp8";
  g.kv_cache_tokens =
      g.window > 0 ? sym::Min(s + t, sym::Expr(g.window)) : s + t;

  // FLOPs. The prefill's, in this context (printing and parsing share one
  // grammar).
  Result<sym::Expr> pf = sym::Parse(ctx, g.prefill.report.flops.ToString());
  if (!pf.ok()) return pf.status().WithPrefix("generate: prefill FLOPs");
  g.prefill_flops = *pf;
  // The last step's FLOPs f(T) (S + T - 2 cached); step j = 1..T-1 has S + j -
  // 1 cached: f(j + 1).
  g.decode_flops_last = g.decode.report.flops;
  g.decode_flops_first = sym::Substitute(g.decode_flops_last, {{"T", 2}});
  // Linear in the cache length: f(j + 1) = f(2) + (j - 1) x slope, slope = f(3)
  // - f(2).
  const sym::Expr slope =
      sym::Substitute(g.decode_flops_last, {{"T", 3}}) - g.decode_flops_first;
  const sym::Expr line = g.decode_flops_first + slope * (t - sym::Expr(2));
  g.decode_linear = ctx.ProveEq(line, g.decode_flops_last) == sym::Truth::kTrue;
  if (g.decode_linear) {
    // sum over j = 1..T-1 of f(2) + (j - 1) x slope = (T - 1) f(2) + slope x (T
    // - 1)(T - 2) / 2 (an even product).
    g.decode_flops_total =
        (t - sym::Expr(1)) * g.decode_flops_first +
        slope * sym::FloorDiv((t - sym::Expr(1)) * (t - sym::Expr(2)),
                              sym::Expr(2));
    g.total_flops = g.prefill_flops + g.decode_flops_total;
  } else {
    const sym::Bindings& at = g.decode.bindings;
    auto tokens = at.find("T");
    if (at.count("B") && at.count("S") && tokens != at.end()) {
      // Step j = 1..T-1 is f(j + 1).
      Result<__int128> sum =
          sym::SumOver(g.decode_flops_last, at, "T", 2, tokens->second);
      if (!sum.ok()) return sum.status().WithPrefix("generate: decode FLOPs");
      g.decode_flops_summed = *sum;
    }
  }
  if (g.prefill.report.time.present) {
    // The phases were timed at the bindings (StepConfig.evaluate_time).
    Result<GenerationTime> time =
        FinishTime(g, g.decode.timed_on->gpu, g.decode.bindings,
                   g.prefill.report.time, g.decode.report.time);
    if (!time.ok()) return time.status().WithPrefix("generate: time");
    g.time = std::move(time).value();
  }
  return g;
}

Result<GenerationTime> EstimateGenerationTime(const GenerationAnalysis& g,
                                              const GpuSpec& gpu,
                                              const sym::Bindings& bindings) {
  // The prefill has no T.
  sym::Bindings prompt = bindings;
  prompt.erase("T");
  Result<TimeReport> prefill =
      EstimateTime(g.prefill.graph, g.prefill.report, gpu, prompt);
  if (!prefill.ok()) return prefill.status().WithPrefix("prefill");
  Result<TimeReport> last =
      EstimateTime(g.decode.graph, g.decode.report, gpu, bindings);
  if (!last.ok()) return last.status().WithPrefix("decode");
  return FinishTime(g, gpu, bindings, *prefill, *last);
}

}  // namespace torchcost
