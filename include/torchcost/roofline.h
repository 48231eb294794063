// The roofline time of a step on a GPU: each node takes
// max(FLOPs / peak of its dtype, bytes / bandwidth) / efficiency of its class;
// modules, op types and phases sum their nodes (docs/calibration.md).
#ifndef TORCHCOST_ROOFLINE_H_
#define TORCHCOST_ROOFLINE_H_

#include "torchcost/analysis.h"
#include "torchcost/gpu.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"
#include "torchcost/time.h"

namespace torchcost {

// Returns the time of the step `report` analysed (with
// AnalysisOptions::moved_bytes) on `gpu` under `bindings`. Errors: a symbol of
// a node's FLOPs or bytes left unbound (named), a value past 128 bits.
Result<TimeReport> EstimateTime(const ir::Graph& graph, const Report& report,
                                const GpuSpec& gpu,
                                const sym::Bindings& bindings);

// Returns the roofline seconds of one kernel: max(flops / peak, bytes /
// bandwidth).
double RooflineSeconds(double flops, double bytes, double peak_flops,
                       double bandwidth);

}  // namespace torchcost

#endif  // TORCHCOST_ROOFLINE_H_
