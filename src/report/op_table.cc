// The operator table, like the PyTorch profiler's key_averages().table():
// one row per op type, sorted by FLOPs descending.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "report/format.h"
#include "report/table.h"
#include "report/text_sections.h"

namespace torchcost::report {

std::string RenderOpTable(const Report& report, const sym::Bindings& bindings) {
  std::vector<const OpStats*> ops;
  for (const OpStats& op : report.ops) ops.push_back(&op);
  // Ties (all the zero-cost ops) by count descending, then by name.
  std::stable_sort(ops.begin(), ops.end(),
                   [&](const OpStats* a, const OpStats* b) {
                     const long double fa = RankValue(a->flops, bindings),
                                       fb = RankValue(b->flops, bindings);
                     if (fa != fb) return fa > fb;
                     if (a->count != b->count) return a->count > b->count;
                     return a->op < b->op;
                   });
  using A = Table::Align;
  const TimeReport& t = report.time;
  std::vector<Table::Column> columns = {
      {"Op", A::kLeft},       {"Count", A::kRight},
      {"MACs", A::kRight},    {"FLOPs", A::kRight},
      {"% FLOPs", A::kRight}, {"Transcendentals", A::kRight}};
  // With a GPU: each op type's predicted forward + backward time, as the
  // profiler's self time, and its share of the micro-batch's.
  double total = 0;
  if (t.present) {
    columns.push_back({"Time", A::kRight});
    columns.push_back({"% time", A::kRight});
    for (double s : t.op_seconds) total += s;
  }
  Table table(columns);
  for (const OpStats* op : ops) {
    std::vector<std::string> row = {
        op->op,
        std::to_string(op->count),
        HumanExpr(op->macs, bindings, Unit::kMacs),
        HumanExpr(op->flops, bindings, Unit::kFlops),
        PercentOf(op->flops, report.flops, bindings),
        HumanExpr(op->transcendentals, bindings, Unit::kCount)};
    if (t.present) {
      const size_t i = op - report.ops.data();
      const double s = i < t.op_seconds.size() ? t.op_seconds[i] : 0;
      row.push_back(SecondsText(s));
      row.push_back(total > 0 ? fmt::format("{:.2f}%", 100 * s / total) : "-");
    }
    table.AddRow(row);
  }
  if (t.present) {
    return "Operators (forward FLOPs; Time: forward + backward, " +
           TimeLabel(t) + ")\n" + table.Render();
  }
  return "Operators (forward, by FLOPs)\n" + table.Render();
}

}  // namespace torchcost::report
