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

// Returns the largest bytes of category `c` live at any point of the step.
inline int64_t CategoryMax(const Report& r, MemCategory c) {
  return At(EvaluatePeak(r.training, {}).category_max[static_cast<int>(c)]);
}

// Returns the most TEMP bytes the optimizer phase adds over what the backward left.
inline int64_t OptimizerTempOverBackward(const Report& r) {
  const int temp = static_cast<int>(MemCategory::kTemp);
  int64_t before = 0, most = 0;
  for (const TimelinePoint& p : r.training.timeline) {
    const int64_t v = At(p.live[temp]);
    if (p.phase != StepPhase::kOptimizer) {
      before = v;
    } else {
      most = std::max(most, v - before);
    }
  }
  return most;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TIMELINE_H_
