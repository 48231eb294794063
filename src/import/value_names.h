// The names a TorchScript reader gives the values of the graph it made, the
// same for both readers (LibTorch's and the one without it): a value keeps the
// source variable it was assigned to, numbered in graph order where several
// share one ("input", "input.1", ...), unnamed values are numbered in graph
// order ("0", "1", ...) and constants are "c0", "c1", ... in order of first
// use.
#ifndef TORCHCOST_SRC_IMPORT_VALUE_NAMES_H_
#define TORCHCOST_SRC_IMPORT_VALUE_NAMES_H_

#include "torchcost/graph.h"

namespace torchcost::import {

// Renames the inputs, intermediates and constants of `graph` as the file
// comment says (parameters, buffers and dotted attribute names are kept; a
// name's LibTorch suffix ".N" is dropped first) and resets node debug names.
void CanonicalizeValueNames(ir::Graph* graph);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_VALUE_NAMES_H_
