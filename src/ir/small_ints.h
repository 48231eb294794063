// A short list of ints that keeps up to two in place: the per-node lists of
// the passes and of a step's simulation (argument values, gradient inputs,
// storages), almost all of which hold zero, one or two ints.
#ifndef TORCHCOST_SRC_IR_SMALL_INTS_H_
#define TORCHCOST_SRC_IR_SMALL_INTS_H_

#include "torchcost/inline_ints.h"

namespace torchcost::ir {

// NB: 16 bytes: two 4-byte counts and two ints or a pointer.
using SmallInts = InlineInts<2>;

}  // namespace torchcost::ir

#endif  // TORCHCOST_SRC_IR_SMALL_INTS_H_
