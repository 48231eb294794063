#include "cli/sharding_flags.h"

#include <string>

namespace torchcost::cli {

Outcome ApplyShardingFlags(const CommandLine& cl, TrainingOptions& training) {
  Result<ShardStrategy> strategy = ParseShardStrategy(cl.shard);
  if (!strategy.ok()) return Outcome::Usage("--shard: " + strategy.status().message());
  ShardingOptions& s = training.sharding;
  s.strategy = *strategy;
  s.world = cl.world;
  // MiB to bytes: 1 MiB = 2^20 bytes.
  s.ddp_bucket_bytes = static_cast<int64_t>(cl.ddp_bucket_mib * (1 << 20));
  s.gradient_as_bucket_view = cl.ddp_bucket_view;
  s.fsdp_unit = cl.fsdp_unit;
  s.prefetch = !cl.no_prefetch;
  training.master_weights = cl.master_weights;
  if (s.strategy == ShardStrategy::kNone && s.world > 1)
    return Outcome::Usage("--world " + std::to_string(s.world) + " needs --shard ddp|zero1|zero2|zero3|fsdp");
  if (s.strategy != ShardStrategy::kNone && training.mode != StepMode::kTrain)
    return Outcome::Usage("--shard " + cl.shard + " models a training step; it does not go with --mode infer");
  if (s.ddp_bucket_bytes < 1) return Outcome::Usage("--ddp-bucket: must be positive");
  return Outcome::Ok();
}

}  // namespace torchcost::cli
