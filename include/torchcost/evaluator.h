// Batch evaluation of symbolic costs, for search loops (NAS, batch-size
// sweeps): the totals of one analysis, kept as expressions in the batch, the
// sequence and architecture symbols, compiled once into a flat program and
// evaluated for many candidates without re-analysing.
#ifndef TORCHCOST_EVALUATOR_H_
#define TORCHCOST_EVALUATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// The totals of a training step (or an inference forward) as expressions.
struct SymbolicCosts {
  sym::Expr params;  // Unique parameter elements.
  // Parameters that get a gradient and optimizer state.
  sym::Expr trainable_params;
  // Per micro-batch, as TrainingReport::flops_forward.
  sym::Expr flops_forward;
  sym::Expr flops_backward;  // Per micro-batch, recomputation included.
  // NB: the peak is the max of these: the moments of the step that may be the
  // peak for some value of the free symbols (PeakInfo::candidates).
  std::vector<sym::Expr> peak_candidates;
};

// Returns the costs of an analysed step: its totals and the peak's candidate
// moments with every symbol unbound (EvaluatePeak with no bindings).
Result<SymbolicCosts> CostsOf(const Report& report);

// One candidate's costs. NB: `ok` is false (and the numbers unset) if a value
// leaves int64 or 128-bit evaluation overflows; the batch goes on.
struct CandidateCosts {
  int64_t params = 0;
  int64_t trainable_params = 0;
  int64_t flops_forward = 0;
  int64_t flops_backward = 0;
  int64_t peak_bytes = 0;
  bool ok = false;
};

// SymbolicCosts compiled to one register program over checked 128-bit
// integers (sym::Program: shared subexpressions computed once).
class Evaluator {
 public:
  // Compiles `costs` over `symbols`, the order of a candidate's values; every
  // free symbol of `costs` must be listed (an error names the first missing).
  // NB: peak candidates that another dominates for every value at or above
  // the symbols' lower bounds (their ranges in the context) are dropped, so
  // candidates' values must lie in those ranges.
  static Result<Evaluator> Compile(const SymbolicCosts& costs,
                                   const std::vector<std::string>& symbols);

  // Returns the symbols, in the order a candidate's values follow.
  const std::vector<std::string>& symbols() const { return symbols_; }
  // Returns the number of peak candidates the program evaluates per candidate.
  size_t num_peak_candidates() const { return num_peak_; }

  // Evaluates `count` candidates: candidate i's value of symbols()[j] is
  // values[i * symbols().size() + j]; writes out[0 .. count).
  void Evaluate(const int64_t* values, size_t count, CandidateCosts* out) const;
  // Evaluates one candidate (values in symbols() order).
  CandidateCosts Evaluate(const std::vector<int64_t>& values) const;

 private:
  std::vector<std::string> symbols_;
  sym::Program program_;
  size_t num_peak_ = 0;
};

}  // namespace torchcost

#endif  // TORCHCOST_EVALUATOR_H_
