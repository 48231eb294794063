// How both TorchScript readers (LibTorch's and the one without it) name the
// module a call runs in, so that their graphs' scopes agree.
#ifndef TORCHCOST_SRC_IMPORT_MODULE_SCOPES_H_
#define TORCHCOST_SRC_IMPORT_MODULE_SCOPES_H_

#include <string>
#include <unordered_map>

#include "torchcost/graph.h"

namespace torchcost::import {

// Returns "prefix.name", or `name` when the prefix is empty.
std::string JoinModulePath(const std::string& prefix, const std::string& name);

// Returns the path of the module `name` called from the module at `parent`,
// given the graph's scopes indexed by path. NB: a container that is iterated
// but never called (a ModuleList walked by `for block in self.h`) leaves no
// call-stack entry, so `0` may stand for `h.0`: one or two container levels
// down are searched for a unique match; failing that, "parent.name".
std::string ResolveChildScope(
    const ir::Graph& graph,
    const std::unordered_map<std::string, int>& scope_index,
    const std::string& parent, const std::string& name);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_MODULE_SCOPES_H_
