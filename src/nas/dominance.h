// Sound pruning of a max's candidates: drops an expression that is <= another
// for every value of the symbols at or above their lower bounds.
#ifndef TORCHCOST_SRC_NAS_DOMINANCE_H_
#define TORCHCOST_SRC_NAS_DOMINANCE_H_

#include <vector>

#include "torchcost/sym.h"

namespace torchcost::nas {

// Returns the indices (ascending) of `exprs` that no other one dominates.
// NB: the test is exact arithmetic on shifted coefficients: with every symbol
// x = lo + t (t >= 0, lo its range's lower bound), a polynomial whose
// coefficients in t are all >= 0 is >= 0, so b - a with such coefficients
// proves a <= b. It is stronger than interval bounds on the canonical form
// (x*y - x >= 0 for x, y >= 1 becomes t + t*u >= 0). Expressions with
// floordiv, min or max atoms, or with a symbol unbounded below, are kept and
// dominate nothing.
std::vector<int> UndominatedCandidates(const std::vector<sym::Expr>& exprs);

}  // namespace torchcost::nas

#endif  // TORCHCOST_SRC_NAS_DOMINANCE_H_
