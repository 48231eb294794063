// Sweeps: one analysis evaluated at many values of its symbols (`--sweep
// S=512:8192:x2`), as a table of FLOPs and peak memory.
#ifndef TORCHCOST_SRC_REPORT_SWEEP_H_
#define TORCHCOST_SRC_REPORT_SWEEP_H_

#include <optional>
#include <string>
#include <vector>

#include "torchcost/report.h"

namespace torchcost::report {

// One evaluated point of a sweep.
struct SweepRow {
  // The swept symbols' values (plus --set ones).
  sym::Bindings bindings;
  __int128 flops_forward = 0, flops_backward = 0, flops_step = 0;
  __int128 peak = 0;
  int peak_point = -1;  // Index into the training timeline.
  std::array<__int128, kNumMemCategories> at_peak{};
  // With a GPU (EvaluateSweep's `time`): the step's time, rate and MFU at this
  // point; -1 without.
  StepRate step_rate;
  // With the CUDA allocator model: the reserved peak plus the context; -1
  // without. NB: peak, peak_point and at_peak are then the allocated blocks'
  // (EvaluateAllocator), as in the report.
  int64_t device_peak = -1;
  // With Report::budget_bytes: whether the point fits (BudgetAnswer::fits).
  std::optional<bool> fits;
};

// Evaluates `report` (of `graph`) at every combination of the sweeps' values
// (the first sweep varies slowest), timing each on `time` if given. Errors if
// a symbol stays unbound.
Result<std::vector<SweepRow>> EvaluateSweep(
    const ir::Graph& graph, const Report& report,
    const std::vector<SweepSpec>& sweeps, const sym::Bindings& base,
    const TimedOn* time);

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_SWEEP_H_
