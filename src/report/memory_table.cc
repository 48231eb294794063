// The "Memory" block: a snapshot table in the style of PyTorch's MemTracker
// (param, buffer, grad, act, temp, opt, oth), at the peak and at each
// category's own maximum, then the peak and the moment it occurs.
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "report/budget_section.h"
#include "report/format.h"
#include "report/table.h"
#include "report/text_sections.h"
#include "torchcost/training.h"

namespace torchcost::report {
namespace {

// The most characters of symbolic text in a table cell, and on the Peak line.
constexpr size_t kCellText = 60;
constexpr size_t kPeakText = 160;

// Returns {human, exact bytes} if `e` evaluates, else {exact text, ""}, the
// text shortened to kCellText (then *shortened is set).
std::pair<std::string, std::string> Cells(const sym::Expr& e,
                                          const sym::Bindings& b,
                                          bool* shortened) {
  if (auto v = TryEvaluate(e, b)) return {Human(*v, Unit::kBytes), IntText(*v)};
  const std::string text = Bind(e, b).ToString();
  if (text.size() > kCellText) *shortened = true;
  return {ShortText(text, kCellText), ""};
}

// Returns the unbound symbols of `e`, sorted.
std::vector<std::string> UnboundSymbols(const sym::Expr& e,
                                        const sym::Bindings& b) {
  std::set<std::string> names;
  try {
    for (const std::string& s : sym::FreeSymbols(e)) {
      if (!b.count(s)) names.insert(s);
    }
  } catch (const std::exception&) {
    return {};
  }
  return {names.begin(), names.end()};
}

// Returns "B", "B and S" or "B, S and T".
std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " and " : ", ";
    out += names[i];
  }
  return out;
}

// The CUDA caching allocator model's peaks (docs/allocator.md).
std::string AllocatorLines(const ir::Graph& graph, const TrainingReport& tr,
                           const sym::Bindings& bindings) {
  const AllocatorPeak a = EvaluateAllocator(tr, bindings);
  if (!a.error.empty()) return "CUDA caching allocator: " + a.error + "\n";
  const CudaAllocatorOptions& o = *tr.cuda_allocator;
  std::string settings = o.expandable_segments ? "expandable segments" : "";
  if (o.max_split_size != std::numeric_limits<int64_t>::max()) {
    settings += std::string(settings.empty() ? "" : ", ") + "max_split_size " +
                Human(o.max_split_size, Unit::kBytes);
  }
  std::string out = "CUDA caching allocator (one stream" +
                    (settings.empty() ? "" : ", " + settings) + "):\n";
  out += "  Allocated peak (max_memory_allocated):  " +
         HumanAndExact(a.allocated_peak, Unit::kBytes) + ", during " +
         MomentText(graph, tr, a.point) + "\n";
  out += "  Reserved peak (max_memory_reserved):    " +
         HumanAndExact(a.reserved_peak, Unit::kBytes) + " in " +
         std::to_string(a.segments) +
         (o.expandable_segments ? " mappings" : " segments") + "\n";
  out += "  Free in segments at the allocated peak: " +
         HumanAndExact(a.fragmentation, Unit::kBytes) + " (fragmentation)\n";
  // NB: the default is one device's measurement (src/memory/cuda_context.cc).
  out +=
      report::Pad("  CUDA context, workspaces (" + o.context_source + "):", 42,
                  report::Table::Align::kLeft) +
      HumanAndExact(a.context_bytes, Unit::kBytes) + "\n";
  out += "  Device total (reserved + context):      " +
         HumanAndExact(a.device_peak, Unit::kBytes) + "\n";
  return out;
}

}  // namespace

std::string MomentText(const ir::Graph& graph, const TrainingReport& training,
                       int point) {
  if (point < 0 || static_cast<size_t>(point) >= training.timeline.size())
    return "?";
  const TimelinePoint& p = training.timeline[point];
  std::string out(StepPhaseName(p.phase));
  if (p.node < 0 || static_cast<size_t>(p.node) >= graph.nodes.size()) {
    if (p.phase == StepPhase::kOptimizer) return "the optimizer step";
    if (p.phase == StepPhase::kSetup) return "setup (before the forward)";
    return out;
  }
  const ir::Node& n = graph.nodes[p.node];
  out += " at node " + n.debug_name + " (" + n.op;
  if (n.scope >= 0 && static_cast<size_t>(n.scope) < graph.scopes.size()) {
    const ir::Scope& s = graph.scopes[n.scope];
    out += ", module " + (s.path.empty() ? s.type + " (root)" : s.path);
  }
  return out + ")";
}

std::string RenderMemory(const ir::Graph& graph, const Report& report,
                         const sym::Bindings& bindings,
                         const PeakInfo* given_peak) {
  const TrainingReport& tr = report.training;
  std::string out =
      "Memory (live bytes over the step, in MemTracker's categories)\n";
  if (tr.timeline.empty()) return out + "  (the step was not simulated)\n";
  const PeakInfo peak =
      given_peak != nullptr ? *given_peak : EvaluatePeak(tr, bindings);
  if (!peak.error.empty()) return out + "  " + peak.error + "\n";

  // NB: an undecided peak has no breakdown, so its table shows the maxima only.
  std::vector<Table::Column> columns = {{"Category", Table::Align::kLeft}};
  if (peak.decided) columns.insert(columns.end(), {{"At peak"}, {"Bytes"}});
  columns.insert(columns.end(), {{"Max"}, {"Bytes"}});
  Table table(std::move(columns));
  bool shortened = false;
  for (int c = 0; c < kNumMemCategories; ++c) {
    std::vector<std::string> row = {
        std::string(MemCategoryName(static_cast<MemCategory>(c)))};
    if (peak.decided) {
      auto at = Cells(peak.at_peak[c], bindings, &shortened);
      row.insert(row.end(), {at.first, at.second});
    }
    auto max = Cells(peak.category_max[c], bindings, &shortened);
    row.insert(row.end(), {max.first, max.second});
    table.AddRow(std::move(row));
  }
  // NB: the total's own maximum is the peak itself.
  if (peak.decided) {
    auto total = Cells(peak.peak, bindings, &shortened);
    table.AddRow(
        {"total", total.first, total.second, total.first, total.second});
  } else {
    table.AddRow({"total", "see Peak", ""});
  }
  out += table.Render();

  if (peak.decided) {
    // NB: ">=" where an op without a rule saves tensors nobody knows.
    out += "Peak: " + std::string(tr.act_lower_bound ? ">= " : "") +
           HumanAndExact(peak.peak, bindings, Unit::kBytes) + ", during " +
           MomentText(graph, tr, peak.point) + "\n";
  } else {
    const std::vector<std::string> symbols =
        UnboundSymbols(peak.peak, bindings);
    // NB: a max of hundreds of moments (a mixture of experts' backward) is
    // shortened; the JSON report keeps the whole expression.
    const std::string text = Bind(peak.peak, bindings).ToString();
    out += "Peak: " + std::string(tr.act_lower_bound ? ">= " : "") +
           ShortText(text, kPeakText) + "\n";
    if (text.size() > kPeakText) {
      out += "  The largest of " + std::to_string(peak.candidates.size()) +
             " moments of the step, each the peak for some values of the "
             "symbols; the JSON report has the whole "
             "expression (training.memory.peak.expr).\n";
    }
    out += "  When the peak occurs depends on " +
           (symbols.empty() ? "unbound symbols" : JoinNames(symbols)) +
           ": use StepConfig.bindings " + (symbols.empty() ? "B" : symbols[0]) +
           "=N to decide it.\n";
  }
  if (tr.cuda_allocator) out += AllocatorLines(graph, tr, bindings);
  if (report.budget_bytes > 0) {
    out += BudgetText(report.budget_bytes, BudgetEvaluator(report).Answer(
                                               bindings, QuestionOf(report)));
  }
  if (tr.paged) {
    out += "Paged optimizer states (host, not in the peak): " +
           HumanAndExact(tr.paged_opt_bytes, Unit::kBytes) + "\n";
  }
  if (tr.mode == StepMode::kInfer) {
    out += "Saved by autograd: none (the forward runs under no_grad)\n";
  } else {
    out += "Saved by autograd (ACT at end of forward): " +
           std::string(tr.act_lower_bound ? ">= " : "") +
           HumanAndExact(tr.saved_bytes, bindings, Unit::kBytes) + "\n";
    if (tr.act_lower_bound) {
      out +=
          "NB: ACT and the peak are lower bounds: what ops without rules save "
          "for backward is unknown.\n";
    }
  }
  out +=
      "NB: \"Max\" is each category's own maximum over the step; the maxima "
      "need not coincide.\n";
  if (shortened)
    out +=
        "NB: long symbolic maxima are shortened to their first terms; the JSON "
        "report has them whole.\n";
  return out;
}

}  // namespace torchcost::report
