// Readers of a step's memory timeline for tests whose bytes are constants.
#ifndef TORCHCOST_TESTS_TESTING_TIMELINE_H_
#define TORCHCOST_TESTS_TESTING_TIMELINE_H_

#include <algorithm>
#include <cstdint>

#include "torchcost/analysis.h"

namespace torchcost::testing {

// Returns the value of a constant expression (every symbol bound at build time).
inline int64_t At(const sym::Expr& e) { return *e.AsConstant(); }

// Returns the largest TEMP bytes live during the optimizer step.
inline int64_t MaxOptimizerTemp(const Report& r) {
  int64_t temp = 0;
  for (const TimelinePoint& p : r.training.timeline) {
    if (p.phase == StepPhase::kOptimizer) {
      temp = std::max(temp, At(p.live[static_cast<int>(MemCategory::kTemp)]));
    }
  }
  return temp;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TIMELINE_H_
