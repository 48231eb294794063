// Per-architecture translations of Hugging Face configs into family configs.
// Each follows the model_type's modeling code in transformers (the file and
// commit read are named beside it): which keys size which tensors, their
// defaults when absent, biases, norms, tying and head_dim. A key whose value
// the family cannot express is an error naming it; one it expresses only in
// part is a note.
#include <charconv>
#include <string>
#include <vector>

#include "builder/hf_keys.h"

namespace torchcost::build {
namespace {

using Json = nlohmann::json;

std::string Int(int64_t v) { return std::to_string(v); }
std::string Bool(bool v) { return v ? "true" : "false"; }
// The shortest text that reads back as the same double.
std::string Num(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

// Notes a dropout probability the family does not apply.
void NoteDropout(HfKeys& k, const std::string& key, const std::string& family,
                 FamilyConfig& out) {
  double p = 0;
  k.OptDouble(key, &p);
  if (p != 0)
    out.notes.push_back(key + "=" + Num(p) + " is not modelled (the " + family +
                        " family applies no such dropout)");
}

// Reads the RoPE base: rope_theta, or rope_parameters.rope_theta (transformers
// 5's layout); rope_scaling changes the tables' values, not their cost.
double RopeTheta(HfKeys& k, FamilyConfig& out) {
  double theta = 10000.0;
  k.OptDouble("rope_theta", &theta);
  const Json params = k.Raw("rope_parameters");
  if (params.is_object() && params.contains("rope_theta") &&
      params["rope_theta"].is_number())
    theta = params["rope_theta"].get<double>();
  const Json scaling = k.Raw("rope_scaling");
  if (!scaling.is_null()) {
    out.notes.push_back(
        "rope_scaling " + scaling.dump() +
        ": changes the RoPE tables' values, not their shapes or cost");
  }
  return theta;
}

// The family's act for ACT2FN[name]: "silu", "gelu" (nn.GELU),
// "gelu_pytorch_tanh" (F.gelu(approximate='tanh')); others fail on `key`.
std::string Activation(HfKeys& k, const std::string& key,
                       const std::string& name) {
  if (name == "silu" || name == "swish") return "silu";
  if (name == "gelu") return "gelu";
  if (name == "gelu_pytorch_tanh") return "gelu_tanh";
  k.Fail(key,
         "'" + name + "' is not supported (silu, gelu, gelu_pytorch_tanh)");
  return "silu";
}

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

// gpt2: src/transformers/models/gpt2/modeling_gpt2.py at
// 0010f60284ab4b9d14b7df9c6525b1a2ad44e640 (GPT2LMHeadModel: learned
// positions, Conv1D projections with biases, n_inner None -> 4 * n_embd, tied
// head).
void TranslateGpt2(const std::string& type, HfKeys& k, FamilyConfig& out) {
  out.family = "gpt2";
  int64_t layers = 0, hidden = 0, heads = 0, vocab = 0, positions = 0;
  k.Int("n_layer", &layers);
  k.Int("n_embd", &hidden);
  k.Int("n_head", &heads);
  k.Int("vocab_size", &vocab);
  k.Int("n_positions", &positions);
  double eps = 1e-5;
  k.OptDouble("layer_norm_epsilon", &eps);
  int64_t inner = 4 * hidden;
  k.OptInt("n_inner", &inner);
  if (k.ok() && inner != 4 * hidden)
    k.Fail("n_inner",
           Int(inner) +
               " is not supported (the gpt2 family's MLP is 4 * n_embd = " +
               Int(4 * hidden) + ")");
  std::string act = "gelu_new";
  k.OptString("activation_function", &act);
  if (act == "gelu_new") {
    out.notes.push_back(
        "activation_function gelu_new is modelled as "
        "F.gelu(approximate='tanh'), one op; "
        "NewGELUActivation computes the same function in elementwise ops, each "
        "saving its input");
  } else if (act != "gelu_pytorch_tanh") {
    k.Fail("activation_function",
           "'" + act + "' is not supported (gelu_new, gelu_pytorch_tanh)");
  }
  double resid = 0.1, embd = 0.1, attn = 0.1;  // GPT2Config's defaults.
  k.OptDouble("resid_pdrop", &resid);
  k.OptDouble("embd_pdrop", &embd);
  k.OptDouble("attn_pdrop", &attn);
  if (embd != resid || attn != resid) {
    out.notes.push_back("dropouts embd_pdrop=" + Num(embd) +
                        ", attn_pdrop=" + Num(attn) +
                        " are modelled at resid_pdrop=" + Num(resid) +
                        " (the gpt2 family has one dropout)");
  }
  bool tie = true;
  k.OptBool("tie_word_embeddings", &tie);
  if (!tie)
    k.Fail("tie_word_embeddings",
           "false is not supported (the gpt2 family ties its head)");
  bool cross = false;
  k.OptBool("add_cross_attention", &cross);
  if (cross)
    k.Fail("add_cross_attention", "true is not supported (decoder-only)");
  bool scale = true, by_layer = false, upcast = false;
  k.OptBool("scale_attn_weights", &scale);
  k.OptBool("scale_attn_by_inverse_layer_idx", &by_layer);
  k.OptBool("reorder_and_upcast_attn", &upcast);
  if (!scale || by_layer || upcast) {
    out.notes.push_back(
        "scale_attn_weights, scale_attn_by_inverse_layer_idx and "
        "reorder_and_upcast_attn are "
        "modelled at their defaults (true, false, false): one elementwise op "
        "or cast apart");
  }
  out.items = {{"layers", Int(layers)},     {"hidden", Int(hidden)},
               {"heads", Int(heads)},       {"vocab", Int(vocab)},
               {"context", Int(positions)}, {"eps", Num(eps)},
               {"dropout", Num(resid)}};
}

// gpt_neox: src/transformers/models/gpt_neox/modeling_gpt_neox.py at
// 006bd23dd0ce18d54e1cf260b09b15fa943a731d (GPTNeoXForCausalLM: LayerNorms with
// biases, query_key_value and dense biased when attention_bias (default true),
// rotary on int(head_size * rotary_pct) dims, use_parallel_residual,
// causal-mask and rotary-cache buffers of max_position_embeddings rows, untied
// embed_out).
void TranslateGptNeox(const std::string& type, HfKeys& k, FamilyConfig& out) {
  out.family = "gpt_neox";
  int64_t layers = 0, hidden = 0, heads = 0, inter = 0, vocab = 0,
          positions = 2048;
  k.Int("num_hidden_layers", &layers);
  k.Int("hidden_size", &hidden);
  k.Int("num_attention_heads", &heads);
  k.Int("intermediate_size", &inter);
  k.Int("vocab_size", &vocab);
  // GPTNeoXConfig's default 2048.
  k.OptInt("max_position_embeddings", &positions);
  double rotary_pct = 0.25, base = 10000.0, eps = 1e-5, hidden_dropout = 0.0,
         attention_dropout = 0.0;
  k.OptDouble("rotary_pct", &rotary_pct);
  k.OptDouble("rotary_emb_base", &base);
  k.OptDouble("layer_norm_eps", &eps);
  k.OptDouble("hidden_dropout", &hidden_dropout);
  k.OptDouble("attention_dropout", &attention_dropout);
  bool parallel = true, bias = true, tie = false;
  k.OptBool("use_parallel_residual", &parallel);
  k.OptBool("attention_bias", &bias);
  k.OptBool("tie_word_embeddings", &tie);
  std::string name = "gelu";
  k.OptString("hidden_act", &name);
  std::string act = name == "gelu"                ? "gelu"
                    : name == "gelu_pytorch_tanh" ? "gelu_tanh"
                    : name == "relu"              ? "relu"
                                                  : "";
  if (name == "gelu_fast" || name == "gelu_new") {
    act = "gelu_tanh";
    out.notes.push_back(
        "hidden_act " + name +
        " is modelled as F.gelu(approximate='tanh'), one op; its activation "
        "class computes the same function in elementwise ops, each saving its "
        "input");
  }
  if (act.empty())
    k.Fail("hidden_act", "'" + name +
                             "' is not supported (gelu, gelu_pytorch_tanh, "
                             "gelu_fast, gelu_new, relu)");
  const Json scaling = k.Raw("rope_scaling");
  if (!scaling.is_null()) {
    out.notes.push_back(
        "rope_scaling " + scaling.dump() +
        ": changes the RoPE tables' values, not their shapes or cost");
  }
  out.items = {{"layers", Int(layers)},
               {"hidden", Int(hidden)},
               {"heads", Int(heads)},
               {"intermediate", Int(inter)},
               {"vocab", Int(vocab)},
               {"context", Int(positions)},
               {"rotary_pct", Num(rotary_pct)},
               {"rope_base", Num(base)},
               {"eps", Num(eps)},
               {"parallel_residual", Bool(parallel)},
               {"bias", Bool(bias)},
               {"tie", Bool(tie)},
               {"dropout", Num(hidden_dropout)},
               {"attn_dropout", Num(attention_dropout)},
               {"act", act.empty() ? "gelu" : act}};
}

// bert: src/transformers/models/bert/modeling_bert.py at
// 004ad5f50b627b59bf0d581c31bc0052b6cfd40b (BertModel with its pooler,
// BertForMaskedLM without it and with BertOnlyMLMHead: transform dense + act +
// LayerNorm, the decoder tied to word_embeddings plus its own bias; eager
// attention, absolute positions). The head follows `architectures`:
// BertForMaskedLM (also when absent: the pretraining objective) or BertModel.
void TranslateBert(const std::string& type, HfKeys& k, FamilyConfig& out) {
  out.family = "bert";
  int64_t layers = 0, hidden = 0, heads = 0, inter = 0, vocab = 0,
          positions = 512, type_vocab = 2;
  k.Int("num_hidden_layers", &layers);
  k.Int("hidden_size", &hidden);
  k.Int("num_attention_heads", &heads);
  k.Int("intermediate_size", &inter);
  k.Int("vocab_size", &vocab);
  // BertConfig's defaults: 512, 2, 1e-12, 0.1, 0.1.
  k.OptInt("max_position_embeddings", &positions);
  k.OptInt("type_vocab_size", &type_vocab);
  double eps = 1e-12, dropout = 0.1, attn_dropout = 0.1;
  k.OptDouble("layer_norm_eps", &eps);
  k.OptDouble("hidden_dropout_prob", &dropout);
  k.OptDouble("attention_probs_dropout_prob", &attn_dropout);
  std::string name = "gelu";
  k.OptString("hidden_act", &name);
  const std::string act = name == "gelu"                ? "gelu"
                          : name == "gelu_pytorch_tanh" ? "gelu_tanh"
                          : name == "relu"              ? "relu"
                                                        : "";
  if (act.empty())
    k.Fail("hidden_act",
           "'" + name + "' is not supported (gelu, gelu_pytorch_tanh, relu)");
  std::string position_type = "absolute";
  k.OptString("position_embedding_type", &position_type);
  if (position_type != "absolute")
    k.Fail("position_embedding_type",
           "'" + position_type + "' is not supported (absolute)");
  bool decoder = false, cross = false;
  k.OptBool("is_decoder", &decoder);
  k.OptBool("add_cross_attention", &cross);
  if (decoder)
    k.Fail("is_decoder",
           "true is not supported (the encoder: BertModel, BertForMaskedLM)");
  if (cross)
    k.Fail("add_cross_attention",
           "true is not supported (the encoder: BertModel, BertForMaskedLM)");
  std::string head = "mlm";
  const Json archs = k.Raw("architectures");
  if (archs.is_array() && !archs.empty() && archs[0].is_string()) {
    const std::string arch = archs[0].get<std::string>();
    if (arch == "BertModel") {
      head = "model";
    } else if (arch != "BertForMaskedLM") {
      k.Fail("architectures",
             "'" + arch + "' is not supported (BertForMaskedLM, BertModel)");
    }
  } else if (!archs.is_null()) {
    if (archs.is_string() &&
        (archs == Json("BertModel") || archs == Json("BertForMaskedLM"))) {
      // An override: --config architectures=BertModel.
      head = archs == Json("BertModel") ? "model" : "mlm";
    } else {
      k.Fail("architectures",
             archs.dump() + " is not supported (BertForMaskedLM, BertModel)");
    }
  } else {
    out.notes.push_back("architectures absent: built as BertForMaskedLM");
  }
  out.items = {{"layers", Int(layers)},
               {"hidden", Int(hidden)},
               {"heads", Int(heads)},
               {"intermediate", Int(inter)},
               {"vocab", Int(vocab)},
               {"positions", Int(positions)},
               {"type_vocab", Int(type_vocab)},
               {"eps", Num(eps)},
               {"dropout", Num(dropout)},
               {"attn_dropout", Num(attn_dropout)},
               {"act", act.empty() ? "gelu" : act},
               {"head", head}};
}

// t5: src/transformers/models/t5/modeling_t5.py at
// 6b8b757dfcb582379a64f013cdce46c43629f2b0 and configuration_t5.py
// (T5ForConditionalGeneration: shared embedding, T5Stack encoder and decoder,
// relative_attention_bias in block 0 of each, feed_forward_proj "relu" or
// "gated-gelu" (dense_act_fn gelu_new), tie_word_embeddings default true with
// the d_model**-0.5 rescale). Sizes are required, as for the decoders.
void TranslateT5(const std::string& type, HfKeys& k, FamilyConfig& out) {
  out.family = "t5";
  int64_t layers = 0, d_model = 0, d_ff = 0, d_kv = 0, heads = 0, vocab = 0,
          decoder_layers = 0;
  k.Int("num_layers", &layers);
  k.Int("d_model", &d_model);
  k.Int("d_ff", &d_ff);
  k.Int("d_kv", &d_kv);
  k.Int("num_heads", &heads);
  k.Int("vocab_size", &vocab);
  decoder_layers = layers;  // T5Config: num_decoder_layers None -> num_layers.
  k.OptInt("num_decoder_layers", &decoder_layers);
  int64_t buckets = 32, max_distance = 128;  // T5Config's defaults.
  k.OptInt("relative_attention_num_buckets", &buckets);
  k.OptInt("relative_attention_max_distance", &max_distance);
  double eps = 1e-6, dropout = 0.1;
  k.OptDouble("layer_norm_epsilon", &eps);
  k.OptDouble("dropout_rate", &dropout);
  bool tie = true;
  k.OptBool("tie_word_embeddings", &tie);
  // T5Config: act_info = feed_forward_proj.split("-"); gated when "gated-";
  // "gated-gelu" -> gelu_new.
  std::string proj = "relu";
  k.OptString("feed_forward_proj", &proj);
  const bool gated = proj.rfind("gated-", 0) == 0;
  const std::string name = gated ? proj.substr(6) : proj;
  std::string act;
  if (name == "relu") {
    act = "relu";
  } else if (name == "gelu" || name == "gelu_new") {
    act = "gelu_tanh";
    out.notes.push_back(
        "feed_forward_proj " + proj +
        " (gelu_new) is modelled as F.gelu(approximate='tanh'), one op; "
        "NewGELUActivation computes the same function in elementwise ops, each "
        "saving its input");
  } else {
    k.Fail("feed_forward_proj",
           "'" + proj + "' is not supported (relu, gated-gelu, gated-relu)");
  }
  bool decoder = false;
  k.OptBool("is_decoder", &decoder);
  if (decoder)
    k.Fail("is_decoder", "true is not supported (T5ForConditionalGeneration)");
  const Json archs = k.Raw("architectures");
  if (archs.is_array() && !archs.empty() && archs[0].is_string() &&
      archs[0].get<std::string>() != "T5ForConditionalGeneration" &&
      archs[0].get<std::string>() != "T5WithLMHeadModel") {
    k.Fail("architectures",
           "'" + archs[0].get<std::string>() +
               "' is not supported (T5ForConditionalGeneration)");
  }
  out.items = {{"layers", Int(layers)},
               {"decoder_layers", Int(decoder_layers)},
               {"d_model", Int(d_model)},
               {"d_ff", Int(d_ff)},
               {"d_kv", Int(d_kv)},
               {"heads", Int(heads)},
               {"vocab", Int(vocab)},
               {"buckets", Int(buckets)},
               {"max_distance", Int(max_distance)},
               {"eps", Num(eps)},
               {"dropout", Num(dropout)},
               {"act", act.empty() ? "relu" : act},
               {"gated", Bool(gated)},
               {"tie", Bool(tie)}};
}

struct Entry {
  const char* model_type;
  HfTranslation translate;
};

// In alphabetical order, as the error messages list them.
constexpr Entry kTranslations[] = {
    {"bert", TranslateBert},
    {"gemma", TranslateLlamaLike},
    {"gemma2", TranslateLlamaLike},
    {"gemma3_text", TranslateLlamaLike},
    {"gpt2", TranslateGpt2},
    {"gpt_neox", TranslateGptNeox},
    {"granite", TranslateLlamaLike},
    {"llama", TranslateLlamaLike},
    {"mistral", TranslateLlamaLike},
    {"mixtral", TranslateLlamaLike},
    {"olmo2", TranslateLlamaLike},
    {"phi3", TranslateLlamaLike},
    {"qwen2", TranslateLlamaLike},
    {"qwen2_moe", TranslateLlamaLike},
    {"qwen3", TranslateLlamaLike},
    {"qwen3_moe", TranslateLlamaLike},
    {"t5", TranslateT5},
};

}  // namespace

HfTranslation FindHfTranslation(const std::string& model_type) {
  for (const Entry& e : kTranslations) {
    if (model_type == e.model_type) return e.translate;
  }
  return nullptr;
}

std::vector<std::string> HfTranslatedTypes() {
  std::vector<std::string> types;
  for (const Entry& e : kTranslations) types.emplace_back(e.model_type);
  return types;
}

}  // namespace torchcost::build
