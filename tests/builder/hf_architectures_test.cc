// Hugging Face configs per model_type: the parameter count of each config in
// examples/configs/ derived here from its keys by the modeling code's tensor
// shapes, equal to the model card's published count; tensor names, shapes and
// biases as the modeling code registers them; analysis without unknown ops.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "testing/built_models.h"
#include "torchcost/families.h"
#include "torchcost/hf_config.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

std::string Example(const std::string& name) {
  return std::string(TORCHCOST_SOURCE_DIR) + "/examples/configs/" + name;
}

// Builds the example config and returns its analysis' parameter count (tied
// weights once).
// The analysis of the named model `file` with `overrides`; its parameters, and
// the active ones (params - inactive_params).
struct AnalysedCounts {
  int64_t params = -1;
  int64_t active = -1;
};

AnalysedCounts AnalyseConfigFile(const std::string& file,
                                 const std::string& overrides = "") {
  Result<BuiltModel> m = BuildNamedModel(Example(file), overrides);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return {};
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  EXPECT_TRUE(r.unknown_ops.empty()) << file << ": " << r.unknown_ops[0].op;
  return {r.params, r.params - r.inactive_params};
}

int64_t AnalysedParams(const std::string& file,
                       const std::string& overrides = "") {
  return AnalyseConfigFile(file, overrides).params;
}

// Returns the shape of each parameter by qualified name (aliases included).
std::map<std::string, std::vector<int64_t>> Shapes(const BuiltModel& m) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const ir::TensorEntry& e : m.graph.params) {
    out[e.name] = e.shape;
    for (const std::string& a : e.aliases) out[a] = e.shape;
  }
  return out;
}

// A decoder of the llama kind: embed V*h; per layer q (h*H*d + bias), k and v
// (h*K*d + bias each), o (H*d*h + bias), gated MLP 3*h*I, two norms 2h; final
// norm h; head V*h unless tied.
struct Decoder {
  int64_t V, h, L, H, K, d, I;
  bool tied = false, qkv_bias = false, o_bias = false;
  int64_t Params() const {
    const int64_t attn = h * H * d + 2 * h * K * d + H * d * h +
                         (qkv_bias ? H * d + 2 * K * d : 0) + (o_bias ? h : 0);
    return V * h + L * (attn + 3 * h * I + 2 * h) + h + (tied ? 0 : V * h);
  }
};

TEST(HfArchitecturesTest, Llama2_7bMatchesTheModelCard) {
  // Llama-2-7b-hf: V 32000, h 4096, 32 layers, 32 heads (d = 4096 / 32 = 128),
  // 32 kv heads, I 11008, untied.
  const int64_t expected =
      Decoder{32000, 4096, 32, 32, 32, 128, 11008}.Params();
  // Meta's model card: 6.74B; the checkpoint's tensors sum to this.
  ASSERT_EQ(expected, 6738415616);
  EXPECT_EQ(AnalysedParams("Llama-2-7b-hf.json"), expected);
}

TEST(HfArchitecturesTest, Mistral7bMatchesTheModelCard) {
  // Mistral-7B-v0.1: V 32000, h 4096, 32 layers, 32 heads (d 128), 8 kv heads,
  // I 14336, untied.
  const int64_t expected = Decoder{32000, 4096, 32, 32, 8, 128, 14336}.Params();
  // The checkpoint's safetensors parameter count (7.24B).
  ASSERT_EQ(expected, 7241732096);
  EXPECT_EQ(AnalysedParams("Mistral-7B-v0.1.json"), expected);
}

TEST(HfArchitecturesTest, Qwen2_7bHasQkvBiasesAndMatchesTheModelCard) {
  // Qwen2-7B: V 152064, h 3584, 28 layers, 28 heads (d 128), 4 kv heads, I
  // 18944, untied; q, k, v biased (Qwen2Attention: bias=True), o not.
  Decoder q{152064, 3584, 28, 28, 4, 128, 18944};
  q.qkv_bias = true;
  const int64_t expected = q.Params();
  // The checkpoint's safetensors parameter count (7.62B).
  ASSERT_EQ(expected, 7615616512);
  EXPECT_EQ(AnalysedParams("Qwen2-7B.json"), expected);

  Result<BuiltModel> m =
      BuildNamedModel(Example("Qwen2-7B.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.0.self_attn.q_proj.bias"],
            (std::vector<int64_t>{28 * 128}));
  EXPECT_EQ(shapes["model.layers.0.self_attn.k_proj.bias"],
            (std::vector<int64_t>{4 * 128}));
  EXPECT_EQ(shapes["model.layers.0.self_attn.v_proj.bias"],
            (std::vector<int64_t>{4 * 128}));
  EXPECT_EQ(shapes.count("model.layers.0.self_attn.o_proj.bias"), 0u);
  EXPECT_EQ(shapes["lm_head.weight"], (std::vector<int64_t>{152064, 3584}));
}

TEST(HfArchitecturesTest, Gemma7bUsesItsHeadDimTiesAndMatchesTheModelCard) {
  // gemma-7b: V 256000, h 3072, 28 layers, 16 heads of head_dim 256 (16 * 256 =
  // 4096 != 3072), 16 kv heads, I 24576, tied (GemmaConfig's default).
  Decoder g{256000, 3072, 28, 16, 16, 256, 24576};
  g.tied = true;
  const int64_t expected = g.Params();
  ASSERT_EQ(expected, 8537680896);  // Google's gemma-7b: 8.54B.
  EXPECT_EQ(AnalysedParams("gemma-7b.json"), expected);

  Result<BuiltModel> m =
      BuildNamedModel(Example("gemma-7b.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.0.self_attn.q_proj.weight"],
            (std::vector<int64_t>{4096, 3072}));
  EXPECT_EQ(shapes["model.layers.0.self_attn.o_proj.weight"],
            (std::vector<int64_t>{3072, 4096}));
  // The alias of embed_tokens.
  EXPECT_EQ(shapes["lm_head.weight"], (std::vector<int64_t>{256000, 3072}));
  int gelu_tanh = 0;
  for (const ir::Node& n : m->graph.nodes) gelu_tanh += n.op == "aten::gelu";
  EXPECT_EQ(gelu_tanh, 1);  // GeGLU: one gelu per layer.
}

TEST(HfArchitecturesTest, Gemma2_9bHasFourNormsPerLayerAndMatchesTheModelCard) {
  // gemma-2-9b: V 256000, h 3584, 42 layers, 16 heads of head_dim 256, 8 kv
  // heads, I 14336, tied; Gemma2DecoderLayer adds pre_feedforward_layernorm and
  // post_feedforward_layernorm: 2h more per layer.
  Decoder g{256000, 3584, 42, 16, 8, 256, 14336};
  g.tied = true;
  const int64_t expected = g.Params() + 42 * 2 * 3584;
  // Google's gemma-2-9b: 9.24B; the checkpoint's safetensors count.
  ASSERT_EQ(expected, 9241705984);
  EXPECT_EQ(AnalysedParams("gemma-2-9b.json"), expected);

  // Two layers: layer 0 local (sliding_window 4096), layer 1 global; with eager
  // attention the local layer adds tril(-4096) to its mask. Soft-capping: one
  // tanh per layer's scores, one on the logits.
  Result<BuiltModel> m = BuildNamedModel(Example("gemma-2-9b.json"),
                                         "num_hidden_layers=2,attn=eager");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.1.pre_feedforward_layernorm.weight"],
            (std::vector<int64_t>{3584}));
  EXPECT_EQ(shapes["model.layers.1.post_feedforward_layernorm.weight"],
            (std::vector<int64_t>{3584}));
  int tanh = 0, tril = 0;
  for (const ir::Node& n : m->graph.nodes) {
    tanh += n.op == "aten::tanh";
    tril += n.op == "aten::tril";
  }
  EXPECT_EQ(tanh, 3);
  EXPECT_EQ(tril, 1);
  Result<BuiltModel> uncapped =
      BuildNamedModel(Example("gemma-2-9b.json"),
                      "num_hidden_layers=2,attn=eager,attn_logit_softcapping="
                      "null,final_logit_softcapping=null");
  ASSERT_TRUE(uncapped.ok()) << uncapped.status().message();
  tanh = 0;
  for (const ir::Node& n : uncapped->graph.nodes) tanh += n.op == "aten::tanh";
  EXPECT_EQ(tanh, 0);
}

TEST(HfArchitecturesTest, BertBaseUncasedMatchesThePublishedCounts) {
  // bert-base-uncased: V 30522, h 768, 12 layers, 12 heads, I 3072, 512
  // positions, 2 token types. BertModel: embeddings (V + 512 + 2) * h +
  // LayerNorm 2h; per layer q, k, v, dense 4(h^2 + h), two LayerNorms 4h, MLP
  // 2hI + I + h; pooler h^2 + h.
  const int64_t V = 30522, h = 768, L = 12, I = 3072;
  const int64_t body = (V + 512 + 2) * h + 2 * h +
                       L * (4 * (h * h + h) + 4 * h + 2 * h * I + I + h);
  const int64_t bert_model = body + h * h + h;
  // BertModel.from_pretrained("bert-base-uncased").num_parameters().
  ASSERT_EQ(bert_model, 109482240);
  // BertForMaskedLM: no pooler; the MLM transform h^2 + h and LayerNorm 2h, the
  // decoder's bias V (tied weight).
  const int64_t masked_lm = body + h * h + h + 2 * h + V;
  // BertForMaskedLM.from_pretrained("bert-base-uncased").num_parameters().
  ASSERT_EQ(masked_lm, 109514298);
  // architectures: ["BertForMaskedLM"].
  EXPECT_EQ(AnalysedParams("bert-base-uncased.json"), masked_lm);
  EXPECT_EQ(AnalysedParams("bert-base-uncased.json", "architectures=BertModel"),
            bert_model);
}

TEST(HfArchitecturesTest, T5SmallAndFlanT5BaseMatchThePublishedCounts) {
  // t5 per stack: blocks of self-attention 4*d*inner + norm d (the decoder's
  // also a cross-attention 4*d*inner + norm d), MLP (2 or 3)*d*d_ff + norm d; a
  // relative bias 32*H; a final norm d.
  auto stack = [](int64_t L, int64_t d, int64_t inner, int64_t ff, int64_t H,
                  bool gated, bool decoder) {
    return L * ((decoder ? 2 : 1) * (4 * d * inner + d) +
                (gated ? 3 : 2) * d * ff + d) +
           32 * H + d;
  };
  // t5-small: V 32128, d 512, 8 heads of 64, d_ff 2048, 6 + 6 blocks, ReLU,
  // tied.
  const int64_t small = 32128 * 512 +
                        stack(6, 512, 512, 2048, 8, false, false) +
                        stack(6, 512, 512, 2048, 8, false, true);
  // T5ForConditionalGeneration.from_pretrained("t5-small").num_parameters().
  ASSERT_EQ(small, 60506624);
  EXPECT_EQ(AnalysedParams("t5-small.json"), small);
  // flan-t5-base: d 768, 12 heads of 64, d_ff 2048 gated-gelu, 12 + 12 blocks,
  // untied.
  const int64_t flan = 2 * 32128 * 768 +
                       stack(12, 768, 768, 2048, 12, true, false) +
                       stack(12, 768, 768, 2048, 12, true, true);
  // google/flan-t5-base: 248M; the checkpoint's count.
  ASSERT_EQ(flan, 247577856);
  EXPECT_EQ(AnalysedParams("flan-t5-base.json"), flan);
}

TEST(HfArchitecturesTest, Phi3MiniFusesProjectionsAndMatchesTheModelCard) {
  // Phi-3-mini-4k: V 32064, h 3072, 32 layers, 32 heads (d 96), 32 kv heads, I
  // 8192, untied; qkv_proj [(32 + 2 * 32) * 96, 3072] and gate_up_proj [2 *
  // 8192, 3072] hold what q/k/v and gate/up would.
  const int64_t expected = Decoder{32064, 3072, 32, 32, 32, 96, 8192}.Params();
  // Microsoft's Phi-3-mini: 3.8B; the checkpoint's count.
  ASSERT_EQ(expected, 3821079552);
  EXPECT_EQ(AnalysedParams("Phi-3-mini-4k-instruct.json"), expected);

  Result<BuiltModel> m = BuildNamedModel(Example("Phi-3-mini-4k-instruct.json"),
                                         "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.0.self_attn.qkv_proj.weight"],
            (std::vector<int64_t>{9216, 3072}));
  EXPECT_EQ(shapes["model.layers.0.mlp.gate_up_proj.weight"],
            (std::vector<int64_t>{16384, 3072}));
  EXPECT_EQ(shapes.count("model.layers.0.self_attn.q_proj.weight"), 0u);
}

TEST(HfArchitecturesTest, Gpt2MatchesTheModelCard) {
  // gpt2: wte V*h + wpe n_positions*h + per layer 12h^2 + 13h + final LayerNorm
  // 2h, tied head.
  const int64_t V = 50257, h = 768, L = 12, n_ctx = 1024;
  const int64_t expected =
      V * h + n_ctx * h + L * (12 * h * h + 13 * h) + 2 * h;
  // OpenAI's GPT-2 small: 124M; the checkpoint's count.
  ASSERT_EQ(expected, 124439808);
  EXPECT_EQ(AnalysedParams("gpt2.json"), expected);
}

// GPT-NeoX: embed_in V*h; per layer two LayerNorms 4h, query_key_value 3h^2 +
// 3h, dense h^2 + h, MLP 2*h*I + I + h; final LayerNorm 2h; untied embed_out
// V*h.
int64_t NeoxParams(int64_t V, int64_t h, int64_t L, int64_t I) {
  return V * h +
         L * (4 * h + 3 * h * h + 3 * h + h * h + h + 2 * h * I + I + h) +
         2 * h + V * h;
}

TEST(HfArchitecturesTest, Pythia1bMatchesThePublishedCount) {
  // pythia-1b: V 50304, h 2048, 16 layers, 8 heads, I 8192.
  const int64_t expected = NeoxParams(50304, 2048, 16, 8192);
  // Biderman et al. 2023 (Pythia), Table 1: 1,011,781,632.
  ASSERT_EQ(expected, 1011781632);
  EXPECT_EQ(AnalysedParams("pythia-1b.json"), expected);
}

TEST(HfArchitecturesTest, GptNeox20bMatchesThePublishedCount) {
  // gpt-neox-20b: V 50432, h 6144, 44 layers, 64 heads, I 24576.
  const int64_t expected = NeoxParams(50432, 6144, 44, 24576);
  // Black et al. 2022 (GPT-NeoX-20B), Table 1: 20,554,567,680.
  ASSERT_EQ(expected, 20554567680);
  EXPECT_EQ(AnalysedParams("gpt-neox-20b.json"), expected);
}

TEST(HfArchitecturesTest, GptNeoxTensorsFollowTheModelingCode) {
  Result<BuiltModel> m =
      BuildNamedModel(Example("pythia-1b.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["gpt_neox.layers.0.attention.query_key_value.weight"],
            (std::vector<int64_t>{6144, 2048}));
  EXPECT_EQ(shapes["gpt_neox.layers.0.attention.query_key_value.bias"],
            (std::vector<int64_t>{6144}));
  EXPECT_EQ(shapes["gpt_neox.layers.0.mlp.dense_h_to_4h.bias"],
            (std::vector<int64_t>{8192}));
  EXPECT_EQ(shapes["embed_out.weight"], (std::vector<int64_t>{50304, 2048}));
  std::map<std::string, std::vector<int64_t>> buffers;
  for (const ir::TensorEntry& e : m->graph.buffers) buffers[e.name] = e.shape;
  // Rotary on int(256 * 0.25) = 64 dims: inv_freq 32, caches [2048, 64]; the
  // mask [1, 1, 2048, 2048].
  EXPECT_EQ(buffers["gpt_neox.layers.0.attention.rotary_emb.inv_freq"],
            (std::vector<int64_t>{32}));
  EXPECT_EQ(buffers["gpt_neox.layers.0.attention.rotary_emb.cos_cached"],
            (std::vector<int64_t>{2048, 64}));
  EXPECT_EQ(buffers["gpt_neox.layers.0.attention.bias"],
            (std::vector<int64_t>{1, 1, 2048, 2048}));
  // attention_bias=false drops query_key_value's and dense's biases: 3h + h
  // fewer.
  Result<BuiltModel> nb = BuildNamedModel(
      Example("pythia-1b.json"), "num_hidden_layers=1,attention_bias=false");
  ASSERT_TRUE(nb.ok()) << nb.status().message();
  EXPECT_EQ(Shapes(*nb).count("gpt_neox.layers.0.attention.dense.bias"), 0u);
}

TEST(HfArchitecturesTest, Mixtral8x7bHoldsEveryExpertAndMatchesTheModelCard) {
  // Mixtral-8x7B-v0.1: the Mistral-7B decoder (V 32000, h 4096, 32 layers, 32
  // heads of 128, 8 kv heads) with each MLP replaced by a router [8, 4096] and
  // 8 experts of 3 * 4096 * 14336.
  const int64_t V = 32000, h = 4096, L = 32, E = 8, I = 14336;
  const int64_t attn = 2 * h * h + 2 * h * 8 * 128;
  const int64_t expected =
      V * h + L * (attn + E * h + E * 3 * h * I + 2 * h) + h + V * h;
  ASSERT_EQ(expected, 46702792704);  // Mistral AI's Mixtral 8x7B: 46.7B total.
  const AnalysedCounts counts = AnalyseConfigFile("Mixtral-8x7B-v0.1.json");
  EXPECT_EQ(counts.params, expected);
  // Active: all but 8 - 2 = 6 experts per layer: 12.9B (Mistral AI: "12.9B
  // active parameters").
  const int64_t active = counts.active;
  EXPECT_EQ(active, expected - L * (E - 2) * 3 * h * I);
  EXPECT_EQ(active, 12879925248);

  Result<BuiltModel> m =
      BuildNamedModel(Example("Mixtral-8x7B-v0.1.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.0.block_sparse_moe.gate.weight"],
            (std::vector<int64_t>{8, 4096}));
  EXPECT_EQ(shapes["model.layers.0.block_sparse_moe.experts.7.w1.weight"],
            (std::vector<int64_t>{14336, 4096}));
  EXPECT_EQ(shapes["model.layers.0.block_sparse_moe.experts.7.w2.weight"],
            (std::vector<int64_t>{4096, 14336}));
}

TEST(HfArchitecturesTest, Qwen15MoeHasASharedExpertAndMatchesTheModelCard) {
  // Qwen1.5-MoE-A2.7B: V 151936, h 2048, 24 layers, 16 heads of 128 (q, k, v
  // biased); per layer a router [60, 2048], 60 experts of 3 * 2048 * 1408, a
  // shared expert of 3 * 2048 * 5632 and its gate [1, 2048].
  const int64_t V = 151936, h = 2048, L = 24, E = 60;
  const int64_t attn = 4 * h * h + 3 * h;
  const int64_t moe = E * h + E * 3 * h * 1408 + 3 * h * 5632 + h;
  const int64_t expected = V * h + L * (attn + moe + 2 * h) + h + V * h;
  // Qwen's model card: 14.3B total (2.7B activated).
  ASSERT_EQ(expected, 14315784192);
  const AnalysedCounts counts = AnalyseConfigFile("Qwen1.5-MoE-A2.7B.json");
  EXPECT_EQ(counts.params, expected);
  // Active: all but 60 - 4 = 56 routed experts per layer (the shared expert
  // always runs): 2.69B.
  const int64_t active = counts.active;
  EXPECT_EQ(active, expected - L * (E - 4) * 3 * h * 1408);
  EXPECT_EQ(active, 2689173504);
}

TEST(HfArchitecturesTest, Qwen3_8bNormsEachHeadAndMatchesTheModelCard) {
  // Qwen3-8B: V 151936, h 4096, 36 layers, 32 heads of head_dim 128, 8 kv
  // heads, I 12288, untied, no biases; Qwen3Attention adds q_norm and k_norm
  // ([head_dim] each) per layer.
  const int64_t L = 36, d = 128;
  const int64_t expected =
      Decoder{151936, 4096, L, 32, 8, d, 12288}.Params() + L * 2 * d;
  // Qwen's model card: 8.2B, of which 6.95B not embeddings (2 x V x h less).
  ASSERT_EQ(expected, 8190735360);
  ASSERT_EQ(expected - 2 * int64_t{151936} * 4096, 6946075648);
  EXPECT_EQ(AnalysedParams("Qwen3-8B.json"), expected);

  Result<BuiltModel> m =
      BuildNamedModel(Example("Qwen3-8B.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.0.self_attn.q_norm.weight"],
            (std::vector<int64_t>{d}));
  EXPECT_EQ(shapes["model.layers.0.self_attn.k_norm.weight"],
            (std::vector<int64_t>{d}));
  EXPECT_EQ(shapes.count("model.layers.0.self_attn.q_proj.bias"), 0u);
  std::map<std::string, std::string> types;
  for (const ir::Scope& s : m->graph.scopes) types[s.path] = s.type;
  EXPECT_EQ(types["model.layers.0.self_attn"], "Qwen3Attention");
  EXPECT_EQ(types["model.layers.0.self_attn.q_norm"], "Qwen3RMSNorm");
  // attention_bias biases q, k, v and o alike.
  Result<BuiltModel> biased = BuildNamedModel(
      Example("Qwen3-8B.json"), "num_hidden_layers=1,attention_bias=true");
  ASSERT_TRUE(biased.ok()) << biased.status().message();
  shapes = Shapes(*biased);
  EXPECT_EQ(shapes["model.layers.0.self_attn.k_proj.bias"],
            (std::vector<int64_t>{8 * d}));
  EXPECT_EQ(shapes["model.layers.0.self_attn.o_proj.bias"],
            (std::vector<int64_t>{4096}));
}

TEST(HfArchitecturesTest, Qwen3_30bA3bRoutesWithoutASharedExpert) {
  // Qwen3-30B-A3B: V 151936, h 2048, 48 layers, 32 heads of head_dim 128, 4 kv
  // heads, q_norm and k_norm; per layer a router [128, 2048] and 128 experts
  // of 3 * 2048 * 768, top 8, no shared expert.
  const int64_t V = 151936, h = 2048, L = 48, d = 128, E = 128, I = 768;
  const int64_t attn = h * 32 * d + 2 * h * 4 * d + 32 * d * h + 2 * d;
  const int64_t moe = E * h + E * 3 * h * I;
  const int64_t expected = V * h + L * (attn + moe + 2 * h) + h + V * h;
  // Qwen's model card: 30.5B in total, 29.9B not embeddings, 3.3B activated.
  ASSERT_EQ(expected, 30532122624);
  ASSERT_EQ(expected - 2 * V * h, 29909792768);
  const AnalysedCounts counts = AnalyseConfigFile("Qwen3-30B-A3B.json");
  EXPECT_EQ(counts.params, expected);
  // Active: all but 128 - 8 routed experts per layer.
  EXPECT_EQ(counts.active, expected - L * (E - 8) * 3 * h * I);
  EXPECT_EQ(counts.active, 3353032704);
}

TEST(HfArchitecturesTest,
     Gemma3_1bWindowsFiveLayersInSixAndMatchesTheModelCard) {
  // gemma-3-1b-it (gemma3_text): V 262144, h 1152, 26 layers, 4 heads of
  // head_dim 256, 1 kv head, I 6912, tied; Gemma-2's four norms per layer plus
  // q_norm and k_norm ([head_dim] each).
  const int64_t L = 26, h = 1152, d = 256;
  const int64_t expected =
      Decoder{262144, h, L, 4, 1, d, 6912, /*tied=*/true}.Params() +
      L * (2 * h + 2 * d);
  // Google's model card: 1B.
  ASSERT_EQ(expected, 999885952);
  EXPECT_EQ(AnalysedParams("gemma-3-1b-it.json"), expected);

  Result<BuiltModel> m = BuildNamedModel(Example("gemma-3-1b-it.json"), "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.0.self_attn.q_norm.weight"],
            (std::vector<int64_t>{d}));
  // Gemma3TextScaledWordEmbedding's 0-dim embed_scale, a buffer.
  ASSERT_EQ(m->graph.buffers.size(), 1u);
  EXPECT_EQ(m->graph.buffers[0].name, "model.embed_tokens.embed_scale");
  EXPECT_TRUE(m->graph.buffers[0].shape.empty());
  // sliding_window_pattern 6: layers 5, 11, 17 and 23 global, the others
  // windowed (512), their RoPE tables from rope_local_base_freq.
  bool local_tables = false;
  for (const ir::Scope& s : m->graph.scopes)
    local_tables = local_tables || s.path == "model.rotary_emb_local";
  EXPECT_TRUE(local_tables);
  Result<BuiltModel> decode =
      BuildNamedModel(Example("gemma-3-1b-it.json"), "phase=decode");
  ASSERT_TRUE(decode.ok()) << decode.status().message();
  ASSERT_EQ(decode->cache_windows.size(), static_cast<size_t>(2 * L));
  for (int64_t i = 0; i < L; ++i) {
    EXPECT_EQ(decode->cache_windows[2 * i], (i + 1) % 6 == 0 ? 0 : 512)
        << "layer " << i;
  }
}

TEST(HfArchitecturesTest, Gemma3LayerTypesMustFollowAPattern) {
  // Newer configs list layer_types: the pattern is read from them, anything
  // else refused by name.
  auto config = [](const std::string& types) {
    return R"({"model_type": "gemma3_text", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 4,
      "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 32,
      "vocab_size": 256, "sliding_window": 8, "layer_types": )" +
           types + "}";
  };
  Result<BuiltModel> listed = BuildHfConfigText(
      config(R"(["sliding_attention", "full_attention", "sliding_attention",
                 "full_attention"])"),
      "listed.json", "phase=decode");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  EXPECT_EQ(listed->cache_windows,
            (std::vector<int64_t>{8, 8, 0, 0, 8, 8, 0, 0}));
  Result<BuiltModel> odd = BuildHfConfigText(
      config(R"(["full_attention", "sliding_attention", "sliding_attention",
                 "sliding_attention"])"),
      "odd.json", "");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("odd.json: layer_types"),
            std::string::npos)
      << odd.status().message();
  // The multimodal config names what to give instead.
  Result<BuiltModel> mm = BuildHfConfigText(
      R"({"model_type": "gemma3", "text_config": {}})", "mm.json", "");
  ASSERT_FALSE(mm.ok());
  EXPECT_NE(mm.status().message().find("gemma3_text"), std::string::npos)
      << mm.status().message();
}

TEST(HfArchitecturesTest, GraniteAppliesItsFourMultipliers) {
  // The same tiny decoder as llama and as granite: granite adds
  // inputs_embeds * embedding_multiplier (h per token), branch *
  // residual_multiplier before each of the 2 residual adds per layer (2 L h
  // per token) and logits / logits_scaling (V per token); its scores are
  // multiplied by attention_multiplier where Llama's are divided by sqrt(hd):
  // one FLOP per score either way.
  const int64_t h = 64, L = 2, V = 128;
  const std::string body =
      R"("hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
         "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 128)";
  auto flops = [](const std::string& json) {
    Result<BuiltModel> m = BuildHfConfigText(json, "c.json", "");
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return int64_t{-1};
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    return *sym::Evaluate(r.flops, {{"B", 2}, {"S", 8}});
  };
  const int64_t llama = flops(R"({"model_type": "llama", )" + body + "}");
  // GraniteConfig's multipliers default to 1.0 and are applied even then.
  for (const std::string& multipliers :
       {std::string(), std::string(R"(, "embedding_multiplier": 12.0,
           "attention_multiplier": 0.0078125, "residual_multiplier": 0.22,
           "logits_scaling": 16.0)")}) {
    EXPECT_EQ(flops(R"({"model_type": "granite", )" + body + multipliers + "}"),
              llama + 2 * 8 * (h + 2 * L * h + V))
        << multipliers;
  }
  Result<BuiltModel> bad = BuildHfConfigText(
      R"({"model_type": "granite", "logits_scaling": 0, )" + body + "}",
      "bad.json", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("logits_scaling: 0 must be positive"),
            std::string::npos)
      << bad.status().message();
}

TEST(HfArchitecturesTest, Olmo2NormsWholeProjectionsAfterEachBranch) {
  // OLMo-2: q_norm [heads * hd] and k_norm [kv_heads * hd]; no
  // input_layernorm, its two norms post_attention_layernorm and
  // post_feedforward_layernorm.
  Result<BuiltModel> m = BuildHfConfigText(
      R"({"model_type": "olmo2", "hidden_size": 64, "intermediate_size": 128,
          "num_hidden_layers": 2, "num_attention_heads": 4,
          "num_key_value_heads": 2, "vocab_size": 128})",
      "olmo2.json", "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto shapes = Shapes(*m);
  EXPECT_EQ(shapes["model.layers.1.self_attn.q_norm.weight"],
            (std::vector<int64_t>{64}));
  EXPECT_EQ(shapes["model.layers.1.self_attn.k_norm.weight"],
            (std::vector<int64_t>{32}));
  EXPECT_EQ(shapes.count("model.layers.1.input_layernorm.weight"), 0u);
  EXPECT_EQ(shapes["model.layers.1.post_feedforward_layernorm.weight"],
            (std::vector<int64_t>{64}));
  // embed and head 128 x 64 each; per layer q, o 64 x 64, k, v 32 x 64, MLP
  // 3 x 64 x 128, q_norm 64, k_norm 32, two norms 128; final norm 64.
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  EXPECT_EQ(r.params,
            2 * 128 * 64 +
                2 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 64 * 128 + 64 + 32 + 128) +
                64);
}

TEST(HfArchitecturesTest, Phi3PartialRotaryRotatesTheFirstDimsOnly) {
  // partial_rotary_factor 0.75 on head_dim 16: the RoPE tables are [S, 12],
  // and q and k are each rebuilt by a cat of the rotated 12 dims and the 4
  // passed through.
  const std::string body =
      R"("model_type": "phi3", "hidden_size": 64, "intermediate_size": 128,
         "num_hidden_layers": 1, "num_attention_heads": 4,
         "num_key_value_heads": 2, "vocab_size": 128,
         "partial_rotary_factor": )";
  Result<BuiltModel> m = BuildHfConfigText("{" + body + "0.75}", "p.json", "");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  const ir::Graph& g = m->graph;
  int tables = 0, joins = 0;
  for (const ir::Node& n : g.nodes) {
    const ValueInfo& out = r.values[n.outputs[0]];
    const std::string& path = g.scopes[n.scope].path;
    if (n.op == "aten::cos") {
      ++tables;
      ASSERT_EQ(out.shape.size(), 2u);
      EXPECT_EQ(out.shape[1].AsConstant(), 12);
    }
    // The cat of [.., 12] and [.., 4] into [B, heads, S, 16].
    if (n.op == "aten::cat" && path == "model.layers.0.self_attn" &&
        out.shape.size() == 4 && out.shape[3].AsConstant() == 16) {
      ++joins;
    }
  }
  EXPECT_EQ(tables, 1);
  EXPECT_EQ(joins, 2);  // q and k.
  // int(16 * 0.5625) = 9 dims: RoPE rotates pairs.
  Result<BuiltModel> odd =
      BuildHfConfigText("{" + body + "0.5625}", "odd.json", "");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("rotate an even number of dims"),
            std::string::npos)
      << odd.status().message();
}

TEST(HfArchitecturesTest, EachLayerReadsItsOwnParameters) {
  // Layers after the first are copies of it (GraphBuilder::Replay): every
  // parameter must still be read, and only by nodes of its own module.
  for (const char* file :
       {"Llama-2-7b-hf.json", "Qwen2-7B.json", "Qwen3-8B.json", "gemma-7b.json",
        "gemma-2-9b.json", "gemma-3-1b-it.json", "Phi-3-mini-4k-instruct.json",
        "Mixtral-8x7B-v0.1.json", "Qwen1.5-MoE-A2.7B.json",
        "Qwen3-30B-A3B.json"}) {
    Result<BuiltModel> m =
        BuildNamedModel(Example(file), "num_hidden_layers=3");
    ASSERT_TRUE(m.ok()) << file << ": " << m.status().message();
    const ir::Graph& g = m->graph;
    std::vector<std::vector<int>> readers(g.values.size());
    for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
      for (int in : g.nodes[ni].inputs) readers[in].push_back(ni);
    }
    for (const ir::TensorEntry& p : g.params) {
      ASSERT_GE(p.value, 0) << file << ": " << p.name << " has no value";
      ASSERT_FALSE(readers[p.value].empty())
          << file << ": " << p.name << " is never read";
      // "model.layers.1.self_attn.q_norm.weight" -> its module's path.
      const std::string module = p.name.substr(0, p.name.rfind('.'));
      for (int ni : readers[p.value]) {
        const std::string& path = g.scopes[g.nodes[ni].scope].path;
        EXPECT_EQ(path.rfind(module, 0) == 0 ||
                      p.name.find("embed_tokens") != std::string::npos,
                  true)
            << file << ": " << p.name << " read in " << path;
      }
    }
  }
}

TEST(HfArchitecturesTest, MoeMacsCountTheRoutedTokens) {
  // One Mixtral layer at B*S = 4*16 = 64 tokens, top 2 of 8 (balanced): each
  // expert multiplies 64 * 2 / 8 = 16 tokens by its three 4096 x 14336
  // projections.
  Result<BuiltModel> m =
      BuildNamedModel(Example("Mixtral-8x7B-v0.1.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = AnalyzeBuilt(*m, ctx);
  bool found = false;
  for (size_t i = 0; i < m->graph.scopes.size(); ++i) {
    if (m->graph.scopes[i].path != "model.layers.0.block_sparse_moe.experts")
      continue;
    found = true;
    Result<int64_t> macs =
        sym::Evaluate(r.modules[i].macs, {{"B", 4}, {"S", 16}});
    ASSERT_TRUE(macs.ok()) << macs.status().message();
    EXPECT_EQ(*macs, int64_t{8} * 16 * 3 * 4096 * 14336);
  }
  EXPECT_TRUE(found);
}

TEST(HfArchitecturesTest, ModuleClassesFollowTheModelType) {
  Result<BuiltModel> m =
      BuildNamedModel(Example("Qwen2-7B.json"), "num_hidden_layers=1");
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::map<std::string, std::string> types;
  for (const ir::Scope& s : m->graph.scopes) types[s.path] = s.type;
  EXPECT_EQ(types["model"], "Qwen2Model");
  EXPECT_EQ(types["model.layers.0.self_attn"], "Qwen2Attention");
  EXPECT_EQ(types["model.layers.0.mlp"], "Qwen2MLP");
  EXPECT_EQ(types["model.norm"], "Qwen2RMSNorm");
}

TEST(HfArchitecturesTest, SlidingWindowIsRead) {
  // Mistral's sliding_window 4096 becomes the family's window: with sdpa, a [B,
  // 1, S, S] mask.
  Result<BuiltModel> with =
      BuildNamedModel(Example("Mistral-7B-v0.1.json"), "num_hidden_layers=1");
  Result<BuiltModel> without =
      BuildNamedModel(Example("Mistral-7B-v0.1.json"),
                      "num_hidden_layers=1,sliding_window=null");
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_GT(with->graph.nodes.size(), without->graph.nodes.size());
}

}  // namespace
}  // namespace torchcost::builder
