// Tests of the shared state: when a storage may be freed, and the options it
// answers for every phase.
#include "memory/state.h"

#include <gtest/gtest.h>

#include "memory/prepared_step.h"

namespace torchcost::memory {
namespace {

using testing::BuildMlp;
using testing::PreparedStep;

TEST(StateTest, ReleaseFreesOnlyWhatNothingHolds) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  const int h = 3;
  st.storages[h].last_use = 1;
  st.Alloc(h);
  st.Release(h, 0);  // Read later, at n1.
  EXPECT_TRUE(st.storages[h].live);
  st.storages[h].saved_by = 1;
  st.Release(h, 1);  // Saved for backward.
  EXPECT_TRUE(st.storages[h].live);
  st.storages[h].saved_by = 0;
  st.storages[h].grad_refs = 1;
  st.Release(h, 1);  // A gradient slot points at it.
  EXPECT_TRUE(st.storages[h].live);
  st.storages[h].grad_refs = 0;
  st.storages[h].pinned = true;
  st.Release(h, 1);  // Held by the caller.
  EXPECT_TRUE(st.storages[h].live);
  st.storages[h].pinned = false;
  st.Release(h, 1);
  EXPECT_FALSE(st.storages[h].live);
  EXPECT_EQ(*st.timeline.total().AsConstant(), 0);
}

TEST(StateTest, GradientsExistBeforeTheForwardWithZerosOrAccumulation) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  EXPECT_FALSE(p.Prepare("5,8", t).GradsPresent());
  t.set_to_none = false;
  EXPECT_TRUE(p.Prepare("5,8", t).GradsPresent());
  t.set_to_none = true;
  t.accumulate = 2;
  EXPECT_TRUE(p.Prepare("5,8", t).GradsPresent());
  t.mode = StepMode::kInfer;
  EXPECT_FALSE(p.Prepare("5,8", t).GradsPresent());
}

TEST(StateTest, NoWorkspaceAndNoInPlaceWriteInTheToyOps) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  for (int ni = 0; ni < 3; ++ni) {
    EXPECT_EQ(st.Workspace(ni, false), nullptr);
    EXPECT_EQ(st.Workspace(ni, true), nullptr);
    EXPECT_FALSE(st.WritesInPlace(ni));
  }
  EXPECT_FALSE(st.Galore());
  EXPECT_FALSE(st.PerLayer());
}

}  // namespace
}  // namespace torchcost::memory
