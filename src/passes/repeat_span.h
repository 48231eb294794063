// Whether a hinted run of nodes (ir::RepeatSpan) still repeats its source run,
// so that a pass may copy what it found for the source instead of redoing it.
#ifndef TORCHCOST_SRC_PASSES_REPEAT_SPAN_H_
#define TORCHCOST_SRC_PASSES_REPEAT_SPAN_H_

#include <utility>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::passes {

// Returns true if span `s` of `g` repeats its source run node for node: the
// same op, overload and argument names; each input the source run made read as
// its image (value + s.value_shift); each output the image of the source's,
// of the same kind and traced shape.
// The inputs read from outside the source run are appended to `outside` as
// (source's value, this run's value) pairs where the two differ (two
// constants of one kind, dtype and value do not): the runs compute the same
// values wherever each such pair holds equal values.
// NB: an input from outside the source run must come from outside this run too
// (made before it), so that its value is known before the run is.
bool RepeatsSource(const ir::Graph& g, const ir::RepeatSpan& s,
                   std::vector<std::pair<int, int>>* outside);

}  // namespace torchcost::passes

#endif  // TORCHCOST_SRC_PASSES_REPEAT_SPAN_H_
