// Tests of activation checkpointing: which segments a pattern makes, what the
// forward saves, the recomputed FLOPs, and the peak of a tiny two-block chain
// (SGD, so the optimizer adds nothing), every number derived by hand.
#include "training/checkpoint.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "testing/toy_rules.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::At;
using ::testing::ElementsAre;
using testing::GraphBuilder;
using ::testing::HasSubstr;

// Bytes of float32 [5, 4] and [5, 16] activations, and of [16, 4] / [4, 4]
// weights.
constexpr int64_t kNarrow = 5 * 4 * 4, kWide = 5 * 16 * 4, kWeight = 16 * 4 * 4,
                  kStemWeight = 4 * 4 * 4;

// x [5, 4] -> stem: lin (W0 [4, 4]) -> h0
//   -> blocks.0: lin (A1 [16, 4]) -> u1 -> relu -> r1 -> lin (B1 [4, 16]) -> h1
//   -> blocks.1: lin (A2) -> u2 -> relu -> r2 -> lin (B2) -> h2 (the output).
// Nodes 0 (stem), 1-3 (blocks.0), 4-6 (blocks.1).
class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(rules_.AddText(testing::kToyRules, "t.yaml").ok());
    int x = b_.Input();
    int w0 = b_.Param("stem.weight", {4, 4});
    b_.Scope("stem", "Linear");
    int h = b_.One("t::lin", {x, w0}, {"input", "weight"});
    for (int i = 0; i < 2; ++i) {
      const std::string path = "blocks." + std::to_string(i);
      int a = b_.Param(path + ".up.weight", {16, 4});
      int w = b_.Param(path + ".down.weight", {4, 16});
      b_.Scope(path, "Block");
      int u = b_.One("t::lin", {h, a}, {"input", "weight"});
      int r = b_.One("t::relu", {u}, {"self"});
      h = b_.One("t::lin", {r, w}, {"input", "weight"});
    }
    b_.Output(h);
  }
  Result<Report> Analyze(TrainingOptions t) {
    t.optimizer = OptimizerKind::kSgd;
    AnalysisOptions opts;
    opts.training = t;
    opts.inputs.push_back(*ParseInputSpec(ctx_, "5,4"));
    return torchcost::Analyze(b_.graph(), rules_, ctx_, opts);
  }
  Report Run(const std::string& checkpoint, int group = 1) {
    TrainingOptions t;
    t.checkpoint = checkpoint;
    t.checkpoint_group = group;
    auto r = Analyze(t);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::move(r).value();
  }

  GraphBuilder b_;
  RuleSet rules_;
  sym::Context ctx_;
};

// Forward FLOPs of one block: two linears (2*M*IN*OUT) and a relu (one per
// element).
constexpr int64_t kBlockFlops = 2 * 5 * 4 * 16 + 5 * 16 + 2 * 5 * 16 * 4;
// Backward FLOPs without recomputation: per block two linears with input and
// weight gradients and a relu; the stem's weight gradient only (x needs none).
constexpr int64_t kGradFlops =
    2 * (2 * (2 * 5 * 4 * 16) + 5 * 16 + 2 * (2 * 5 * 16 * 4)) + 2 * 5 * 4 * 4;

TEST_F(CheckpointTest, WithoutCheckpointingEveryIntermediateIsSaved) {
  Report r = Run("");
  // x (by the stem), h0 and h1 (block inputs), r1 and r2 (relu outputs, block
  // linears' inputs).
  EXPECT_EQ(At(r.training.saved_bytes),
            kNarrow + kNarrow + kWide + kNarrow + kWide);
  EXPECT_EQ(At(r.training.flops_backward), kGradFlops);
  EXPECT_EQ(At(r.training.flops_recompute), 0);
  EXPECT_TRUE(r.training.checkpoint_segments.empty());
}

TEST_F(CheckpointTest, SavedTensorsDropToTheSegmentInputs) {
  Report r = Run("^blocks\\.\\d+$");
  ASSERT_EQ(r.training.checkpoint_segments.size(), 2u);
  const CheckpointSegment& s0 = r.training.checkpoint_segments[0];
  const CheckpointSegment& s1 = r.training.checkpoint_segments[1];
  EXPECT_EQ(s0.first, 1);
  EXPECT_EQ(s0.last, 3);
  EXPECT_EQ(s0.module, "blocks.0");
  EXPECT_EQ(s1.first, 4);
  EXPECT_EQ(s1.last, 6);
  EXPECT_TRUE(s0.recomputed && s1.recomputed);
  // x (the stem's save) and each block's input h0, h1 (CheckpointFunction's
  // saves).
  EXPECT_EQ(At(r.training.saved_bytes), kNarrow + kNarrow + kNarrow);
  std::vector<std::string> what;
  for (const auto& s : r.training.saved) what.push_back(s.what);
  EXPECT_THAT(what,
              ElementsAre("input", "checkpoint input", "checkpoint input"));
  // A block's saved bytes are its input; the model's, all three.
  const auto& scopes = b_.graph().scopes;
  for (size_t sc = 0; sc < scopes.size(); ++sc) {
    if (scopes[sc].path == "blocks.1")
      EXPECT_EQ(At(r.training.module_act_bytes[sc]), kNarrow);
  }
  EXPECT_EQ(At(r.training.module_act_bytes[0]), 3 * kNarrow);
  // ACT at its largest: h0 and h1 (x is an input: OTH); the recomputed tensors
  // are TEMP.
  PeakInfo p = EvaluatePeak(r.training, {});
  EXPECT_EQ(At(p.category_max[testing::kAct]), 2 * kNarrow);
}

TEST_F(CheckpointTest, RecomputeFlopsAreTheSegmentsForwardFlops) {
  Report r = Run("blocks");
  EXPECT_EQ(At(r.training.flops_recompute), 2 * kBlockFlops);
  EXPECT_EQ(At(r.training.flops_backward), kGradFlops + 2 * kBlockFlops);
  // The step: forward (stem + blocks) + backward (with the recomputation).
  EXPECT_EQ(At(r.training.flops_step), (2 * 5 * 4 * 4 + 2 * kBlockFlops) +
                                           kGradFlops + 2 * kBlockFlops +
                                           /*SGD*/ 2 * (4 * 4 + 4 * 16 * 4));
}

TEST_F(CheckpointTest, PeakOfTheTinyChain) {
  Report r = Run("blocks");
  PeakInfo p = EvaluatePeak(r.training, {});
  ASSERT_TRUE(p.decided);
  // Derivation: walking the step backwards, blocks.1 is recomputed and
  // differentiated, then blocks.0 is recomputed (u1 freed after relu; r1 kept
  // for the relu and the down linear), and the peak is relu's backward in
  // blocks.0, when u1's gradient is made while r1's is alive:
  const int64_t params = kStemWeight + 4 * kWeight;
  // The loss and its gradient of ones (held until backward returns).
  const int64_t caller =
      kNarrow /*x*/ + kNarrow /*out h2*/ + 4 /*loss*/ + 4 /*ones*/;
  const int64_t grads = 3 * kWeight;  // B2, A2, B1 done.
  // h0, saved by blocks.0's checkpoint.
  const int64_t saved_input = kNarrow;
  const int64_t held =
      kNarrow /*recomputed h1*/ + kNarrow /*h1's gradient, held*/;
  const int64_t recomputed = kWide;  // r1.
  const int64_t act_grads = kWide /*dr1*/ + kWide /*du1*/;
  EXPECT_EQ(At(p.peak), params + caller + grads + saved_input + held +
                            recomputed + act_grads);
  EXPECT_EQ(r.training.timeline[p.point].phase, StepPhase::kBackward);
  EXPECT_EQ(r.training.timeline[p.point].node, 2);
}

TEST_F(CheckpointTest, GroupOfTwoCallsIsOneSegment) {
  Report r = Run("blocks", 2);
  ASSERT_EQ(r.training.checkpoint_segments.size(), 1u);
  EXPECT_EQ(r.training.checkpoint_segments[0].first, 1);
  EXPECT_EQ(r.training.checkpoint_segments[0].last, 6);
  EXPECT_EQ(r.training.checkpoint_segments[0].calls, 2);
  // x and h0 only.
  EXPECT_EQ(At(r.training.saved_bytes), 2 * kNarrow);
  EXPECT_EQ(At(r.training.flops_recompute), 2 * kBlockFlops);
}

TEST_F(CheckpointTest, InferenceRecomputesNothing) {
  TrainingOptions t;
  t.mode = StepMode::kInfer;
  t.checkpoint = "blocks";
  auto r = Analyze(t);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(At(r->training.flops_recompute), 0);
  EXPECT_FALSE(r->training.checkpoint_segments[0].recomputed);
}

TEST_F(CheckpointTest, BadPatternsAreErrorsNamingTheFlag) {
  TrainingOptions bad;
  bad.checkpoint = "(";
  auto a = Analyze(bad);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(
      a.status().message(),
      HasSubstr("StepConfig.checkpoint '(': not a valid regular expression"));
  TrainingOptions none;
  none.checkpoint = "^decoder\\.";
  auto b = Analyze(none);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(
      b.status().message(),
      HasSubstr("StepConfig.checkpoint '^decoder\\.': matches no module"));
  TrainingOptions group;
  group.checkpoint = "blocks";
  group.checkpoint_group = 0;
  auto c = Analyze(group);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("StepConfig.checkpoint_group 0"));
}

TEST(RepeatedBlocksTest, OutermostIndexedModulesOfTheCommonestType) {
  GraphBuilder b;
  int x = b.Input();
  // Two ViT-style encoder layers, each with an indexed Sequential inside
  // (mlp.0, mlp.1: three Linears in all would outnumber the layers if nested
  // ones counted), then one indexed head.
  for (int i = 0; i < 2; ++i) {
    const std::string layer = "enc.layers.encoder_layer_" + std::to_string(i);
    b.Scope(layer, "EncoderBlock");
    x = b.One("t::relu", {x}, {"self"});
    for (int j = 0; j < 2; ++j) {
      b.Scope(layer + ".mlp." + std::to_string(j), "Linear");
      x = b.One("t::relu", {x}, {"self"});
    }
  }
  b.Scope("head.0", "Linear");
  x = b.One("t::relu", {x}, {"self"});
  b.Scope("head.1", "Linear");  // No nodes: not a block.
  b.Output(x);
  std::vector<std::string> paths;
  for (int s : training::RepeatedBlocks(b.graph()))
    paths.push_back(b.graph().scopes[s].path);
  EXPECT_THAT(paths, ElementsAre("enc.layers.encoder_layer_0",
                                 "enc.layers.encoder_layer_1"));
}

}  // namespace
}  // namespace torchcost
