// The sharding flags of the command line (--shard, --world, --ddp-bucket,
// --ddp-bucket-view, --fsdp-unit, --no-prefetch, --master-weights) into
// TrainingOptions.
#ifndef TORCHCOST_SRC_CLI_SHARDING_FLAGS_H_
#define TORCHCOST_SRC_CLI_SHARDING_FLAGS_H_

#include "cli/command_line.h"
#include "cli/outcome.h"
#include "torchcost/training.h"

namespace torchcost::cli {

// Sets `training`'s sharding and master weights from `cl`; a bad combination
// is a usage error naming the flag.
Outcome ApplyShardingFlags(const CommandLine& cl, TrainingOptions& training);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_SHARDING_FLAGS_H_
