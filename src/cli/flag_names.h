// The library names options by StepConfig's fields ("StepConfig.galore"); the
// command line says which flag set them ("--galore").
#ifndef TORCHCOST_SRC_CLI_FLAG_NAMES_H_
#define TORCHCOST_SRC_CLI_FLAG_NAMES_H_

#include <string>
#include <utility>
#include <vector>

namespace torchcost::cli {

// Replacements of library option names, tried before the fixed table (the
// longest name matching at a position wins).
using FlagOverrides = std::vector<std::pair<std::string, std::string>>;

// Returns `message` (or a rendered report) with every "StepConfig.<field>"
// replaced by the flag that sets the field ("StepConfig.checkpoint_group" ->
// "--checkpoint-group"; "StepConfig.optimizer_impl" -> "--optimizer-impl"),
// and the names of SweepSpec, BuildNamedModel.config and .name by --sweep,
// --config and --model. `overrides` name what depends on the invocation:
// StepConfig.method is --peft, --lora, or a compare row's label.
std::string WithFlagNames(const std::string& message,
                          const FlagOverrides& overrides = {});

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_FLAG_NAMES_H_
