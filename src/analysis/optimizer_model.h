// What an optimizer's step costs per parameter tensor: state bytes, FLOPs,
// and the transient tensors the step allocates (PyTorch 1.13, foreach=False).
#ifndef TORCHCOST_SRC_ANALYSIS_OPTIMIZER_MODEL_H_
#define TORCHCOST_SRC_ANALYSIS_OPTIMIZER_MODEL_H_

#include <cstdint>

#include "torchcost/training.h"

namespace torchcost::analysis {

// Per-parameter-tensor costs of one optimizer.
struct OptimizerModel {
  int64_t state_tensors_per_element = 0;  // Param-sized state tensors (momentum, exp_avg, exp_avg_sq).
  int64_t state_scalar_bytes = 0;         // Bytes of per-tensor scalar state (Adam's float32 `step`).
  int64_t flops_per_element = 0;
  int64_t transcendentals_per_element = 0;
  int64_t transient_tensors = 0;          // Param-sized temporaries alive at once during the update.
};

// Returns the model of `kind`.
OptimizerModel ModelOf(OptimizerKind kind);

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_OPTIMIZER_MODEL_H_
