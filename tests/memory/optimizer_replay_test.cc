// Tests of optimizer replay: the states held through the step, the
// single-tensor loop's temporaries, and GradScaler's unscale sequence.
#include "memory/optimizer_replay.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory/prepared_step.h"
#include "testing/timeline.h"
#include "training/grad_scaler.h"

namespace torchcost::memory {
namespace {

using testing::At;
using testing::BuildMlp;
using testing::PreparedStep;

// Parameter bytes (float32).
constexpr int64_t kW1 = 4 * 8 * 4, kW2 = 2 * 4 * 4;

int64_t StatesOf(OptimizerKind kind, bool scaler = false) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  t.optimizer = kind;
  t.grad_scaler = scaler;
  return OptimizerStateBytes(&p.Prepare("5,8", t));
}

TEST(OptimizerReplayTest, StateBytes) {
  EXPECT_EQ(StatesOf(OptimizerKind::kSgd), 0);
  // momentum_buffer: one per element.
  EXPECT_EQ(StatesOf(OptimizerKind::kSgdMomentum), kW1 + kW2);
  // exp_avg and exp_avg_sq per element, and torch 1.13's float32 `step` tensor
  // per parameter.
  EXPECT_EQ(StatesOf(OptimizerKind::kAdam), 2 * (kW1 + kW2) + 2 * 4);
  // GradScaler's _scale and _growth_tracker (float32 [1], int32 [1]).
  EXPECT_EQ(StatesOf(OptimizerKind::kSgd, /*scaler=*/true), 8);
}

// Adam's loop: denom = (exp_avg_sq.sqrt() / c).add_(eps) has sqrt and quotient
// alive at once (2x the parameter), then denom stays bound until the next
// parameter rebinds it: W1's moment is 2*kW1; at W2's, W1's denom is alive too.
TEST(OptimizerReplayTest, SingleTensorAdamTemporaries) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  StepState& st = p.Prepare("5,8", t);
  RunOptimizer(&st);
  std::vector<int64_t> temps;
  for (const TimelinePoint& pt : st.tr.timeline)
    temps.push_back(At(pt.live[testing::kTemp]));
  EXPECT_EQ(temps, (std::vector<int64_t>{2 * kW1, kW1 + 2 * kW2, 0}));
}

// torch's fused step (_fused_adam_: exp_avg, exp_avg_sq and the parameter
// updated in place by one multi-tensor kernel) makes no temporary, where the
// loop above makes 2 * kW1 at its peak.
TEST(OptimizerReplayTest, FusedAdamHasNoTemporaries) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  t.fused = true;
  StepState& st = p.Prepare("5,8", t);
  RunOptimizer(&st);
  for (const TimelinePoint& pt : st.tr.timeline)
    EXPECT_EQ(At(pt.live[testing::kTemp]), 0);
}

// unscale_: _scale.double() and its reciprocal (float64 [1] each) alive at
// once; then inv_scale (float32) and found_inf (float32) with the double
// freed; inv_scale dies when unscale_ returns, found_inf stays for update().
TEST(OptimizerReplayTest, ScalerUnscale) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  ReplayScaler(training::Unscale(), StepPhase::kOptimizer, &st);
  ASSERT_EQ(st.tr.timeline.size(), 2u);
  EXPECT_EQ(At(st.tr.timeline[0].total), 8 + 8);
  EXPECT_EQ(At(st.tr.timeline[1].total), 4 + 4);
  EXPECT_EQ(st.tr.timeline[1].phase, StepPhase::kOptimizer);
  EXPECT_EQ(At(st.timeline.total()), 4);
  ReplayScaler(training::Update(), StepPhase::kOptimizer, &st);
  EXPECT_EQ(At(st.timeline.total()), 0);
}

}  // namespace
}  // namespace torchcost::memory
