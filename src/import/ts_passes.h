// What LibTorch's passes do to an inlined traced graph (its peephole pass,
// constant folding and dead code elimination, torch 1.13), done on the
// compiled program of the TorchScript reader without LibTorch so that both
// readers make one graph; what they would do that traced code is not expected
// to need is declined.
#ifndef TORCHCOST_SRC_IMPORT_TS_PASSES_H_
#define TORCHCOST_SRC_IMPORT_TS_PASSES_H_

#include <vector>

#include "import/ts_program.h"
#include "torchcost/status.h"

namespace torchcost::import::ts {

// Returns the live nodes after node `after` (all live nodes if -1) that take
// value `v`, in order.
std::vector<int> UsesOf(const Program& p, int v, int after = -1);

// Makes every node input, and the program's output, that is `from` be `to`.
void ReplaceUses(Program* p, int from, int to);

// NB: every inlined method's graph was optimized before inlining (LibTorch's
// preoptimizeGraph: its peephole pass replaces int(NumToTensor(x)) by x); the
// top-level forward's own nodes were not. Does that rewrite in inlined nodes;
// declines its other rewrites traced code could meet.
Status Peephole(Program* p);

// NB: LibTorch folds nodes whose inputs are all constants and whose outputs are
// immutable (not tensors, lists or tuples of them); the ones traced code has
// are not expected here, so they are declined.
Status FoldConstants(const Program& p);

// NB: LibTorch removes nodes whose outputs nothing uses; marks them dead, and
// declines an unused in-place op (its effect depends on aliasing) unless it
// writes to a module's tensor.
Status EliminateDeadCode(Program* p);

}  // namespace torchcost::import::ts

#endif  // TORCHCOST_SRC_IMPORT_TS_PASSES_H_
