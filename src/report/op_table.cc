// The operator table, like the PyTorch profiler's key_averages().table():
// one row per op type, sorted by FLOPs descending.
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
  Table table({{"Op", A::kLeft},
               {"Count", A::kRight},
               {"MACs", A::kRight},
               {"FLOPs", A::kRight},
               {"% FLOPs", A::kRight},
               {"Transcendentals", A::kRight}});
  for (const OpStats* op : ops) {
    table.AddRow({op->op, std::to_string(op->count),
                  HumanExpr(op->macs, bindings, Unit::kMacs),
                  HumanExpr(op->flops, bindings, Unit::kFlops),
                  PercentOf(op->flops, report.flops, bindings),
                  HumanExpr(op->transcendentals, bindings, Unit::kCount)});
  }
  return "Operators (forward, by FLOPs)\n" + table.Render();
}

}  // namespace torchcost::report
