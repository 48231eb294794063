// Tests of selective activation recomputation (StepConfig.checkpoint
// "selective"): one segment per attention core (passes/attention_core.h), what
// the forward then saves and recomputes, and the diagnostics when no core is
// found.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/graph_builder.h"
#include "torchcost/analysis.h"
#include "torchcost/rules.h"
#include "training/checkpoint.h"

namespace torchcost::training {
namespace {

using testing::GraphBuilder;
using ::testing::HasSubstr;

TEST(SelectiveCheckpointTest, MakesOneSegmentPerCore) {
  GraphBuilder b;
  int x = b.Input("x");
  for (int layer = 0; layer < 2; ++layer) {
    b.Scope("h." + std::to_string(layer) + ".attn", "Attention");
    int att = b.One("aten::softmax",
                    {b.One("aten::matmul", {x, x}), b.Int(-1), b.None()});
    x = b.One("aten::matmul", {att, x});
  }
  b.Output(x);
  TrainingOptions options;
  options.checkpoint = "selective";
  Result<std::vector<CheckpointSegment>> segs =
      FindCheckpointSegments(b.graph(), options);
  ASSERT_TRUE(segs.ok()) << segs.status().message();
  ASSERT_EQ(segs->size(), 2u);
  EXPECT_EQ((*segs)[0].first, 0);
  EXPECT_EQ((*segs)[0].last, 2);
  EXPECT_EQ((*segs)[1].first, 3);
  EXPECT_EQ((*segs)[1].last, 5);
  EXPECT_EQ((*segs)[1].module, "h.1.attn");
  options.checkpoint_group = 2;
  segs = FindCheckpointSegments(b.graph(), options);
  ASSERT_FALSE(segs.ok());
  EXPECT_THAT(segs.status().message(),
              HasSubstr("StepConfig.checkpoint_group 2 does not apply"));
}

TEST(SelectiveCheckpointTest, WithoutAttentionIsAnError) {
  GraphBuilder b;
  int x = b.Input("x");
  b.Output(b.One("aten::relu", {x}));
  TrainingOptions options;
  options.checkpoint = "selective";
  Result<std::vector<CheckpointSegment>> segs =
      FindCheckpointSegments(b.graph(), options);
  ASSERT_FALSE(segs.ok());
  EXPECT_THAT(
      segs.status().message(),
      HasSubstr("StepConfig.checkpoint selective: no attention core found"));
}

TEST(SelectiveCheckpointTest, OnFlashAttentionKeepsOnlyQkv) {
  // q, k, v [2, 4, 16, 8] float16 (1024 elements, 2048 bytes each) into an SDPA
  // node on CUDA (auto: flash for half precision). Without recomputation it
  // keeps q, k, v, out, the float32 logsumexp [2, 4, 16] (512 bytes) and the
  // philox seed and offset (0-dim int64, 8 bytes each); selective keeps q, k, v
  // (the segment's inputs) and runs the forward again in backward.
  GraphBuilder b;
  int q = b.Input("q"), k = b.Input("k"), v = b.Input("v");
  b.Output(b.One("aten::scaled_dot_product_attention", {q, k, v},
                 {"query", "key", "value"}));
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  auto run = [&](const std::string& checkpoint) {
    sym::Context ctx;
    AnalysisOptions options;
    options.training.optimizer = OptimizerKind::kSgd;
    options.training.inputs_require_grad = true;
    options.training.checkpoint = checkpoint;
    for (int i = 0; i < 3; ++i)
      options.inputs.push_back(*ParseInputSpec(ctx, "2,4,16,8:float16"));
    Result<Report> r = Analyze(b.graph(), *rules, ctx, options);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return std::make_pair(*r->training.saved_bytes.AsConstant(),
                          *r->training.flops_recompute.AsConstant());
  };
  const auto [plain_saved, plain_recompute] = run("");
  EXPECT_EQ(plain_saved, 4 * 2048 + 2 * 4 * 16 * 4 + 2 * 8);
  EXPECT_EQ(plain_recompute, 0);
  const auto [selective_saved, selective_recompute] = run("selective");
  EXPECT_EQ(selective_saved, 3 * 2048);
  // The forward again: Q K^T and P V 2*8*16*16*8 each, scale 1 and softmax 4
  // per score (8*16*16).
  EXPECT_EQ(selective_recompute, 2 * (2 * 8 * 16 * 16 * 8) + 5 * 8 * 16 * 16);
}

TEST(SelectiveCheckpointTest, WarnsWhenABlockHasNoCore) {
  // h.0's attention is a core; h.1's scores pass an exp the search does not
  // cross (not a scale, mask or cast): 1 core in 2 repeated blocks.
  GraphBuilder b;
  int x = b.Input("x");
  for (int layer = 0; layer < 2; ++layer) {
    b.Scope("h." + std::to_string(layer), "Block");
    int scores = b.One("aten::matmul", {x, x}, {"self", "other"});
    if (layer == 1) scores = b.One("aten::exp", {scores}, {"self"});
    int att = b.One("aten::softmax", {scores, b.Int(-1), b.None()},
                    {"self", "dim", "dtype"});
    x = b.One("aten::matmul", {att, x}, {"self", "other"});
  }
  b.Output(x);
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  sym::Context ctx;
  AnalysisOptions options;
  options.training.optimizer = OptimizerKind::kSgd;
  options.training.inputs_require_grad = true;
  options.training.checkpoint = "selective";
  options.inputs.push_back(*ParseInputSpec(ctx, "4,8,8"));
  Result<Report> r = Analyze(b.graph(), *rules, ctx, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->training.checkpoint_segments.size(), 1u);
  std::string warnings;
  for (const Diagnostic& d : r->diagnostics) warnings += d.message + "\n";
  EXPECT_THAT(warnings, HasSubstr("StepConfig.checkpoint selective: 1 "
                                  "attention core found in 2 repeated blocks"));
}

}  // namespace
}  // namespace torchcost::training
