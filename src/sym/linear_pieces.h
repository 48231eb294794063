// Splitting a range of one symbol's values into pieces on which expressions
// are linear in it, for sums over the range that need a few evaluations per
// piece rather than one per value (a generation's decode steps over their
// growing cache).
#ifndef TORCHCOST_SRC_SYM_LINEAR_PIECES_H_
#define TORCHCOST_SRC_SYM_LINEAR_PIECES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost::sym {

// A piece lo..hi of the range and every expression's value at its ends; each
// expression is linear in the symbol on it (lo == hi: a single value).
struct LinearPiece {
  int64_t lo = 0, hi = 0;
  const std::vector<__int128>* at_lo = nullptr;
  const std::vector<__int128>* at_hi = nullptr;
};

// Calls `piece` for consecutive pieces covering `symbol` = first..last (none
// if first > last), `exprs` evaluated with the other symbols bound by
// `bindings`. The pieces follow the expressions' structure: sums and constant
// multiples of affine terms are affine, and a min or max of affine sides is
// cut where the sides cross. NB: an expression that is not piecewise affine
// in the symbol (a product or power of terms in it, a floordiv of it) gets a
// piece per value. Errors: Evaluate128's.
Status ForEachLinearPiece(const std::vector<Expr>& exprs,
                          const Bindings& bindings, const std::string& symbol,
                          int64_t first, int64_t last,
                          const std::function<void(const LinearPiece&)>& piece);

// Returns the sum of `e` over `symbol` = first..last (0 if first > last), the
// other symbols bound by `bindings`: an arithmetic series per linear piece,
// exact.
Result<__int128> SumOver(const Expr& e, const Bindings& bindings,
                         const std::string& symbol, int64_t first,
                         int64_t last);

}  // namespace torchcost::sym

#endif  // TORCHCOST_SRC_SYM_LINEAR_PIECES_H_
