// The last step of the TorchScript reader without LibTorch: the compiled
// program (ts_program.h) converted to the IR as the LibTorch reader's Importer
// (torchscript.cc) converts a graph.
#ifndef TORCHCOST_SRC_IMPORT_TS_CONVERT_H_
#define TORCHCOST_SRC_IMPORT_TS_CONVERT_H_

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "import/ts_module_tree.h"
#include "import/ts_program.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost::import::ts {

// Adds `prog` to `graph`, whose scopes and tables the module tree made: the
// values `inputs` as its inputs, in order; then every live node, in the scope
// `scope_of` returns for it (an error there stops the conversion), its inputs
// converted on first use; then forward's result, a tuple or list flattened,
// as its outputs. A constant is one IR value per pooling group (Val::group)
// and value; a tensor attribute reads its table entry (`slots`), one not in
// the tables becomes a buffer. Declines (Status kUnimplemented) what the IR
// cannot hold: a module or a multi-result tuple used as a value, a packed
// sequence, two tensor constants of one shape and group.
Status ConvertProgram(const Program& prog, const std::vector<int>& inputs,
                      const std::function<Result<int>(const Nd&)>& scope_of,
                      std::unordered_map<std::string, TensorSlot>* slots,
                      ir::Graph* graph);

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_CONVERT_H_
