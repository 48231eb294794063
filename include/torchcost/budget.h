// Whether a step, or a whole generate() call, fits a device's memory budget,
// and the largest batch (or context) that does: the question a user asks
// before renting a GPU ("will this fine-tune fit in 24 GiB?").
#ifndef TORCHCOST_BUDGET_H_
#define TORCHCOST_BUDGET_H_

#include <cstdint>
#include <memory>
#include <string>

#include "torchcost/analysis.h"
#include "torchcost/generation.h"
#include "torchcost/status.h"
#include "torchcost/sym.h"

namespace torchcost {

// What is asked: a budget, and the symbol whose largest fitting value is
// searched.
struct BudgetQuestion {
  int64_t budget_bytes = 0;  // The device memory the step may use; > 0.
  // Searched for its largest value in [1, search_limit] that fits, whatever
  // the bindings give it; empty, or a symbol the analysis lacks: no search.
  std::string symbol = "B";
  int64_t search_limit = int64_t{1} << 20;
};

// What fits.
struct BudgetAnswer {
  int64_t budget_bytes = 0;
  // True where the CUDA caching allocator model decides (StepConfig.allocator
  // cuda): the allocations are replayed with the segments limited to the
  // budget less the context, and they fit if no allocation fails after the
  // allocator has released its cached segments, as PyTorch's does before it
  // raises out of memory. False: the peak of tensor bytes is compared.
  bool allocator = false;
  // What the step needs at the bindings: the peak of tensor bytes; with the
  // allocator model the reserved peak plus the context when nothing is
  // released (a generation: over the whole generate() call).
  int64_t needed_bytes = 0;
  bool fits = false;
  // With the allocator model: how often the cached segments were released to
  // stay within the budget (0 where needed_bytes fits as it is).
  int64_t releases = 0;
  // The searched symbol (empty: not searched), its value where `fits` was
  // decided (its binding, else 1), and its largest value that fits (0: not
  // even 1).
  std::string symbol;
  int64_t at = -1;
  int64_t largest = -1;
  // True if largest is BudgetQuestion::search_limit: the search stopped
  // there, not the memory.
  bool search_stopped = false;
};

// Answers budget questions about one analysis. NB: the peak's candidate
// moments are found once here, so each answer evaluates a handful of
// expressions per value tried (plus, with the allocator model, a replay of
// the allocations for the few values next to the boundary).
class BudgetEvaluator {
 public:
  // For one step; `report` must outlive this.
  explicit BudgetEvaluator(const Report& report);
  // For a whole generate() call: the prefill, then each decode step (symbols
  // B, S and T); `generation` must outlive this.
  explicit BudgetEvaluator(const GenerationAnalysis& generation);
  ~BudgetEvaluator();
  BudgetEvaluator(BudgetEvaluator&&) noexcept;
  BudgetEvaluator& operator=(BudgetEvaluator&&) noexcept;

  // Returns whether the step fits question.budget_bytes at `bindings` (the
  // searched symbol at 1 if unbound), and the searched symbol's largest value
  // that fits. Errors where another symbol is unbound, the peak cannot be
  // analysed, or a value overflows.
  // NB: the search assumes that memory does not shrink as the symbol grows.
  Result<BudgetAnswer> Answer(const sym::Bindings& bindings,
                              const BudgetQuestion& question) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torchcost

#endif  // TORCHCOST_BUDGET_H_
