#include "torchcost/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "report/format.h"
#include "report/table.h"

namespace torchcost {
namespace {

bool HasSymbol(const Report& report, const std::string& name) {
  return std::find(report.symbols.begin(), report.symbols.end(), name) !=
         report.symbols.end();
}

int64_t Clamp64(__int128 v) {
  constexpr __int128 kMax = INT64_MAX;
  return static_cast<int64_t>(std::min(v, kMax));
}

// Returns `e`'s value under `at`, clamped to int64; an unbound symbol is an
// error that says where bindings come from.
Result<int64_t> ValueAt(const sym::Expr& e, const sym::Bindings& at) {
  auto v = sym::Evaluate128(e, at);
  if (!v.ok())
    return Status::InvalidArgument(v.status().message() +
                                   "; bind it with StepConfig.bindings");
  return Clamp64(*v);
}

// The peak under any bindings, from the symbolic peak's candidate moments
// (computed once with every symbol free, so no substitution into the whole
// timeline is needed): a handful of expressions per evaluation.
class PeakCandidates {
 public:
  explicit PeakCandidates(const Report& report) : tr_(report.training) {
    const PeakInfo info =
        EvaluatePeak(report.training, {}, /*category_max=*/false);
    error_ = info.error;
    candidates_ = info.candidates;
    points_ = info.candidate_points;
  }
  const std::string& error() const { return error_; }
  // Returns the peak under `b` and the timeline point where it occurs, or
  // nullopt if unbound or overflowing.
  std::optional<std::pair<__int128, int>> At(const sym::Bindings& b) const {
    std::optional<std::pair<__int128, int>> best;
    for (size_t i = 0; i < candidates_.size(); ++i) {
      auto v = sym::Evaluate128(candidates_[i], b);
      if (!v.ok()) return std::nullopt;
      if (!best || *v > best->first) best = std::make_pair(*v, points_[i]);
    }
    return best;
  }
  const TrainingReport& training() const { return tr_; }

 private:
  const TrainingReport& tr_;
  std::vector<sym::Expr> candidates_;
  std::vector<int> points_;
  std::string error_;
};

// The peak as a function of the batch symbol alone, the largest over one or
// more analyses (a generation's two phases); with the CUDA allocator model,
// the reserved peak plus the context (what a budget is compared with).
class PeakOfBatch {
 public:
  PeakOfBatch(std::vector<const PeakCandidates*> peaks,
              const CompareOptions& options)
      : peaks_(std::move(peaks)),
        symbol_(options.batch_symbol),
        base_(options.bindings) {}
  // Returns the peak at batch b, or nullopt on overflow.
  std::optional<__int128> At(int64_t b) {
    base_[symbol_] = b;
    std::optional<__int128> best;
    for (const PeakCandidates* peak : peaks_) {
      std::optional<__int128> v;
      if (peak->training().cuda_allocator) {
        // NB: a replay of the step's allocations per batch tried: O(events log
        // n) each.
        const AllocatorPeak a = EvaluateAllocator(peak->training(), base_);
        if (!a.error.empty()) return std::nullopt;
        v = a.device_peak;
      } else if (auto p = peak->At(base_)) {
        v = p->first;
      } else {
        return std::nullopt;
      }
      if (!best || *v > *best) best = v;
    }
    return best;
  }

 private:
  std::vector<const PeakCandidates*> peaks_;
  std::string symbol_;
  sym::Bindings base_;
};

// The largest b in [1, limit] with peak(b) <= budget (0 if none). NB: assumes
// the peak does not decrease as the batch grows (it is a sum of terms
// nondecreasing in it), so doubling then bisecting finds the boundary.
Result<int64_t> LargestFitting(PeakOfBatch& peak, int64_t budget,
                               int64_t limit) {
  auto fits = [&](int64_t b) {
    auto p = peak.At(b);
    return p.has_value() && *p <= budget;
  };
  if (!fits(1)) return 0;
  int64_t lo = 1, hi = 2;  // fits(lo); hi unknown.
  while (hi <= limit && fits(hi)) {
    lo = hi;
    hi *= 2;
  }
  if (hi > limit) {
    if (fits(limit)) return limit;
    hi = limit;
  }
  while (hi - lo > 1) {  // fits(lo), !fits(hi).
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

std::string BindingsText(const sym::Bindings& b, const CompareOptions& o,
                         bool batch_free) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : b) parts.push_back(k + "=" + std::to_string(v));
  std::sort(parts.begin(), parts.end());
  if (batch_free) parts.insert(parts.begin(), o.batch_symbol + "=1");
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
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

Result<CompareRow> EvaluateCompareRow(const Report& report, std::string label,
                                      const CompareOptions& options) {
  CompareRow row;
  row.label = std::move(label);
  row.params = report.params;
  row.trainable_params = report.trainable_params;
  row.param_bytes = report.param_bytes;
  const bool has_batch = HasSymbol(report, options.batch_symbol);
  sym::Bindings at = options.bindings;
  if (has_batch && !at.count(options.batch_symbol))
    at[options.batch_symbol] = 1;
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
  row.peak = Clamp64(p->first);
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
    row.fits = (tr.cuda_allocator ? row.device_peak : p->first) <=
               options.budget_bytes;
    if (has_batch) {
      PeakOfBatch of_batch({&peak}, options);
      TORCHCOST_ASSIGN_OR_RETURN(row.max_batch,
                                 LargestFitting(of_batch, options.budget_bytes,
                                                options.max_batch_limit));
    }
  }
  return row;
}

namespace {

// One generation row at options.bindings, from each phase's peak candidates.
Result<CompareRow> GenerationRow(const GenerationAnalysis& g, std::string label,
                                 const CompareOptions& options,
                                 const PeakCandidates& prefill_peak,
                                 const PeakCandidates& decode_peak) {
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
  row.prefill_peak = Clamp64(pp->first);
  row.decode_peak = Clamp64(dp->first);
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
    const bool decode_device_larger = b.device_peak > a.device_peak;
    const AllocatorPeak& larger = decode_device_larger ? b : a;
    at_report = decode_device_larger ? &decode : &prefill;
    row.peak = std::max(a.allocated_peak, b.allocated_peak);
    row.at_peak = larger.at_peak;
    row.reserved_peak = larger.reserved_peak;
    row.device_peak = larger.device_peak;
  }
  // NB: the cache's storages count as buffer in the simulation, as in
  // PhasePeak: buffer at the peak = the model's buffers + the live cache.
  int64_t& buffer = row.at_peak[static_cast<int>(MemCategory::kBuffer)];
  row.kv_cache_at_peak = buffer - at_report->buffer_bytes;
  buffer = at_report->buffer_bytes;
  if (options.budget_bytes > 0) {
    row.fits = (tr.cuda_allocator ? row.device_peak : row.peak) <=
               options.budget_bytes;
    PeakOfBatch of_symbol({&prefill_peak, &decode_peak}, options);
    TORCHCOST_ASSIGN_OR_RETURN(row.max_batch,
                               LargestFitting(of_symbol, options.budget_bytes,
                                              options.max_batch_limit));
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
  return GenerationRow(g, std::move(label), options, prefill_peak, decode_peak);
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
  std::vector<CompareRow> rows;
  CompareOptions at = options;
  for (const auto& point : points) {
    at.bindings = options.bindings;
    for (const auto& [name, value] : point) at.bindings[name] = value;
    TORCHCOST_ASSIGN_OR_RETURN(
        CompareRow row, GenerationRow(g, label, at, prefill_peak, decode_peak));
    row.point = point;
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

// The lines after the table that every rendering prints: lower bounds and
// failed rows.
std::string RowNotes(const std::vector<CompareRow>& rows) {
  std::string out;
  for (const CompareRow& r : rows) {
    if (!r.error.empty() || r.unknown_ops.empty()) continue;
    std::string ops;
    for (const UnknownOp& u : r.unknown_ops)
      ops += (ops.empty() ? "" : ", ") + u.op + " x" + std::to_string(u.count);
    out += "lower bounds (>=): no rule for " + r.label + ": " + ops +
           "; their cost counts 0 (StepConfig.strict fails on them)\n";
  }
  for (const CompareRow& r : rows) {
    if (!r.error.empty()) out += "error: " + r.label + ": " + r.error + "\n";
  }
  return out;
}

// The generation comparison's table: weights, KV cache, each phase's peak, what
// fits, FLOPs.
std::string GenerationCompareText(const std::string& model,
                                  const std::vector<CompareRow>& rows,
                                  const CompareOptions& options,
                                  const std::string& setting) {
  using report::Human;
  using report::Table;
  using report::Unit;
  const std::string& x = options.batch_symbol;
  const bool free = !options.bindings.count(x) && options.budget_bytes > 0;
  std::string out = "torchcost compare: " + model + " (generation)\n";
  const std::string at = BindingsText(options.bindings, options, free);
  out += "  " +
         (at.empty() ? std::string("at the inputs' shapes") : "at " + at) +
         (setting.empty() ? "" : "; " + setting) + "\n";
  if (options.budget_bytes > 0) {
    out += "  budget " + Human(options.budget_bytes, Unit::kBytes) + " (" +
           std::to_string(options.budget_bytes) + " bytes); Max " + x +
           ": the largest " + x + " whose generation peak fits (up to " +
           std::to_string(options.max_batch_limit) + ")\n";
  }
  std::vector<Table::Column> cols = {{"Config", Table::Align::kLeft}};
  // A sweep's rows: a column per swept symbol.
  const std::vector<std::pair<std::string, int64_t>> swept =
      rows.empty() ? std::vector<std::pair<std::string, int64_t>>()
                   : rows.front().point;
  for (const auto& [name, value] : swept) cols.push_back({name});
  for (const char* h :
       {"Weights", "KV cache", "Prefill peak", "Decode peak", "Peak"})
    cols.push_back({h});
  const bool allocator =
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.device_peak >= 0; });
  if (allocator) cols.push_back({"+context"});
  if (options.budget_bytes > 0) {
    cols.push_back({"Fits", Table::Align::kLeft});
    cols.push_back({"Max " + x});
  }
  cols.push_back({"Prefill FLOPs"});
  cols.push_back({"Decode FLOPs/token"});
  Table t(cols);
  for (const CompareRow& r : rows) {
    std::vector<std::string> cells{r.label};
    if (!r.error.empty()) {
      cells.push_back("error: see below");
      t.AddRow(cells);
      continue;
    }
    for (const auto& [name, value] : r.point)
      cells.push_back(std::to_string(value));
    const std::string mem = r.memory_lower_bound ? ">= " : "",
                      fl = r.flops_lower_bound ? ">= " : "";
    cells.push_back(Human(r.param_bytes, Unit::kBytes));
    cells.push_back(Human(r.kv_cache_bytes, Unit::kBytes));
    cells.push_back(mem + Human(r.prefill_peak, Unit::kBytes));
    cells.push_back(mem + Human(r.decode_peak, Unit::kBytes));
    cells.push_back(mem + Human(r.peak, Unit::kBytes));
    if (allocator) cells.push_back(mem + Human(r.device_peak, Unit::kBytes));
    if (options.budget_bytes > 0) {
      cells.push_back(r.fits ? "yes" : "NO");
      cells.push_back(r.max_batch < 0 ? "-" : std::to_string(r.max_batch));
    }
    cells.push_back(fl + Human(r.flops_prefill, Unit::kFlops));
    cells.push_back(fl + Human(r.flops_decode_token, Unit::kFlops));
    t.AddRow(cells);
  }
  out += t.Render();
  out +=
      "KV cache: at the end of generation (S + T tokens). Peak: the larger of "
      "the prefill's and the last decode\n"
      "step's (its cache at S + T - 1 tokens). Decode FLOPs: the last decode "
      "step's.\n";
  out += "At the peak, by part (the parts that are not 0):\n";
  for (const CompareRow& r : rows) {
    if (!r.error.empty()) continue;
    out += "  " + r.label;
    for (const auto& [name, value] : r.point)
      out += " " + name + "=" + std::to_string(value);
    out += ":";
    std::string parts;
    for (int k = 0; k < kNumMemCategories; ++k) {
      const auto c = static_cast<MemCategory>(k);
      if (r.at_peak[k] != 0) {
        parts += (parts.empty() ? " " : ", ") +
                 std::string(MemCategoryName(c)) + " " +
                 Human(r.at_peak[k], Unit::kBytes);
      }
      if (c == MemCategory::kBuffer) {
        parts += (parts.empty() ? " " : ", ") + std::string("kv_cache ") +
                 Human(r.kv_cache_at_peak, Unit::kBytes);
      }
    }
    out += parts + "\n";
  }
  if (allocator) {
    out +=
        "CUDA caching allocator model (docs/allocator.md): +context is the "
        "larger phase's reserved bytes plus\n"
        "the CUDA context; a budget is compared with it.\n";
  }
  return out + RowNotes(rows);
}

}  // namespace

std::string RenderCompareText(const std::string& model,
                              const std::vector<CompareRow>& rows,
                              const CompareOptions& options,
                              const std::string& setting) {
  if (options.generation)
    return GenerationCompareText(model, rows, options, setting);
  using report::Human;
  using report::Table;
  using report::Unit;
  const bool batch_free =
      !options.bindings.count(options.batch_symbol) &&
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.max_batch >= 0; });
  std::string out = "torchcost compare: " + model + "\n";
  const std::string at = BindingsText(options.bindings, options, batch_free);
  out += "  " +
         (at.empty() ? std::string("at the inputs' shapes") : "at " + at) +
         (setting.empty() ? "" : "; " + setting) + "\n";
  if (options.budget_bytes > 0) {
    out += "  budget " + Human(options.budget_bytes, Unit::kBytes) + " (" +
           std::to_string(options.budget_bytes) + " bytes); Max " +
           options.batch_symbol + ": the largest " + options.batch_symbol +
           " whose peak fits (up to " +
           std::to_string(options.max_batch_limit) + ")\n";
  }
  std::vector<Table::Column> cols = {{"Config", Table::Align::kLeft},
                                     {"Trainable"}};
  for (int k = 0; k < kNumMemCategories; ++k) {
    std::string name(MemCategoryName(static_cast<MemCategory>(k)));
    name[0] = static_cast<char>(std::toupper(name[0]));
    cols.push_back({name});
  }
  cols.push_back({"Peak"});
  const bool allocator =
      std::any_of(rows.begin(), rows.end(),
                  [](const CompareRow& r) { return r.device_peak >= 0; });
  if (allocator) {
    cols.push_back({"Reserved"});
    cols.push_back({"+context"});
  }
  if (options.budget_bytes > 0) {
    cols.push_back({"Fits", Table::Align::kLeft});
    cols.push_back({"Max " + options.batch_symbol});
  }
  for (const char* h : {"Fwd FLOPs", "Bwd FLOPs", "Step FLOPs"})
    cols.push_back({h});
  Table t(cols);
  for (const CompareRow& r : rows) {
    std::vector<std::string> cells{r.label};
    if (!r.error.empty()) {
      cells.push_back("error: see below");
      t.AddRow(cells);
      continue;
    }
    cells.push_back(Human(r.trainable_params, Unit::kCount));
    // NB: ">= " marks lower bounds (ops without rules), as in the analysis
    // report.
    const std::string mem = r.memory_lower_bound ? ">= " : "",
                      fl = r.flops_lower_bound ? ">= " : "";
    for (int k = 0; k < kNumMemCategories; ++k)
      cells.push_back(Human(r.at_peak[k], Unit::kBytes));
    cells.push_back(mem + Human(r.peak, Unit::kBytes));
    if (allocator) {
      cells.push_back(mem + Human(r.reserved_peak, Unit::kBytes));
      cells.push_back(mem + Human(r.device_peak, Unit::kBytes));
    }
    if (options.budget_bytes > 0) {
      cells.push_back(r.fits ? "yes" : "NO");
      cells.push_back(r.max_batch < 0 ? "-" : std::to_string(r.max_batch));
    }
    cells.push_back(fl + Human(r.flops_forward, Unit::kFlops));
    cells.push_back(fl + Human(r.flops_backward, Unit::kFlops));
    cells.push_back(fl + Human(r.flops_step, Unit::kFlops));
    t.AddRow(cells);
  }
  out += t.Render();
  out +=
      "Memory is the breakdown at each configuration's peak (it sums to Peak); "
      "FLOPs: forward and backward per\n"
      "micro-batch, step = micro-batches x (forward + backward) + optimizer.\n";
  if (allocator) {
    out +=
        "CUDA caching allocator model (docs/allocator.md): Peak is the "
        "allocated blocks' (max_memory_allocated),\n"
        "Reserved max_memory_reserved, +context adds the CUDA context; a "
        "budget is compared with +context.\n";
  }
  return out + RowNotes(rows);
}

std::string RenderCompareJson(const std::string& model,
                              const std::vector<CompareRow>& rows,
                              const CompareOptions& options,
                              const std::string& setting) {
  nlohmann::ordered_json j;
  j["schema"] = "torchcost.compare";
  j["version"] = 1;
  j["model"] = model;
  j["setting"] = setting;
  nlohmann::ordered_json b = nlohmann::ordered_json::object();
  std::vector<std::pair<std::string, int64_t>> sorted(options.bindings.begin(),
                                                      options.bindings.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [k, v] : sorted) b[k] = v;
  j["bindings"] = b;
  j["batch_symbol"] = options.batch_symbol;
  j["budget_bytes"] = options.budget_bytes > 0
                          ? nlohmann::ordered_json(options.budget_bytes)
                          : nullptr;
  if (options.generation) j["mode"] = "generate";
  nlohmann::ordered_json out_rows = nlohmann::ordered_json::array();
  for (const CompareRow& r : rows) {
    nlohmann::ordered_json o;
    o["config"] = r.label;
    if (!r.point.empty()) {
      nlohmann::ordered_json point = nlohmann::ordered_json::object();
      for (const auto& [name, value] : r.point) point[name] = value;
      o["at"] = point;
    }
    if (!r.error.empty()) {
      o["error"] = r.error;
      out_rows.push_back(o);
      continue;
    }
    o["params"] = r.params;
    if (!r.generation) o["trainable_params"] = r.trainable_params;
    o["param_bytes"] = r.param_bytes;
    if (r.generation) {
      o["kv_cache_bytes"] = r.kv_cache_bytes;
      o["prefill_peak"] = r.prefill_peak;
      o["decode_peak"] = r.decode_peak;
    }
    nlohmann::ordered_json cats;
    for (int k = 0; k < kNumMemCategories; ++k)
      cats[std::string(MemCategoryName(static_cast<MemCategory>(k)))] =
          r.at_peak[k];
    // As the generation report's at_peak: the cache apart from buffer.
    if (r.generation) cats["kv_cache"] = r.kv_cache_at_peak;
    o["at_peak"] = cats;
    o["peak"] = r.peak;
    if (r.device_peak >= 0) {
      o["reserved_peak"] = r.reserved_peak;
      o["device_peak"] = r.device_peak;
    }
    o["fits"] = r.fits;
    o["max_batch"] =
        r.max_batch >= 0 ? nlohmann::ordered_json(r.max_batch) : nullptr;
    if (r.generation) {
      o["flops"] = {{"prefill", r.flops_prefill},
                    {"decode_token", r.flops_decode_token}};
    } else {
      o["flops"] = {{"forward", r.flops_forward},
                    {"backward", r.flops_backward},
                    {"step", r.flops_step}};
    }
    o["lower_bound"] = {{"flops", r.flops_lower_bound},
                        {"memory", r.memory_lower_bound}};
    nlohmann::ordered_json unknown = nlohmann::ordered_json::array();
    for (const UnknownOp& u : r.unknown_ops)
      unknown.push_back({{"op", u.op}, {"count", u.count}});
    o["unknown_ops"] = unknown;
    out_rows.push_back(o);
  }
  j["rows"] = out_rows;
  return j.dump(2) + "\n";
}

}  // namespace torchcost
