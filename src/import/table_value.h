// The value that reads a parameter or buffer table entry, which every reader
// (JSON, TorchScript with and without LibTorch) adds on the entry's first use.
#ifndef TORCHCOST_SRC_IMPORT_TABLE_VALUE_H_
#define TORCHCOST_SRC_IMPORT_TABLE_VALUE_H_

#include "torchcost/graph.h"

namespace torchcost::import {

// Returns the value reading entry `index` of `graph`'s params (is_param) or
// buffers, adding it (named, shaped and typed as the entry) on first use.
int TableValue(ir::Graph* graph, bool is_param, int index);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_TABLE_VALUE_H_
