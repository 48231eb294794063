// `torchcost compare`: one row per training configuration (full fine-tuning,
// LoRA, DoRA, QLoRA, GaLore, ...) with its trainable parameters, memory by
// category at the peak, peak, FLOPs, and what fits a memory budget; or one row
// per serving configuration of a generation (weight quantization, cache dtype)
// with its KV cache, each phase's peak and what fits.
#ifndef TORCHCOST_COMPARE_H_
#define TORCHCOST_COMPARE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/generation.h"
#include "torchcost/status.h"
#include "torchcost/step.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost {

// What one configuration costs, evaluated at the comparison's bindings.
struct CompareRow {
  std::string label;  // The configuration as typed ("lora:r=8").
  // Non-empty if it could not be analysed; nothing else is set.
  std::string error;
  int64_t params = 0;  // Parameter elements (adapters included).
  int64_t trainable_params = 0;
  int64_t param_bytes = 0;  // Parameter storage (NF4 weights packed).
  // Bytes per category at the peak.
  std::array<int64_t, kNumMemCategories> at_peak{};
  int64_t peak = 0;
  // Per micro-batch (forward, backward) and per optimizer step.
  int64_t flops_forward = 0, flops_backward = 0, flops_step = 0;
  // The CUDA allocator model (StepConfig.allocator cuda): peak and at_peak are
  // the allocated blocks'; the reserved peak and reserved + context (a
  // generation: over the whole generate() call, every step through one
  // allocator); -1 without it.
  int64_t reserved_peak = -1;
  int64_t device_peak = -1;
  // BudgetAnswer::fits: peak <= budget, or with the CUDA allocator model the
  // allocations replayed within the budget less the context (true without a
  // budget).
  bool fits = true;
  // The largest value of the batch symbol whose peak fits the budget; -1 when
  // not searched (no budget or no batch symbol), 0 when even 1 does not fit.
  int64_t max_batch = -1;
  // An op without a rule (its cost counts 0): the FLOPs are lower bounds.
  bool flops_lower_bound = false;
  // An op without a rule runs backward (what it saves counts 0): the peak is a
  // lower bound.
  bool memory_lower_bound = false;
  // The ops without a rule, with their counts.
  std::vector<UnknownOp> unknown_ops;
  // A generation's row (EvaluateGenerationCompareRow): peak is the larger of
  // the two phases', at_peak that phase's breakdown without the KV cache
  // (the model's own buffers stay buffer); the training FLOPs stay 0.
  bool generation = false;
  // At the end of generation (S + T tokens).
  int64_t kv_cache_bytes = 0;
  // The KV cache live at the peak: at_peak plus this sums to peak.
  int64_t kv_cache_at_peak = 0;
  int64_t prefill_peak = 0, decode_peak = 0;  // Each phase's peak.
  // The prefill's; the last decode step's.
  int64_t flops_prefill = 0, flops_decode_token = 0;
  // A sweep's point (EvaluateGenerationCompareSweep): the swept symbols'
  // values, in the sweep's order; empty otherwise.
  std::vector<std::pair<std::string, int64_t>> point;
  // With CompareOptions::gpu, at the row's bindings; -1 without. A training
  // row: the step's time, rate and MFU. NB: a generation row sets only its
  // communication_untimed (GenerationTime's).
  StepRate step_rate;
  // A generation row: the prefill (time to the first token), the last decode
  // step, and new tokens per second over the whole generate() call
  // (GenerationTime).
  double prefill_seconds = -1, decode_step_seconds = -1, tokens_per_second = -1;
};

// How the rows are evaluated.
struct CompareOptions {
  // Values of the symbols; the batch symbol may stay unbound.
  sym::Bindings bindings;
  // Searched for max_batch; evaluated at 1 when unbound. NB: for a generation
  // it may be S or T (the largest context or number of new tokens that fits).
  std::string batch_symbol = "B";
  int64_t budget_bytes = 0;                    // 0: no budget.
  int64_t max_batch_limit = int64_t{1} << 20;  // The search stops here.
  // The rows are generations' (the renderings' columns).
  bool generation = false;
  // If set, each row is timed on this GPU at its bindings (EstimateTime,
  // EstimateGenerationTime): the analyses need StepConfig.gpu or gpu_file
  // (with evaluate_time false where a symbol stays free).
  std::optional<TimedOn> time;
};

// Parses a memory size: "24GiB", "80GB" (decimal), "24G" (binary), "1.5TiB",
// "512MiB", bytes.
Result<int64_t> ParseMemorySize(std::string_view text);

// Evaluates `report` (one configuration's analysis) into a row. NB: the peak
// for other batch sizes comes from the symbolic peak's candidate moments, so
// the search evaluates a handful of expressions per batch.
Result<CompareRow> EvaluateCompareRow(const Report& report, std::string label,
                                      const CompareOptions& options);

// Evaluates `step` (one configuration's analysis) into a row, as above; with
// options.time its time at the row's bindings too.
Result<CompareRow> EvaluateCompareRow(const StepAnalysis& step,
                                      std::string label,
                                      const CompareOptions& options);

// Evaluates `g` (one serving configuration's generation) into a row: the
// generation's peak is the larger of the prefill's and the last decode
// step's (its cache at S + T - 1 tokens), and max_batch the largest value of
// the batch symbol (B, S or T) whose generation peak fits the budget. Every
// other symbol of B, S, T must be bound.
Result<CompareRow> EvaluateGenerationCompareRow(const GenerationAnalysis& g,
                                                std::string label,
                                                const CompareOptions& options);

// Evaluates `g` as EvaluateGenerationCompareRow does at each of `points`
// (values of swept symbols over options.bindings): one row per point, in
// order, each with its point; the peaks' candidate moments are found once.
Result<std::vector<CompareRow>> EvaluateGenerationCompareSweep(
    const GenerationAnalysis& g, const std::string& label,
    const CompareOptions& options,
    const std::vector<std::vector<std::pair<std::string, int64_t>>>& points);

// The comparison as a table: one row per configuration; columns: trainable
// params, memory by category at the peak, peak, fits, max batch, FLOPs.
std::string RenderCompareText(const std::string& model,
                              const std::vector<CompareRow>& rows,
                              const CompareOptions& options,
                              const std::string& setting);

// The comparison as JSON ("torchcost.compare" version 1, docs/json-schema.md).
std::string RenderCompareJson(const std::string& model,
                              const std::vector<CompareRow>& rows,
                              const CompareOptions& options,
                              const std::string& setting);

// The comparison as an SVG bar chart: one bar per configuration stacked by
// category at its peak, with the budget as a line.
std::string RenderCompareSvg(const std::string& model,
                             const std::vector<CompareRow>& rows,
                             const CompareOptions& options,
                             const std::string& setting);

}  // namespace torchcost

#endif  // TORCHCOST_COMPARE_H_
