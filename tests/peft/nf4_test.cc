// Tests of QLoRA's 4-bit base (bitsandbytes' NF4 with double quantization),
// derived from the QLoRA paper (Dettmers et al. 2023, section 3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/analyze_graph.h"
#include "testing/builtin_rules.h"
#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "torchcost/analysis.h"
#include "torchcost/peft.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;

TEST(Nf4Test, DoubleQuantizationCosts4Point127BitsPerParameter) {
  // The paper: 4-bit codes, plus 8/64 bits of uint8 block constants per weight,
  // plus 32/(64*256) bits of their float32 constants: 4.127 bits.
  QloraConfig c;
  const int64_t n = int64_t{4096} * 4096;
  const int64_t constants = 4 /*offset*/ + 16 * 4 /*NF4 code table*/;
  EXPECT_EQ(Nf4WeightBytes(n, c),
            n / 2 + n / 64 + 4 * (n / 64 / 256) + constants);
  const double bits = 8.0 * (Nf4WeightBytes(n, c) - constants) / n;
  EXPECT_NEAR(bits, 4 + 8.0 / 64 + 32.0 / (64 * 256), 1e-12);
  // Without double quantization: float32 constants, 4 + 32/64 = 4.5 bits.
  c.double_quant = false;
  EXPECT_EQ(Nf4WeightBytes(n, c), n / 2 + 4 * (n / 64) + 16 * 4);
  // Ragged sizes round up: 100 weights: 50 bytes, 2 blocks, 1 float32 of
  // absmax2.
  c.double_quant = true;
  EXPECT_EQ(Nf4WeightBytes(100, c), 50 + 2 + 4 + constants);
}

// x [M, 64] -> up (Linear 64 -> 128) -> head (Linear 128 -> 32, the output).
ir::Graph UpAndHead() {
  GraphBuilder b;
  int x = b.Input();
  int wu = b.Param("up.weight", {128, 64});
  int bu = b.Param("up.bias", {128});
  int wh = b.Param("head.weight", {32, 128});
  b.Scope("up", "Linear");
  int h = b.One("aten::linear", {x, wu, bu}, {"input", "weight", "bias"});
  b.Scope("head", "Linear");
  b.Output(
      b.One("aten::linear", {h, wh, b.None()}, {"input", "weight", "bias"}));
  return b.graph();
}

Report TrainAdamWBf16At(const ir::Graph& g, int64_t m) {
  sym::Context ctx;
  AnalysisOptions opts;
  opts.training.optimizer = OptimizerKind::kAdamW;
  Report r = testing::AnalyzeGraph(g, testing::BuiltinRules(), ctx, opts,
                                   std::to_string(m) + ",64:bf16");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << d.message;
  return r;
}

TEST(Nf4Test, LinearWeightsButTheHeadArePacked) {
  QloraConfig c;
  auto g = QuantizeNf4(UpAndHead(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const int64_t M = 3, n = 128 * 64;
  Report r = TrainAdamWBf16At(*g, M);
  EXPECT_EQ(r.trainable_params, 0);
  // up: packed + constants; its bias and the head in bfloat16.
  EXPECT_EQ(r.param_bytes, Nf4WeightBytes(n, c) + 2 * 128 + 2 * 32 * 128);
  // up's forward: dequantize (one multiply per weight and per uint8 block
  // constant), the matmul (2 per FMA), the bias; the head unchanged.
  const int64_t up = (n + n / 64) + 2 * M * 64 * 128 + M * 128;
  const int64_t head = 2 * M * 128 * 32;
  EXPECT_EQ(*r.flops.AsConstant(), up + head);
}

TEST(Nf4Test, PackedWeightsCountAsTheWeightsTheyStore) {
  // peft's get_nb_trainable_parameters counts a Params4bit as numel x 2 (its
  // uint8 [n/2, 1] codes: n) and bitsandbytes keeps absmax and the code table
  // in a quant_state, no parameter (huggingface/peft@5d602fd,
  // src/peft/peft_model.py, lines 937-956): the model's own count.
  QloraConfig c;
  auto g = QuantizeNf4(UpAndHead(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Report r = TrainAdamWBf16At(*g, 3);
  const int64_t up = 128 * 64 + 128, head = 32 * 128;
  EXPECT_EQ(r.params, up + head);
  EXPECT_EQ(r.quantized_params, 128 * 64);
  for (const ModuleStats& m : r.modules) {
    if (g->scopes[m.scope].path == "up") EXPECT_EQ(m.params, up);
  }
  // The bytes stay the stored ones (LinearWeightsButTheHeadArePacked).
  EXPECT_EQ(r.param_bytes, Nf4WeightBytes(128 * 64, c) + 2 * 128 + 2 * head);
  // The dense model: nothing quantized.
  EXPECT_EQ(TrainAdamWBf16At(UpAndHead(), 3).quantized_params, 0);
}

TEST(Nf4Test, SequenceParallelLinearsAreRefused) {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("q_proj.weight", {12, 16});
  b.Scope("q_proj", "Linear");
  b.Output(b.One("torchcost::sp_linear", {x, w}, {"input", "weight"}));
  EXPECT_THAT(QuantizeNf4(b.graph(), QloraConfig()).status().message(),
              ::testing::HasSubstr(
                  "qlora: 'q_proj' is a sequence-parallel linear (sp=true)"));
}

TEST(Nf4Test, QloraTrainsFloat32AdaptersOnTheQuantizedLayers) {
  auto c = ParseQloraConfig("r=4,alpha=8");
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto g = ApplyQlora(UpAndHead(), *c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  Report r = TrainAdamWBf16At(*g, 3);
  // Adapters on every Linear but the output layer (peft's all-linear): up's A
  // [4, 64], B [128, 4].
  EXPECT_EQ(r.trainable_params, 4 * 64 + 128 * 4);
  // AdamW keeps two float32 moments per trainable element, plus a 4-byte step
  // each.
  int64_t opt = 0;
  for (const auto& p : g->params) {
    if (p.requires_grad) opt += 8 * (p.shape[0] * p.shape[1]) + 4;
  }
  const PeakInfo peak = EvaluatePeak(r.training, {});
  EXPECT_EQ(*peak.category_max[testing::kOpt].AsConstant(), opt);
  EXPECT_THAT(ParseQloraConfig("block=3").status().message(),
              ::testing::HasSubstr("positive even integer"));
  EXPECT_THAT(ParseQloraConfig("dora=true").status().message(),
              ::testing::HasSubstr("not modelled"));
  EXPECT_THAT(ParseQloraConfig("gamma=1").status().message(),
              ::testing::HasSubstr("unknown key 'gamma'"));
}

}  // namespace
}  // namespace torchcost
