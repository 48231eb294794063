// Tests of the backward: which nodes' backward runs, what happens to the
// outputs the step drops, and the gradients the replay leaves.
#include "memory/backward.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory/checkpoint_replay.h"
#include "memory/liveness.h"
#include "memory/prepared_step.h"
#include "memory/saved.h"
#include "testing/builtin_graph_test.h"
#include "testing/timeline.h"

namespace torchcost::memory {
namespace {

using testing::At;
using testing::BuildMlp;
using testing::PreparedStep;

TEST(BackwardTest, EveryMlpNodeRunsBackward) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  FindBackwardNodes(&st);
  EXPECT_EQ(st.runs_backward, (std::vector<bool>{true, true, true}));
}

TEST(BackwardTest, FrozenEverythingRunsNoBackward) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  t.freeze = {".*"};
  StepState& st = p.Prepare("5,8", t);
  AssignStorages(st.g, st.shapes, &st.storages);
  FindBackwardNodes(&st);
  EXPECT_EQ(st.runs_backward, (std::vector<bool>{false, false, false}));
}

// A second output (aux = relu(h)) is dropped by the step: its node's backward
// never runs, and its storage is a TEMP the forward frees.
TEST(BackwardTest, ADroppedOutputIsOffThePath) {
  PreparedStep p;
  auto& b = p.builder();
  int x = b.Input();
  int w = b.Param("w", {4, 8});
  int h = b.One("t::lin", {x, w}, {"input", "weight"});
  int out = b.One("t::relu", {h}, {"self"});
  int aux = b.One("t::relu", {h}, {"self"});
  b.Output(out);
  b.Output(aux);
  StepState& st = p.Prepare("5,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  const int s = st.storages.storage_of[aux];
  EXPECT_TRUE(st.storages[s].pinned);
  FindBackwardNodes(&st);
  EXPECT_EQ(st.runs_backward, (std::vector<bool>{true, true, false}));
  EXPECT_FALSE(st.storages[s].pinned);
  EXPECT_EQ(st.storages[s].category, MemCategory::kTemp);
  EXPECT_TRUE(st.storages[st.storages.storage_of[out]].pinned);
}

// Replayed alone (no forward allocated), the backward leaves what outlives it:
// the parameters' gradients (GRAD: W1 and W2) and the 0-dim loss (OTH, 4
// bytes).
TEST(BackwardTest, LeavesTheParametersGradients) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgd;
  StepState& st = p.Prepare("5,8", t);
  AssignStorages(st.g, st.shapes, &st.storages);
  FindBackwardNodes(&st);
  PlanCheckpoints(&st);
  MarkSaved(&st);
  st.release_at = ComputeLastUses(st.g, &st.storages);
  RunBackward(&st);
  EXPECT_EQ(At(st.timeline.live()[testing::kGrad]), 4 * 8 * 4 + 2 * 4 * 4);
  EXPECT_EQ(At(st.timeline.live()[testing::kTemp]), 0);
  EXPECT_EQ(At(st.timeline.live()[testing::kOther]), 4);
  // Every saved tensor was released by its node's backward.
  for (int s = 0; s < st.storages.size(); ++s)
    EXPECT_EQ(st.storages[s].saved_by, 0) << s;
  // The largest TEMP in backward: at relu, the gradients of its output and of
  // its input (5*4 floats each) are alive together, and the loss's gradient
  // of ones: one float, expanded without a copy, held until backward returns.
  int64_t temp = 0;
  for (const TimelinePoint& pt : st.tr.timeline) {
    temp = std::max(temp, At(pt.live[testing::kTemp]));
  }
  EXPECT_EQ(temp, 2 * (5 * 4 * 4) + 4);
}

}  // namespace
}  // namespace torchcost::memory

namespace torchcost {
namespace {

// The loss sum()'s gradient is an expand of a scalar (4 bytes held); each of
// linear's backward GEMMs copies it whole before running (at::mm's copy of a
// stride-0 operand), one at a time: y = x W^T, x [4, 8] (no gradient), W
// [16, 8]: y [4, 16] in float32, a 256-byte copy beside W's 512-byte
// gradient at linear's backward, where TEMP is the scalar's 4 bytes and the
// copy.
class BroadcastGradTest : public testing::BuiltinGraphTest {};

TEST_F(BroadcastGradTest, AMatmulCopiesASumsBroadcastGradient) {
  const int x = b_.Input();
  const int w = b_.Param("w", {16, 8});
  b_.Output(b_.One("aten::linear", {x, w}, {"input", "weight"}));
  AnalysisOptions opts;
  opts.training.optimizer = OptimizerKind::kSgd;
  const Report r = AnalyzeBuiltGraph(opts, "4,8");
  int64_t temp_at_linear = -1;
  for (const TimelinePoint& p : r.training.timeline) {
    if (p.phase == StepPhase::kBackward && p.node == 0) {
      temp_at_linear =
          std::max(temp_at_linear, testing::At(p.live[testing::kTemp]));
    }
  }
  EXPECT_EQ(temp_at_linear, 4 + 4 * 16 * 4);
}

}  // namespace
}  // namespace torchcost
