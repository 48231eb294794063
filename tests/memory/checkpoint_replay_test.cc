// Tests of checkpoint replay on the MLP with its relu checkpointed: the
// segment saves its input instead of its output, its forward FLOPs are run
// again, and its recomputed output lives until its backward is done.
#include "memory/checkpoint_replay.h"

#include <gtest/gtest.h>

#include "memory/backward.h"
#include "memory/liveness.h"
#include "memory/prepared_step.h"
#include "memory/saved.h"
#include "testing/timeline.h"

namespace torchcost::memory {
namespace {

using testing::At;
using testing::BuildMlp;
using testing::PreparedStep;

class CheckpointReplayTest : public ::testing::Test {
 protected:
  StepState& Prepare() {
    BuildMlp(&p_.builder());
    StepState& st = p_.Prepare("5,8");
    CheckpointSegment seg;
    seg.first = seg.last = 1;  // The relu.
    st.tr.checkpoint_segments = {seg};
    AssignStorages(st.g, st.shapes, &st.storages);
    FindBackwardNodes(&st);
    PlanCheckpoints(&st);
    return st;
  }
  PreparedStep p_;
};

TEST_F(CheckpointReplayTest, PlanMarksTheSegmentAndItsRecompute) {
  StepState& st = Prepare();
  EXPECT_TRUE(st.tr.checkpoint_segments[0].recomputed);
  EXPECT_EQ(st.ckpt.of, (std::vector<int>{-1, 0, -1}));
  EXPECT_EQ(st.ckpt.starting_at, (std::vector<int>{-1, 0, -1}));
  EXPECT_EQ(st.ckpt.ending_at, (std::vector<int>{-1, 0, -1}));
  // The relu's forward again: one FLOP per element of [5, 4].
  EXPECT_EQ(At(st.tr.flops_recompute), 5 * 4);
}

TEST_F(CheckpointReplayTest, TheSegmentSavesItsInputNotItsOutput) {
  StepState& st = Prepare();
  MarkSaved(&st);
  EXPECT_EQ(st.ckpt.inputs[0], std::vector<int>{3});  // h
  EXPECT_EQ(st.storages[3].category, MemCategory::kAct);
  // x (l1), h (the segment's input), the relu output (l2 saves it: made in the
  // no_grad forward, it is a plain tensor to l2).
  EXPECT_EQ(At(st.tr.saved_bytes), 5 * 8 * 4 + 5 * 4 * 4 + 5 * 4 * 4);
  bool named = false;
  for (const auto& s : st.tr.saved)
    named = named || (s.what == "checkpoint input" && s.storage == 3);
  EXPECT_TRUE(named);
  // The relu itself saves nothing in the forward: only when recomputed.
  EXPECT_EQ(
      std::vector<int>(st.forward_saved[1].begin(), st.forward_saved[1].end()),
      std::vector<int>{3});
}

TEST_F(CheckpointReplayTest, ReplayHoldsTheRecomputedOutputUntilFinished) {
  StepState& st = Prepare();
  MarkSaved(&st);
  st.release_at = ComputeLastUses(st.g, &st.storages);
  st.bwd.grad_of.assign(st.g.values.size(), -1);
  const int before = st.storages.size();
  ReplaySegment(0, &st);
  // One fresh TEMP copy of the relu output (5*4 floats), read later by l2:
  // held.
  ASSERT_EQ(st.storages.size(), before + 1);
  const int copy = before;
  EXPECT_TRUE(st.storages[copy].live);
  EXPECT_TRUE(st.storages[copy].pinned);
  EXPECT_EQ(At(st.timeline.live()[testing::kTemp]), 5 * 4 * 4);
  // The relu's backward now holds the copy.
  EXPECT_EQ(std::vector<int>(st.saved_storages[1].begin(),
                             st.saved_storages[1].end()),
            std::vector<int>{copy});
  EXPECT_EQ(st.storages[copy].saved_by, 1);
  // Its backward done, the segment finishes: copy and saved input go.
  --st.storages[copy].saved_by;
  FinishSegment(0, &st);
  EXPECT_FALSE(st.storages[copy].live);
  EXPECT_EQ(st.storages[3].saved_by, 0);
  EXPECT_EQ(At(st.timeline.total()), 0);
}

}  // namespace
}  // namespace torchcost::memory
