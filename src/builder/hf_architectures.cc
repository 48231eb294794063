// Per-architecture translations of Hugging Face configs into family configs
// (the llama family's decoders in hf_llama_like.cc), and their table.
// Each follows the model_type's modeling code in transformers (the file and
// commit read are named beside it): which keys size which tensors, their
// defaults when absent, biases, norms, tying and head_dim. A key whose value
// the family cannot express is an error naming it; one it expresses only in
// part is a note.
#include <string>
#include <vector>

#include "builder/hf_keys.h"
#include "builder/hf_translate.h"

namespace torchcost::builder {
namespace {

using Json = nlohmann::json;

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

}  // namespace torchcost::builder
