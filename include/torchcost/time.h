// The predicted time of a step on a GPU (the roofline of each node's FLOPs and
// bytes moved), as Report::time carries it; torchcost/roofline.h computes it.
#ifndef TORCHCOST_TIME_H_
#define TORCHCOST_TIME_H_

#include <array>
#include <string>
#include <vector>

#include "torchcost/gpu.h"

namespace torchcost {

// A GPU that evaluations are timed on (a sweep's points, a comparison's
// rows), and how renderings name the time's source: "roofline on H100-SXM",
// or "calibrated (FILE)" for a calibration file's fitted device.
struct TimedOn {
  GpuSpec gpu;
  std::string source;
};

// Seconds per node, module, op type and phase on one GPU. All zero and empty
// unless `present`.
struct TimeReport {
  bool present = false;
  std::string gpu;          // GpuSpec::name.
  std::string source;       // "roofline on A100-80GB-SXM" (datasheet peaks and
                            // efficiencies), or "calibrated (FILE)".
  bool calibrated = false;  // If true, the figures are a calibration file's.
  // One micro-batch's forward and backward (with checkpointed recomputation),
  // the optimizer step, and the step: accumulate * (forward + backward) +
  // optimizer + exposed_communication_seconds. Each phase's is the larger of
  // its device and host seconds.
  double forward_seconds = 0, backward_seconds = 0, optimizer_seconds = 0,
         step_seconds = 0;
  // Each phase's device seconds (its nodes' sum; the optimizer's pass) and
  // host seconds (GpuSpec::host: its kernels and, in the optimizer, the
  // tensors it updates; 0 where the host is not modelled).
  double forward_device_seconds = 0, backward_device_seconds = 0,
         optimizer_device_seconds = 0;
  double forward_host_seconds = 0, backward_host_seconds = 0,
         optimizer_host_seconds = 0;
  HostCost host;                 // GpuSpec::host.
  double optimizer_tensors = 0;  // Parameter tensors the optimizer updates.
  // Data-parallel collectives (ShardingReport's payloads, ring algorithm,
  // docs/calibration.md "Communication"), per step: all of them, and what the
  // step waits for (in step_seconds): those after the optimizer step, and
  // what the others take beyond the compute they overlap (DDP and ZeRO-1/2:
  // the backward phases; ZeRO-3 and FSDP: the forward and backward phases).
  double communication_seconds = 0, exposed_communication_seconds = 0;
  // The graph's own collectives (tensor, sequence and expert parallelism:
  // Report::collectives, each call as NCCL's tuner times a ring), per step:
  // the phases wait for them, so they are in their nodes' seconds and in
  // forward_seconds and backward_seconds (recomputation included), less
  // model_parallel_overlapped_seconds.
  double model_parallel_communication_seconds = 0;
  // What of them runs beside the backward's GEMMs, as Megatron-core's
  // column-parallel linears run it (src/analysis/async_backward.h): their
  // input gradient's all-reduce or reduce-scatter beside the weight
  // gradient's GEMM, sequence parallelism's all-gather beside the input
  // gradient's; not in the nodes' seconds.
  double model_parallel_overlapped_seconds = 0;
  // Why a collective is not timed (it then counts 0); empty if all are.
  std::string communication_untimed;
  Interconnect interconnect;  // GpuSpec::interconnect.
  // MFU = model_flops / (step_seconds * peak_flops). NB: model FLOPs leave out
  // checkpointing's recomputation (hardware FLOPs would count it); the peak
  // is the matmul rate of the step's precision (peak_dtype).
  double model_flops = 0, peak_flops = 0, mfu = 0;
  std::string peak_dtype;  // "float32", "bfloat16", "float16".
  // Tokens (the first input holds integer token ids of rank >= 2: its
  // elements) or samples (its first dim) per step, and per second.
  std::string throughput_unit;  // "tokens" or "samples"; empty if the model has
                                // no tensor input.
  double items_per_step = 0, items_per_second = 0;
  std::vector<double> node_forward_seconds,
      node_backward_seconds;  // Parallel to Graph::nodes.
  std::vector<double> module_forward_seconds,
      module_backward_seconds;     // Parallel to Graph::scopes (subtrees).
  std::vector<double> op_seconds;  // Parallel to Report::ops: forward +
                                   // backward of one micro-batch.
  // Parallel to Report::ops: the OpClass of the op's nodes (the first that
  // takes time; else the first's), as a calibration groups measured ops.
  std::vector<OpClass> op_classes;
  // Roofline seconds per OpClass in one step before the efficiencies divide
  // them (what a calibration fits against), and the efficiencies used.
  std::array<double, kNumOpClasses> class_roofline_seconds{};
  // The same split by phase: forward, and backward with checkpointed
  // recomputation (the optimizer's is class_roofline_seconds' optimizer).
  std::array<double, kNumOpClasses> class_forward_roofline_seconds{},
      class_backward_roofline_seconds{};
  std::array<double, kNumOpClasses> efficiency = kPureRoofline;
  // Kernels per OpClass in one step: forward nodes that move bytes or compute
  // (views and ops without a rule launch none), one each; a node's backward,
  // one, but a matrix product's one GEMM per operand needing a gradient and a
  // reduction for a broadcast bias (docs/calibration.md); times accumulate,
  // with checkpointed recomputation; the optimizer's: what torch.optim's
  // single-tensor loop or foreach step launches (OptimizerKernels).
  std::array<double, kNumOpClasses> class_kernels{};
  // The same in the forward and in the backward (with recomputation).
  std::array<double, kNumOpClasses> class_forward_kernels{},
      class_backward_kernels{};
  // GpuSpec::kernel_overhead, and what it adds to the step (kernels x it),
  // included in every time above. Zero: not modelled.
  double kernel_overhead = 0, overhead_seconds = 0;
};

// A timed step's headline, as a sweep's point or a comparison's row carries
// it; -1 (and no unit) where it was not timed.
struct StepRate {
  double step_seconds = -1;
  double items_per_second = -1;
  std::string items_unit;  // TimeReport::throughput_unit.
  double mfu = -1;
  // TimeReport::communication_untimed: if not empty, a collective counts 0,
  // so step_seconds is a lower bound (and the rate and MFU upper bounds).
  std::string communication_untimed;
};

// Returns the headline of `t`.
inline StepRate StepRateOf(const TimeReport& t) {
  return {t.step_seconds, t.items_per_second, t.throughput_unit, t.mfu,
          t.communication_untimed};
}

}  // namespace torchcost

#endif  // TORCHCOST_TIME_H_
