// What the user says about the model's inputs: --input shapes or the
// .meta.json sidecar, and --set values of symbols.
#ifndef TORCHCOST_SRC_CLI_INPUTS_H_
#define TORCHCOST_SRC_CLI_INPUTS_H_

#include <string>
#include <vector>

#include "cli/outcome.h"
#include "torchcost/analysis.h"
#include "torchcost/dtype.h"
#include "torchcost/report.h"
#include "torchcost/sym.h"

namespace torchcost::cli {

// Returns the sidecar of a model: "dir/net.pt" -> "dir/net.meta.json".
std::string SidecarPath(const std::string& model);

// Sets `out` to the --input texts ("B,3,224,224" or "B,3,224,224:float16");
// with no --input, to the shapes of the model's sidecar ({"input_shapes":
// [[1, 3, 224, 224]], "input_dtypes": [...]}) in the same grammar. The
// library parses them (StepConfig::inputs).
Outcome InputTexts(const std::vector<std::string>& texts,
                   const std::string& model, std::vector<std::string>& out);

// One --set SYM=VAL, parsed.
struct SymbolValue {
  std::string text;  // As typed, for messages.
  std::string name;
  int64_t value = 0;
};

// Parses every "SYM=VAL" of --set ("B=8" or "B=8,S=1024") into `out`; VAL
// must be an integer.
Outcome ParseSets(const std::vector<std::string>& texts,
                  std::vector<SymbolValue>& out);

// Parses every --sweep of a generation (`--mode generate`, torchcost and
// compare) into `out`; each sweeps B, S or T.
Outcome ParseGenerationSweeps(const std::vector<std::string>& texts,
                              std::vector<SweepSpec>& out);

// Returns the sorted free symbols of the input shapes.
std::vector<std::string> InputSymbols(const std::vector<InputSpec>& inputs);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_INPUTS_H_
