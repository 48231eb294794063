#include "report/sweep.h"

#include <cerrno>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "report/budget_section.h"
#include "report/format.h"
#include "report/json_values.h"
#include "report/table.h"
#include "report/text_sections.h"
#include "torchcost/budget.h"
#include "torchcost/roofline.h"

namespace torchcost {
namespace {

Result<int64_t> ParsePositive(std::string_view text, std::string_view spec) {
  std::string s(text);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE || v <= 0) {
    return Status::InvalidArgument("SweepSpec " + std::string(spec) + ": '" +
                                   s + "' is not a positive integer");
  }
  return static_cast<int64_t>(v);
}

// Everything a point needs: the values of the timeline's peak candidates.
__int128 EvalOrZero(const sym::Expr& e, const sym::Bindings& b,
                    Status* status) {
  auto v = sym::Evaluate128(e, b);
  if (!v.ok()) {
    if (status->ok()) *status = v.status();
    return 0;
  }
  return *v;
}

}  // namespace

Result<SweepSpec> ParseSweep(std::string_view text) {
  SweepSpec spec;
  size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return Status::InvalidArgument(
        "SweepSpec " + std::string(text) +
        ": expected SYM=START:STOP:STEP or SYM=V1,V2,...");
  }
  spec.symbol = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  if (rest.find(':') == std::string_view::npos) {
    size_t start = 0;
    while (start <= rest.size()) {
      size_t comma = rest.find(',', start);
      auto item = rest.substr(start, comma == std::string_view::npos
                                         ? std::string_view::npos
                                         : comma - start);
      TORCHCOST_ASSIGN_OR_RETURN(int64_t v, ParsePositive(item, text));
      spec.values.push_back(v);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    return spec;
  }
  size_t c1 = rest.find(':');
  size_t c2 = rest.find(':', c1 + 1);
  if (c2 == std::string_view::npos) {
    return Status::InvalidArgument("SweepSpec " + std::string(text) +
                                   ": expected START:STOP:STEP");
  }
  TORCHCOST_ASSIGN_OR_RETURN(int64_t start,
                             ParsePositive(rest.substr(0, c1), text));
  TORCHCOST_ASSIGN_OR_RETURN(
      int64_t stop, ParsePositive(rest.substr(c1 + 1, c2 - c1 - 1), text));
  std::string_view step = rest.substr(c2 + 1);
  const bool multiply = !step.empty() && step[0] == 'x';
  if (!step.empty() && (step[0] == 'x' || step[0] == '+'))
    step.remove_prefix(1);
  TORCHCOST_ASSIGN_OR_RETURN(int64_t k, ParsePositive(step, text));
  if (multiply && k < 2)
    return Status::InvalidArgument("SweepSpec " + std::string(text) +
                                   ": a factor must be >= 2");
  if (stop < start)
    return Status::InvalidArgument("SweepSpec " + std::string(text) +
                                   ": STOP is below START");
  for (int64_t v = start;;) {
    spec.values.push_back(v);
    if (spec.values.size() > 10000)
      return Status::InvalidArgument("SweepSpec " + std::string(text) +
                                     ": too many points");
    // NB: the next point is computed with overflow checks: a range ending near
    // 2^63 stops at its last representable point instead of wrapping.
    int64_t next = 0;
    if (multiply ? __builtin_mul_overflow(v, k, &next)
                 : __builtin_add_overflow(v, k, &next))
      break;
    if (next > stop) break;
    v = next;
  }
  return spec;
}

namespace report {

Result<std::vector<SweepRow>> EvaluateSweep(
    const ir::Graph& graph, const Report& report,
    const std::vector<SweepSpec>& sweeps, const sym::Bindings& base,
    const TimedOn* time) {
  // NB: one symbolic peak analysis gives the few moments that can be the peak
  // for some values of the symbols; each point only evaluates those.
  // NB: the swept symbols stay free in the candidates, even where `base` also
  // binds them (a --set of the swept symbol): else every point would have the
  // base's peak.
  sym::Bindings free = base;
  for (const SweepSpec& s : sweeps) free.erase(s.symbol);
  const PeakInfo peak = EvaluatePeak(report.training, free);
  if (!peak.error.empty())
    return Status::OutOfRange("SweepSpec: " + peak.error);
  const BudgetEvaluator budget(report);
  // Each point says whether it fits; no search.
  const BudgetQuestion question = QuestionOf(report, /*search=*/false);
  std::vector<SweepRow> rows;
  std::vector<size_t> index(sweeps.size(), 0);
  for (;;) {
    SweepRow row;
    row.bindings = base;
    for (size_t i = 0; i < sweeps.size(); ++i)
      row.bindings[sweeps[i].symbol] = sweeps[i].values[index[i]];
    Status status;
    const TrainingReport& tr = report.training;
    row.flops_forward = EvalOrZero(tr.flops_forward, row.bindings, &status);
    row.flops_backward = EvalOrZero(tr.flops_backward, row.bindings, &status);
    row.flops_step = EvalOrZero(tr.flops_step, row.bindings, &status);
    for (size_t c = 0; c < peak.candidates.size(); ++c) {
      __int128 v = EvalOrZero(peak.candidates[c], row.bindings, &status);
      if (c == 0 || v > row.peak) {
        row.peak = v;
        row.peak_point = peak.candidate_points[c];
      }
    }
    if (row.peak_point >= 0) {
      for (int k = 0; k < kNumMemCategories; ++k) {
        row.at_peak[k] = EvalOrZero(tr.timeline[row.peak_point].live[k],
                                    row.bindings, &status);
      }
    }
    if (!status.ok())
      return Status::InvalidArgument(
          "SweepSpec: " + status.message() +
          "; bind it with StepConfig.bindings or SweepSpec");
    if (tr.cuda_allocator) {
      // NB: as the report at one point: the peak, its moment and breakdown are
      // the allocated blocks'.
      const AllocatorPeak a = EvaluateAllocator(tr, row.bindings);
      if (!a.error.empty())
        return Status::InvalidArgument("SweepSpec: " + a.error);
      row.peak = a.allocated_peak;
      row.peak_point = a.point;
      for (int k = 0; k < kNumMemCategories; ++k) row.at_peak[k] = a.at_peak[k];
      row.device_peak = a.device_peak;
    }
    if (report.budget_bytes > 0) {
      Result<BudgetAnswer> a = budget.Answer(row.bindings, question);
      if (!a.ok()) return a.status().WithPrefix("SweepSpec: budget");
      row.fits = a->fits;
    }
    if (time) {
      Result<TimeReport> t =
          EstimateTime(graph, report, time->gpu, row.bindings);
      if (!t.ok()) return t.status().WithPrefix("SweepSpec: time");
      row.step_rate = StepRateOf(*t);
    }
    rows.push_back(std::move(row));
    size_t i = sweeps.size();
    while (i > 0) {
      --i;
      if (++index[i] < sweeps[i].values.size()) break;
      index[i] = 0;
      if (i == 0) return rows;
    }
    if (sweeps.empty()) return rows;
  }
}

}  // namespace report

Result<std::string> RenderSweepText(const ir::Graph& graph,
                                    const Report& report,
                                    const std::vector<SweepSpec>& sweeps,
                                    const sym::Bindings& base,
                                    const TimedOn* time) {
  TORCHCOST_ASSIGN_OR_RETURN(
      std::vector<report::SweepRow> rows,
      report::EvaluateSweep(graph, report, sweeps, base, time));
  using report::Table;
  std::vector<Table::Column> cols;
  for (const auto& s : sweeps) cols.push_back({s.symbol});
  for (const char* h : {"Fwd FLOPs", "Bwd FLOPs", "Step FLOPs", "Peak", "Param",
                        "Grad", "Act", "Temp", "Opt", "Peak phase"}) {
    cols.push_back({h});
  }
  cols.back().align = Table::Align::kLeft;
  const TrainingReport& tr = report.training;
  if (tr.cuda_allocator) cols.push_back({"Device"});
  if (report.budget_bytes > 0)
    cols.push_back(
        {"Fits " + report::Human(report.budget_bytes, report::Unit::kBytes)});
  if (time) {
    for (const std::string& h : report::StepTimeHeaders(
             rows.empty() ? "" : rows[0].step_rate.items_unit))
      cols.push_back({h});
  }
  Table t(cols);
  for (const auto& r : rows) {
    std::vector<std::string> cells;
    for (const auto& s : sweeps)
      cells.push_back(std::to_string(r.bindings.at(s.symbol)));
    // NB: ">= " marks lower bounds (ops without rules: Report::lower_bound).
    const std::string fwd = report.lower_bound ? ">= " : "",
                      bwd = tr.flops_lower_bound ? ">= " : "";
    const std::string mem = tr.act_lower_bound ? ">= " : "";
    cells.push_back(fwd + report::Human(r.flops_forward, report::Unit::kFlops));
    cells.push_back(bwd +
                    report::Human(r.flops_backward, report::Unit::kFlops));
    cells.push_back(bwd + report::Human(r.flops_step, report::Unit::kFlops));
    cells.push_back(mem + report::Human(r.peak, report::Unit::kBytes));
    for (MemCategory c :
         {MemCategory::kParam, MemCategory::kGrad, MemCategory::kAct,
          MemCategory::kTemp, MemCategory::kOpt}) {
      cells.push_back(
          report::Human(r.at_peak[static_cast<int>(c)], report::Unit::kBytes));
    }
    cells.push_back(r.peak_point >= 0 ? std::string(StepPhaseName(
                                            tr.timeline[r.peak_point].phase))
                                      : "-");
    if (tr.cuda_allocator)
      cells.push_back(report::Human(r.device_peak, report::Unit::kBytes));
    if (r.fits) cells.push_back(*r.fits ? "yes" : "NO");
    if (time) {
      for (std::string& c : report::StepTimeCells(r.step_rate))
        cells.push_back(std::move(c));
    }
    t.AddRow(std::move(cells));
  }
  std::string out =
      "Sweep of " + (report.model.empty() ? graph.source : report.model) +
      " (" +
      (tr.mode == StepMode::kTrain
           ? "train with " + std::string(OptimizerName(tr.optimizer))
           : std::string("infer")) +
      "; one analysis, evaluated per point; memory at the peak" +
      (tr.cuda_allocator
           ? "; CUDA caching allocator: Peak the allocated blocks', Device "
             "the reserved peak + context"
           : "") +
      (time ? "; time " + report::TimeSourceLabel(time->source) : "") + ")\n";
  out += t.Render();
  // NB: the points differ only in their bindings, so a collective untimed at
  // one is untimed at all.
  if (time && !rows.empty())
    out += report::UntimedCommunicationNote(
        rows[0].step_rate.communication_untimed, "every point");
  return out;
}

Result<std::string> RenderSweepJson(const ir::Graph& graph,
                                    const Report& report,
                                    const std::vector<SweepSpec>& sweeps,
                                    const sym::Bindings& base,
                                    const TimedOn* time) {
  TORCHCOST_ASSIGN_OR_RETURN(
      std::vector<report::SweepRow> rows,
      report::EvaluateSweep(graph, report, sweeps, base, time));
  using Json = nlohmann::ordered_json;
  Json j;
  j["schema"] = "torchcost.sweep";
  j["version"] = 1;
  j["model"] = report.model.empty() ? graph.source : report.model;
  // True where an op without a rule makes the figures lower bounds.
  j["lower_bound"] = {
      {"flops", report.training.flops_lower_bound || report.lower_bound},
      {"memory", report.training.act_lower_bound}};
  if (time) j["time_source"] = report::TimeSourceLabel(time->source);
  if (report.budget_bytes > 0) j["budget_bytes"] = report.budget_bytes;
  Json points = Json::array();
  for (const auto& r : rows) {
    Json p;
    Json b = Json::object();
    for (const auto& s : sweeps) b[s.symbol] = r.bindings.at(s.symbol);
    p["bindings"] = b;
    p["flops"] = {{"forward", report::JsonInteger(r.flops_forward)},
                  {"backward", report::JsonInteger(r.flops_backward)},
                  {"step", report::JsonInteger(r.flops_step)}};
    p["peak"] = report::JsonInteger(r.peak);
    Json at = Json::object();
    for (int k = 0; k < kNumMemCategories; ++k)
      at[std::string(MemCategoryName(static_cast<MemCategory>(k)))] =
          report::JsonInteger(r.at_peak[k]);
    p["at_peak"] = at;
    p["peak_phase"] = r.peak_point >= 0
                          ? Json(std::string(StepPhaseName(
                                report.training.timeline[r.peak_point].phase)))
                          : Json(nullptr);
    if (r.device_peak >= 0) p["device_peak"] = r.device_peak;
    if (r.fits) p["fits"] = *r.fits;
    if (time) {
      p["time"] = report::JsonStepRate(r.step_rate);
    }
    points.push_back(std::move(p));
  }
  j["points"] = std::move(points);
  return j.dump(2) + "\n";
}

}  // namespace torchcost
