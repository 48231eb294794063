#include "report/sharding_report.h"

#include "report/format.h"

namespace torchcost::report {
namespace {

std::string Bytes(int64_t v) { return HumanAndExact(v, Unit::kBytes); }

}  // namespace

std::string RenderSharding(const TrainingReport& tr) {
  const ShardingReport& s = tr.sharding;
  if (s.strategy == ShardStrategy::kNone && !s.master_weights) return "";
  std::string out;
  if (s.strategy == ShardStrategy::kNone) {
    out = "Sharding: none (one device)\n";
  } else {
    out = "Sharding: " + std::string(ShardStrategyName(s.strategy)) + " over " +
          std::to_string(s.world) + " ranks; the memory below is per rank\n";
  }
  if (s.master_weights)
    out +=
        "  Optimizer: float32 master weights and states for half-precision "
        "parameters\n";
  out += "  Model states per rank: param " + Bytes(s.param_bytes) + ", grad " +
         Bytes(s.grad_bytes) + ", opt " + Bytes(s.opt_bytes) + "\n";
  out += "  One device would hold: param " + Bytes(s.unsharded_param_bytes) +
         ", grad " + Bytes(s.unsharded_grad_bytes) + ", opt " +
         Bytes(s.unsharded_opt_bytes) + "\n";
  if (s.offload_optimizer) {
    out += "  Offloaded to the host (" +
           std::string(s.offload_params ? "parameters and optimizer"
                                        : "ZeRO-Offload") +
           "; not in the device's peak): ";
    if (s.offload_params) out += "param " + Bytes(s.host_param_bytes) + ", ";
    out += "opt " + Bytes(s.host_opt_bytes) + ", float32 gradient shard " +
           Bytes(s.host_grad_bytes) + "; " + Bytes(s.host_transfer_bytes) +
           " over the host link per step\n";
  }
  if (s.contiguous_gradients) {
    out += "  DeepSpeed's flat gradient buffers (contiguous_gradients): " +
           std::to_string(s.bucket_buffers) + " x reduce bucket of " +
           std::to_string(s.reduce_bucket_elements) + " elements, " +
           Bytes(s.bucket_buffer_bytes);
    if (s.offload_staging_bytes > 0)
      out += "; offload staging " + Bytes(s.offload_staging_bytes);
    out += "\n";
  }
  if (s.strategy == ShardStrategy::kNone) return out;
  out += "  Communication per step per rank (payload): all-reduce " +
         Bytes(s.all_reduce_bytes) + ", reduce-scatter " +
         Bytes(s.reduce_scatter_bytes) + ", all-gather " +
         Bytes(s.all_gather_bytes) + "\n";
  if (tr.accumulate > 1) {
    const bool gathers = s.strategy == ShardStrategy::kZero3 ||
                         s.strategy == ShardStrategy::kFsdp;
    out +=
        "  Accumulating " + std::to_string(tr.accumulate) + " micro-batches: " +
        (ShardsGradients(s.strategy)
             ? std::string("each reduces its gradients") +
                   (gathers ? " and gathers the parameters" : "")
             : std::string("the gradients are reduced after the last "
                           "only") +
                   (s.strategy == ShardStrategy::kDdp ? " (no_sync())" : "")) +
        "\n";
  }
  if (s.strategy == ShardStrategy::kDdp)
    out += "  DDP gradient buckets: " + std::to_string(s.ddp_buckets) + "\n";
  if (!s.units.empty()) {
    out += "  Gathering units: " + std::to_string(s.units.size()) +
           ", the largest " + Bytes(s.largest_unit_bytes) + " gathered\n";
  }
  if (s.strategy == ShardStrategy::kFsdp) {
    out += std::string("  FSDP: ") +
           (s.reshard_after_forward
                ? "units resharded after forward (FULL_SHARD)"
                : "units kept from forward to backward (SHARD_GRAD_OP)") +
           (s.shard_group > 0 ? "; states sharded over groups of " +
                                    std::to_string(s.shard_group) +
                                    " ranks, replicated across " +
                                    std::to_string(s.world / s.shard_group) +
                                    " (HYBRID_SHARD)"
                              : "") +
           "\n";
  }
  if (s.strategy == ShardStrategy::kZero3) {
    out += "  ZeRO-3 fetch schedule (steady state): prefetch bucket " +
           std::to_string(s.prefetch_bucket_elements) + ", max live " +
           std::to_string(s.max_live_elements) + ", max reuse distance " +
           std::to_string(s.max_reuse_elements) + " elements; at most " +
           Bytes(s.peak_gathered_bytes) + " gathered at once\n";
    out += "  Persistent parameters (<= " +
           std::to_string(s.persistence_threshold) +
           " elements, never released): " + Bytes(s.persistent_param_bytes) +
           " whole per rank\n";
  }
  return out;
}

nlohmann::ordered_json ShardingJson(const TrainingReport& tr) {
  const ShardingReport& s = tr.sharding;
  nlohmann::ordered_json j;
  j["strategy"] = std::string(ShardStrategyName(s.strategy));
  j["world"] = s.world;
  j["master_weights"] = s.master_weights;
  j["per_rank"] = {
      {"param", s.param_bytes}, {"grad", s.grad_bytes}, {"opt", s.opt_bytes}};
  j["unsharded"] = {{"param", s.unsharded_param_bytes},
                    {"grad", s.unsharded_grad_bytes},
                    {"opt", s.unsharded_opt_bytes}};
  j["communication"] = {{"all_reduce", s.all_reduce_bytes},
                        {"reduce_scatter", s.reduce_scatter_bytes},
                        {"all_gather", s.all_gather_bytes},
                        {"calls",
                         {{"all_reduce", s.all_reduce_calls},
                          {"reduce_scatter", s.reduce_scatter_calls},
                          {"all_gather", s.all_gather_calls}}}};
  j["offload"] =
      s.offload_optimizer
          ? nlohmann::ordered_json{{"what",
                                    s.offload_params ? "params" : "optimizer"},
                                   {"param", s.host_param_bytes},
                                   {"opt", s.host_opt_bytes},
                                   {"grad", s.host_grad_bytes},
                                   {"transfer", s.host_transfer_bytes}}
          : nlohmann::ordered_json(nullptr);
  j["gradient_buffers"] =
      s.contiguous_gradients
          ? nlohmann::ordered_json{{"reduce_bucket_elements",
                                    s.reduce_bucket_elements},
                                   {"buckets", s.bucket_buffers},
                                   {"bucket_bytes", s.bucket_buffer_bytes},
                                   {"offload_staging_bytes",
                                    s.offload_staging_bytes}}
          : nlohmann::ordered_json(nullptr);
  j["ddp_buckets"] = s.ddp_buckets;
  j["units"] = s.units;
  j["largest_unit_bytes"] = s.largest_unit_bytes;
  j["fsdp"] = s.strategy == ShardStrategy::kFsdp
                  ? nlohmann::ordered_json{{"reshard_after_forward",
                                            s.reshard_after_forward},
                                           {"shard_group", s.shard_group}}
                  : nlohmann::ordered_json(nullptr);
  j["zero3"] =
      s.strategy == ShardStrategy::kZero3
          ? nlohmann::ordered_json{{"prefetch_bucket_elements",
                                    s.prefetch_bucket_elements},
                                   {"max_live_elements", s.max_live_elements},
                                   {"max_reuse_elements", s.max_reuse_elements},
                                   {"persistence_threshold",
                                    s.persistence_threshold},
                                   {"persistent_param_bytes",
                                    s.persistent_param_bytes},
                                   {"peak_gathered_bytes",
                                    s.peak_gathered_bytes}}
          : nlohmann::ordered_json(nullptr);
  return j;
}

}  // namespace torchcost::report
