// The decoders Hugging Face configs describe that the llama family builds
// (TranslateLlamaLike, hf_translate.h): which keys size which tensors, their
// defaults when absent, and the per-architecture extras (biases, norms,
// windows, multipliers, experts), each read at the modeling code's commit
// named below.
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "builder/hf_translate.h"

namespace torchcost::builder {
namespace {

using Json = nlohmann::json;

// Gemma-2's and Gemma-3's attention keys, at their config classes' defaults
// when absent.
struct GemmaAttention {
  double attn_cap = 0, logit_cap = 0, query_scalar = 256;
  int64_t window = 4096;
  int64_t window_pattern = 0;  // Gemma-3: every P-th layer global.
  double rope_local_base = 0;  // Gemma-3: the windowed layers' RoPE base.
};

// Gemma-3's window pattern from a layer_types list: P when every P-th layer
// is full_attention and the others sliding_attention (0: all sliding); any
// other list fails on the key.
int64_t WindowPatternOf(HfKeys& k, const Json& types, int64_t layers) {
  int64_t pattern = 0;
  for (size_t i = 0; i < types.size() && pattern == 0; ++i) {
    if (types[i] == "full_attention") pattern = static_cast<int64_t>(i) + 1;
  }
  bool matches = static_cast<int64_t>(types.size()) == layers;
  for (size_t i = 0; matches && i < types.size(); ++i) {
    const bool full =
        pattern > 0 && (static_cast<int64_t>(i) + 1) % pattern == 0;
    matches = types[i] == (full ? "full_attention" : "sliding_attention");
  }
  if (!matches)
    k.Fail("layer_types", types.dump() +
                              " is not supported (every P-th layer "
                              "full_attention, the others sliding_attention, "
                              "one per layer)");
  return pattern;
}

// Reads Gemma2Config's (soft-caps 50 and 30 when absent, a null one off,
// every other layer windowed) or Gemma3TextConfig's (no soft-caps,
// sliding_window_pattern 6, rope_local_base_freq 10000) attention keys.
GemmaAttention ReadGemmaAttention(bool gemma3, int64_t layers, HfKeys& k,
                                  FamilyConfig& out) {
  GemmaAttention g;
  if (!gemma3) {
    g.attn_cap = k.Given("attn_logit_softcapping") ? 0 : 50.0;
    g.logit_cap = k.Given("final_logit_softcapping") ? 0 : 30.0;
  }
  k.OptDouble("attn_logit_softcapping", &g.attn_cap);
  k.OptDouble("final_logit_softcapping", &g.logit_cap);
  k.OptDouble("query_pre_attn_scalar", &g.query_scalar);
  k.OptInt("sliding_window", &g.window);
  if (g.attn_cap < 0)
    k.Fail("attn_logit_softcapping", Num(g.attn_cap) + " must be >= 0");
  if (g.logit_cap < 0)
    k.Fail("final_logit_softcapping", Num(g.logit_cap) + " must be >= 0");
  if (g.query_scalar <= 0)
    k.Fail("query_pre_attn_scalar", Num(g.query_scalar) + " must be positive");
  if (!gemma3) {
    if (k.Has("sliding_window_size"))
      out.notes.push_back(
          "sliding_window_size is not read (Gemma2Config reads "
          "sliding_window)");
    return g;
  }
  g.window_pattern = 6;
  g.rope_local_base = 10000.0;
  k.OptInt("sliding_window_pattern", &g.window_pattern);
  k.OptDouble("rope_local_base_freq", &g.rope_local_base);
  if (g.rope_local_base <= 0)
    k.Fail("rope_local_base_freq",
           Num(g.rope_local_base) + " must be positive");
  // Newer configs list each layer's kind instead.
  const Json types = k.Raw("layer_types");
  if (types.is_array()) g.window_pattern = WindowPatternOf(k, types, layers);
  return g;
}

}  // namespace

// llama, mistral, qwen2, qwen3, gemma, gemma2, gemma3_text, granite, olmo2,
// phi3: decoder-only, RMSNorm, RoPE, gated MLP.
// Read at these commits of huggingface/transformers:
//   llama   src/transformers/models/llama/modeling_llama.py
//   002272831fba584eb30dca9729c1be456836960a mistral
//   src/transformers/models/mistral/modeling_mistral.py (as llama; no
//   attention_bias; sliding_window) qwen2
//   src/transformers/models/qwen2/modeling_qwen2.py
//   00d4b3d2142cb4ced2f51b90614b5d26bc045015
//           (q_proj, k_proj, v_proj bias=True, o_proj bias=False)
//   gemma   src/transformers/models/gemma/modeling_gemma.py
//   0125ac68d92d1866341d531c52af7165af06f3e9
//           (head_dim from the config, GemmaRMSNorm (1 + w), embeddings *
//           sqrt(hidden), hidden_activation (None: gelu_pytorch_tanh;
//           hidden_act ignored), tied by default)
//   phi3    src/transformers/models/phi3/modeling_phi3.py
//   00d4b3d2142cb4ced2f51b90614b5d26bc045015
//           (qkv_proj and gate_up_proj fused, no biases, sliding_window,
//           resid_pdrop)
//   gemma2  src/transformers/models/gemma2/modeling_gemma2.py
//   006e86931247d7bacf94ad00ada1fb6baf11e94b
//           (gemma's layers, plus post_attention_layernorm on the attention
//           output and pre/post_feedforward_layernorm around the MLP; scores *
//           query_pre_attn_scalar**-0.5; attn_logit_softcapping and
//           final_logit_softcapping as cap * tanh(x / cap); sliding_window on
//           the even layers (is_sliding = not layer_idx % 2))
//   qwen3   src/transformers/models/qwen3/modeling_qwen3.py
//   9ee3f431c32e9e5f6c0888f6b2b0ca3f6c289dd6
//           (q_norm, k_norm: RMSNorm over each head's head_dim before RoPE;
//           attention_bias on q, k, v and o; Qwen3MoeSparseMoeBlock at
//           16b6c53c8ec3a720bd45c1c377bf94e1d01249c5 has no shared expert)
//   granite src/transformers/models/granite/modeling_granite.py
//   b6dd89b47daad100034ac4e3b7beb2101f07d7f1
//           (inputs_embeds * embedding_multiplier, scores *
//           attention_multiplier, residual + branch * residual_multiplier,
//           logits / logits_scaling)
//   olmo2   src/transformers/models/olmo2/modeling_olmo2.py
//   7264638d7b0ab5841670813ebed806189b8f7b71
//           (q_norm, k_norm over the whole q and k projections before the
//           view; no input_layernorm: post_attention_layernorm and
//           post_feedforward_layernorm on each branch before its add)
//   gemma3_text src/transformers/models/gemma3/modeling_gemma3.py
//   f14d0cbc824e447ef294d8cdc0f8ad4222f3dfee
//           (gemma2's layers without soft-caps by default, q_norm and k_norm,
//           sliding_window_pattern, rotary_emb_local from
//           rope_local_base_freq, Gemma3TextScaledWordEmbedding's embed_scale
//           buffer; configuration_gemma3.py at
//           d98ac17cc00f337eeee9a1e2380072dc8cafabd4)
void TranslateLlamaLike(const std::string& type, HfKeys& k, FamilyConfig& out) {
  out.family = "llama";
  const bool gemma2 = type == "gemma2", gemma3 = type == "gemma3_text";
  const bool gemma = type == "gemma" || gemma2 || gemma3, phi3 = type == "phi3";
  const bool mistral = type == "mistral" || type == "mixtral",
             qwen2 = type == "qwen2" || type == "qwen2_moe",
             qwen3 = type == "qwen3" || type == "qwen3_moe",
             granite = type == "granite", olmo2 = type == "olmo2";
  int64_t layers = 0, hidden = 0, heads = 0, inter = 0, vocab = 0;
  k.Int("num_hidden_layers", &layers);
  k.Int("hidden_size", &hidden);
  k.Int("num_attention_heads", &heads);
  k.Int("intermediate_size", &inter);
  k.Int("vocab_size", &vocab);
  // Every config class: num_key_value_heads None -> num_attention_heads.
  int64_t kv = heads;
  k.OptInt("num_key_value_heads", &kv);
  // The config classes' defaults.
  double eps = phi3 || olmo2 ? 1e-5 : 1e-6;
  k.OptDouble("rms_norm_eps", &eps);
  const double theta = RopeTheta(k, out);
  bool tie = gemma;  // GemmaConfig ties by default; the others do not.
  k.OptBool("tie_word_embeddings", &tie);
  // GemmaConfig's and Qwen3Config's defaults; else hidden / heads.
  int64_t head_dim = gemma ? 256 : qwen3 ? 128 : 0;
  k.OptInt("head_dim", &head_dim);

  std::string act = "silu";
  if (gemma) {
    // GemmaMLP: ACT2FN[hidden_activation], gelu_pytorch_tanh when None;
    // hidden_act is ignored.
    std::string name = "gelu_pytorch_tanh";
    k.OptString("hidden_activation", &name);
    act = Activation(k, "hidden_activation", name);
    if (k.Has("hidden_act"))
      out.notes.push_back(
          "hidden_act is ignored, as GemmaMLP ignores it (hidden_activation "
          "rules)");
  } else {
    std::string name = "silu";
    k.OptString("hidden_act", &name);
    act = Activation(k, "hidden_act", name);
  }

  bool qkv_bias = qwen2, o_bias = false, mlp_bias = false;
  if (type == "llama" || gemma || qwen3 || granite || olmo2) {
    // q, k, v and o (LlamaAttention, GemmaAttention, Qwen3Attention,
    // GraniteAttention, Olmo2Attention).
    bool attention_bias = false;
    k.OptBool("attention_bias", &attention_bias);
    qkv_bias = o_bias = attention_bias;
  }
  if (type == "llama" || granite) k.OptBool("mlp_bias", &mlp_bias);
  // GraniteConfig's multipliers, 1.0 by default: applied even then (each a
  // new tensor).
  double embedding_multiplier = 0, residual_multiplier = 0, logits_scaling = 0,
         attention_multiplier = 0;
  if (granite) {
    embedding_multiplier = residual_multiplier = logits_scaling =
        attention_multiplier = 1.0;
    k.OptDouble("embedding_multiplier", &embedding_multiplier);
    k.OptDouble("residual_multiplier", &residual_multiplier);
    k.OptDouble("logits_scaling", &logits_scaling);
    k.OptDouble("attention_multiplier", &attention_multiplier);
    for (const auto& [key, value] :
         {std::pair{"embedding_multiplier", embedding_multiplier},
          {"residual_multiplier", residual_multiplier},
          {"logits_scaling", logits_scaling},
          {"attention_multiplier", attention_multiplier}}) {
      if (!(value > 0)) k.Fail(key, Num(value) + " must be positive");
    }
  }

  int64_t window = 0;
  GemmaAttention ga;
  if (gemma2 || gemma3) {
    ga = ReadGemmaAttention(gemma3, layers, k, out);
    window = ga.window;
  }
  if (mistral || phi3) {
    k.OptInt("sliding_window", &window);
  } else if (qwen2 || qwen3) {
    bool use = false;
    k.OptBool("use_sliding_window", &use);
    if (use)
      k.Fail("use_sliding_window",
             "true is not supported (Qwen2 and Qwen3 window the layers from "
             "max_window_layers on; "
             "the llama family windows all or none)");
  }
  int64_t rotary_dim = 0;
  if (phi3) {
    // Phi3RotaryEmbedding: dim = int(head_dim * partial_rotary_factor) of each
    // head rotated (Phi-4-mini: 0.75), the rest passed through.
    double partial = 1.0;
    k.OptDouble("partial_rotary_factor", &partial);
    const int64_t hd = head_dim > 0 ? head_dim : heads > 0 ? hidden / heads : 0;
    rotary_dim = static_cast<int64_t>(static_cast<double>(hd) * partial);
    if (!(partial > 0 && partial <= 1) || rotary_dim % 2 != 0)
      k.Fail("partial_rotary_factor",
             Num(partial) +
                 " must be in (0, 1] and rotate an even number of "
                 "dims (int(head_dim * factor) = " +
                 Int(rotary_dim) + ")");
    if (partial == 1.0) rotary_dim = 0;
    NoteDropout(k, "resid_pdrop", "llama", out);
    NoteDropout(k, "embd_pdrop", "llama", out);
  }
  NoteDropout(k, "attention_dropout", "llama", out);

  // Mixture of experts: mixtral (MixtralSparseMoeBlock, modeling_mixtral.py at
  // 00d4b3d2142cb4ced2f51b90614b5d26bc045015: num_local_experts experts of
  // intermediate_size, top num_experts_per_tok renormalized), qwen2_moe
  // (Qwen2MoeSparseMoeBlock: num_experts of moe_intermediate_size, a shared
  // expert of shared_expert_intermediate_size behind a sigmoid gate,
  // norm_topk_prob). Router losses and jitter are training extras of the loss,
  // not of the layers.
  int64_t experts = 0, top_k = 2, expert_inter = 0, shared_inter = 0;
  bool norm_topk = true;
  if (type == "mixtral") {
    experts = 8;  // MixtralConfig's defaults.
    k.OptInt("num_local_experts", &experts);
    k.OptInt("num_experts_per_tok", &top_k);
    double jitter = 0;
    k.OptDouble("router_jitter_noise", &jitter);
    if (jitter != 0)
      out.notes.push_back(
          "router_jitter_noise=" + Num(jitter) +
          " is not modelled (one elementwise multiply in training)");
  } else if (type == "qwen2_moe" || type == "qwen3_moe") {
    // Qwen2MoeConfig's and Qwen3MoeConfig's defaults; Qwen3-MoE has no shared
    // expert.
    const bool shared = type == "qwen2_moe";
    experts = shared ? 60 : 128, top_k = shared ? 4 : 8,
    expert_inter = shared ? 1408 : 768, shared_inter = shared ? 5632 : 0,
    norm_topk = false;
    k.OptInt("num_experts", &experts);
    k.OptInt("num_experts_per_tok", &top_k);
    k.OptInt("moe_intermediate_size", &expert_inter);
    if (shared)
      k.OptInt("shared_expert_intermediate_size", &shared_inter,
               /*allow_zero=*/true);
    k.OptBool("norm_topk_prob", &norm_topk);
    int64_t step = 1;
    k.OptInt("decoder_sparse_step", &step);
    if (step != 1)
      k.Fail("decoder_sparse_step",
             Int(step) + " is not supported (every layer sparse: 1)");
    const Json dense = k.Raw("mlp_only_layers");
    if (!dense.is_null() && !(dense.is_array() && dense.empty()) &&
        dense != Json("[]"))
      k.Fail("mlp_only_layers",
             dense.dump() + " is not supported (every layer sparse: [])");
  }
  if (experts > 0 && top_k > experts)
    k.Fail("num_experts_per_tok",
           Int(top_k) + " exceeds the " + Int(experts) + " experts");

  const char* classes = type == "llama"       ? "Llama"
                        : type == "mistral"   ? "Mistral"
                        : type == "mixtral"   ? "Mixtral"
                        : type == "qwen2"     ? "Qwen2"
                        : type == "qwen2_moe" ? "Qwen2Moe"
                        : type == "qwen3"     ? "Qwen3"
                        : type == "qwen3_moe" ? "Qwen3Moe"
                        : granite             ? "Granite"
                        : olmo2               ? "Olmo2"
                        : gemma2              ? "Gemma2"
                        : gemma3              ? "Gemma3"
                        : gemma               ? "Gemma"
                                              : "Phi3";
  out.items = {{"layers", Int(layers)},
               {"hidden", Int(hidden)},
               {"heads", Int(heads)},
               {"kv_heads", Int(kv)},
               {"intermediate", Int(inter)},
               {"vocab", Int(vocab)},
               {"eps", Num(eps)},
               {"rope_base", Num(theta)},
               {"tie", Bool(tie)},
               {"head_dim", Int(head_dim)},
               {"qkv_bias", Bool(qkv_bias)},
               {"o_bias", Bool(o_bias)},
               {"mlp_bias", Bool(mlp_bias)},
               {"qk_norm", Bool(qwen3 || gemma3 || olmo2)},
               {"qk_norm_full", Bool(olmo2)},
               {"rotary_dim", Int(rotary_dim)},
               {"post_norms", Bool(olmo2)},
               {"act", act},
               {"gemma", Bool(gemma)},
               {"fused", Bool(phi3)},
               {"window", Int(window)},
               {"prefix", "model"},
               {"classes", classes}};
  if (gemma3) {
    out.items.insert(out.items.end(),
                     {{"sandwich", "true"},
                      {"window_pattern", Int(ga.window_pattern)},
                      {"rope_local_base", Num(ga.rope_local_base)},
                      {"embed_scale_buffer", "true"},
                      {"attn_softcap", Num(ga.attn_cap)},
                      {"logit_softcap", Num(ga.logit_cap)},
                      {"query_scalar", Num(ga.query_scalar)}});
  }
  if (granite) {
    // NB: GraniteAttention multiplies the scores by attention_multiplier: the
    // family's query_scalar q gives q^-0.5, so q = attention_multiplier^-2.
    out.items.insert(out.items.end(),
                     {{"embedding_multiplier", Num(embedding_multiplier)},
                      {"residual_multiplier", Num(residual_multiplier)},
                      {"logits_scaling", Num(logits_scaling)},
                      {"query_scalar", Num(1.0 / (attention_multiplier *
                                                  attention_multiplier))}});
  }
  if (gemma2) {
    out.items.insert(out.items.end(), {{"sandwich", "true"},
                                       {"alternate_window", "true"},
                                       {"attn_softcap", Num(ga.attn_cap)},
                                       {"logit_softcap", Num(ga.logit_cap)},
                                       {"query_scalar", Num(ga.query_scalar)}});
  }
  if (experts > 0) {
    out.items.insert(out.items.end(),
                     {{"experts", Int(experts)},
                      {"top_k", Int(top_k)},
                      {"expert_intermediate", Int(expert_inter)},
                      {"shared_intermediate", Int(shared_inter)},
                      {"norm_topk", Bool(norm_topk)}});
  }
}

}  // namespace torchcost::builder
