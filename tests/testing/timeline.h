// Readers of a step's memory timeline for tests whose bytes are constants.
#ifndef TORCHCOST_TESTS_TESTING_TIMELINE_H_
#define TORCHCOST_TESTS_TESTING_TIMELINE_H_

#include <algorithm>
#include <cstdint>

#include "torchcost/analysis.h"

namespace torchcost::testing {

// Indices of the memory categories in CategoryBytes (MemCategory's values).
inline constexpr int kParam = static_cast<int>(MemCategory::kParam);
inline constexpr int kBuffer = static_cast<int>(MemCategory::kBuffer);
inline constexpr int kGrad = static_cast<int>(MemCategory::kGrad);
inline constexpr int kAct = static_cast<int>(MemCategory::kAct);
inline constexpr int kTemp = static_cast<int>(MemCategory::kTemp);
inline constexpr int kOpt = static_cast<int>(MemCategory::kOpt);
inline constexpr int kOther = static_cast<int>(MemCategory::kOther);

// Returns the value of a constant expression (every symbol bound at build
// time).
inline int64_t At(const sym::Expr& e) { return *e.AsConstant(); }

// Returns the largest TEMP bytes live during the optimizer step.
inline int64_t MaxOptimizerTemp(const Report& r) {
  int64_t temp = 0;
  for (const TimelinePoint& p : r.training.timeline) {
    if (p.phase == StepPhase::kOptimizer) {
      temp = std::max(temp, At(p.live[kTemp]));
    }
  }
  return temp;
}

// Returns the largest bytes of category `c` live at any point of the step.
inline int64_t CategoryMax(const Report& r, MemCategory c) {
  return At(EvaluatePeak(r.training, {}).category_max[static_cast<int>(c)]);
}

// Returns the most TEMP bytes the optimizer phase adds over what the backward
// left.
inline int64_t OptimizerTempOverBackward(const Report& r) {
  int64_t before = 0, most = 0;
  for (const TimelinePoint& p : r.training.timeline) {
    const int64_t v = At(p.live[kTemp]);
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
