// Tests of ZeRO-3's fetch schedule on a chain of four linear modules, every
// gathered byte derived by hand from the rules of DeepSpeed's
// PartitionedParameterCoordinator (deepspeed/runtime/zero/
// partitioned_param_coordinator.py at deepspeedai/DeepSpeed edaa722:
// fetch_sub_module's prefetch, release_sub_module's __params_to_release).
#include "training/zero3_schedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/graph_builder.h"
#include "testing/toy_graphs.h"

namespace torchcost::training {
namespace {

using ::testing::ElementsAre;

// l1 (W1 [4, 8]: 32 elements), l2 (W2 [4, 4]: 16), l3 (W3 [4, 4]: 16), l4
// (W4 [2, 4]: 8), float32 over N = 2 ranks: gathered, W1 128 bytes, W2 and
// W3 64, W4 32 (every numel even, so no padding).
//
// The timeline: a setup point, the forward's nodes 0..3, the backward's
// 3..0, an optimizer point. Its module trace (each entry one step):
//   step  0    1   2   3   4   5     6   7   8   9
//         root l1  l2  l3  l4  root  l4  l3  l2  l1
// with the elements of the parameters of the steps before step s,
//   prefix = 0 0 32 48 64 72 72 80 96 112 (144 after the last).
// A module exits at the next node's point (release) before the next enters
// (fetch); the turn to the backward exits l4 and the root first.
class Zero3ScheduleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::LinearChain(b_, {8, 4, 4, 4, 2}, {"l1", "l2", "l3", "l4"});
    for (int n : {0, 1, 2, 3}) Point(StepPhase::kForward, n);
    for (int n : {3, 2, 1, 0}) Point(StepPhase::kBackward, n);
    Point(StepPhase::kOptimizer, -1);
  }

  void Point(StepPhase phase, int node) {
    TimelinePoint p;
    p.phase = phase;
    p.node = node;
    timeline_.push_back(p);
  }

  // The schedule under `s` (ZeRO-3 over 2 ranks) and its plan; every value
  // but the graph input requires a gradient, unless `no_gradient` names one.
  Zero3Schedule Schedule(ShardingOptions s, int no_gradient = -1) {
    s.strategy = ShardStrategy::kZero3;
    s.world = 2;
    TrainingOptions t;
    t.optimizer = OptimizerKind::kSgd;
    t.sharding = s;
    Result<ShardPlan> plan =
        PlanShards(b_.graph(), std::vector<bool>(4, true), t);
    EXPECT_TRUE(plan.ok());
    plan_ = *plan;
    const ir::Graph& g = b_.graph();
    std::vector<bool> requires_grad(g.values.size());
    for (size_t v = 0; v < g.values.size(); ++v) {
      requires_grad[v] = g.values[v].role != ir::ValueRole::kInput &&
                         static_cast<int>(v) != no_gradient;
    }
    return Zero3Schedule(g, plan_, requires_grad, timeline_, s);
  }

  // Gathered bytes at the forward's and backward's points, in order.
  std::vector<int64_t> Gathered(const Zero3Schedule& z) const {
    std::vector<int64_t> out;
    for (size_t i = 0; i < 8; ++i) out.push_back(z.GatheredAt(i));
    return out;
  }

  static ShardingOptions Options(int64_t prefetch, int64_t reuse,
                                 int64_t persistence = 0,
                                 int64_t live = int64_t{1} << 40) {
    ShardingOptions s;
    s.prefetch_bucket_elements = prefetch;
    s.max_reuse_elements = reuse;
    s.persistence_threshold = persistence;
    s.max_live_elements = live;
    return s;
  }

  testing::GraphBuilder b_;
  TimelinePoints timeline_;
  ShardPlan plan_;
};

TEST_F(Zero3ScheduleTest, WithoutPrefetchOrReuseEachModuleAlone) {
  const Zero3Schedule z = Schedule(Options(0, 0));
  // l4's exit at the turn (step 5) sees W4's next use at step 6, but
  // prefix[6] - prefix[5] = 0 is not below a distance of 0: released, and
  // gathered again by the backward.
  EXPECT_THAT(Gathered(z), ElementsAre(128, 64, 64, 32, 32, 64, 64, 128));
  EXPECT_EQ(z.all_gather_bytes(), 2 * (128 + 64 + 64 + 32));
  // One coalesced call per module fetched, in forward and again in backward.
  EXPECT_EQ(z.all_gather_calls(), 2 * 4);
  EXPECT_EQ(z.peak_gathered_bytes(), 128);
  // The optimizer's point: every module exited, nothing gathered.
  EXPECT_EQ(z.GatheredAt(8), 0);
}

TEST_F(Zero3ScheduleTest, ReuseDistanceKeepsTheLastModulesAcrossTheTurn) {
  // Distance 17: W3, released at step 4, is next used at step 7:
  // prefix[7] - prefix[4] = 80 - 64 = 16 < 17, kept; W4 (step 5 -> 6: 0)
  // kept; W2 (step 3 -> 8: 96 - 48 = 48) and W1 (step 2 -> 9: 80) released.
  const Zero3Schedule z = Schedule(Options(0, 17));
  EXPECT_THAT(Gathered(z),
              ElementsAre(128, 64, 64, 64 + 32, 64 + 32, 64, 64, 128));
  // W3 and W4 gathered once, W1 and W2 twice.
  EXPECT_EQ(z.all_gather_bytes(), 2 * 128 + 2 * 64 + 64 + 32);
  // Distance 16: W3's 16 elements are not below it, released.
  const Zero3Schedule z16 = Schedule(Options(0, 16));
  EXPECT_THAT(Gathered(z16), ElementsAre(128, 64, 64, 32, 32, 64, 64, 128));
}

TEST_F(Zero3ScheduleTest, PrefetchRunsAheadAndMarksSkippedReuse) {
  // Bucket 20 elements. The parameter queue: (W1,1) (W2,2) (W3,3) (W4,4)
  // (W4,6) (W3,7) (W2,8) (W1,9).
  //  root (step 0): prefetches W1 (32 >= 20 stops).
  //  l1 (step 1): prefetches W2 (16 < 20), W3 (32): W1 + W2 + W3 = 256.
  //  l1 exits at step 2: W1's next use is step 9 (80 away): released.
  //  l2 (step 2): prefetches W4 (8); skips W4, W3, W2, available, raising
  //    their most recent step to 6, 7, 8; prefetches W1 (40): 288.
  //  From then on nothing is released before its last use: l4 at step 7,
  //  l3 at 8, l2 at 9.
  const Zero3Schedule z = Schedule(Options(20, 0));
  EXPECT_THAT(Gathered(z), ElementsAre(256, 288, 288, 288, 288, 256, 192, 128));
  EXPECT_EQ(z.all_gather_bytes(), 2 * 128 + 64 + 64 + 32);
  // Calls: the prefetches of root (W1), l1 (W2, W3) and l2 (W4, and W1
  // again); every module then finds its own parameters gathered.
  EXPECT_EQ(z.all_gather_calls(), 3);
  EXPECT_EQ(z.peak_gathered_bytes(), 288);
}

TEST_F(Zero3ScheduleTest, MaxLiveLimitsThePrefetch) {
  // Bucket 20, at most 40 elements live (each prefetch takes
  // min(40 - live, 20)):
  //  root: W1 (live 32). l1: limit 8, W2 (48): 192.
  //  l1 exits: W1 released (16). l2: limit 20, W3, W4 (40): 64 + 64 + 32.
  //  l2 exits: W2 released (24). l3: limit 16, skips W4 (-> step 6) and W3
  //    (-> 7), prefetches W2 (40): 64 + 32 + 64.
  //  l4, root, l4: limit 0.
  //  l4 exits at step 7: released (32). l3: limit 8, prefetches W1 (64):
  //    64 + 64 + 128.
  //  l3, l2 exit in turn.
  const Zero3Schedule z = Schedule(Options(20, 0, 0, 40));
  EXPECT_THAT(Gathered(z), ElementsAre(192, 160, 160, 160, 160, 256, 192, 128));
  EXPECT_EQ(z.all_gather_bytes(), 2 * 128 + 2 * 64 + 64 + 32);
  EXPECT_EQ(z.peak_gathered_bytes(), 256);
}

TEST_F(Zero3ScheduleTest, PersistentParametersAreNeverGathered) {
  // Threshold 8: W4 is persistent, whole on every rank beside its shard.
  const Zero3Schedule z = Schedule(Options(0, 0, 8));
  EXPECT_THAT(Gathered(z), ElementsAre(128, 64, 64, 0, 0, 64, 64, 128));
  EXPECT_EQ(z.all_gather_bytes(), 2 * (128 + 64 + 64));
  EXPECT_EQ(plan_.persistent_bytes, 32);
  EXPECT_EQ(plan_.persistent_shard_bytes, 16);
  EXPECT_THAT(plan_.persistent, ElementsAre(false, false, false, true));
}

TEST_F(Zero3ScheduleTest, AModuleNoGradientEntersReleasesAtTheBackwardsEnd) {
  // If l1's output needs no gradient, l2's post-backward hook never fires:
  // W2 stays gathered from l2's backward to the backward's end, beside W1.
  const int l1_out = b_.graph().nodes[0].outputs[0];
  const Zero3Schedule z = Schedule(Options(0, 0), l1_out);
  EXPECT_THAT(Gathered(z), ElementsAre(128, 64, 64, 32, 32, 64, 64, 64 + 128));
  EXPECT_EQ(z.GatheredAt(8), 0);
}

TEST_F(Zero3ScheduleTest, AGraphWithoutScopesIsAnError) {
  ir::Graph g = b_.graph();
  g.scopes.clear();
  for (ir::Node& n : g.nodes) n.scope = 0;
  TrainingOptions t;
  t.sharding.strategy = ShardStrategy::kZero3;
  t.sharding.world = 2;
  Result<ShardPlan> plan = PlanShards(g, std::vector<bool>(4, true), t);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(),
            "StepConfig.shard zero3: the graph has no module scopes to gather "
            "parameters by");
}

TEST_F(Zero3ScheduleTest, TurningPrefetchOffIsABucketOfZero) {
  ShardingOptions s = Options(20, 0);
  s.prefetch = false;
  EXPECT_THAT(Gathered(Schedule(s)),
              ElementsAre(128, 64, 64, 32, 32, 64, 64, 128));
}

}  // namespace
}  // namespace torchcost::training
