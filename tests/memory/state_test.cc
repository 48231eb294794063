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

// t::plin is t::lin with phased backward scratch: 100 bytes in the input's
// phase, 10 in the weight's, each beyond the gradients made so far.
constexpr const char kPhasedLin[] = R"yaml(
version: 1
rules:
  - op: t::plin
    schema: "plin(Tensor input, Tensor weight) -> Tensor"
    match:
      input: [M, IN]
      weight: [OUT, IN]
    outputs:
      out: [M, OUT]
    workspace:
      bwd_phases:
        input: 100
        weight: 10
)yaml";

// x [2, 8] -> t::lin (W1 [4, 8]) -> h [2, 4] -> t::plin (W2 [3, 4]). plin's
// gradients: h's 2*4*4 = 32 bytes, then W2's 3*4*4 = 48. The phases peak at
// 32 + 100 = 132 (input) and 32 + 48 + 10 = 90 (weight), so the scratch
// beside both gradients is 132 - 80 = 52 (not max(100, 10) = 100); with W2
// frozen only the input's phase runs: 100.
TEST(StateTest, PhasedBackwardScratchCountsTheGradientsMadeSoFar) {
  PreparedStep p;
  p.AddRules(kPhasedLin);
  auto& b = p.builder();
  int x = b.Input();
  int w1 = b.Param("l1.weight", {4, 8});
  int w2 = b.Param("l2.weight", {3, 4});
  b.Scope("l1", "Linear");
  int h = b.One("t::lin", {x, w1}, {"input", "weight"});
  b.Scope("l2", "Linear");
  b.Output(b.One("t::plin", {h, w2}, {"input", "weight"}));
  const sym::Expr* w = p.Prepare("2,8").Workspace(1, true);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(*w, sym::Expr(52));
  TrainingOptions frozen;
  frozen.freeze = {"^l2\\."};
  w = p.Prepare("2,8", frozen).Workspace(1, true);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(*w, sym::Expr(100));
}

}  // namespace
}  // namespace torchcost::memory
