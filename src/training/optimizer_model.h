// What an optimizer's step costs per parameter tensor: state bytes, FLOPs,
// and the transient tensors the step allocates (PyTorch 1.13, foreach=False;
// for optimizers torch 1.13 lacks, the reference implementation named in
// optimizer_model.cc, derived from its paper's update rule).
#ifndef TORCHCOST_SRC_ANALYSIS_OPTIMIZER_MODEL_H_
#define TORCHCOST_SRC_ANALYSIS_OPTIMIZER_MODEL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/training.h"

namespace torchcost::training {

// Per-element costs of one optimizer.
struct OptimizerModel {
  // Param-sized state tensors (momentum, exp_avg, exp_avg_sq) and bytes of
  // per-tensor scalar state (Adam's float32 `step`). NB: only for optimizers
  // whose state is param-sized in the param's dtype; Adafactor's and 8-bit
  // Adam's depend on the shape: StateBytes() is the general answer.
  int64_t state_tensors_per_element = 0;
  int64_t state_scalar_bytes = 0;
  // Per element of a trainable parameter (Adafactor: its factored, 2-D+
  // case; the O(rows + cols) work on the statistics is left out).
  int64_t flops_per_element = 0;
  int64_t transcendentals_per_element = 0;
  // Param-sized temporaries alive at once during the update.
  int64_t transient_tensors = 0;
};

// The dtype a parameter's optimizer states and update temporaries are in:
// `state_dtype` if set (not kUnknown); else float32 for a float16/bfloat16
// parameter with master weights; else the parameter's (torch's zeros_like(p)).
DType StateDtype(DType param, DType state_dtype, bool master_weights);

// Returns the model of `kind`.
OptimizerModel ModelOf(OptimizerKind kind);

// Bytes of the state `kind` keeps for one trainable parameter of this shape
// and dtype after a step (tensors only: a Python-number `step` is 0 bytes).
int64_t StateBytes(OptimizerKind kind, const std::vector<int64_t>& shape,
                   DType dtype);

// Bytes of state shared by all parameters, stored once (8-bit Adam's two
// quantization code books), given the trainable parameters' shapes.
int64_t SharedStateBytes(OptimizerKind kind,
                         const std::vector<std::vector<int64_t>>& shapes);

// bitsandbytes' paged optimizers page a state buffer only for tensors of at
// least 1e5 elements (Optimizer8bit.get_state_buffer).
inline constexpr int64_t kPagedMinElements = 100000;

// The state bytes of a paged optimizer (bitsandbytes' Paged*) for one
// parameter: on the device and paged to the host.
struct PagedStateBytes {
  int64_t device = 0;
  int64_t host = 0;
};

// Returns the paged states of `kind` (adam, adamw: bitsandbytes' 32-bit
// float32 states; adam8bit) for one trainable parameter of this shape.
PagedStateBytes PagedStatesOf(OptimizerKind kind,
                              const std::vector<int64_t>& shape);

// The temporaries of one parameter's update, in the single-tensor loop.
struct UpdateTransients {
  // Bytes of the update's temporaries alive at each moment that can be a
  // maximum, in order. The previous parameter's `carried` bytes are alive at
  // the first moment too (Python rebinds a local name only after its new value
  // is computed) and die right after it.
  std::vector<int64_t> moments;
  // Bytes still bound to a local name when the update is done; they die when
  // the next parameter rebinds the name, or when step() returns.
  int64_t carried = 0;
};

// Returns the temporaries of `kind`'s update of one parameter.
UpdateTransients TransientsOf(OptimizerKind kind,
                              const std::vector<int64_t>& shape, DType dtype);

// The temporaries of the foreach step (_multi_tensor_*) over all trainable
// parameters, `total` bytes in all, in torch `torch_version` ("1.13" or "2",
// TrainingOptions::torch_version): the bytes alive at each moment that can be
// a maximum, each a whole number of lists (k * total); nullopt if torch has no
// foreach implementation.
std::optional<std::vector<int64_t>> ForeachMoments(
    OptimizerKind kind, int64_t total, std::string_view torch_version);

// multi_tensor_apply's limits (torch 1.13, aten/src/ATen/native/cuda/
// MultiTensorApply.cuh): elements per chunk (one thread block each), and per
// launch at most kMultiTensorMaxBlocks chunks and, by depth (the tensor lists
// an op walks, 1 to 5), kMultiTensorMaxTensors[depth - 1] tensors
// (kMultiTensorMaxTensorsScalarList when it takes a list of scalars).
inline constexpr int64_t kMultiTensorChunk = 65536;
inline constexpr int64_t kMultiTensorMaxBlocks = 320;
inline constexpr int64_t kMultiTensorMaxTensors[5] = {110, 64, 48, 36, 30};
inline constexpr int64_t kMultiTensorMaxTensorsScalarList[5] = {96, 64, 48, 36,
                                                                30};

// Returns the kernels one multi-tensor op launches over tensors of `numels`
// elements, as multi_tensor_apply splits them; `depth` in 1..5.
int64_t MultiTensorLaunches(const std::vector<int64_t>& numels, int depth,
                            bool scalar_list);

// Returns the CUDA kernels `kind`'s step launches for trainable tensors of
// `numels` elements: the single-tensor loop (foreach false) or the
// _multi_tensor_* step (foreach true) of torch `torch_version` ("1.13" or
// "2"), with the defaults (no weight decay but AdamW's, no amsgrad, maximize,
// capturable), after the first step (the states exist). Derivations in
// optimizer_model.cc.
int64_t OptimizerKernels(OptimizerKind kind, bool foreach,
                         const std::vector<int64_t>& numels,
                         std::string_view torch_version);

// Returns the tensor lists of `kind`'s fused step (torch/optim/*.py
// _fused_*): Adam(W) 4 (params, grads, exp_avgs, exp_avg_sqs), SGD 2 (3 with
// momentum buffers), Adagrad 3 (with state_sums); 0 if it has none
// (HasFused).
int FusedListDepth(OptimizerKind kind);

// Returns the CUDA kernels `kind`'s fused step (HasFused) launches for
// tensors of `numels` elements: one multi-tensor op over params, grads and
// the states. NB: its step counts, a list of device tensors, are not counted
// in the launch limits.
int64_t FusedOptimizerKernels(OptimizerKind kind,
                              const std::vector<int64_t>& numels);

// 8-bit Adam: elements per block with its own float32 absmax, and the size
// below which a parameter keeps float32 states (see optimizer_model.cc).
inline constexpr int64_t kAdam8bitBlock = 2048;
inline constexpr int64_t kAdam8bitMinSize = 4096;

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_ANALYSIS_OPTIMIZER_MODEL_H_
