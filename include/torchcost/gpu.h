// GPUs by their datasheet figures (gpus/gpus.yaml, compiled into the binary):
// dense peak FLOP/s per dtype, memory bandwidth and size, and the achieved
// fraction of peak per op class that the roofline time divides by.
#ifndef TORCHCOST_GPU_H_
#define TORCHCOST_GPU_H_

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/op_class.h"
#include "torchcost/status.h"
#include "torchcost/training.h"

namespace torchcost {

// The host's seconds to launch a step's kernels, by what launches them
// (PyTorch's eager mode driven from Python); all 0: the host not modelled.
// NB: the host queues kernels ahead of the device, so a phase takes the
// larger of its device and host times, not their sum (docs/calibration.md).
struct HostCost {
  double forward_kernel = 0;    // Per forward kernel.
  double backward_kernel = 0;   // Per backward kernel (the autograd engine's).
  double optimizer_kernel = 0;  // Per kernel of the optimizer's step.
  double optimizer_tensor = 0;  // Per parameter tensor the step updates.
  // Returns true if any cost is positive.
  bool modelled() const {
    return forward_kernel > 0 || backward_kernel > 0 || optimizer_kernel > 0 ||
           optimizer_tensor > 0;
  }
  // Returns the host seconds of a phase launching `kernels` (the optimizer's
  // updating `tensors`): kernels x its cost per kernel, + tensors x
  // optimizer_tensor in the optimizer; 0 where it launches none.
  double Seconds(StepPhase phase, double kernels, double tensors = 0) const {
    if (!(kernels > 0)) return 0;
    switch (phase) {
      case StepPhase::kOptimizer:
        return kernels * optimizer_kernel + tensors * optimizer_tensor;
      case StepPhase::kBackward:
        return kernels * backward_kernel;
      default:
        return kernels * forward_kernel;
    }
  }
};

// The link between the GPUs of a node, as NCCL's tuner tells them apart.
enum class LinkType { kNvlink, kPcie };

// How one GPU reaches the other data-parallel ranks, for the collectives'
// time; bandwidths in bytes per second per direction, 0 where unknown.
struct Interconnect {
  double link = 0;  // Within a node: the GPU table's link_gbs.
  // NB: NCCL takes PCIe's per-step latencies on cards, and runs its LL128
  // protocol over NVLink only.
  LinkType link_type = LinkType::kNvlink;
  // The GPU's CUDA compute capability, major * 10 + minor (90: Hopper), by
  // which NCCL caps its LL protocol's bandwidth within a node; 0: unknown (no
  // cap).
  int compute_capability = 0;
  double network = 0;  // Between nodes, per GPU (its NIC): the step's option.
  int node_gpus = 8;   // GPUs per node: the step's option.
};

// Parses "nvlink", "pcie".
Result<LinkType> ParseLinkType(std::string_view text);
// Returns the name ParseLinkType reads.
std::string_view LinkTypeName(LinkType t);

// One GPU. Rates are dense (no structured sparsity); 0 means the GPU has no
// such rate.
struct GpuSpec {
  std::string name;  // "A100-80GB-SXM".
  std::vector<std::string>
      aliases;           // Other names FindGpu accepts ("a100-80gb").
  std::string source;    // The datasheet: title and URL.
  double memory_gb = 0;  // Device memory, as the datasheet prints it.
  double bandwidth = 0;  // Memory bandwidth, bytes per second.
  // Peak FLOP/s (int8: op/s). fp32 is the vector (CUDA-core) rate;
  // fp32_matrix the matrix-core float32 rate (AMD CDNA), 0 elsewhere.
  double fp32 = 0, fp32_matrix = 0, tf32 = 0, fp16 = 0, bf16 = 0, fp8 = 0,
         int8 = 0;
  // Achieved fraction of peak per OpClass, in (0, 1]: 1 is the pure roofline;
  // a calibration fits the others.
  std::array<double, kNumOpClasses> efficiency = kPureRoofline;
  // Device seconds each kernel takes beyond its roofline (launch latency, the
  // gaps between kernels), >= 0. NB: 0, not modelled, unless the table or a
  // calibration gives it; on a CPU, where the host is the device, it is the
  // whole dispatch cost.
  double kernel_overhead = 0;
  // The host's launch costs; a calibration on a GPU fits them.
  HostCost host;
  // NB: the link is the table's; the network and the node size are the
  // step's (StepConfig::network_gbs, node_gpus).
  Interconnect interconnect;
};

// Parses a GPU table (the format of gpus/gpus.yaml); `file` names it in
// errors ("file:line:col: message").
Result<std::vector<GpuSpec>> ParseGpuTable(std::string_view yaml,
                                           const std::string& file);

// Returns the GPUs compiled into the binary, in the table's order.
const std::vector<GpuSpec>& BuiltinGpus();

// Returns the built-in GPU named `name` or one of its aliases
// (case-insensitive); the error lists the names known.
Result<GpuSpec> FindGpu(std::string_view name);

// Returns the peak FLOP/s a kernel of class `c` computing in `dtype` gets on
// `gpu`. NB: matmul, convolution and attention kernels use the tensor-core
// rate of their dtype (float32: the fp32 rate, as PyTorch's default
// allow_tf32=False for matmul, or tf32 if `tf32` is true, as cuDNN
// convolutions default to); a dtype without a rate falls back to fp32; every
// other class runs at fp32.
double PeakFlops(const GpuSpec& gpu, OpClass c, DType dtype, bool tf32 = false);

}  // namespace torchcost

#endif  // TORCHCOST_GPU_H_
