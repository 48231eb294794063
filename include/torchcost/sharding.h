// Data-parallel sharding of a training step across N ranks (DDP, ZeRO-1/2/3,
// FSDP full-shard): what one rank holds, and what it communicates per step.
// NB: the memory of a rank is a transform of the single-device timeline
// (src/training/sharding.cc); no distributed run is measured.
#ifndef TORCHCOST_SHARDING_H_
#define TORCHCOST_SHARDING_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// How the model states are split across the data-parallel ranks.
enum class ShardStrategy { kNone, kDdp, kZero1, kZero2, kZero3, kFsdp };

// Parses "none", "ddp", "zero1", "zero2", "zero3", "fsdp".
Result<ShardStrategy> ParseShardStrategy(std::string_view text);
// Returns the name ParseShardStrategy reads.
std::string_view ShardStrategyName(ShardStrategy s);
// Returns whether `s` is one of DeepSpeed's ZeRO stages (zero1, zero2, zero3).
bool IsZero(ShardStrategy s);
// Returns whether `s` keeps only a rank's shard of the reduced gradients
// (zero2, zero3, fsdp).
bool ShardsGradients(ShardStrategy s);

// The sharding of the step.
struct ShardingOptions {
  ShardStrategy strategy = ShardStrategy::kNone;
  // Data-parallel degree N (ranks sharing one model replica's states).
  int world = 1;
  // DDP's bucket_cap_mb (torch default 25 MiB), in bytes. NB: torch caps the
  // first bucket at 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES).
  int64_t ddp_bucket_bytes = int64_t{25} << 20;
  // DDP's gradient_as_bucket_view: if false (torch's default), the buckets'
  // flat buffers are a second copy of every gradient, allocated when DDP is
  // constructed; if true, .grad tensors are views into them.
  bool gradient_as_bucket_view = false;
  // DeepSpeed's reduce_bucket_size (default 5e8), in elements: ZeRO-1/2/3
  // reduce the gradients in buckets of this many elements.
  int64_t reduce_bucket_elements = 500000000;
  // DeepSpeed's contiguous_gradients (default on): the gradients are copied
  // into a flat bucket buffer of reduce_bucket_elements (ZeRO-1/2: allocated
  // at the backward's first gradient and freed at its end; ZeRO-3: allocated
  // at initialization) and the rank's reduced gradients into one flat
  // partition (ZeRO-2: allocated whole at the first reduction; ZeRO-3: at
  // initialization). If false, the ZeRO paper's accounting: no bucket buffer,
  // the reduced gradients kept as slices as they are reduced.
  bool contiguous_gradients = true;
  // DeepSpeed's overlap_comm: ZeRO-1/2 keep two bucket buffers (reduction and
  // copy overlap). NB: ZeRO-3 allocates one either way.
  bool overlap_comm = false;
  // FSDP's sharding_strategy: FULL_SHARD (true) frees a unit's gathered
  // parameters after its forward and gathers them again for its backward;
  // SHARD_GRAD_OP (false) keeps them from its forward to its backward's end.
  bool reshard_after_forward = true;
  // FSDP's HYBRID_SHARD: the states are sharded over groups of shard_group
  // ranks (a node) and replicated across the world / shard_group groups,
  // whose gradient shards are all-reduced; 0: sharded over the whole world.
  int shard_group = 0;
  // FSDP's wrapping unit: "blocks" (the repeated block list: sibling modules
  // whose last path component is an integer) or an ECMAScript regular
  // expression matched against whole module paths.
  std::string fsdp_unit = "blocks";
  // FSDP backward_prefetch=BACKWARD_PRE: the next unit's parameters are
  // gathered while the current one runs its backward. ZeRO-3: false turns
  // DeepSpeed's prefetch off (as prefetch_bucket_elements 0).
  bool prefetch = true;
  // DeepSpeed ZeRO-3's fetch schedule (zero_optimization.stage3_*, DeepSpeed's
  // defaults), in elements: each module's entry gathers up to
  // prefetch_bucket_elements of the parameters the step uses next, while
  // fewer than max_live_elements are gathered; a module's parameters stay
  // gathered after it ends if they are used again within max_reuse_elements
  // of the parameters that run next; parameters of at most
  // persistence_threshold elements are never released (held whole on every
  // rank beside their shard).
  int64_t prefetch_bucket_elements = 50000000;
  int64_t max_live_elements = 1000000000;
  int64_t max_reuse_elements = 1000000000;
  int64_t persistence_threshold = 100000;
  // ZeRO-Offload (Ren et al. 2021; DeepSpeed's offload_optimizer device cpu),
  // with ZeRO-2 or ZeRO-3: the rank's optimizer states, float32 master
  // weights and float32 gradient shard live on the host and the optimizer
  // step runs there; the device keeps the parameters and the gradients not
  // yet reduced.
  bool offload_optimizer = false;
  // Parameter offload, with offload_optimizer (FSDP's CPUOffload(
  // offload_params=True); DeepSpeed ZeRO-3's offload_param with
  // offload_optimizer), with ZeRO-3 or FSDP: the parameter shards live on the
  // host too and are copied to the device for each gather; the device holds
  // only the gathered units and the gradients not yet reduced.
  bool offload_params = false;
};

// Returns the ranks the states are sharded over: ShardingOptions::shard_group
// if set (FSDP's HYBRID_SHARD), else the world.
int ShardWorld(const ShardingOptions& s);

// What one rank holds and communicates, next to the per-rank timeline.
struct ShardingReport {
  ShardStrategy strategy = ShardStrategy::kNone;
  int world = 1;
  bool master_weights = false;  // Float32 masters counted in OPT.
  // Model states a rank holds between steps, in bytes: its parameters (or
  // their shards), its gradients after the reduction, optimizer states.
  int64_t param_bytes = 0, grad_bytes = 0, opt_bytes = 0;
  // The same without sharding (one device), for comparison.
  int64_t unsharded_param_bytes = 0, unsharded_grad_bytes = 0,
          unsharded_opt_bytes = 0;
  // Payload of each collective per step, per rank (bytes of the tensors
  // all-reduced, reduce-scattered and all-gathered), ring traffic not applied.
  int64_t all_reduce_bytes = 0, reduce_scatter_bytes = 0, all_gather_bytes = 0;
  // The part of all_gather_bytes gathered after the optimizer step (ZeRO-1/2:
  // the updated parameters; ZeRO-3: its persistent ones); the rest runs in
  // the forward and backward.
  int64_t after_step_all_gather_bytes = 0;
  // The NCCL calls that carry those payloads in the forward and backward
  // (the time model's latency; the gather after the step is one call): DDP's
  // buckets; ZeRO's reduce buckets; ZeRO-3's fetches (a module's parameters,
  // and those it prefetches); FSDP's units, each gathered once or twice and
  // reduce-scattered (HYBRID_SHARD: and all-reduced) once.
  int all_reduce_calls = 0, reduce_scatter_calls = 0, all_gather_calls = 0;
  int ddp_buckets = 0;  // DDP: gradient buckets.
  // ZeRO-3/FSDP: the gathering units (module paths; "" is the root).
  std::vector<std::string> units;
  // Full (gathered, padded) bytes of the largest unit.
  int64_t largest_unit_bytes = 0;
  // ShardingOptions::offload_optimizer: what the rank keeps on the host
  // instead (not in the device's peak): its optimizer states with the float32
  // masters, and its gradient shard in float32; and the bytes crossing the
  // host link per step (the gradient shard down, the updated parameter shard
  // up, both in the parameters' 16-bit dtype). The device's grad_bytes and
  // opt_bytes above are then 0.
  // With ShardingOptions::offload_params the parameter shards are on the host
  // too (host_param_bytes; param_bytes above is then ZeRO-3's persistent
  // parameters, whole and sharded, which stay on the device), no updated
  // shard goes up, and each gather copies its shards up: host_transfer_bytes
  // is the gradient shard plus the shards of every gather (FSDP: each unit's
  // twice, forward and backward; ZeRO-3: as its schedule gathers them).
  bool offload_optimizer = false, offload_params = false;
  int64_t host_opt_bytes = 0, host_grad_bytes = 0, host_transfer_bytes = 0;
  int64_t host_param_bytes = 0;
  // ShardingOptions::contiguous_gradients (ZeRO): bytes of the bucket buffers
  // (both with overlap_comm) and, with ZeRO-Offload at ZeRO-1/2, of the device
  // staging buffer for one gradient (the largest parameter's elements,
  // temp_grad_buffer_for_gpu_offload), held from initialization.
  bool contiguous_gradients = false;
  int64_t reduce_bucket_elements = 0;
  int bucket_buffers = 0;  // 2 with overlap_comm at ZeRO-1/2, else 1.
  int64_t bucket_buffer_bytes = 0, offload_staging_bytes = 0;
  // ZeRO-3: the fetch schedule's settings (ShardingOptions), the bytes of the
  // persistent parameters each rank holds whole (beside their shards, which
  // param_bytes counts), and the most bytes gathered at once (persistent ones
  // not counted).
  int64_t prefetch_bucket_elements = 0, max_live_elements = 0,
          max_reuse_elements = 0, persistence_threshold = 0;
  int64_t persistent_param_bytes = 0, peak_gathered_bytes = 0;
  // FSDP: ShardingOptions::reshard_after_forward and shard_group.
  bool reshard_after_forward = true;
  int shard_group = 0;
};

}  // namespace torchcost

#endif  // TORCHCOST_SHARDING_H_
