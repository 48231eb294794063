// What one data-parallel rank holds under a sharding strategy: the flat
// shards of parameters, gradients and optimizer states, the gathering units
// of ZeRO-3/FSDP with the node ranges during which each is gathered, and the
// tensors the rank's optimizer update runs over.
#ifndef TORCHCOST_SRC_ANALYSIS_SHARD_PLAN_H_
#define TORCHCOST_SRC_ANALYSIS_SHARD_PLAN_H_

#include <cstdint>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"
#include "torchcost/training.h"

namespace torchcost::training {

// A set of parameters gathered together (ZeRO-3: a module owning parameters;
// FSDP: a wrapped module, the root holding the rest).
struct ShardUnit {
  int scope = 0;  // Index into Graph::scopes.
  // FSDP's root unit: gathered from the forward to the end of backward.
  bool root = false;
  // Bytes of the gathered parameters, padded to N shards (0 if N = 1).
  int64_t full_bytes = 0;
  int64_t shard_bytes = 0;  // Bytes of one rank's shards of them.
  // Nodes [first_node, last_node] run while it is gathered.
  int first_node = -1;
  int last_node = -1;
  // The unit whose backward runs next (index into units), or -1.
  int prefetch = -1;
};

// One tensor of the optimizer's update loop on a rank.
struct UpdateTensor {
  int64_t elements = 0;
  DType dtype = DType::kFloat32;
};

// One rank's share of the model states.
struct ShardPlan {
  // Bytes held between steps: parameters, gradients after the reduction,
  // optimizer states; and the same on one unsharded device.
  int64_t param_bytes = 0, grad_bytes = 0, opt_bytes = 0;
  int64_t full_param_bytes = 0, full_grad_bytes = 0, full_opt_bytes = 0;
  // Optimizer state bytes the single-device simulation holds (params' own
  // dtypes, no masters).
  int64_t simulated_opt_bytes = 0;
  // The tensors the optimizer update loops over, in order (empty: the
  // simulated optimizer phase stands).
  std::vector<UpdateTensor> update;
  // Sharded (ZeRO, FSDP): the elements of each tensor one rank's optimizer
  // step updates, as the optimizer sees them: ZeRO-1/2/3 one flat partition
  // per dtype (DeepSpeed's one sub-group), FSDP one flat shard per unit and
  // dtype (FlatParameter). Empty where the step updates whole parameters.
  std::vector<int64_t> step_tensors;
  // ZeRO-3/FSDP gathering units, and for each node the innermost unit that
  // contains it (-1 if none).
  std::vector<ShardUnit> units;
  std::vector<int> innermost_unit;
  // Each parameter's unit (index into units; -1: none), for ZeRO-3/FSDP.
  std::vector<int> unit_of_param;
  // ZeRO-3: DeepSpeed's persistent parameters (ShardingOptions::
  // persistence_threshold; parallel to Graph::params), the bytes of their
  // whole copies on each rank (0 if N = 1: the shard is whole), and of their
  // shards (in param_bytes).
  std::vector<bool> persistent;
  int64_t persistent_bytes = 0, persistent_shard_bytes = 0;
  int ddp_buckets = 0;
  // Element size of the gradients (reduce buckets).
  int64_t grad_element_bytes = 4;
  // DeepSpeed's contiguous gradients (ShardingOptions::contiguous_gradients,
  // ZeRO only): the bucket buffers, their bytes, and ZeRO-Offload's device
  // staging buffer at ZeRO-1/2 (the largest trainable parameter's elements).
  int bucket_buffers = 0;
  int64_t bucket_buffer_bytes = 0, offload_staging_bytes = 0;
};

// Plans `options.sharding` (and master weights) for `graph` whose trainable
// parameters are `trainable` (parallel to Graph::params). Errors name the
// bad option (an FSDP unit regex that does not parse, a world below 1).
Result<ShardPlan> PlanShards(const ir::Graph& graph,
                             const std::vector<bool>& trainable,
                             const TrainingOptions& options);

}  // namespace torchcost::training

#endif  // TORCHCOST_SRC_ANALYSIS_SHARD_PLAN_H_
