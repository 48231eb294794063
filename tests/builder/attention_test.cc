// The families' attention implementations (attn=eager|sdpa|flash, window=):
// build/attention.{h,cc}, and what each saves, derived by hand from the rules'
// sources (rules/attention.yaml: PyTorch's derivatives.yaml and sdp_utils.cpp,
// flash-attn's FlashAttnFunc) and Hugging Face's attention functions.
#include "builder/attention.h"

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

// 2 layers, hidden 64, 4 heads of 16, 2 K/V heads (grouped), float32.
constexpr const char* kLlama =
    "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256";
constexpr int64_t kLayers = 2, kHeads = 4, kKvHeads = 2, kHd = 16;

// ACT at B = 1 and S = s.
int64_t SavedAt(const Report& r, int64_t s) {
  Result<int64_t> v =
      sym::Evaluate(r.training.saved_bytes, {{"B", 1}, {"S", s}});
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *v : -1;
}

// Twice the S^2 coefficient of ACT (at B = 1): its second difference in S.
// ACT is a polynomial of degree <= 2 in S, so f(s+2) - 2 f(s+1) + f(s) = 2a
// (s = 65..67: memory-efficient's logsumexp rows ceildiv(S, 32)*32 = 96
// throughout).
int64_t TwiceScoreBytesPerS2(const std::string& config) {
  Result<BuiltModel> m = BuildNamedModel("llama", config);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return -1;
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  return SavedAt(r, 67) - 2 * SavedAt(r, 66) + SavedAt(r, 65);
}

TEST(AttentionBuildTest, RopeTablesAreMadeOncePerForward) {
  // LlamaModel.forward makes position_embeddings once (rotary_emb) and passes
  // them to every layer (transformers modeling_llama.py at 5dd4a63): one cos
  // and one sin node however many layers, each read by the q and k RoPE of
  // every layer (x * cos, rotate_half(x) * sin).
  for (int layers : {1, 2, 5}) {
    for (const char* extra : {"", ",attn=eager", ",phase=decode"}) {
      const std::string config = "layers=" + std::to_string(layers) +
                                 ",hidden=64,heads=4,kv_heads=2,intermediate="
                                 "128,vocab=256" +
                                 extra;
      Result<BuiltModel> m = BuildNamedModel("llama", config);
      ASSERT_TRUE(m.ok()) << m.status().message();
      const ir::Graph& g = m->graph;
      for (const char* op : {"aten::cos", "aten::sin"}) {
        int nodes = 0, readers = 0;
        for (const ir::Node& n : g.nodes) {
          if (n.op != op) continue;
          ++nodes;
          EXPECT_EQ(g.scopes[n.scope].path, "rotary_emb") << config;
          // The table is the cast of the node's output to the model's dtype
          // (float32 here: the cast returns its input, so it is read by the
          // cast and by every RoPE).
          for (const ir::Node& user : g.nodes) {
            if (user.op != "aten::mul") continue;
            for (int v : user.inputs) {
              const int p = g.values[v].producer;
              if (p >= 0 && g.nodes[p].op == "aten::to" &&
                  g.values[g.nodes[p].inputs[0]].producer >= 0 &&
                  g.nodes[g.values[g.nodes[p].inputs[0]].producer].op == op)
                ++readers;
            }
          }
        }
        EXPECT_EQ(nodes, 1) << op << " " << config;
        EXPECT_EQ(readers, 2 * layers) << op << " " << config;
      }
    }
  }
}

TEST(AttentionBuildTest, ParsesTheImplementations) {
  AttnImpl impl = AttnImpl::kEager;
  EXPECT_TRUE(ParseAttnImpl("sdpa", &impl));
  EXPECT_EQ(impl, AttnImpl::kSdpa);
  // Hugging Face's name
  EXPECT_TRUE(ParseAttnImpl("flash_attention_2", &impl));
  EXPECT_EQ(impl, AttnImpl::kFlash);
  EXPECT_FALSE(ParseAttnImpl("fast", &impl));
  EXPECT_EQ(AttnImplError("eager"), "");
  EXPECT_THAT(AttnImplError("fast"),
              HasSubstr("attn='fast' is not eager, sdpa or flash"));
  Result<BuiltModel> bad = BuildNamedModel("gpt2", "layers=1,attn=xformers");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("attn='xformers'"));
  bad = BuildNamedModel("vit", "layers=1,attn=flash");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("torchvision"));
  bad = BuildNamedModel("llama", std::string(kLlama) + ",window=-1");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("window=-1"));
}

TEST(AttentionBuildTest, TheScoresLeaveTheSavedBytes) {
  // eager: softmax's float32 output [B, H, S, S] is saved (by softmax and the
  // A V matmul, one storage): 4 bytes x H per S^2 per layer, so 2a = 2 * 2 * 4
  // * 4.
  EXPECT_EQ(TwiceScoreBytesPerS2(std::string(kLlama) + ",attn=eager"),
            2 * kLayers * kHeads * 4);
  // flash: q, k, v, out, softmax_lse, rng_state: nothing grows with S^2.
  EXPECT_EQ(TwiceScoreBytesPerS2(std::string(kLlama) + ",attn=flash"), 0);
  // sdpa without grouping (kv_heads = heads), float32 on CUDA: memory-efficient
  // (flash needs half precision): nothing grows with S^2 either.
  EXPECT_EQ(TwiceScoreBytesPerS2("layers=2,hidden=64,heads=4,kv_heads=4,"
                                 "intermediate=128,vocab=256,attn=sdpa"),
            0);
  // sdpa with grouped K/V in float32: no flash, and memory-efficient takes no
  // grouped K/V (sdp_utils.cpp), so PyTorch runs the math path, which saves the
  // float32 weights [B, H, S, S]: the S^2 term is back, as in eager.
  EXPECT_EQ(TwiceScoreBytesPerS2(std::string(kLlama) + ",attn=sdpa"),
            2 * kLayers * kHeads * 4);
  // sdpa with Mistral's window: Hugging Face materializes a bool [B, 1, S, S]
  // mask; memory-efficient converts it to a float32 bias and keeps it per
  // layer: 4 bytes per S^2 per layer (the bool mask itself is not saved).
  EXPECT_EQ(TwiceScoreBytesPerS2(std::string(kLlama) + ",attn=sdpa,window=16"),
            2 * kLayers * 4);
}

TEST(AttentionBuildTest, FlashKeepsGroupedKvAndTheLogsumexp) {
  Result<BuiltModel> m =
      BuildNamedModel("llama", std::string(kLlama) + ",attn=flash");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  const sym::Expr B = ctx.Symbol("B"), S = ctx.Symbol("S");
  // Per layer, flash_attn_func saves (float32, [B, S, heads, hd]): q (the RoPE
  // output) B*S*4*16*4, k and v with the 2 K/V heads B*S*2*16*4 each (no
  // repeat), out B*S*4*16*4, softmax_lse float32 [B, 4, S] and rng_state int64
  // [2].
  const sym::Expr per_layer =
      B * S * kHeads * kHd * 4 + 2 * (B * S * kKvHeads * kHd * 4) +
      B * S * kHeads * kHd * 4 + B * kHeads * S * 4 + 16;
  sym::Expr flash_saved(0);
  int flash_nodes = 0;
  for (size_t ni = 0; ni < m->graph.nodes.size(); ++ni) {
    if (m->graph.nodes[ni].op != "flash_attn::flash_attn_func") continue;
    ++flash_nodes;
    for (const SavedTensorInfo& s : r.training.saved) {
      if (s.node == static_cast<int>(ni)) flash_saved += s.bytes;
    }
  }
  EXPECT_EQ(flash_nodes, kLayers);
  EXPECT_EQ(flash_saved, kLayers * per_layer) << flash_saved.ToString();
  // No repeated K/V anywhere: no repeat_interleave and no expand in the graph.
  for (const auto& node : m->graph.nodes) {
    EXPECT_NE(node.op, "aten::repeat_interleave");
    EXPECT_NE(node.op, "aten::expand");
  }
}

TEST(AttentionBuildTest, SdpaOnFlashOrEfficientSavesWhatFlashAttnSaves) {
  // Without grouping, float32, S = 64 (a multiple of 32, so memory-efficient's
  // logsumexp padding adds nothing): SDPA saves q, k, v, out, the float32
  // logsumexp [B, H, S] and the philox seed and offset (8 + 8); flash_attn_func
  // saves the same storages, softmax_lse [B, H, S] and rng_state (16 bytes).
  const std::string base =
      "layers=2,hidden=64,heads=4,kv_heads=4,intermediate=128,vocab=256";
  sym::Context ctx;
  const Report sdpa =
      AnalyzeBuilt(*BuildNamedModel("llama", base + ",attn=sdpa"), ctx);
  const Report flash =
      AnalyzeBuilt(*BuildNamedModel("llama", base + ",attn=flash"), ctx);
  EXPECT_EQ(SavedAt(sdpa, 64), SavedAt(flash, 64));
  // At S = 65 memory-efficient's logsumexp has 96 rows, flash's 65: 31 rows x 4
  // heads x 4 bytes per layer.
  EXPECT_EQ(SavedAt(sdpa, 65) - SavedAt(flash, 65), kLayers * 31 * kHeads * 4);
}

TEST(AttentionBuildTest, FlashWindowCountsTheBand) {
  // window=16 -> window_size (15, 15), causal: min(S, 16) keys per query row.
  // The core's forward FLOPs at B = 1, S = 64: SC = 4 heads * 64 rows * 16
  // keys; Q K^T and P V 2*SC*16 each, scale, mask, softmax 4: 6*SC.
  Result<BuiltModel> m =
      BuildNamedModel("llama", std::string(kLlama) + ",attn=flash,window=16");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  const int64_t sc = kHeads * 64 * 16;
  for (size_t ni = 0; ni < m->graph.nodes.size(); ++ni) {
    if (m->graph.nodes[ni].op != "flash_attn::flash_attn_func") continue;
    Result<int64_t> f = sym::Evaluate(r.nodes[ni].flops, {{"B", 1}, {"S", 64}});
    ASSERT_TRUE(f.ok());
    EXPECT_EQ(*f, 2 * (2 * sc * kHd) + 6 * sc);
  }
}

TEST(AttentionBuildTest, GptAndVitBuildSdpa) {
  // GPT-2: one scaled_dot_product_attention per layer, causal, with attn_pdrop.
  Result<BuiltModel> g = BuildNamedModel(
      "gpt2", "layers=2,hidden=64,heads=4,vocab=512,context=128");
  ASSERT_TRUE(g.ok()) << g.status().message();
  int sdpa = 0, softmax = 0;
  for (const auto& node : g->graph.nodes) {
    sdpa += node.op == "aten::scaled_dot_product_attention";
    softmax += node.op == "aten::softmax";
  }
  EXPECT_EQ(sdpa, 2);
  EXPECT_EQ(softmax, 0);
  // ViT (torch 2.x nn.MultiheadAttention, need_weights=False): SDPA too.
  Result<BuiltModel> v = BuildNamedModel(
      "vit",
      "image_size=32,patch=8,layers=2,hidden=64,heads=4,mlp=128,classes=10");
  ASSERT_TRUE(v.ok()) << v.status().message();
  sdpa = 0;
  for (const auto& node : v->graph.nodes)
    sdpa += node.op == "aten::scaled_dot_product_attention";
  EXPECT_EQ(sdpa, 2);
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*v, ctx);
  EXPECT_TRUE(r.diagnostics.empty()) << r.diagnostics[0].message;
}

TEST(AttentionBuildTest, BackendWithNothingToActOnIsSaid) {
  sym::Context ctx;
  // eager: no scaled_dot_product_attention node, so --attention-backend flash
  // acts on nothing.
  const Report eager = AnalyzeBuilt(
      *BuildNamedModel("llama", std::string(kLlama) + ",attn=eager"), ctx,
      "flash");
  ASSERT_EQ(eager.diagnostics.size(), 1u);
  EXPECT_EQ(eager.diagnostics[0].severity, Diagnostic::Severity::kWarning);
  EXPECT_THAT(eager.diagnostics[0].message,
              HasSubstr("attention backend 'flash' applies to no node"));
  // flash_attn_func is flash-attn's own kernel: the backend does not apply
  // either.
  const Report flash = AnalyzeBuilt(
      *BuildNamedModel("llama", std::string(kLlama) + ",attn=flash"), ctx,
      "efficient");
  ASSERT_EQ(flash.diagnostics.size(), 1u);
  EXPECT_THAT(flash.diagnostics[0].message, HasSubstr("'efficient'"));
  // sdpa: the backend applies; auto never warns.
  EXPECT_TRUE(AnalyzeBuilt(
                  *BuildNamedModel("llama", std::string(kLlama) + ",attn=sdpa"),
                  ctx, "math")
                  .diagnostics.empty());
  EXPECT_TRUE(
      AnalyzeBuilt(
          *BuildNamedModel("llama", std::string(kLlama) + ",attn=eager"), ctx)
          .diagnostics.empty());
}

}  // namespace
}  // namespace torchcost::builder
