// Optimizer replay: the optimizer's states held through the step, its
// update's temporaries (the single-tensor loop, the foreach step, GaLore's
// update, per parameter or per layer in backward) and GradScaler's tensors,
// replayed on the timeline from their models' memory events.
#ifndef TORCHCOST_SRC_MEMORY_OPTIMIZER_REPLAY_H_
#define TORCHCOST_SRC_MEMORY_OPTIMIZER_REPLAY_H_

#include <vector>

#include "memory/state.h"
#include "training/memory_event.h"

namespace torchcost::memory {

// Returns the optimizer states' bytes on the device for the trainable
// parameters (and the grad scaler's state); sets tr.paged_opt_bytes. If
// `pieces` is given, appends the bytes of each state tensor (they sum to the
// result); NB: a state whose tensors are not all param-sized (Adafactor's,
// 8-bit Adam's, GaLore's, paged) is one piece per parameter.
// NB: paged states are on the host (worst case): outside the timeline.
int64_t OptimizerStateBytes(StepState* state,
                            std::vector<int64_t>* pieces = nullptr);

// Replays a GradScaler sequence (training/grad_scaler.h); its points are of
// `phase`.
void ReplayScaler(const std::vector<training::Event>& events, StepPhase phase,
                  StepState* state);

// Replays one parameter's GaLore update (training/galore_model.h); the slots,
// the loop's local names, persist from one parameter to the next.
// NB: every temporary is a constant and nothing else changes meanwhile, so the
// update is kept as one TEMP amount (OptimizerState::update_temp) set at its
// largest moment, the only one that can be the peak, and then to what the
// slots still hold: two symbolic additions per parameter, not one per tensor.
void ReplayUpdate(size_t param, StepPhase phase, StepState* state);

// The per-layer weight update: each parameter whose gradient was just
// accumulated is stepped by its own optimizer (so step() returns and drops
// its locals), then its gradient is freed (p.grad = None; the engine's
// reference to it goes when the hook returns).
void StepAccumulated(StepState* state);

// Replays the optimizer's step after backward (and the scaler's unscale and
// update around it). NB: the single-tensor loop runs parameter by parameter
// (optimizer_model.h's UpdateTransients): e.g. Adam computes denom =
// (exp_avg_sq.sqrt() / c).add_(eps), sqrt and quotient both alive, then the
// sqrt dies; the previous parameter's denom dies only when the name is rebound
// after that, and the last one when step() returns.
void RunOptimizer(StepState* state);

}  // namespace torchcost::memory

#endif  // TORCHCOST_SRC_MEMORY_OPTIMIZER_REPLAY_H_
