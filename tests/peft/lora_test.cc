// Tests of the LoRA rewrite: the adapters' parameters, what trains, and the
// FLOPs the adapter ops add, derived from the LoRA update y = Wx + b +
// B(Ax)*alpha/r.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/analyze_graph.h"
#include "testing/built_models.h"
#include "testing/builtin_rules.h"
#include "testing/graph_builder.h"
#include "testing/linear_graphs.h"
#include "testing/timeline.h"
#include "torchcost/analysis.h"
#include "torchcost/builder.h"
#include "torchcost/families.h"
#include "torchcost/peft.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using testing::CategoryMax;
using testing::GraphBuilder;
using ::testing::HasSubstr;
using testing::TwoLinears;

// Trains a graph on a [5, 16] input with SGD.
Report Analyze(const ir::Graph& g, sym::Context& ctx) {
  AnalysisOptions opts;
  opts.training.optimizer = OptimizerKind::kSgd;
  return testing::AnalyzeGraph(g, testing::BuiltinRules(), ctx, opts, "5,16");
}

TEST(LoraTest, AdaptersTrainAndTheBaseIsFrozen) {
  LoraConfig c;
  c.rank = 4;
  c.alpha = 8;
  c.targets = "q_proj";
  auto g = ApplyLora(TwoLinears(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  sym::Context ctx;
  Report r = Analyze(*g, ctx);
  const int64_t base = 12 * 16 + 12 + 16 * 12 + 16;
  const int64_t adapters = 4 * 16 /*A [r, in]*/ + 12 * 4 /*B [out, r]*/;
  EXPECT_EQ(r.params, base + adapters);
  EXPECT_EQ(r.trainable_params, adapters);
  EXPECT_EQ(r.training.grad_params, adapters);
  // Forward FLOPs added: x A^T (2*M*in*r), (.) B^T (2*M*r*out), * scaling
  // (M*out), + base (M*out).
  sym::Context base_ctx;
  Report plain = Analyze(TwoLinears(), base_ctx);
  const int64_t M = 5;
  EXPECT_EQ(*r.flops.AsConstant() - *plain.flops.AsConstant(),
            2 * M * 16 * 4 + 2 * M * 4 * 12 + M * 12 + M * 12);
}

TEST(LoraTest, DropoutAndSeveralTargets) {
  auto c = ParseLoraConfig("r=2,alpha=4,dropout=0.1,targets=q_proj|o_proj");
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto g = ApplyLora(TwoLinears(), *c);
  ASSERT_TRUE(g.ok());
  int dropouts = 0, linears = 0;
  for (const auto& n : g->nodes) {
    dropouts += n.op == "aten::dropout";
    linears += n.op == "aten::linear";
  }
  EXPECT_EQ(dropouts, 2);
  EXPECT_EQ(linears, 2 + 2 * 2);
  sym::Context ctx;
  Report r = Analyze(*g, ctx);
  EXPECT_EQ(r.trainable_params, (2 * 16 + 12 * 2) + (2 * 12 + 16 * 2));
}

TEST(LoraTest, AllLinearLeavesTheOutputLayer) {
  auto c = ParseLoraConfig("r=2,targets=all-linear");
  ASSERT_TRUE(c.ok());
  auto g = ApplyLora(TwoLinears(), *c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  sym::Context ctx;
  // q_proj only: o_proj produces the output (peft excludes the output layer).
  EXPECT_EQ(Analyze(*g, ctx).trainable_params, 2 * 16 + 12 * 2);
}

// x [M, 16] -> transformers' Conv1D as GPT-2's attention writes it:
// addmm(c_attn_bias, x, c_attn_weight) with the weight [in, out] = [16, 12],
// a parameter of the "attn" module (as tools/make_fixtures.py's GPT2).
ir::Graph OneConv1d() {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("attn.c_attn_weight", {16, 12});
  int bias = b.Param("attn.c_attn_bias", {12});
  b.Scope("attn", "GPT2Attention");
  b.Output(b.One("aten::addmm", {bias, x, w}, {"self", "mat1", "mat2"}));
  return b.graph();
}

TEST(LoraTest, Conv1dIsAdaptedAsPeftWithFanInFanOut) {
  // peft's lora.Linear on a Conv1D (fan_in_fan_out=True): in_features,
  // out_features = weight.shape = (16, 12), so A [r, 16] and B [12, r], as on a
  // Linear 16 -> 12.
  auto c = ParseLoraConfig("r=4,alpha=8,targets=c_attn");
  ASSERT_TRUE(c.ok());
  auto g = ApplyLora(OneConv1d(), *c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  sym::Context ctx;
  Report r = Analyze(*g, ctx);
  EXPECT_EQ(r.trainable_params, 4 * 16 + 12 * 4);
  EXPECT_EQ(r.params, 16 * 12 + 12 + 4 * 16 + 12 * 4);
  bool named = false;
  for (const auto& p : g->params)
    named |= p.name == "attn.c_attn.lora_A.weight";
  EXPECT_TRUE(named);
  // The adapter's forward FLOPs, as on the Linear: 2*M*in*r + 2*M*r*out + M*out
  // (* s) + M*out (+).
  sym::Context base_ctx;
  Report plain = Analyze(OneConv1d(), base_ctx);
  const int64_t M = 5;
  EXPECT_EQ(*r.flops.AsConstant() - *plain.flops.AsConstant(),
            2 * M * 16 * 4 + 2 * M * 4 * 12 + M * 12 + M * 12);
  // A module named by its weight: "attn.c_attn" (whole-path targets work too).
  EXPECT_TRUE(
      ApplyLora(OneConv1d(), *ParseLoraConfig("targets=attn.c_attn")).ok());
  EXPECT_FALSE(ApplyLora(OneConv1d(), *ParseLoraConfig("targets=attn")).ok());
}

// TwoLinears with its parameters in bfloat16 (model.to(torch.bfloat16) before
// peft wraps it).
ir::Graph TwoLinearsBf16() {
  ir::Graph g = TwoLinears();
  for (auto& p : g.params) p.dtype = DType::kBFloat16;
  return g;
}

// Trains a graph on a bfloat16 input with AdamW.
Report AnalyzeBf16(const ir::Graph& g, sym::Context& ctx) {
  AnalysisOptions opts;
  opts.training.optimizer = OptimizerKind::kAdamW;
  return testing::AnalyzeGraph(g, testing::BuiltinRules(), ctx, opts,
                               "5,16:bfloat16");
}

TEST(LoraTest, AdapterDtypeOnABf16Base) {
  // peft's default (autocast_adapter_dtype=True): float32 adapters on a bf16
  // base, the adapter's input cast to float32 (x.to(lora_A.weight.dtype)) and
  // the sum cast back; dtype=bf16 keeps the adapters in the base's dtype: both
  // casts are aliases. A [4, 16] and B [12, 4] on q_proj: 112 elements.
  const int64_t adapters = 4 * 16 + 12 * 4, M = 5;
  auto c32 = ParseLoraConfig("r=4,targets=q_proj");
  auto c16 = ParseLoraConfig("r=4,targets=q_proj,dtype=bf16");
  ASSERT_TRUE(c32.ok() && c16.ok());
  EXPECT_EQ(c32->adapter_dtype, DType::kFloat32);
  EXPECT_EQ(c16->adapter_dtype, DType::kBFloat16);
  sym::Context ctx32, ctx16;
  Report r32 = AnalyzeBf16(*ApplyLora(TwoLinearsBf16(), *c32), ctx32);
  Report r16 = AnalyzeBf16(*ApplyLora(TwoLinearsBf16(), *c16), ctx16);
  // AdamW: exp_avg and exp_avg_sq in the adapters' dtype, + a float32 step per
  // tensor (2).
  EXPECT_EQ(CategoryMax(r32, MemCategory::kOpt), 2 * adapters * 4 + 2 * 4);
  EXPECT_EQ(CategoryMax(r16, MemCategory::kOpt), 2 * adapters * 2 + 2 * 4);
  EXPECT_EQ(CategoryMax(r32, MemCategory::kGrad), adapters * 4);
  EXPECT_EQ(CategoryMax(r16, MemCategory::kGrad), adapters * 2);
  // Saved for backward (the frozen base saves nothing: its input needs no
  // gradient, its weight none): lora_A its input x [M, 16] (float32: the cast
  // copy; bf16: x itself), lora_B its input A x [M, 4]; `* scaling` keeps a
  // 0-dim float64, the host's on CUDA (no device bytes).
  EXPECT_EQ(*r32.training.saved_bytes.AsConstant(), M * 16 * 4 + M * 4 * 4);
  EXPECT_EQ(*r16.training.saved_bytes.AsConstant(), M * 16 * 2 + M * 4 * 2);
}

TEST(LoraTest, Errors) {
  EXPECT_THAT(
      ApplyLora(TwoLinears(), LoraConfig{8, 8, 0.0, "k_proj"})
          .status()
          .message(),
      HasSubstr(
          "no Linear or Conv1D layer in a module matching targets 'k_proj'"));
  // A sequence-parallel linear (the builder's sp=true) takes no adapter.
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("q_proj.weight", {12, 16});
  b.Scope("q_proj", "Linear");
  b.Output(b.One("torchcost::sp_linear", {x, w}, {"input", "weight"}));
  EXPECT_THAT(
      ApplyLora(b.graph(), LoraConfig{8, 8, 0.0, "q_proj"}).status().message(),
      HasSubstr("lora: 'q_proj' is a sequence-parallel linear (sp=true)"));
  EXPECT_THAT(ParseLoraConfig("r=0").status().message(),
              HasSubstr("r=0 must be a positive integer"));
  EXPECT_THAT(ParseLoraConfig("rank8").status().message(),
              HasSubstr("'rank8' is not key=value"));
  EXPECT_THAT(ParseLoraConfig("beta=2").status().message(),
              HasSubstr("unknown key 'beta'"));
  EXPECT_THAT(ParseLoraConfig("dropout=1.5").status().message(),
              HasSubstr("must be in [0, 1)"));
  EXPECT_THAT(ParseLoraConfig("dtype=int8").status().message(),
              HasSubstr("dtype=int8 is not a float dtype"));
}

TEST(LoraTest, AdaptersOnExpertsAreActiveForTheRoutedExpertsOnly) {
  // A mixture of experts (Mixtral's names), 2 layers, hidden h = 64, 8 experts
  // of width I = 32, top 2; LoRA of rank r = 4 on q_proj and on every
  // expert's w1, w2, w3: each expert gains r (h + I) per projection, 3 r (h +
  // I) in all, and a token still runs top_k of the E experts. Inactive: per
  // layer, E - top_k experts' weights and adapters; q_proj's adapters are
  // always active.
  constexpr int64_t kH = 64, kI = 32, kE = 8, kK = 2, kR = 4, kLayers = 2;
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "llama",
      "layers=2,hidden=64,heads=4,kv_heads=4,intermediate=32,vocab=100,"
      "experts=8,top_k=2,classes=Mixtral");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const int64_t base_params = testing::AnalyzeBuilt(*m, ctx).params;
  StepConfig config = StepConfigFor(*m);
  config.method = "lora:r=4,targets=q_proj|w1|w2|w3";
  Result<StepAnalysis> step =
      AnalyzeStep(m->graph, testing::BuiltinRules(), config);
  ASSERT_TRUE(step.ok()) << step.status().message();
  const Report& r = step->report;
  const int64_t expert_weights = 3 * kH * kI;
  const int64_t per_expert_adapters = 3 * kR * (kH + kI);
  const int64_t q_adapters = kR * (kH + kH);
  EXPECT_EQ(r.params,
            base_params + kLayers * (q_adapters + kE * per_expert_adapters));
  EXPECT_EQ(r.trainable_params,
            kLayers * (q_adapters + kE * per_expert_adapters));
  EXPECT_EQ(r.inactive_params,
            kLayers * (kE - kK) * (expert_weights + per_expert_adapters));
}

}  // namespace
}  // namespace torchcost
