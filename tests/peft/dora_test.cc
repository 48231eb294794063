// Tests of the DoRA rewrite (peft's DoraLinearLayer), with every number
// derived from DoRA's forward written out op by op.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/analyze_graph.h"
#include "testing/builtin_rules.h"
#include "testing/graph_builder.h"
#include "testing/linear_graphs.h"
#include "torchcost/analysis.h"
#include "torchcost/peft.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;
using testing::OneLinear;

// Trains a graph on an [m, 16] input with SGD.
Report TrainSgdAt(const ir::Graph& g, int64_t m) {
  sym::Context ctx;
  AnalysisOptions opts;
  opts.training.optimizer = OptimizerKind::kSgd;
  return testing::AnalyzeGraph(g, testing::BuiltinRules(), ctx, opts,
                               std::to_string(m) + ",16");
}

TEST(DoraTest, ParamsAndForwardFlopsFollowTheForward) {
  const int64_t M = 5, in = 16, out = 12, r = 4;
  LoraConfig c;
  c.rank = r;
  c.alpha = 8;
  c.targets = "q_proj";
  c.use_dora = true;
  auto g = ApplyLora(OneLinear(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Report dora = TrainSgdAt(*g, M);
  Report base = TrainSgdAt(OneLinear(), M);
  // lora_A [r, in], lora_B [out, r], magnitude [out]: all that trains.
  EXPECT_EQ(dora.trainable_params, r * in + out * r + out);
  EXPECT_EQ(dora.params, base.params + r * in + out * r + out);
  // Forward FLOPs added, op by op (2 FLOPs per FMA):
  // lora_B(lora_A(eye(in)))
  const int64_t lora_weight = 2 * in * in * r + 2 * in * r * out;
  const int64_t norm = out * in /*s * BA*/ + out * in /*W + .*/ +
                       (2 * out * in - out) /*squares, sums*/;
  // magnitude / norm
  const int64_t scale = out;
  // lora_B(lora_A(x))
  const int64_t lora_result = 2 * M * in * r + 2 * M * r * out;
  const int64_t combine = M * out /*y - b*/ + out /*scale - 1*/ +
                          4 * M * out /*2 muls, * s, +*/ + M * out /*y + .*/;
  EXPECT_EQ(*dora.flops.AsConstant() - *base.flops.AsConstant(),
            lora_weight + norm + scale + lora_result + combine);
  // One sqrt per row norm.
  EXPECT_EQ(
      *dora.transcendentals.AsConstant() - *base.transcendentals.AsConstant(),
      out);
}

TEST(DoraTest, WithDropoutTheBaseIsRecomputedOnTheDroppedInput) {
  const int64_t M = 5, in = 16, out = 12, r = 2;
  LoraConfig c;
  c.rank = r;
  c.alpha = 2;
  c.dropout = 0.1;
  c.targets = "q_proj";
  c.use_dora = true;
  auto g = ApplyLora(OneLinear(), c);
  ASSERT_TRUE(g.ok());
  int linears = 0, subs = 0, dropouts = 0;
  for (const auto& n : g->nodes) {
    linears += n.op == "aten::linear";
    subs += n.op == "aten::sub";
    dropouts += n.op == "aten::dropout";
  }
  // base, A(eye), B(.), A(x), B(.), and F.linear(dropout(x), W) again; no y -
  // b.
  EXPECT_EQ(linears, 6);
  EXPECT_EQ(dropouts, 1);
  EXPECT_EQ(subs, 1);  // Only (mag_norm_scale - 1).
  Report dora = TrainSgdAt(*g, M);
  EXPECT_EQ(dora.trainable_params, r * in + out * r + out);
}

TEST(DoraTest, Conv1dNormsTheTransposedWeight) {
  // transformers' Conv1D: addmm(b, x, W) with W [in, out] = [16, 12]. peft's
  // DoraLinearLayer(fan_in_fan_out=True): get_weight_norm transposes W (a view,
  // aten::numpy_T) before W.T + s * BA, so the row norms are the output's:
  // magnitude [out]; the FLOPs equal the Linear's.
  const int64_t M = 5, in = 16, out = 12, r = 4;
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("attn.c_attn_weight", {in, out});
  int bias = b.Param("attn.c_attn_bias", {out});
  b.Scope("attn", "GPT2Attention");
  b.Output(b.One("aten::addmm", {bias, x, w}, {"self", "mat1", "mat2"}));
  LoraConfig c;
  c.rank = r;
  c.alpha = 8;
  c.targets = "c_attn";
  c.use_dora = true;
  auto g = ApplyLora(b.graph(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  int transposes = 0;
  for (const auto& n : g->nodes) transposes += n.op == "aten::numpy_T";
  EXPECT_EQ(transposes, 2);  // lora_B(lora_A(eye)).T and transpose(W).
  Report dora = TrainSgdAt(*g, M);
  Report base = TrainSgdAt(b.graph(), M);
  EXPECT_EQ(dora.trainable_params, r * in + out * r + out);
  const int64_t lora_weight = 2 * in * in * r + 2 * in * r * out;
  const int64_t norm = out * in + out * in + (2 * out * in - out);
  const int64_t lora_result = 2 * M * in * r + 2 * M * r * out;
  const int64_t combine = M * out + out + 4 * M * out + M * out;
  EXPECT_EQ(*dora.flops.AsConstant() - *base.flops.AsConstant(),
            lora_weight + norm + out + lora_result + combine);
  EXPECT_EQ(
      *dora.transcendentals.AsConstant() - *base.transcendentals.AsConstant(),
      out);
}

TEST(DoraTest, ConvolutionsAreRefused) {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("conv.weight", {8, 3, 3, 3});
  b.Scope("conv", "Conv2d");
  b.Output(b.One(
      "aten::conv2d",
      {x, w, b.None(), b.Ints({1, 1}), b.Ints({1, 1}), b.Ints({1, 1}),
       b.Int(1)},
      {"input", "weight", "bias", "stride", "padding", "dilation", "groups"}));
  LoraConfig c;
  c.targets = "conv";
  c.use_dora = true;
  EXPECT_THAT(ApplyLora(b.graph(), c).status().message(),
              ::testing::HasSubstr("dora on the convolution layer 'conv'"));
}

}  // namespace
}  // namespace torchcost
