// What the user says about the model's inputs: --input shapes or the
// .meta.json sidecar, and --set values of symbols.
#ifndef TORCHCOST_SRC_CLI_INPUTS_H_
#define TORCHCOST_SRC_CLI_INPUTS_H_

#include <string>
#include <vector>

#include "cli/outcome.h"
#include "torchcost/analysis.h"
#include "torchcost/dtype.h"
#include "torchcost/sym.h"

namespace torchcost::cli {

// Returns the sidecar of a model: "dir/net.pt" -> "dir/net.meta.json".
std::string SidecarPath(const std::string& model);

// Parses each --input text ("B,3,224,224" or "B,3,224,224:float16") into `out`;
// with no --input, reads the model's sidecar ({"input_shapes": [[1, 3, 224,
// 224]]}).
Outcome BuildInputs(sym::Context& ctx, const std::vector<std::string>& texts,
                    const std::string& model, DType default_dtype,
                    std::vector<InputSpec>& out);

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

// Checks each --set names one of `symbols` and lies in the symbol's range;
// fills `bindings`.
Outcome BindSymbols(sym::Context& ctx, const std::vector<SymbolValue>& sets,
                    const std::vector<std::string>& symbols,
                    sym::Bindings& bindings);

// Returns the sorted free symbols of the input shapes.
std::vector<std::string> InputSymbols(const std::vector<InputSpec>& inputs);

}  // namespace torchcost::cli

#endif  // TORCHCOST_SRC_CLI_INPUTS_H_
