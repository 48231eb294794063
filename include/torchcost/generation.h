// Generation with a KV cache (StepConfig.mode "generate"), as Hugging Face's
// generate() runs a decoder: greedy, use_cache=True, a DynamicCache. Two
// phases are analysed, each a no_grad forward of the built model:
//
//   prefill  the prompt, idx [B, S]: each layer's keys and values copied into
//            the cache; lm_head on the last position only (logits_to_keep=1);
//   decode   the last of the T - 1 decode steps: idx [B, 1] against S + T - 2
//            cached tokens, torch.cat growing each layer's cache to S + T - 1.
//
// The last decode step is the largest (its cache is the longest), so its peak
// is the decode phase's. Conventions and sources: docs/generation.md.
#ifndef TORCHCOST_GENERATION_H_
#define TORCHCOST_GENERATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "torchcost/gpu.h"
#include "torchcost/rules.h"
#include "torchcost/status.h"
#include "torchcost/step.h"
#include "torchcost/sym.h"

namespace torchcost {

// The time of one generation on a GPU (StepConfig.gpu or gpu_file), each
// phase's forward on the roofline as EstimateTime gives it.
struct GenerationTime {
  bool present = false;  // False unless a GPU is given.
  std::string source;    // TimeReport::source: "roofline on H100-SXM", ...
  // The prompt's forward: the time to the first new token.
  double prefill_seconds = 0;
  // Decode steps 1 (S cached) and T - 1 (S + T - 2 cached).
  double first_step_seconds = 0, last_step_seconds = 0;
  // The T - 1 decode steps together, each over its own cache length.
  double decode_seconds = 0;
  // T - 1 (0 for T = 1: the prefill makes the one new token).
  int64_t decode_steps = 0;
  // prefill + decode: the whole generate() call.
  double total_seconds = 0;
  // New tokens: B x T (the prefill makes the first of each sequence).
  double new_tokens = 0;
  // new_tokens / total_seconds; B (T - 1) / decode_seconds.
  double tokens_per_second = 0, decode_tokens_per_second = 0;
  // Why a collective is not timed (TimeReport::communication_untimed): the
  // times above are then lower bounds; empty if all are timed.
  std::string communication_untimed;
};

// Both phases of one generation and the totals over it. Expressions below
// live in decode.context (symbols B, S, T). Movable, not copyable.
struct GenerationAnalysis {
  // The prompt's forward (symbols B, S).
  StepAnalysis prefill;
  // The last decode step (symbols B, S, T).
  StepAnalysis decode;
  // The builder's notes on both phases (a config.json key not modelled, one
  // rank of tp); also notes among prefill.report.diagnostics.
  std::vector<std::string> notes;
  // Tokens the cache holds at the end of generation: S + T, or min(S + T,
  // window).
  sym::Expr kv_cache_tokens;
  // The cache's bytes for them: 2 x layers x kv_heads x head_dim x tokens x B x
  // bytes.
  sym::Expr kv_cache_bytes;
  // The cache's bytes per token and sequence (2 x layers x kv_heads x head_dim
  // x bytes).
  int64_t kv_bytes_per_token = 0;
  // The cache's element type ("bfloat16", "fp8", ...).
  std::string cache_dtype;
  // The largest sliding window capping the cache (0: none).
  int64_t window = 0;
  // Decoder layers, and those of them whose cache a sliding window caps
  // (Gemma-2: every other one; Gemma-3: 5 in 6).
  int64_t layers = 0, windowed_layers = 0;
  // FLOPs of the prefill, of the first decode step (S cached) and of the last
  // (S + T - 2 cached).
  sym::Expr prefill_flops, decode_flops_first, decode_flops_last;
  // FLOPs of the T - 1 decode steps together, and of the whole generation;
  // unset (decode_linear false) where a step's FLOPs are not linear in its
  // cache length (a sliding window): then decode_flops_summed.
  bool decode_linear = false;
  sym::Expr decode_flops_total, total_flops;
  // Where decode_linear is false and B, S and T are bound: the T - 1 steps'
  // FLOPs summed at StepConfig.bindings, exactly (sym::SumOver).
  std::optional<__int128> decode_flops_summed;
  // On StepConfig.gpu (or gpu_file), at StepConfig.bindings.
  GenerationTime time;
};

// Analyses the generation `config` describes (mode "generate"; its inputs
// empty: the phases declare theirs; bindings and bounds over B, S and T) on
// the built model `model` (a family, preset or config.json, as
// BuildNamedModel reads it, with `model_config` overrides). The cache's
// dtype is the family key cache_dtype. Errors: bad options, a model family
// without generation phases, a phase whose analysis fails, a GPU given with B,
// S or T unbound.
Result<GenerationAnalysis> AnalyzeGeneration(const std::string& model,
                                             const std::string& model_config,
                                             const RuleSet& rules,
                                             const StepConfig& config);

// Returns the time of generation `g` on `gpu` at `bindings` (B, S and T
// bound), as AnalyzeGeneration gives it with StepConfig.gpu: for a caller that
// analysed with StepConfig.evaluate_time false and times at points of its own
// (`torchcost compare`). Errors: an unbound symbol, phases analysed without a
// GPU (no bytes moved per node).
Result<GenerationTime> EstimateGenerationTime(const GenerationAnalysis& g,
                                              const GpuSpec& gpu,
                                              const sym::Bindings& bindings);

}  // namespace torchcost

#endif  // TORCHCOST_GENERATION_H_
