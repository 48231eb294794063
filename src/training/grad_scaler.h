// The memory of torch.cuda.amp.GradScaler (float16 autocast training), as
// PyTorch 1.13's grad_scaler.py allocates it: its state, the scaled loss and
// the in-place unscale of the gradients, as sequences of small allocations
// (memory events; their tensors are the scaler's, numbered in grad_scaler.cc).
#ifndef TORCHCOST_SRC_ANALYSIS_GRAD_SCALER_H_
#define TORCHCOST_SRC_ANALYSIS_GRAD_SCALER_H_

#include <cstdint>
#include <vector>

#include "torchcost/training.h"
#include "training/memory_event.h"

namespace torchcost::training {

// The scaler's state between steps: _scale (float32 [1]) and _growth_tracker
// (int32 [1]). NB: counted as OPT: like optimizer state, it persists across
// steps and only the optimizer side (scaler.step/update) reads it.
inline constexpr int64_t kScalerStateBytes =
    /*_scale*/ 4 + /*_growth_tracker*/ 4;

// Start of backward, `scaler.scale(loss).backward()`: the scaled loss (loss *
// _scale: float32 [1], OTH, kept by the caller) and, in backward, the root
// gradient and MulBackward0's gradient reduced to the loss's shape. The loss
// gradient (the simulator's own) follows; then ScaledLossGradDone.
std::vector<Event> ScaledLossBackward();
// After the loss's gradient exists: MulBackward0's float32 result is freed
// (cast to the loss's dtype, or handed on as it).
std::vector<Event> ScaledLossGradDone();
// End of backward: the root gradient is freed.
std::vector<Event> ScaledBackwardEnd();
// Before the optimizer's step, scaler.unscale_: inv_scale (float64 copy,
// reciprocal, float32 copy) and found_inf (float32 [1]); the gradients are
// unscaled in place (_amp_foreach_non_finite_check_and_unscale_).
std::vector<Event> Unscale();
// After the step, scaler.update: found_inf is released (_scale updated in
// place).
std::vector<Event> Update();

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_ANALYSIS_GRAD_SCALER_H_
