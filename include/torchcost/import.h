// Frontends that turn model files into an ir::Graph.
#ifndef TORCHCOST_IMPORT_H_
#define TORCHCOST_IMPORT_H_

#include <string>
#include <string_view>

#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost {

// Reads a TorchScript archive (torch.jit.trace or torch.jit.script, saved with
// torch.jit.save): inlines method calls, recovers the module path and type of
// every node, resolves parameter and buffer reads to named table entries, and
// records the traced shapes where the archive has them.
// Errors name the file: "model.pt: not a TorchScript archive (...)".
Result<ir::Graph> ImportTorchScript(const std::string& path);

// Reads a JSON graph in the "torchcost.graph" format, version 1 (see
// docs/graph-schema.md), as tools/export writes it from FX or aten-level
// graphs. Errors are one line naming the file and the place: "model.json:
// nodes[12] (aten::linear): arg 'weight' refers to unknown value 'v99'".
Result<ir::Graph> ImportGraphJson(const std::string& path);

// Reads a JSON graph from `text`, as ImportGraphJson reads a file; errors name
// `name`.
Result<ir::Graph> ImportGraphJsonText(std::string_view text,
                                      const std::string& name);

// Reads a model file with the frontend its extension names: ".json" is read by
// ImportGraphJson, anything else by ImportTorchScript.
Result<ir::Graph> ImportGraphFile(const std::string& path);

}  // namespace torchcost

#endif  // TORCHCOST_IMPORT_H_
