// Names of the sharding strategies, and what they shard over.
#include <string>

#include "torchcost/sharding.h"

namespace torchcost {

Result<ShardStrategy> ParseShardStrategy(std::string_view text) {
  if (text == "none") return ShardStrategy::kNone;
  if (text == "ddp") return ShardStrategy::kDdp;
  if (text == "zero1") return ShardStrategy::kZero1;
  if (text == "zero2") return ShardStrategy::kZero2;
  if (text == "zero3") return ShardStrategy::kZero3;
  if (text == "fsdp") return ShardStrategy::kFsdp;
  return Status::InvalidArgument(
      "unknown sharding strategy '" + std::string(text) +
      "'; expected none, ddp, zero1, zero2, zero3 or fsdp");
}

int ShardWorld(const ShardingOptions& s) {
  return s.shard_group > 0 ? s.shard_group : s.world;
}

bool IsZero(ShardStrategy s) {
  return s == ShardStrategy::kZero1 || s == ShardStrategy::kZero2 ||
         s == ShardStrategy::kZero3;
}

bool ShardsGradients(ShardStrategy s) {
  return s == ShardStrategy::kZero2 || s == ShardStrategy::kZero3 ||
         s == ShardStrategy::kFsdp;
}

std::string_view ShardStrategyName(ShardStrategy s) {
  switch (s) {
    case ShardStrategy::kNone:
      return "none";
    case ShardStrategy::kDdp:
      return "ddp";
    case ShardStrategy::kZero1:
      return "zero1";
    case ShardStrategy::kZero2:
      return "zero2";
    case ShardStrategy::kZero3:
      return "zero3";
    case ShardStrategy::kFsdp:
      return "fsdp";
  }
  return "?";
}

}  // namespace torchcost
