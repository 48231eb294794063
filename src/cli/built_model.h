// --model NAME [--config ...]: a family or preset built with the builder API
// instead of a model file.
#ifndef TORCHCOST_SRC_CLI_BUILT_MODEL_H_
#define TORCHCOST_SRC_CLI_BUILT_MODEL_H_

#include <optional>
#include <vector>

#include "cli/command_line.h"
#include "cli/outcome.h"
#include "torchcost/analysis.h"
#include "torchcost/builder.h"
#include "torchcost/sym.h"

namespace torchcost::cli {

// Checks that exactly one of MODEL and --model is given, and --config only
// with --model.
Outcome CheckModelSource(const CommandLine& cl);

// Builds --model into `model` (left empty without --model).
Outcome BuildNamed(const CommandLine& cl,
                   std::optional<builder::BuiltModel>& model);

// Sets `inputs` to the built model's declared inputs as StepConfig reads
// them ("B,S:int64"), and `bounds` to the bounds of their symbols.
void DeclaredInputs(const builder::BuiltModel& model,
                    std::vector<std::string>& inputs,
                    std::vector<std::pair<std::string, int64_t>>& bounds);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_BUILT_MODEL_H_
