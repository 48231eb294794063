// GaLore's spec (--galore SPEC, or the method "galore:SPEC" of --peft and
// compare) into TrainingOptions.
#ifndef TORCHCOST_SRC_CLI_GALORE_FLAGS_H_
#define TORCHCOST_SRC_CLI_GALORE_FLAGS_H_

#include <string>

#include "cli/outcome.h"
#include "torchcost/training.h"

namespace torchcost::cli {

// Parses `spec` and sets `training.galore`; a bad spec or a combination not
// modelled (an optimizer other than AdamW, sharding, master weights, per-layer
// updates with accumulation) is a usage error naming `flag`.
Outcome ApplyGalore(const std::string& flag, const std::string& spec, TrainingOptions& training);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_GALORE_FLAGS_H_
