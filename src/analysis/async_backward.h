// Megatron-core's asynchronous backward collectives (megatron/core/
// tensor_parallel/layers.py at NVIDIA/Megatron-LM d98e8a64,
// LinearWithGradAccumulationAndAsyncCommunication.backward): a
// column-parallel linear launches its input gradient's all-reduce (tensor
// parallelism: Megatron's `f`) or reduce-scatter (sequence parallelism)
// before its weight gradient's GEMM and waits for it after; with sequence
// parallelism it launches the all-gather of its input before its input
// gradient's GEMM. Here: the backward GEMM seconds beside which each such
// collective runs.
#ifndef TORCHCOST_SRC_ANALYSIS_ASYNC_BACKWARD_H_
#define TORCHCOST_SRC_ANALYSIS_ASYNC_BACKWARD_H_

#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/collective.h"
#include "torchcost/graph.h"

namespace torchcost::analysis {

// The backward compute that each node's backward collectives run beside.
class AsyncBackwardOverlap {
 public:
  // `grad`: per value, whether it needs a gradient; `gemm_seconds`: per node,
  // the seconds of one of its backward GEMMs (0 where it runs none). All must
  // outlive this.
  AsyncBackwardOverlap(const ir::Graph& graph, const Report& report,
                       const std::vector<char>& grad,
                       const std::vector<double>& gemm_seconds);

  // Returns the seconds of backward GEMMs beside which `node`'s backward
  // collective of `kind` runs: torchcost::copy_to_tp_region's all-reduce
  // beside the weight gradients of the matrix products that read its output
  // (through views); torchcost::sp_linear's reduce-scatter beside its own
  // weight gradient, its all-gather beside its own input gradient; else 0.
  double Beside(int node, CollectiveKind kind) const;

 private:
  const ir::Graph& graph_;
  const std::vector<char>& grad_;
  const std::vector<double>& gemm_seconds_;
  // Per node: the weight-gradient GEMM seconds of the products that read its
  // output (copy_to_tp_region nodes only).
  std::vector<double> users_weight_seconds_;
};

}  // namespace torchcost::analysis

#endif  // TORCHCOST_SRC_ANALYSIS_ASYNC_BACKWARD_H_
