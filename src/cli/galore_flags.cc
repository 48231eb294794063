#include "cli/galore_flags.h"

#include "torchcost/galore.h"

namespace torchcost::cli {

Outcome ApplyGalore(const std::string& flag, const std::string& spec, TrainingOptions& training) {
  Result<GaloreConfig> galore = ParseGaloreConfig(spec);
  if (!galore.ok()) return Outcome::Usage(flag + ": " + galore.status().message());
  if (training.optimizer != OptimizerKind::kAdamW && training.optimizer != OptimizerKind::kAdam8bit) {
    return Outcome::Usage(flag + " wraps --optimizer adamw (GaLoreAdamW) or adam8bit (GaLoreAdamW8bit); got '" +
                          std::string(OptimizerName(training.optimizer)) + "'");
  }
  galore->eight_bit = training.optimizer == OptimizerKind::kAdam8bit;
  if (training.foreach) return Outcome::Usage(flag + " runs per parameter: no --optimizer-impl foreach");
  if (training.sharding.strategy != ShardStrategy::kNone || training.master_weights) {
    return Outcome::Usage(flag + " with --shard or --master-weights is not modelled");
  }
  if (galore->per_layer && (training.accumulate > 1 || !training.set_to_none)) {
    return Outcome::Usage(flag + " per_layer=true frees each gradient in backward: no --accumulate or "
                                 "--zero-grad zeros");
  }
  training.galore = *galore;
  return Outcome::Ok();
}

}  // namespace torchcost::cli
