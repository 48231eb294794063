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
                 const sym::Bindings& b, bool lower_bound = false) {
  return Pad(label, label.size() > 19 ? label.size() + 1 : 20,
             Table::Align::kLeft) +
         (lower_bound ? ">= " : "") + HumanAndExact(flops, b, Unit::kFlops) +
         "\n";
}

}  // namespace

std::string RenderStepFlops(const Report& report,
                            const sym::Bindings& bindings) {
  const TrainingReport& tr = report.training;
  if (tr.mode == StepMode::kInfer) {
    return "FLOPs per step (infer: the forward only)\n" +
           Line("  Forward:", tr.flops_forward, bindings, report.lower_bound) +
           Line("  Step:", tr.flops_step, bindings, report.lower_bound);
  }
  const std::string per = tr.accumulate > 1 ? " (per micro-batch)" : "";
  std::string head =
      "FLOPs per step (train with " + std::string(OptimizerName(tr.optimizer));
  if (tr.accumulate > 1)
    head += "; " + std::to_string(tr.accumulate) + " micro-batches per step";
  if (!tr.set_to_none) head += "; zero_grad keeps the gradients";
  std::string recompute;
  if (!tr.checkpoint.empty()) {
    int recomputed = 0;
    for (const CheckpointSegment& s : tr.checkpoint_segments)
      recomputed += s.recomputed ? 1 : 0;
    head += tr.checkpoint == "selective"
                ? "; checkpoint selective: " + std::to_string(recomputed) +
                      " attention cores"
                : "; checkpoint " + tr.checkpoint + ": " +
                      std::to_string(recomputed) + " segments of " +
                      std::to_string(tr.checkpoint_group) +
                      (tr.checkpoint_group == 1 ? " call" : " calls");
    recompute = Line("    recompute:", tr.flops_recompute, bindings);
  }
  const bool lb = tr.flops_lower_bound;
  return head + ")\n" +
         Line("  Forward" + per + ":", tr.flops_forward, bindings,
              report.lower_bound) +
         Line("  Backward" + per + ":", tr.flops_backward, bindings, lb) +
         recompute + Line("  Optimizer:", tr.flops_optimizer, bindings) +
         Line("  Step:", tr.flops_step, bindings, lb);
}

}  // namespace torchcost::report
