// The "FLOPs per step" block: what one training step (or one inference
// forward) computes, phase by phase.
#include <string>

#include "report/format.h"
#include "report/table.h"
#include "report/text_sections.h"
#include "torchcost/training.h"

namespace torchcost::report {
namespace {

std::string Line(const std::string& label, const sym::Expr& flops,
                 const sym::Bindings& b) {
  return Pad(label, 20, Table::Align::kLeft) +
         HumanAndExact(flops, b, Unit::kFlops) + "\n";
}

}  // namespace

std::string RenderStepFlops(const Report& report,
                            const sym::Bindings& bindings) {
  const TrainingReport& tr = report.training;
  if (tr.mode == StepMode::kInfer) {
    return "FLOPs per step (infer: the forward only)\n" +
           Line("  Forward:", tr.flops_forward, bindings) +
           Line("  Step:", tr.flops_step, bindings);
  }
  return "FLOPs per step (train with " +
         std::string(OptimizerName(tr.optimizer)) + ")\n" +
         Line("  Forward:", tr.flops_forward, bindings) +
         Line("  Backward:", tr.flops_backward, bindings) +
         Line("  Optimizer:", tr.flops_optimizer, bindings) +
         Line("  Step:", tr.flops_step, bindings);
}

}  // namespace torchcost::report
