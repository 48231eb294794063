// Tensor parallelism of the transformer families (config key tp=t): one
// rank's parameters against Megatron's splits derived by hand, matmul MACs
// per rank 1/t of the whole model's, and the divisibility errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"
#include "torchcost/analysis.h"
#include "torchcost/families.h"
#include "torchcost/rules.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

using ::testing::HasSubstr;

// MACs of the matmul-class ops (the ones Megatron splits).
sym::Expr MatmulMacs(const Report& r) {
  sym::Expr macs(0);
  for (const OpStats& op : r.ops) {
    if (op.op == "aten::linear" || op.op == "aten::matmul" ||
        op.op == "aten::addmm" || op.op == "torchcost::sp_linear") {
      macs += op.macs;
    }
  }
  return macs;
}

constexpr const char* kGpt2 =
    "layers=2,hidden=64,heads=4,vocab=512,context=128";
constexpr const char* kLlama =
    "layers=2,hidden=64,heads=8,kv_heads=4,intermediate=128,vocab=256";

TEST(TensorParallelTest, Gpt2RankParamsAreMegatronsSplit) {
  const int64_t V = 512, h = 64, L = 2, n_ctx = 128;
  for (int64_t t : {1, 2, 4}) {
    SCOPED_TRACE("tp=" + std::to_string(t));
    // wte V/t*h (vocab-parallel) + wpe n_ctx*h (replicated) + per layer:
    // c_attn columns h*3h/t + 3h/t, attn c_proj rows (h/t)*h + bias h,
    // c_fc columns 4h/t*h + 4h/t, MLP c_proj rows h*4h/t + bias h, two
    // LayerNorms 4h; final LayerNorm 2h.
    const int64_t layer = h * 3 * h / t + 3 * h / t + h / t * h + h +
                          4 * h / t * h + 4 * h / t + h * 4 * h / t + h + 4 * h;
    const int64_t expected = V / t * h + n_ctx * h + L * layer + 2 * h;
    Result<BuiltModel> m = BuildNamedModel(
        "gpt2", std::string(kGpt2) + ",tp=" + std::to_string(t));
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    EXPECT_EQ(r.params, expected);
    EXPECT_TRUE(r.unknown_ops.empty());
  }
}

TEST(TensorParallelTest, LlamaRankParamsAreMegatronsSplit) {
  const int64_t V = 256, h = 64, heads = 8, kv = 4, hd = h / heads, I = 128,
                L = 2;
  for (int64_t t : {1, 2, 4}) {
    SCOPED_TRACE("tp=" + std::to_string(t));
    // embed and lm_head V/t*h each; per layer: q and o h*(heads/t*hd), k and
    // v h*(kv/t*hd), gate, up and down h*I/t, two RMSNorms 2h; final norm h.
    const int64_t layer = 2 * h * (heads / t * hd) + 2 * h * (kv / t * hd) +
                          3 * h * I / t + 2 * h;
    // Megatron pads the vocabulary to a multiple of 128 t at tp > 1: 256 for t
    // = 2, 512 for t = 4.
    const int64_t Vp = t == 1 ? V : (t == 2 ? 256 : 512);
    const int64_t expected = 2 * Vp / t * h + L * layer + h;
    Result<BuiltModel> m = BuildNamedModel(
        "llama", std::string(kLlama) + ",tp=" + std::to_string(t));
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    EXPECT_EQ(r.params, expected);
    EXPECT_TRUE(r.unknown_ops.empty());
  }
}

TEST(TensorParallelTest, ExpertsAreSplitLikeTheDenseMlp) {
  // 4 experts (top 2) of intermediate 96 and a shared expert of 64 (Qwen2-MoE's
  // kind): each expert's gate and up split by rows, down by columns; the
  // router [4, h] and the shared expert's gate [1, h] replicated; one
  // all-reduce of the block's output per layer.
  const int64_t V = 256, h = 64, heads = 8, kv = 4, hd = h / heads, L = 2,
                E = 4, I = 96, shared = 64;
  const std::string config = std::string(kLlama) +
                             ",experts=4,top_k=2,expert_intermediate=96,"
                             "shared_intermediate=64,make_vocab_size_"
                             "divisible_by=1";
  for (int64_t t : {1, 2, 4}) {
    SCOPED_TRACE("tp=" + std::to_string(t));
    const int64_t attn = 2 * h * (heads / t * hd) + 2 * h * (kv / t * hd);
    const int64_t moe = E * h + E * 3 * h * I / t + 3 * h * shared / t + h;
    const int64_t expected = 2 * V / t * h + L * (attn + moe + 2 * h) + h;
    Result<BuiltModel> m =
        BuildNamedModel("llama", config + ",tp=" + std::to_string(t));
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    EXPECT_EQ(r.params, expected);
    EXPECT_TRUE(r.unknown_ops.empty());
    // Attention's o_proj and the MoE block: two all-reduces per layer, and
    // the vocab-parallel embedding's one.
    int all_reduces = 0;
    for (const ir::Node& n : m->graph.nodes)
      all_reduces += n.op == "torchcost::all_reduce";
    EXPECT_EQ(all_reduces, t == 1 ? 0 : 2 * L + 1);
  }
  EXPECT_THAT(
      BuildNamedModel("llama", config + ",tp=2,ep=2").status().message(),
      HasSubstr("experts with tp=2 need ep=1 and sp=false"));
  EXPECT_THAT(
      BuildNamedModel("llama", std::string(kLlama) +
                                   ",experts=4,expert_intermediate=98,tp=4")
          .status()
          .message(),
      HasSubstr("expert_intermediate=98 is not divisible by tp=4"));
}

TEST(TensorParallelTest, MatmulMacsPerRankAreOneTth) {
  for (const char* family : {"gpt2", "llama"}) {
    const std::string config = family == std::string("gpt2") ? kGpt2 : kLlama;
    sym::Context ctx;
    const Report whole = AnalyzeBuilt(*BuildNamedModel(family, config), ctx);
    for (int64_t t : {2, 4}) {
      SCOPED_TRACE(std::string(family) + " tp=" + std::to_string(t));
      // make_vocab_size_divisible_by=1: no padding beyond t, so the rank's
      // vocabulary is V/t.
      const Report rank = AnalyzeBuilt(
          *BuildNamedModel(family, config +
                                       ",make_vocab_size_divisible_by=1,tp=" +
                                       std::to_string(t)),
          ctx);
      // Every matmul's output (or reduction) dim is split by t, so t ranks do
      // the whole model's MACs.
      EXPECT_EQ((sym::Expr(t) * MatmulMacs(rank)).ToString(),
                MatmulMacs(whole).ToString());
    }
  }
}

constexpr const char* kVit =
    "image_size=32,patch=8,layers=2,hidden=64,heads=4,mlp=128,classes=10";

TEST(TensorParallelTest, VitRankParamsAreMegatronsSplit) {
  const int64_t img = 32, p = 8, h = 64, mlp = 128, classes = 10, L = 2,
                seq = (img / p) * (img / p) + 1;
  for (int64_t t : {1, 2, 4}) {
    SCOPED_TRACE("tp=" + std::to_string(t));
    // Replicated: conv_proj h*3*p*p + h, class_token h, pos_embedding seq*h,
    // final LayerNorm 2h, head classes*h + classes. Per layer: in_proj rows
    // 3h/t*h + 3h/t, out_proj columns h*h/t + bias h, mlp.0 rows mlp/t*h +
    // mlp/t, mlp.3 columns h*mlp/t + bias h, two LayerNorms 4h.
    const int64_t layer = 3 * h / t * h + 3 * h / t + h * h / t + h +
                          mlp / t * h + mlp / t + h * mlp / t + h + 4 * h;
    const int64_t expected = h * 3 * p * p + h + h + seq * h + L * layer +
                             2 * h + classes * h + classes;
    Result<BuiltModel> m =
        BuildNamedModel("vit", std::string(kVit) + ",tp=" + std::to_string(t));
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    EXPECT_EQ(r.params, expected);
    EXPECT_TRUE(r.unknown_ops.empty());
  }
}

TEST(TensorParallelTest, VitEncoderMacsPerRankAreOneTth) {
  // The encoder blocks are split (linear and attention's bmm); patch embedding
  // and head are replicated.
  auto encoder_macs = [](const BuiltModel& m, const Report& r) {
    for (size_t i = 0; i < m.graph.scopes.size(); ++i) {
      if (m.graph.scopes[i].path == "encoder.layers") return r.modules[i].macs;
    }
    ADD_FAILURE() << "no encoder.layers";
    return sym::Expr(0);
  };
  sym::Context ctx;
  const BuiltModel whole_m = *BuildNamedModel("vit", kVit);
  const Report whole = AnalyzeBuilt(whole_m, ctx);
  for (int64_t t : {2, 4}) {
    const BuiltModel rank_m =
        *BuildNamedModel("vit", std::string(kVit) + ",tp=" + std::to_string(t));
    const Report rank = AnalyzeBuilt(rank_m, ctx);
    EXPECT_EQ((sym::Expr(t) * encoder_macs(rank_m, rank)).ToString(),
              encoder_macs(whole_m, whole).ToString());
  }
}

TEST(TensorParallelTest, IndivisibleDimsAreErrors) {
  Result<BuiltModel> m = BuildNamedModel("gpt2", std::string(kGpt2) + ",tp=3");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr("heads=4 is not divisible by tp=3"));
  m = BuildNamedModel("llama", std::string(kLlama) + ",tp=8");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr("kv_heads=4 is not divisible by tp=8"));
  m = BuildNamedModel("gpt2", "tp=2,make_vocab_size_divisible_by=0");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(
      m.status().message(),
      HasSubstr("make_vocab_size_divisible_by=0 must be a positive integer"));
  m = BuildNamedModel("vit", std::string(kVit) + ",tp=8");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr("heads=4 is not divisible by tp=8"));
  m = BuildNamedModel("llama", std::string(kLlama) + ",tp=0");
  ASSERT_FALSE(m.ok());
}

TEST(TensorParallelTest, VocabularyIsPaddedAsMegatronDoes) {
  // GPT-2's 50257 tokens at tp=8 (gpt2-medium: 16 heads): the next multiple of
  // 128 * 8 = 1024 is 50 * 1024 = 51200 (50257 / 1024 = 49.08); 6400 embedding
  // rows per rank, 943 dummy tokens.
  Result<BuiltModel> m = BuildNamedModel("gpt2-medium", "layers=1,tp=8");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const ir::Graph& g = m->graph;
  ASSERT_EQ(g.params.front().name, "wte.weight");
  EXPECT_EQ(g.params.front().shape, (std::vector<int64_t>{6400, 1024}));
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_THAT(m->notes[0],
              HasSubstr("vocab 50257 padded to 51200 (943 dummy tokens"));
  // A multiple of 1 pads only to tp: 50257 -> 50264 = 8 * 6283.
  m = BuildNamedModel("gpt2-medium",
                      "layers=1,tp=8,make_vocab_size_divisible_by=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->graph.params.front().shape[0], 6283);
  // LLaMA's 32000 at tp=2: 32000 = 125 * 256 already, nothing padded, no note.
  m = BuildNamedModel("llama-7b-like", "layers=1,tp=2");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->graph.params.front().shape[0], 16000);
  EXPECT_TRUE(m->notes.empty());
  // tp=1 keeps Hugging Face's unpadded vocabulary.
  m = BuildNamedModel("gpt2", "layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->graph.params.front().shape[0], 50257);
}

TEST(TensorParallelTest, TrainingTakesTheVocabParallelLoss) {
  // A rank's logits are its vocabulary slice: Megatron's GPTModel takes
  // vocab_parallel_cross_entropy of them; at tp=1 Hugging Face's causal-LM
  // loss; generating (LLaMA), none.
  auto loss = [](const char* family, const std::string& config) {
    Result<BuiltModel> m = BuildNamedModel(family, config);
    EXPECT_TRUE(m.ok()) << m.status().message();
    return m.ok() ? m->default_loss : "(not built)";
  };
  for (const char* family : {"gpt2", "llama"}) {
    SCOPED_TRACE(family);
    const std::string config = family == std::string("gpt2") ? kGpt2 : kLlama;
    EXPECT_EQ(loss(family, config + ",tp=2"), "vocab_parallel:world=2");
    EXPECT_EQ(loss(family, config + ",tp=2,sp=true"), "vocab_parallel:world=2");
    EXPECT_EQ(loss(family, config), "causal_lm");
  }
  EXPECT_EQ(loss("llama", std::string(kLlama) + ",tp=2,phase=decode"), "");
}

TEST(TensorParallelTest, SequenceParallelKeepsParamsAndMacsPerRank) {
  // sp moves activations, not weights or work: one rank's parameters and
  // matmul MACs are those of tp alone (S a multiple of t, bound here).
  for (const char* family : {"gpt2", "llama"}) {
    const std::string config =
        std::string(family == std::string("gpt2") ? kGpt2 : kLlama) + ",tp=2";
    SCOPED_TRACE(family);
    sym::Context ctx;
    const Report tp = AnalyzeBuilt(*BuildNamedModel(family, config), ctx);
    const Report sp =
        AnalyzeBuilt(*BuildNamedModel(family, config + ",sp=true"), ctx, "auto",
                     /*moved_bytes=*/true);
    EXPECT_EQ(sp.params, tp.params);
    EXPECT_TRUE(sp.unknown_ops.empty());
    // Every product (the gathering linears too) is timed at a tensor-core
    // peak, never at the vector rate.
    for (size_t ni = 0; ni < sp.nodes.size(); ++ni) {
      if (sp.nodes[ni].macs != sym::Expr(0))
        EXPECT_NE(sp.nodes[ni].op_class, OpClass::kPointwise) << ni;
    }
    for (int64_t S : {64, 128}) {
      const sym::Bindings at{{"B", 3}, {"S", S}};
      EXPECT_EQ(*sym::Evaluate(MatmulMacs(sp), at),
                *sym::Evaluate(MatmulMacs(tp), at));
    }
  }
}

TEST(TensorParallelTest, SequenceParallelNeedsTensorParallel) {
  Result<BuiltModel> m =
      BuildNamedModel("gpt2", std::string(kGpt2) + ",sp=true");
  ASSERT_TRUE(m.ok()) << m.status().message();
  ASSERT_EQ(m->notes.size(), 1u);
  EXPECT_THAT(m->notes[0], HasSubstr("sp=true has no effect at tp=1"));
  for (const ir::Node& n : m->graph.nodes)
    EXPECT_NE(n.op.rfind("torchcost::", 0), 0u) << n.op;
  m = BuildNamedModel("llama", std::string(kLlama) + ",sp=yes");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(),
              HasSubstr("sp=yes: value 'yes' is not true or false"));
}

TEST(TensorParallelTest, LlamaSequenceParallelDividesTheNormRegions) {
  // One layer's saved bytes (layers.1, float32) with sp minus without: only the
  // RMSNorm regions shrink to S/t. Per RMSNorm (HF's decomposition): its input
  // x (pow's and the normalizing mul's, one storage) 4sbh, rsqrt's result
  // [b, s, 1] 4sb, the normalized x*r (kept by weight * x) 4sbh, and its
  // output, the next linears' input, 4sbh (sp: the shard sp_linear keeps); two
  // per layer. (torch 1.13's MeanBackward1 also keeps x^2:
  // rules/reduction.yaml; the default models torch 2.x.)
  const int64_t b = 2, s = 64, h = 64, t = 2;
  const int64_t norms = 2 * (3 * 4 * s * b * h + 4 * s * b);
  auto layer_bytes = [&](const std::string& extra) {
    const BuiltModel m = *BuildNamedModel("llama", std::string(kLlama) + extra);
    sym::Context ctx;
    const Report r = AnalyzeBuilt(m, ctx);
    for (size_t i = 0; i < m.graph.scopes.size(); ++i) {
      if (m.graph.scopes[i].path == "layers.1")
        return *sym::Evaluate(r.training.module_act_bytes[i],
                              {{"B", b}, {"S", s}});
    }
    ADD_FAILURE() << "no layers.1";
    return int64_t{0};
  };
  EXPECT_EQ(layer_bytes(",tp=2") - layer_bytes(",tp=2,sp=true"),
            norms - norms / t);
}

}  // namespace
}  // namespace torchcost::builder
