// A short list of ints that keeps its first few in place: a node's input and
// output value ids, and the per-node lists of the passes and of a step's
// simulation, almost all of which hold a handful of ints.
#ifndef TORCHCOST_INLINE_INTS_H_
#define TORCHCOST_INLINE_INTS_H_

#include <cstdint>

#include "torchcost/inline_list.h"

namespace torchcost::ir {

// A list of ints, in place up to kInline of them, else on the heap.
// NB: 8 + 4 * kInline bytes for even kInline >= 2 (the in-place ints fill the
// pointer's 8-byte slot).
template <uint32_t kInline>
using InlineInts = InlineList<int, kInline>;

}  // namespace torchcost::ir

#endif  // TORCHCOST_INLINE_INTS_H_
