// Renderers of an analysis Report: a text report for people, a versioned JSON
// document for programs (docs/json-schema.md) and an SVG memory timeline.
#ifndef TORCHCOST_REPORT_H_
#define TORCHCOST_REPORT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost {

// What the text report shows and the symbol values it uses.
struct TextOptions {
  // Deepest module depth shown in the module tree (the root is depth 0); -1
  // shows all.
  int depth = -1;
  // Number of module types listed in each top-k line; 0 omits the top-k lines.
  int top_k = 3;
  // Module depth aggregated by the top-k lines; -1 means the deepest depth of
  // the model.
  int top_depth = -1;
  // Values of symbols: symbolic costs are evaluated under them where all their
  // symbols are bound.
  sym::Bindings bindings;
  // The step's peak under `bindings` (EvaluatePeak with its category maxima),
  // if the caller has evaluated it already; nullptr evaluates it here.
  const PeakInfo* peak = nullptr;
};

// Returns the text report: header, module tree, top-k module types, operator
// table, totals, ops without rules, assumptions and diagnostics.
// `report` must come from analysing `graph`; its expressions' Context must
// still be alive.
std::string RenderText(const ir::Graph& graph, const Report& report,
                       const TextOptions& options);

// Returns the JSON report (schema "torchcost.report", version 1),
// pretty-printed and newline-terminated. Symbolic costs carry their canonical
// text and their value under `bindings` (null if unbound). `peak`, if given,
// is the step's peak under `bindings` as TextOptions::peak.
std::string RenderJson(const ir::Graph& graph, const Report& report,
                       const sym::Bindings& bindings,
                       const PeakInfo* peak = nullptr);

// Returns the symbols of the memory timeline that `bindings` leaves unbound,
// sorted; RenderTimelineSvg needs none.
std::vector<std::string> UnboundTimelineSymbols(const Report& report,
                                                const sym::Bindings& bindings);

// Returns an SVG picture (900x420) of the step's live bytes per event, stacked
// by memory category, with the phases and the peak marked; if a timeline value
// does not evaluate under `bindings`, the picture says so instead.
std::string RenderTimelineSvg(const ir::Graph& graph, const Report& report,
                              const sym::Bindings& bindings);

}  // namespace torchcost

namespace torchcost {

// Values one symbol takes in a sweep.
struct SweepSpec {
  std::string symbol;
  std::vector<int64_t> values;
};

// Parses "S=512:8192:x2" (start, stop inclusive, step: "xK" multiplies, "+K" or
// "K" adds) or "B=1,2,4,8" (a list).
Result<SweepSpec> ParseSweep(std::string_view text);

// Returns a table of FLOPs and peak memory (with its breakdown) at every point
// of the sweeps, from one analysis; with `time`, each point's step time,
// items (tokens or samples) per second and MFU (EstimateTime: the report
// analysed with moved bytes). Errors name a symbol left unbound.
Result<std::string> RenderSweepText(const ir::Graph& graph,
                                    const Report& report,
                                    const std::vector<SweepSpec>& sweeps,
                                    const sym::Bindings& base,
                                    const TimedOn* time = nullptr);

// Returns the same as a JSON document (schema "torchcost.sweep", version 1).
Result<std::string> RenderSweepJson(const ir::Graph& graph,
                                    const Report& report,
                                    const std::vector<SweepSpec>& sweeps,
                                    const sym::Bindings& base,
                                    const TimedOn* time = nullptr);

}  // namespace torchcost

#endif  // TORCHCOST_REPORT_H_
