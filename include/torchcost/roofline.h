// The roofline time of a step on a GPU: each node takes
// max(FLOPs / peak of its dtype, bytes / bandwidth) / efficiency of its class;
// modules, op types and phases sum their nodes (docs/calibration.md).
#ifndef TORCHCOST_ROOFLINE_H_
#define TORCHCOST_ROOFLINE_H_

#include <cstdint>
#include <string>

#include "torchcost/analysis.h"
#include "torchcost/gpu.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost {

// Returns the time of the step `report` analysed (with
// AnalysisOptions::moved_bytes) on `gpu` under `bindings`. Errors: a symbol of
// a node's FLOPs or bytes left unbound (named), a value past 128 bits, a
// report without moved bytes (Report::moved_bytes).
Result<TimeReport> EstimateTime(const ir::Graph& graph, const Report& report,
                                const GpuSpec& gpu,
                                const sym::Bindings& bindings);

// Returns EstimateTime on `on.gpu`, its source named as `on` names it (a
// calibration file's is TimeReport::calibrated).
Result<TimeReport> EstimateTime(const ir::Graph& graph, const Report& report,
                                const TimedOn& on,
                                const sym::Bindings& bindings);

// Returns the forward seconds of the analysis `report` (as EstimateTime gives
// them: each node's, overhead included, or the host's where GpuSpec::host
// makes it the slower) summed over the forwards that bind `symbol` to first,
// first + 1, ..., last, the other symbols bound by `bindings`: a generation's
// decode steps over its growing cache, in as many evaluations as the costs
// have kinks (and, with the host, log2(last - first) more), not one per step.
// NB: with the host, the forward's kernels are those at `last` for every
// step. 0 if first > last. Errors: as EstimateTime's.
Result<double> SumForwardSeconds(const ir::Graph& graph, const Report& report,
                                 const GpuSpec& gpu,
                                 const sym::Bindings& bindings,
                                 const std::string& symbol, int64_t first,
                                 int64_t last);

// Returns the roofline seconds of one kernel: max(flops / peak, bytes /
// bandwidth).
double RooflineSeconds(double flops, double bytes, double peak_flops,
                       double bandwidth);

}  // namespace torchcost

#endif  // TORCHCOST_ROOFLINE_H_
