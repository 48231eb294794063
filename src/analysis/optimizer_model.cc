#include "analysis/optimizer_model.h"

namespace torchcost::analysis {

OptimizerModel ModelOf(OptimizerKind kind) {
  OptimizerModel m;
  switch (kind) {
    case OptimizerKind::kSgd:
      // p.add_(g, alpha=-lr): one multiply and one add per element, in place.
      m.flops_per_element = 2;
      break;
    case OptimizerKind::kSgdMomentum:
      // buf.mul_(m).add_(g) (2), p.add_(buf, alpha=-lr) (2); buf is the state.
      m.state_tensors_per_element = 1;
      m.flops_per_element = 4;
      break;
    case OptimizerKind::kAdam:
    case OptimizerKind::kAdamW:
      // exp_avg.mul_(b1).add_(g, alpha=1-b1): 3; exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2): 4;
      // denom = (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps): 2 + 1 sqrt; p.addcdiv_(exp_avg, denom, -step): 3.
      // AdamW first decays the weights in place, p.mul_(1 - lr*wd): 1 more.
      // NB: in torch 1.13 `step` is a float32 tensor per parameter tensor (4 bytes of state).
      m.state_tensors_per_element = 2;
      m.state_scalar_bytes = 4;
      m.flops_per_element = kind == OptimizerKind::kAdamW ? 13 : 12;
      m.transcendentals_per_element = 1;
      // exp_avg_sq.sqrt() and its quotient are alive together before the sqrt dies.
      m.transient_tensors = 2;
      break;
  }
  return m;
}

}  // namespace torchcost::analysis
