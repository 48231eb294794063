// Evaluating analyses into the comparison's rows: the peak and what fits a
// budget, from the symbolic peak's candidate moments.
#include "torchcost/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "ir/int_math.h"
#include "report/peak_candidates.h"
#include "torchcost/budget.h"
#include "torchcost/generation_allocator.h"
#include "torchcost/roofline.h"

namespace torchcost {
namespace {

using ir::ClampToInt64;

bool HasSymbol(const Report& report, const std::string& name) {
  return std::find(report.symbols.begin(), report.symbols.end(), name) !=
         report.symbols.end();
}

// A training row's bindings: options.bindings, the batch symbol at 1 where the
// report has it unbound.
sym::Bindings RowBindings(const Report& report, const CompareOptions& options) {
  sym::Bindings at = options.bindings;
  if (HasSymbol(report, options.batch_symbol) &&
      !at.count(options.batch_symbol))
    at[options.batch_symbol] = 1;
  return at;
}

// Returns `e`'s value under `at`, clamped to int64; an unbound symbol is an
// error that says where bindings come from.
Result<int64_t> ValueAt(const sym::Expr& e, const sym::Bindings& at) {
  auto v = sym::Evaluate128(e, at);
  if (!v.ok())
    return Status::InvalidArgument(v.status().message() +
                                   "; bind it with StepConfig.bindings");
  return ClampToInt64(*v);
}

using report::PeakCandidates;

// The budget question a comparison asks of each row.
BudgetQuestion QuestionOf(const CompareOptions& options) {
  BudgetQuestion q;
  q.budget_bytes = options.budget_bytes;
  q.symbol = options.batch_symbol;
  q.search_limit = options.max_batch_limit;
  return q;
}

}  // namespace

Result<int64_t> ParseMemorySize(std::string_view text) {
  std::string s(text);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  std::string unit(end);
  if (s.empty() || end == s.c_str() || !(v > 0)) {
    return Status::InvalidArgument(
        "'" + s + "' is not a memory size (24GiB, 80GB, 512MiB)");
  }
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "K" || unit == "KiB")
    scale = 1024.0;
  else if (unit == "M" || unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "TiB")
    scale = 1024.0 * 1024 * 1024 * 1024;
  // NB: KB, MB, GB, TB are decimal (GPU vendors' "80GB").
  else if (unit == "KB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else if (unit == "TB")
    scale = 1e12;
  if (scale == 0)
    return Status::InvalidArgument("'" + s + "': unknown unit '" + unit +
                                   "' (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  const double bytes = v * scale;
  if (bytes >= 9.2e18)
    return Status::InvalidArgument("'" + s + "' is too large");
  return static_cast<int64_t>(std::llround(bytes));
}

Result<CompareRow> EvaluateCompareRow(const StepAnalysis& step,
                                      std::string label,
                                      const CompareOptions& options) {
  TORCHCOST_ASSIGN_OR_RETURN(
      CompareRow row,
      EvaluateCompareRow(step.report, std::move(label), options));
  if (!options.time) return row;
  Result<TimeReport> t =
      EstimateTime(step.graph, step.report, options.time->gpu,
                   RowBindings(step.report, options));
  if (!t.ok()) return t.status();
  row.step_rate = StepRateOf(*t);
  return row;
}

Result<CompareRow> EvaluateCompareRow(const Report& report, std::string label,
                                      const CompareOptions& options) {
  CompareRow row;
  row.label = std::move(label);
  row.params = report.params;
  row.trainable_params = report.trainable_params;
  row.param_bytes = report.param_bytes;
  const sym::Bindings at = RowBindings(report, options);
  const TrainingReport& tr = report.training;
  auto value = [&](const sym::Expr& e) { return ValueAt(e, at); };
  TORCHCOST_ASSIGN_OR_RETURN(row.flops_forward, value(tr.flops_forward));
  TORCHCOST_ASSIGN_OR_RETURN(row.flops_backward, value(tr.flops_backward));
  TORCHCOST_ASSIGN_OR_RETURN(row.flops_step, value(tr.flops_step));
  row.flops_lower_bound = report.lower_bound || tr.flops_lower_bound;
  row.memory_lower_bound = tr.act_lower_bound;
  row.unknown_ops = report.unknown_ops;
  const PeakCandidates peak(report);
  if (!peak.error().empty()) return Status::OutOfRange(peak.error());
  auto p = peak.At(at);
  if (!p)
    return Status::InvalidArgument(
        "the peak does not evaluate at these bindings; bind every symbol with "
        "StepConfig.bindings");
  row.peak = ClampToInt64(p->first);
  for (int k = 0; k < kNumMemCategories; ++k) {
    TORCHCOST_ASSIGN_OR_RETURN(row.at_peak[k],
                               value(tr.timeline[p->second].live[k]));
  }
  if (tr.cuda_allocator) {
    const AllocatorPeak a = EvaluateAllocator(tr, at);
    if (!a.error.empty()) return Status::InvalidArgument(a.error);
    row.peak = a.allocated_peak;
    row.at_peak = a.at_peak;
    row.reserved_peak = a.reserved_peak;
    row.device_peak = a.device_peak;
  }
  if (options.budget_bytes > 0) {
    TORCHCOST_ASSIGN_OR_RETURN(BudgetAnswer fit, BudgetEvaluator(report).Answer(
                                                     at, QuestionOf(options)));
    row.fits = fit.fits;
    row.max_batch = fit.largest;
  }
  return row;
}

namespace {

// One generation row at options.bindings, from each phase's peak candidates;
// what fits the budget from `budget`, over the whole generation.
Result<CompareRow> GenerationRow(const GenerationAnalysis& g, std::string label,
                                 const CompareOptions& options,
                                 const PeakCandidates& prefill_peak,
                                 const PeakCandidates& decode_peak,
                                 const BudgetEvaluator& budget) {
  const std::string& searched = options.batch_symbol;
  CompareRow row;
  row.label = std::move(label);
  row.generation = true;
  const Report& prefill = g.prefill.report;
  const Report& decode = g.decode.report;
  row.params = prefill.params;
  row.param_bytes = prefill.param_bytes;
  sym::Bindings at = options.bindings;
  if (!at.count(searched)) at[searched] = 1;
  auto value = [&](const sym::Expr& e) { return ValueAt(e, at); };
  TORCHCOST_ASSIGN_OR_RETURN(row.kv_cache_bytes, value(g.kv_cache_bytes));
  TORCHCOST_ASSIGN_OR_RETURN(row.flops_prefill, value(g.prefill_flops));
  TORCHCOST_ASSIGN_OR_RETURN(row.flops_decode_token,
                             value(g.decode_flops_last));
  row.flops_lower_bound = prefill.lower_bound || decode.lower_bound;
  row.memory_lower_bound =
      prefill.training.act_lower_bound || decode.training.act_lower_bound;
  row.unknown_ops = prefill.unknown_ops;
  for (const UnknownOp& u : decode.unknown_ops) {
    auto same = [&](const UnknownOp& o) { return o.op == u.op; };
    auto it =
        std::find_if(row.unknown_ops.begin(), row.unknown_ops.end(), same);
    if (it == row.unknown_ops.end()) row.unknown_ops.push_back(u);
    // NB: the larger phase's count of the op.
    else
      it->count = std::max(it->count, u.count);
  }
  auto pp = prefill_peak.At(at), dp = decode_peak.At(at);
  if (!pp || !dp) {
    return Status::InvalidArgument(
        "the peak does not evaluate at these bindings; bind B, S and T with "
        "StepConfig.bindings");
  }
  row.prefill_peak = ClampToInt64(pp->first);
  row.decode_peak = ClampToInt64(dp->first);
  // The generation's peak is the larger phase's; the breakdown is at its
  // moment.
  const bool decode_larger = dp->first > pp->first;
  const Report* at_report = decode_larger ? &decode : &prefill;
  const TrainingReport& tr = at_report->training;
  const int point = decode_larger ? dp->second : pp->second;
  row.peak = std::max(row.prefill_peak, row.decode_peak);
  for (int k = 0; k < kNumMemCategories; ++k) {
    TORCHCOST_ASSIGN_OR_RETURN(row.at_peak[k],
                               value(tr.timeline[point].live[k]));
  }
  if (tr.cuda_allocator) {
    const AllocatorPeak a = EvaluateAllocator(prefill.training, at),
                        b = EvaluateAllocator(decode.training, at);
    if (!a.error.empty()) return Status::InvalidArgument(a.error);
    if (!b.error.empty()) return Status::InvalidArgument(b.error);
    const bool decode_allocated_larger = b.allocated_peak > a.allocated_peak;
    const AllocatorPeak& larger = decode_allocated_larger ? b : a;
    at_report = decode_allocated_larger ? &decode : &prefill;
    row.peak = larger.allocated_peak;
    row.at_peak = larger.at_peak;
    // NB: the segments over the whole generate() call, as PyTorch's one
    // allocator serves every step: each step's blocks are carved from what
    // the steps before left cached.
    const GenerationAllocatorPeak whole =
        EvaluateGenerationAllocator(prefill.training, decode.training, at);
    if (!whole.error.empty()) return Status::InvalidArgument(whole.error);
    row.reserved_peak = whole.reserved_peak;
    row.device_peak = whole.device_peak;
  }
  // NB: the cache's storages count as buffer in the simulation, as in
  // PhasePeak: buffer at the peak = the model's buffers + the live cache.
  int64_t& buffer = row.at_peak[static_cast<int>(MemCategory::kBuffer)];
  row.kv_cache_at_peak = buffer - at_report->buffer_bytes;
  buffer = at_report->buffer_bytes;
  if (options.budget_bytes > 0) {
    TORCHCOST_ASSIGN_OR_RETURN(BudgetAnswer fit,
                               budget.Answer(at, QuestionOf(options)));
    row.fits = fit.fits;
    row.max_batch = fit.largest;
  }
  if (options.time) {
    Result<GenerationTime> t = EstimateGenerationTime(g, options.time->gpu, at);
    if (!t.ok()) return t.status().WithPrefix("CompareOptions.time");
    row.prefill_seconds = t->prefill_seconds;
    row.decode_step_seconds = t->last_step_seconds;
    row.tokens_per_second = t->tokens_per_second;
    row.step_rate.communication_untimed = t->communication_untimed;
  }
  return row;
}

// Fails unless the searched symbol is B, S or T.
Status CheckGenerationOptions(const CompareOptions& options) {
  const std::string& searched = options.batch_symbol;
  if (searched != "B" && searched != "S" && searched != "T") {
    return Status::InvalidArgument("CompareOptions.batch_symbol '" + searched +
                                   "': a generation searches B, S or T");
  }
  return Status::Ok();
}

}  // namespace

Result<CompareRow> EvaluateGenerationCompareRow(const GenerationAnalysis& g,
                                                std::string label,
                                                const CompareOptions& options) {
  if (Status st = CheckGenerationOptions(options); !st.ok()) return st;
  const PeakCandidates prefill_peak(g.prefill.report),
      decode_peak(g.decode.report);
  for (const PeakCandidates* p : {&prefill_peak, &decode_peak}) {
    if (!p->error().empty()) return Status::OutOfRange(p->error());
  }
  return GenerationRow(g, std::move(label), options, prefill_peak, decode_peak,
                       BudgetEvaluator(g));
}

Result<std::vector<CompareRow>> EvaluateGenerationCompareSweep(
    const GenerationAnalysis& g, const std::string& label,
    const CompareOptions& options,
    const std::vector<std::vector<std::pair<std::string, int64_t>>>& points) {
  if (Status st = CheckGenerationOptions(options); !st.ok()) return st;
  const PeakCandidates prefill_peak(g.prefill.report),
      decode_peak(g.decode.report);
  for (const PeakCandidates* p : {&prefill_peak, &decode_peak}) {
    if (!p->error().empty()) return Status::OutOfRange(p->error());
  }
  const BudgetEvaluator budget(g);
  std::vector<CompareRow> rows;
  CompareOptions at = options;
  for (const auto& point : points) {
    at.bindings = options.bindings;
    for (const auto& [name, value] : point) at.bindings[name] = value;
    TORCHCOST_ASSIGN_OR_RETURN(
        CompareRow row,
        GenerationRow(g, label, at, prefill_peak, decode_peak, budget));
    row.point = point;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace torchcost
