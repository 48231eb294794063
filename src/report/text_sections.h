// The sections of the text report, each rendered on its own.
#ifndef TORCHCOST_SRC_REPORT_TEXT_SECTIONS_H_
#define TORCHCOST_SRC_REPORT_TEXT_SECTIONS_H_

#include <string>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/graph.h"
#include "torchcost/report.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost::report {

// Returns the stats of `scope`, or nullptr if the report has none for it.
const ModuleStats* FindModuleStats(const Report& report, int scope);

// Returns the module tree in DeepSpeed's style, one aligned line per module
// down to options.depth.
std::string RenderModuleTree(const ir::Graph& graph, const Report& report,
                             const TextOptions& options);

// Returns the "Top K modules by FLOPs / by params at depth D" lines, aggregated
// by module type.
std::string RenderTopModules(const ir::Graph& graph, const Report& report,
                             const TextOptions& options);

// Returns the operator table (op, count, MACs, FLOPs, % of FLOPs,
// transcendentals) by FLOPs descending.
std::string RenderOpTable(const Report& report, const sym::Bindings& bindings);

// Returns the "FLOPs per step" block: forward, backward, optimizer and step
// FLOPs (forward and step only in inference).
std::string RenderStepFlops(const Report& report,
                            const sym::Bindings& bindings);

// Returns the "Memory" block: MemTracker's categories at the peak and at their
// own maxima, the peak and when it occurs, and the bytes autograd saves.
// `peak`, if given, is EvaluatePeak(report.training, bindings) already
// evaluated.
std::string RenderMemory(const ir::Graph& graph, const Report& report,
                         const sym::Bindings& bindings,
                         const PeakInfo* peak = nullptr);

// Returns the "Time" block of Report::time: the step, its phases, MFU and
// throughput, marked as predicted ("roofline on NAME"); "" without a GPU.
std::string RenderTime(const Report& report);

// Returns how the time columns are marked: "predicted: roofline on NAME", or
// "calibrated (FILE)" from a calibration file.
std::string TimeLabel(const TimeReport& t);
// The same from a source's name (TimedOn::source): a calibration's name as it
// is, else "predicted: " before it.
std::string TimeSourceLabel(const std::string& source);

// Returns the headers of a timed step's columns: "Step time", the unit's rate
// ("Tokens/s" for "tokens"; "Items/s" if empty) and "MFU".
std::vector<std::string> StepTimeHeaders(const std::string& unit);
// Returns the cells under StepTimeHeaders: seconds, rate, MFU in percent.
// NB: where a collective is not timed (StepRate::communication_untimed), the
// step time is marked ">= " and the rate and MFU "<= ".
std::vector<std::string> StepTimeCells(const StepRate& rate);
// Returns the mark of a time (`lower`: ">= ") or a rate ("<= ") that leaves
// collectives out where `untimed` (why they are not timed) is not empty; ""
// where it is.
std::string BoundMark(const std::string& untimed, bool lower);
// Returns the line under a table that says why the times of `what` ("full,
// lora", "every point") leave collectives out, or "" if `untimed` is empty.
std::string UntimedCommunicationNote(const std::string& untimed,
                                     const std::string& what);

// Returns a rate (items per second) with four significant digits, whole
// numbers from 1000 on ("65330", not "6.533e+04"); "-" if negative (absent).
std::string RateText(double per_second);

// Returns seconds with a unit: "1.23 s", "45.6 ms", "789 us", "12.3 ns".
std::string SecondsText(double seconds);

// Returns FLOP/s in TFLOP/s with 2 decimals ("123.45"), "-" if `seconds` is 0.
std::string TflopsText(double flops, double seconds);

// Returns when timeline point `point` happens: "backward at node %x
// (aten::relu_, module layer1.0.relu)", or "the optimizer step" for a point
// without a node.
std::string MomentText(const ir::Graph& graph, const TrainingReport& training,
                       int point);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_TEXT_SECTIONS_H_
