#include "training/grad_scaler.h"

namespace torchcost::training {
namespace {

// The scaler's tensors within a step.
enum Tensor : int {
  // loss * _scale: float32 [1] (a 0-dim loss broadcast with a [1] tensor).
  kScaledLoss = 0,
  kRootGrad,    // ones_like(scaled loss), float32 [1], until backward ends.
  kProduct,     // MulBackward0: grad * _scale, float32 [1].
  kSumTo,       // ... summed to the loss's shape [], float32.
  kDouble,      // unscale_: _scale.double(), float64 [1].
  kReciprocal,  // .reciprocal(), float64 [1].
  kInvScale,    // .float(), float32 [1], until unscale_ returns.
  kFoundInf,    // torch.full((1,), 0.0), float32, until update().
};

Event Alloc(int t, int64_t bytes, MemCategory c = MemCategory::kTemp) {
  return AllocEvent(t, bytes, c);
}
Event Free(int t) { return FreeEvent(t); }
Event Point() { return PointEvent(); }

}  // namespace

std::vector<Event> ScaledLossBackward() {
  return {Alloc(kScaledLoss, 4, MemCategory::kOther),
          Alloc(kRootGrad, 4),
          Alloc(kProduct, 4),
          Alloc(kSumTo, 4),
          Point(),
          Free(kProduct)};
}

std::vector<Event> ScaledLossGradDone() { return {Free(kSumTo)}; }

std::vector<Event> ScaledBackwardEnd() { return {Free(kRootGrad), Point()}; }

std::vector<Event> Unscale() {
  return {Alloc(kDouble, 8),
          Alloc(kReciprocal, 8),
          Point(),
          Free(kDouble),
          Alloc(kInvScale, 4),
          Free(kReciprocal),
          Alloc(kFoundInf, 4),
          Point(),
          Free(kInvScale)};
}

std::vector<Event> Update() { return {Free(kFoundInf), Point()}; }

}  // namespace torchcost::training
