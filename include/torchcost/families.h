// Model families built from a config with the GraphBuilder: GPT-2, LLaMA,
// GPT-NeoX, ViT and ResNet, each mirroring the op sequence of a plain-torch
// reference traced on torch 1.13 (tools/make_fixtures.py's gpt2_tiny and
// llama_tiny, tests/python/hf_decoders.py, torchvision's vit_b_16 and
// resnet18/50), so that the builder graph and the
// trace analyse identically. Batch and sequence are the symbols B and S.
#ifndef TORCHCOST_FAMILIES_H_
#define TORCHCOST_FAMILIES_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "torchcost/builder.h"
#include "torchcost/dtype.h"
#include "torchcost/status.h"

namespace torchcost::builder {

// GPT-2 as tools/make_fixtures.py's GPT2 writes it: learned positions, pre-LN
// blocks, Conv1D (addmm) attention projections, GELU-tanh MLP, tied head.
struct Gpt2Config {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t vocab = 50257;
  int64_t context = 1024;  // Learned positions (n_positions); S <= context.
  double dropout = 0.1;
  double eps = 1e-5;
  // Tensor-parallel degree t: the graph is one rank's, with Megatron's splits
  // (heads, MLP and vocabulary / t; row-parallel outputs all-reduced).
  int64_t tp = 1;
  // Compute dtype (config key dtype=fp32|bf16|fp16; --param-dtype with
  // --model): parameters, buffers and activations, as model.to(dtype) runs
  // Hugging Face's GPT-2 (LayerNorm, softmax and the mask value in it too).
  DType dtype = DType::kFloat32;
  // Megatron's make_vocab_size_divisible_by: with tp > 1 the vocabulary is
  // padded to a multiple of it times t (build/megatron.h); unused at tp = 1.
  int64_t vocab_multiple = 128;
  // Megatron's sequence parallelism with tp > 1 (off at tp = 1, as Megatron
  // turns it off): LayerNorms, dropouts and residuals on S/t of the sequence,
  // column-parallel linears gather it (torchcost::sp_linear, saving the
  // shard), row-parallel outputs reduce-scattered (rules/distributed.yaml).
  bool sp = false;
  // Attention implementation, as Hugging Face's attn_implementation: "eager"
  // (matmul + softmax, the torch 1.13 trace), "sdpa" (the default:
  // aten::scaled_dot_product_attention, whose kernel --attention-backend
  // picks) or "flash" (flash-attn 2's flash_attn_func).
  std::string attn = "sdpa";
  // Generation phase and cache dtype, as LlamaConfig's (phase=prefill|decode,
  // cache_dtype=fp32|bf16|fp16|fp8): the cache holds heads x head_dim per
  // token and layer. NB: the decode step's position is arange(0, 1), not
  // arange(past, past + 1): a lookup of one wpe row either way.
  std::string phase;
  std::string cache_dtype;
};

// LLaMA as Hugging Face's LlamaForCausalLM (eager attention) runs it, written
// op for op as tools/hf_reference.py's Llama: RMSNorm decomposed, RoPE via
// rotate_half, grouped-query attention (repeat_kv: expand + reshape), SwiGLU
// MLP, additive causal mask in the compute dtype, untied head, no biases.
struct LlamaConfig {
  int64_t layers = 32;
  int64_t hidden = 4096;
  int64_t heads = 32;
  int64_t kv_heads = 32;
  int64_t intermediate = 11008;
  int64_t vocab = 32000;
  double eps = 1e-6;
  double rope_base = 10000.0;
  // Tensor-parallel degree t: the graph is one rank's, with Megatron's splits
  // (heads, kv heads, intermediate and vocabulary / t; row-parallel outputs
  // all-reduced).
  int64_t tp = 1;
  // Compute dtype (dtype=fp32|bf16|fp16), as model.to(dtype) runs Hugging
  // Face's LlamaForCausalLM: fp32 islands only inside RMSNorm (x.to(float32)
  // and its statistics, cast back before the weight), the RoPE tables (cast to
  // x's dtype) and the eager softmax (dtype=float32, cast back to the query's).
  DType dtype = DType::kFloat32;
  // Tied head (tie_word_embeddings): lm_head reads embed_tokens' weight.
  bool tie = false;
  // Megatron's make_vocab_size_divisible_by, as in Gpt2Config.
  int64_t vocab_multiple = 128;
  // Megatron's sequence parallelism, as in Gpt2Config (RMSNorms and residuals
  // on S/t; the embedding reduce-scattered, as Megatron does without position
  // embeddings).
  bool sp = false;
  // Attention implementation, as Hugging Face's attn_implementation: "eager"
  // (matmul + softmax, the torch 1.13 trace), "sdpa" (the default:
  // aten::scaled_dot_product_attention, whose kernel --attention-backend
  // picks) or "flash" (flash-attn 2's flash_attn_func).
  std::string attn = "sdpa";
  // Mistral's sliding_window: each query attends to the `window` keys ending
  // at itself (0: full causal attention).
  int64_t window = 0;
  // Per-head dim (Hugging Face's head_dim); 0: hidden / heads. q_proj has
  // heads * head_dim outputs and o_proj as many inputs (Gemma-7B: 16 x 256 on
  // hidden 3072).
  int64_t head_dim = 0;
  // The head dims RoPE rotates (Phi-3's partial_rotary_factor x head_dim,
  // even); the rest pass through. 0: all of them.
  int64_t rotary_dim = 0;
  // Biases: of q_proj, k_proj and v_proj (Qwen2), of o_proj, of the MLP's
  // three projections (Llama's attention_bias sets the first two, mlp_bias the
  // third).
  bool qkv_bias = false;
  bool o_bias = false;
  bool mlp_bias = false;
  // Qwen3's q_norm and k_norm: an RMSNorm with a [head_dim] weight over each
  // head of q and of k, before RoPE.
  bool qk_norm = false;
  // OLMo-2's q_norm and k_norm: over the whole projection ([heads *
  // head_dim], [kv_heads * head_dim]) before the view into heads (needs
  // qk_norm).
  bool qk_norm_full = false;
  // OLMo-2's layer: no input_layernorm; post_attention_layernorm on the
  // attention's output and post_feedforward_layernorm on the MLP's, each
  // before its residual add.
  bool post_norms = false;
  // The MLP's gate activation: "silu" (SwiGLU), "gelu_tanh" (Gemma's GeGLU,
  // gelu_pytorch_tanh) or "gelu" (exact).
  std::string act = "silu";
  // Gemma's RMSNorm: the weight applied as (1 + w) in float32, then cast
  // back (Llama casts back first), and the embeddings scaled by sqrt(hidden).
  bool gemma = false;
  // Phi-3's fused projections: qkv_proj [(heads + 2 kv_heads) * head_dim,
  // hidden] sliced into q, k, v, and gate_up_proj [2 intermediate, hidden]
  // chunked into gate and up (tp = 1 only).
  bool fused = false;
  // The decoder's module path ("model", as Hugging Face's *ForCausalLM names
  // it: model.layers.0...); empty: none. Module classes are named `classes`
  // + "Block", "Attention", "MLP", "RMSNorm" (Qwen2Attention, ...).
  std::string prefix;
  std::string classes = "Llama";
  // Mixture of experts in place of the MLP (Mixtral's MixtralSparseMoeBlock,
  // classes "Mixtral": block_sparse_moe.experts.N.w1/w2/w3; else Qwen2-MoE's
  // Qwen2MoeSparseMoeBlock: mlp.experts.N.gate_proj/up_proj/down_proj):
  // `experts` gated MLPs of width expert_intermediate (0: intermediate), a
  // router Linear [experts, hidden], top_k experts per token (0 experts: the
  // dense MLP). NB: routing is balanced: each expert computes on
  // (tokens * top_k) // experts tokens, gathered by index and added back with
  // index_add_, as the reference loop does for the tokens routed to it. In
  // the decode phase (few tokens) the tokens * top_k assignments are dealt out
  // one by one: expert e gets (tokens * top_k + experts - 1 - e) // experts,
  // so min(experts, tokens * top_k) experts compute and their rows sum to
  // tokens * top_k.
  int64_t experts = 0;
  int64_t top_k = 2;
  int64_t expert_intermediate = 0;
  // Qwen2-MoE's shared expert on every token, scaled by
  // sigmoid(shared_expert_gate(x)), a Linear [1, hidden] (0: none).
  int64_t shared_intermediate = 0;
  // The top-k routing weights renormalized to sum to 1 (Mixtral always;
  // Qwen2-MoE's norm_topk_prob).
  bool norm_topk = true;
  // Megatron-core's moe_expert_capacity_factor c (0: no capacity): each
  // expert takes at most capacity = ceil(tokens * top_k / experts * c) of a
  // rank's tokens (megatron/core/transformer/moe/moe_utils.py get_capacity),
  // the rest dropped. NB: c is read as the exact decimal fraction it is written
  // as.
  double capacity_factor = 0;
  // Megatron-core's moe_pad_expert_input_to_capacity: every expert computes
  // on `capacity` rows, padded, as GShard's and Switch's [experts, capacity,
  // hidden] dispatch buffers are (needs capacity_factor > 0).
  bool pad_to_capacity = false;
  // Expert-parallel degree e (experts % e == 0): the graph is one rank's,
  // holding experts / e experts (rank 0's: experts.0 ..); the router,
  // attention and the rest replicated. Its tokens are dispatched to the
  // experts' ranks and combined back by torchcost::all_to_all
  // (rules/distributed.yaml), as Megatron-core's MoEAlltoAllTokenDispatcher.
  int64_t ep = 1;
  // Gemma-2's sandwich norms: post_attention_layernorm on the attention's
  // output before the residual add, pre_feedforward_layernorm and
  // post_feedforward_layernorm around the MLP (four norms per layer).
  bool sandwich = false;
  // The window on every other layer only (Gemma-2: layers 0, 2, 4, ... local,
  // the odd ones global); false: on every layer.
  bool alternate_window = false;
  // The window on every layer but each P-th (Gemma-3's sliding_window_pattern:
  // layer i global when (i + 1) % P == 0); 0: no pattern.
  int64_t window_pattern = 0;
  // The RoPE base of the windowed layers (Gemma-3's rope_local_base_freq: their
  // own cos and sin tables); 0: rope_base for every layer.
  double rope_local_base = 0;
  // Gemma-3's Gemma3TextScaledWordEmbedding: the embeddings times
  // sqrt(hidden) held as a 0-dim buffer (embed_tokens.embed_scale) rather than
  // made each forward (needs gemma).
  bool embed_scale_buffer = false;
  // Granite's multipliers (0: none): the embeddings times
  // embedding_multiplier, each residual branch times residual_multiplier
  // before its add, the logits divided by logits_scaling (a new tensor each).
  double embedding_multiplier = 0;
  double residual_multiplier = 0;
  double logits_scaling = 0;
  // Soft-capping cap * tanh(x / cap) of the attention scores (Gemma-2's
  // attn_logit_softcapping, eager and flash) and of the final logits
  // (final_logit_softcapping); 0: none.
  double attn_softcap = 0;
  double logit_softcap = 0;
  // Gemma-2's query_pre_attn_scalar: scores multiplied by its -0.5 power;
  // 0: divided by sqrt(head_dim).
  double query_scalar = 0;
  // Generation as Hugging Face's generate() runs it (greedy, use_cache=True,
  // a DynamicCache; docs/generation.md): "" builds the plain forward;
  // "prefill" the prompt's forward over idx [B, S], each layer's keys and
  // values copied into the cache (torch.cat onto an empty tensor) and output
  // after the logits, lm_head on the last position only (logits_to_keep=1);
  // "decode" the last decode step: idx [B, 1] and each layer's past keys and
  // values [B, kv_heads, S+T-2, head_dim] (min(S+T-2, window-1) with a
  // sliding window) as inputs, torch.cat with the new token's, the results
  // output.
  std::string phase;
  // The cache's dtype (cache_dtype=fp32|bf16|fp16|fp8); empty: the compute
  // dtype. NB: fp8 is carried as a 1-byte uint8 (torch 1.13 has no float8):
  // keys and values are cast to it before the cache and back after.
  std::string cache_dtype;
};

// GPT-NeoX as Hugging Face's GPTNeoXForCausalLM runs it (eager attention:
// baddbmm scores, a bool causal-mask buffer per layer), written op for op as
// tests/python/hf_decoders.py's GPTNeoX: LayerNorms with biases, the fused
// query_key_value [3 hidden, hidden] laid out per head ([heads, 3, head_dim]),
// rotary embedding on the first rotary_pct of each head's dims (cos/sin
// caches as buffers), GELU MLP, parallel residual x + attn(ln1(x)) +
// mlp(ln2(x)) (or sequential), untied embed_out.
struct GptNeoxConfig {
  int64_t layers = 16;
  int64_t hidden = 2048;
  int64_t heads = 8;
  int64_t intermediate = 8192;
  int64_t vocab = 50304;
  // max_position_embeddings: the rows of the causal-mask buffer and the
  // rotary caches; S <= context.
  int64_t context = 2048;
  // Rotated dims per head: int(head_dim * rotary_pct), even.
  double rotary_pct = 0.25;
  double rope_base = 10000.0;
  double eps = 1e-5;
  bool parallel_residual = true;
  bool bias = true;  // attention_bias: query_key_value's and dense's biases.
  bool tie = false;  // embed_out reads embed_in's weight.
  // hidden_dropout: embeddings, attention and MLP outputs.
  double dropout = 0.0;
  double attn_dropout = 0.0;  // attention_dropout: the attention probabilities.
  // The MLP activation: "gelu" (exact), "gelu_tanh" (gelu_pytorch_tanh) or
  // "relu".
  std::string act = "gelu";
  // Compute dtype (dtype=fp32|bf16|fp16), as model.to(dtype): parameters,
  // buffers (the rotary caches too) and activations; no fp32 island.
  DType dtype = DType::kFloat32;
  // Attention implementation: "eager" (baddbmm + where + softmax), "sdpa"
  // (the default: GPTNeoXSdpaAttention, is_causal) or "flash".
  std::string attn = "sdpa";
  // Generation phase and cache dtype, as LlamaConfig's: keys and values are
  // cached after the partial rotary, heads x head_dim per token and layer.
  // NB: the decode step's positions are the first ones (arange(0, 1), a
  // gather of one row either way), with the shapes of the last.
  std::string phase;
  std::string cache_dtype;
};

// BERT as Hugging Face's BertModel / BertForMaskedLM run it (eager
// attention), written op for op as tests/python/hf_encoders.py's Bert: word,
// position and token-type embeddings summed and LayerNorm-ed, post-LN encoder
// layers (query/key/value/dense with biases, an additive [B, 1, 1, S] mask
// from attention_mask = ones), GELU MLP; then the pooler (dense + tanh on
// token 0, BertModel) or the MLM head (dense + act + LayerNorm, the decoder
// tied to the word embeddings plus its own bias, BertForMaskedLM).
struct BertConfig {
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t intermediate = 3072;
  int64_t vocab = 30522;
  int64_t positions = 512;  // max_position_embeddings: S <= positions.
  int64_t type_vocab = 2;   // type_vocab_size: the token-type embedding's rows.
  double eps = 1e-12;
  // hidden_dropout_prob: embeddings, attention output, MLP output.
  double dropout = 0.1;
  double attn_dropout = 0.1;  // attention_probs_dropout_prob.
  // The MLP's and the MLM transform's activation: "gelu" (exact), "gelu_tanh"
  // or "relu".
  std::string act = "gelu";
  // "mlm" (BertForMaskedLM: no pooler, the MLM head) or "model" (BertModel:
  // the pooler; outputs the sequence and the pooled output).
  std::string head = "mlm";
  // Attention implementation: "eager" only (BertSelfAttention's matmul +
  // softmax).
  std::string attn = "eager";
  // Compute dtype (dtype=fp32|bf16|fp16), as model.to(dtype): parameters and
  // activations; the int64 position and token-type buffers stay.
  DType dtype = DType::kFloat32;
};

// T5 as Hugging Face's T5ForConditionalGeneration runs it (eager attention,
// no cache), written op for op as tests/python/hf_encoders.py's T5: a shared
// embedding, an encoder and a decoder stack of pre-norm blocks with
// T5LayerNorm (RMS, no bias) and bias-free linears, the relative position
// bias (buckets) computed in each stack's first self-attention and reused by
// the others, cross-attention in the decoder, ReLU or gated-GELU MLPs, and
// lm_head (tied to the shared embedding with the d_model**-0.5 rescale, or
// not). Inputs: input_ids [B, S] and decoder_input_ids [B, T].
struct T5Config {
  int64_t layers = 6;          // num_layers: the encoder's blocks.
  int64_t decoder_layers = 0;  // num_decoder_layers; 0: layers.
  int64_t d_model = 512;
  int64_t d_ff = 2048;
  int64_t d_kv = 64;
  int64_t heads = 8;
  int64_t vocab = 32128;
  int64_t buckets = 32;        // relative_attention_num_buckets.
  int64_t max_distance = 128;  // relative_attention_max_distance.
  double eps = 1e-6;
  // dropout_rate: every dropout, the attention weights' too.
  double dropout = 0.1;
  // The MLP's activation: "relu" (T5 v1.0) or "gelu_tanh" (gelu_new of
  // gated-gelu, T5 v1.1 / FLAN-T5, as one F.gelu(approximate='tanh')).
  std::string act = "relu";
  bool gated = false;  // T5DenseGatedActDense: act(wi_0(x)) * wi_1(x).
  // lm_head reads shared's weight, after sequence_output * d_model**-0.5.
  bool tie = true;
  // Attention implementation: "eager" only.
  std::string attn = "eager";
  // Compute dtype (dtype=fp32|bf16|fp16), as model.to(dtype).
  DType dtype = DType::kFloat32;
};

// ViT as torchvision's VisionTransformer: patchify conv, class token, learned
// positions, pre-LN encoder blocks with nn.MultiheadAttention, linear head.
struct VitConfig {
  int64_t image_size = 224;
  int64_t patch = 16;
  int64_t layers = 12;
  int64_t hidden = 768;
  int64_t heads = 12;
  int64_t mlp = 3072;
  int64_t classes = 1000;
  double dropout = 0.0;
  double eps = 1e-6;
  // Tensor-parallel degree: the graph is one rank's, with Megatron's splits
  // (heads and MLP / t; row-parallel outputs all-reduced; the patch embedding,
  // norms and head replicated).
  int64_t tp = 1;
  // Attention implementation, as Hugging Face's attn_implementation: "eager"
  // (matmul + softmax, the torch 1.13 trace), "sdpa" (the default:
  // torch 2.x nn.MultiheadAttention's aten::scaled_dot_product_attention, whose
  // kernel --attention-backend picks) or "flash" (flash-attn 2's
  // flash_attn_func).
  std::string attn = "sdpa";
  // Compute dtype (dtype=fp32|bf16|fp16): parameters, buffers, the input image
  // and every activation, as torchvision's model.to(dtype) runs.
  DType dtype = DType::kFloat32;
};

// ResNet as torchvision's: BasicBlock (depth 18, 34) or Bottleneck (50, 101,
// 152).
struct ResnetConfig {
  int64_t depth = 50;
  int64_t classes = 1000;
  int64_t image_size = 224;
  int64_t width = 64;  // Channels of the stem and the first stage.
  // Blocks per stage as "n1:n2:n3:n4" (torchvision's `layers`), overriding
  // depth's plan; depth still picks the block (18, 34: BasicBlock; 50+:
  // Bottleneck). Empty: depth's plan (He et al. 2016, Table 1).
  std::string blocks;
  // The block, "basic" or "bottleneck", overriding depth's. Empty: depth's.
  std::string block;
  // The kernel size of each stage's 3x3 convolutions as "k1:k2:k3:k4" (odd,
  // padding k / 2, so spatial sizes do not change). Empty: 3 in every stage.
  std::string kernels;
  // Compute dtype (dtype=fp32|bf16|fp16): parameters, buffers, the input image
  // and every activation, as torchvision's model.to(dtype) runs.
  DType dtype = DType::kFloat32;
};

// Builds the GPT-2 graph; input "idx" int64 [B, S].
Result<BuiltModel> BuildGpt2(const Gpt2Config& config);
// Builds the LLaMA graph; input "idx" int64 [B, S].
Result<BuiltModel> BuildLlama(const LlamaConfig& config);
// Builds the GPT-NeoX graph; input "idx" int64 [B, S].
Result<BuiltModel> BuildGptNeox(const GptNeoxConfig& config);
// Builds the BERT graph; input "idx" int64 [B, S].
Result<BuiltModel> BuildBert(const BertConfig& config);
// Builds the T5 graph; inputs "input_ids" int64 [B, S] and "decoder_input_ids"
// int64 [B, T].
Result<BuiltModel> BuildT5(const T5Config& config);
// Builds the ViT graph; input "x" [B, 3, image_size, image_size] in the
// config's dtype.
Result<BuiltModel> BuildVit(const VitConfig& config);
// Builds the ResNet graph; input "x" [B, 3, image_size, image_size] in the
// config's dtype.
Result<BuiltModel> BuildResnet(const ResnetConfig& config);

// Builds a model from a family ("gpt2", "llama", "gpt_neox", "bert", "t5",
// "vit", "resnet"), a preset name, or a Hugging Face config.json path (a name
// ending in ".json": torchcost/hf_config.h), overridden by `config`
// ("layers=32,hidden=4096,..."; a config file's own keys: "hidden_size=2048").
// Errors are one line naming the bad key or value.
Result<BuiltModel> BuildNamedModel(const std::string& name,
                                   const std::string& config);

// Returns the names BuildNamedModel accepts: the families, then the presets.
std::vector<std::string> ModelNames();

// A family's config once a preset and the overrides are applied.
struct NamedConfig {
  std::string family;  // "llama".
  // Every key of the family with its value as text ("layers", "32"), in the
  // order the family lists its keys; dtypes as DTypeName spells them.
  std::vector<std::pair<std::string, std::string>> values;
};

// Returns the family and config BuildNamedModel(name, config) builds from,
// without building it. Errors as BuildNamedModel's; a config.json path is an
// error (its keys are the file's, torchcost/hf_config.h).
Result<NamedConfig> ResolveNamedConfig(const std::string& name,
                                       const std::string& config);

}  // namespace torchcost::builder

#endif  // TORCHCOST_FAMILIES_H_
