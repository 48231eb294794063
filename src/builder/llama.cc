// The LLaMA family: the op sequence of tools/hf_reference.py's Llama (Hugging
// Face transformers' modeling_llama.py, eager attention) as torch.jit.trace
// records it on torch 1.13, in the config's compute dtype.
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "builder/attention.h"
#include "builder/finfo.h"
#include "builder/generation_phase.h"
#include "builder/llama_attention.h"
#include "builder/llama_layer.h"
#include "builder/llama_moe.h"
#include "builder/lm_head.h"
#include "builder/megatron.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

// Enters the decoder's module (LlamaForCausalLM's "model") when the config
// names one.
void EnterPrefix(GraphBuilder& b, const LlamaConfig& c,
                 std::optional<ScopeGuard>& scope) {
  if (!c.prefix.empty()) scope.emplace(b, c.prefix, c.classes + "Model");
}

struct LlamaWeights {
  Ref embed, norm, lm_head;
  Ref embed_scale;  // Gemma-3's 0-dim buffer (unset otherwise).
  std::vector<LlamaLayer> layers;
};

// Each expert's intermediate size: expert_intermediate, else intermediate.
int64_t ExpertIntermediate(const LlamaConfig& c) {
  return c.expert_intermediate > 0 ? c.expert_intermediate : c.intermediate;
}

// Declares modules and parameters in registration order.
LlamaWeights Declare(GraphBuilder& b, const LlamaConfig& c) {
  // NB: with tensor parallelism t, one rank's shards (Megatron): q/k/v,
  // gate and up split by output rows (heads / t), o_proj and down_proj by
  // input columns, embedding and lm_head by vocabulary; norms replicated.
  const int64_t h = c.hidden, hd = HeadDim(c), t = c.tp;
  LlamaWeights w;
  // A Linear's weight [out, in], and its bias [out] when `bias` (else an unset
  // Ref).
  auto linear = [&](const char* name, int64_t out, int64_t in, bool bias,
                    Ref* bias_ref) {
    ScopeGuard s(b, name, "Linear");
    Ref weight = b.Param(b.Qualify("weight"), {out, in}, c.dtype);
    if (bias) *bias_ref = b.Param(b.Qualify("bias"), {out}, c.dtype);
    return weight;
  };
  Ref no_bias;
  auto norm = [&](const char* name) {
    ScopeGuard s(b, name, c.classes + "RMSNorm");
    return b.Param(b.Qualify("weight"), {h}, c.dtype);
  };
  std::optional<ScopeGuard> model;
  EnterPrefix(b, c, model);
  {
    ScopeGuard s(b, "embed_tokens", "Embedding");
    w.embed = b.Param(b.Qualify("weight"), {c.vocab / t, h}, c.dtype);
    // Gemma3TextScaledWordEmbedding: register_buffer("embed_scale",
    // torch.tensor(hidden**0.5), persistent=False); model.to(dtype) casts it.
    if (c.embed_scale_buffer)
      w.embed_scale = b.Buffer(b.Qualify("embed_scale"), {}, c.dtype);
  }
  {
    ScopeGuard list(b, "layers", "ModuleList");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard block(b, std::to_string(i), c.classes + "Block");
      LlamaLayer l;
      if (!c.post_norms) l.input_norm = norm("input_layernorm");
      {
        ScopeGuard s(b, "self_attn", c.classes + "Attention");
        if (c.fused) {
          // Phi3Attention registers o_proj first.
          l.o = linear("o_proj", h, c.heads * hd, c.o_bias, &l.o_bias);
          l.q = linear("qkv_proj", (c.heads + 2 * c.kv_heads) * hd, h,
                       c.qkv_bias, &l.q_bias);
        } else {
          l.q = linear("q_proj", c.heads / t * hd, h, c.qkv_bias, &l.q_bias);
          l.k = linear("k_proj", c.kv_heads / t * hd, h, c.qkv_bias, &l.k_bias);
          l.v = linear("v_proj", c.kv_heads / t * hd, h, c.qkv_bias, &l.v_bias);
          l.o = linear("o_proj", h, c.heads / t * hd, c.o_bias, &l.o_bias);
        }
        if (c.qk_norm) {
          // Qwen3Attention and Olmo2Attention register q_norm and k_norm after
          // o_proj: over one head's head_dim, or OLMo-2's whole projection.
          const int64_t q_width = c.qk_norm_full ? c.heads * hd : hd,
                        k_width = c.qk_norm_full ? c.kv_heads * hd : hd;
          for (auto [name, weight, width] :
               {std::tuple{"q_norm", &l.q_norm, q_width},
                {"k_norm", &l.k_norm, k_width}}) {
            ScopeGuard s(b, name, c.classes + "RMSNorm");
            *weight = b.Param(b.Qualify("weight"), {width}, c.dtype);
          }
        }
      }
      if (!c.post_norms) l.post_norm = norm("post_attention_layernorm");
      if (c.experts > 0) {
        const bool mixtral = MixtralNames(c);
        // NB: with tp > 1 each expert's MLP is split as a dense one is (gate
        // and up by rows, down by columns; vLLM's FusedMoE and Megatron's
        // expert tensor parallelism); the router is replicated.
        const int64_t ei = ExpertIntermediate(c) / t;
        ScopeGuard s(b, mixtral ? "block_sparse_moe" : "mlp",
                     c.classes + "SparseMoeBlock");
        l.router = linear("gate", c.experts, h, false, &no_bias);
        {
          ScopeGuard list(b, "experts", "ModuleList");
          b.RouteTokens(c.top_k);
          // NB: with expert parallelism, rank 0's experts / ep experts.
          for (int64_t e = 0; e < c.experts / c.ep; ++e) {
            ScopeGuard expert(
                b, std::to_string(e),
                mixtral ? "MixtralBlockSparseTop2MLP" : c.classes + "MLP");
            std::array<Ref, 3> w3;
            if (mixtral) {
              w3[0] = linear("w1", ei, h, false, &no_bias);
              w3[2] = linear("w2", h, ei, false, &no_bias);
              w3[1] = linear("w3", ei, h, false, &no_bias);
            } else {
              w3[0] = linear("gate_proj", ei, h, false, &no_bias);
              w3[1] = linear("up_proj", ei, h, false, &no_bias);
              w3[2] = linear("down_proj", h, ei, false, &no_bias);
            }
            l.experts.push_back(w3);
          }
        }
        if (c.shared_intermediate > 0) {
          {
            ScopeGuard e(b, "shared_expert", c.classes + "MLP");
            l.shared_gate = linear("gate_proj", c.shared_intermediate / t, h,
                                   false, &no_bias);
            l.shared_up = linear("up_proj", c.shared_intermediate / t, h, false,
                                 &no_bias);
            l.shared_down = linear("down_proj", h, c.shared_intermediate / t,
                                   false, &no_bias);
          }
          l.shared_scale = linear("shared_expert_gate", 1, h, false, &no_bias);
        }
        w.layers.push_back(l);
        continue;
      }
      {
        ScopeGuard s(b, "mlp", c.classes + "MLP");
        if (c.fused) {
          l.gate = linear("gate_up_proj", 2 * c.intermediate, h, c.mlp_bias,
                          &l.gate_bias);
        } else {
          l.gate = linear("gate_proj", c.intermediate / t, h, c.mlp_bias,
                          &l.gate_bias);
          l.up =
              linear("up_proj", c.intermediate / t, h, c.mlp_bias, &l.up_bias);
        }
        l.down = linear("down_proj", h, c.intermediate / t, c.mlp_bias,
                        &l.down_bias);
      }
      if (c.sandwich) {
        l.pre_ff_norm = norm("pre_feedforward_layernorm");
        l.post_ff_norm = norm("post_feedforward_layernorm");
      }
      // Olmo2DecoderLayer registers its two norms after the MLP.
      if (c.post_norms) {
        l.post_norm = norm("post_attention_layernorm");
        l.post_ff_norm = norm("post_feedforward_layernorm");
      }
      w.layers.push_back(l);
    }
  }
  w.norm = norm("norm");
  model.reset();
  w.lm_head =
      DeclareLmHead(b, "lm_head", w.embed, c.tie, c.vocab / t, h, c.dtype);
  return w;
}

// down(act(gate(x)) * up(x)); fused (Phi3MLP): gate, up =
// gate_up_proj(x).chunk(2, -1); down(up * act(gate)).
Ref Mlp(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x) {
  auto linear = [&](Ref in, Ref weight, Ref bias) {
    return bias.id >= 0 && !Sp(c) ? b.Linear(in, weight, bias)
                                  : ColumnLinear(b, c, in, weight);
  };
  if (c.fused) {
    Ref gu;
    {
      ScopeGuard s(b, "gate_up_proj", "Linear");
      gu = b.Linear(x, l.gate, BiasArg(l.gate_bias));
    }
    std::vector<Ref> parts = b.Chunk(gu, 2, -1);
    Ref h = b.Mul(parts[1], Act(b, c, parts[0]));
    ScopeGuard s(b, "down_proj", "Linear");
    return b.Linear(h, l.down, BiasArg(l.down_bias));
  }
  Ref gate, up;
  x = CopyToTpRegionIf(b, c, x);
  {
    ScopeGuard s(b, "gate_proj", "Linear");
    gate = linear(x, l.gate, l.gate_bias);
  }
  gate = Act(b, c, gate);
  {
    ScopeGuard s(b, "up_proj", "Linear");
    up = linear(x, l.up, l.up_bias);
  }
  Ref h = b.Mul(gate, up);
  ScopeGuard s(b, "down_proj", "Linear");
  return AllReduceIf(b, c, b.Linear(h, l.down, BiasArg(l.down_bias)));
}

// A residual branch as its add reads it: Granite's `residual + hidden_states *
// residual_multiplier`.
Ref ResidualBranch(GraphBuilder& b, const LlamaConfig& c, Ref h) {
  return c.residual_multiplier > 0
             ? b.Mul(h, b.ScalarTensor(c.residual_multiplier))
             : h;
}

// Gemma-2 (sandwich): x + post_attention_layernorm(attn(input_layernorm(x))),
// then x + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x))).
Ref Block(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
          const ModelWide& wide, int64_t window, GenState* gen) {
  if (c.post_norms) {
    // Olmo2DecoderLayer: x + post_attention_layernorm(attn(x)), then
    // x + post_feedforward_layernorm(mlp(x)).
    Ref h;
    {
      ScopeGuard s(b, "self_attn", c.classes + "Attention");
      h = Attention(b, c, l, x, wide, window, gen);
    }
    {
      ScopeGuard s(b, "post_attention_layernorm", c.classes + "RMSNorm");
      h = RmsNorm(b, c, l.post_norm, h).out;
    }
    x = b.Add(x, h);
    {
      ScopeGuard s(b, "mlp", c.classes + "MLP");
      h = Mlp(b, c, l, x);
    }
    {
      ScopeGuard s(b, "post_feedforward_layernorm", c.classes + "RMSNorm");
      h = RmsNorm(b, c, l.post_ff_norm, h).out;
    }
    return b.Add(x, h);
  }
  NormOut n;
  {
    ScopeGuard s(b, "input_layernorm", c.classes + "RMSNorm");
    n = RmsNorm(b, c, l.input_norm, x);
  }
  Ref h;
  {
    ScopeGuard s(b, "self_attn", c.classes + "Attention");
    h = Attention(b, c, l, n.out, wide, window, gen);
  }
  if (c.sandwich) {
    {
      ScopeGuard s(b, "post_attention_layernorm", c.classes + "RMSNorm");
      h = RmsNorm(b, c, l.post_norm, h).out;
    }
    x = b.Add(n.residual, h);
    {
      ScopeGuard s(b, "pre_feedforward_layernorm", c.classes + "RMSNorm");
      n = RmsNorm(b, c, l.pre_ff_norm, x);
    }
    {
      ScopeGuard s(b, "mlp", c.classes + "MLP");
      h = Mlp(b, c, l, n.out);
    }
    {
      ScopeGuard s(b, "post_feedforward_layernorm", c.classes + "RMSNorm");
      h = RmsNorm(b, c, l.post_ff_norm, h).out;
    }
    return b.Add(n.residual, h);
  }
  x = b.Add(n.residual, ResidualBranch(b, c, h));
  {
    ScopeGuard s(b, "post_attention_layernorm", c.classes + "RMSNorm");
    n = RmsNorm(b, c, l.post_norm, x);
  }
  if (c.experts > 0) {
    ScopeGuard s(b, MixtralNames(c) ? "block_sparse_moe" : "mlp",
                 c.classes + "SparseMoeBlock");
    // The experts' partial sums (tp > 1) are all-reduced once, as the dense
    // MLP's are.
    h = AllReduceIf(b, c,
                    MoeBlock(b, c, l, CopyToTpRegionIf(b, c, n.out),
                             gen != nullptr && gen->decode));
  } else {
    ScopeGuard s(b, "mlp", c.classes + "MLP");
    h = Mlp(b, c, l, n.out);
  }
  return b.Add(n.residual, ResidualBranch(b, c, h));
}

// The Refs a layer's nodes read from its weights, in one order for every layer.
std::vector<Ref> LayerRefs(const LlamaLayer& l) {
  // clang-format off
  std::vector<Ref> refs = {
      l.input_norm, l.q,           l.k,            l.v,           l.o,
      l.q_norm,     l.k_norm,      l.post_norm,    l.gate,        l.up,
      l.down,       l.pre_ff_norm, l.post_ff_norm, l.q_bias,      l.k_bias,
      l.v_bias,     l.o_bias,      l.gate_bias,    l.up_bias,     l.down_bias,
      l.router,     l.shared_gate, l.shared_up,    l.shared_down, l.shared_scale};
  // clang-format on
  for (const auto& e : l.experts) refs.insert(refs.end(), e.begin(), e.end());
  return refs;
}

// A layer built by Block, to be copied for the layers with its window.
struct LayerTemplate {
  int64_t window = 0;
  GraphBuilder::Recording recording;
  std::vector<Ref> weights;  // LayerRefs of its layer.
  Ref input, output;
  // Its pasts: gen->pasts[first_past, first_past + pasts).
  size_t first_past = 0;
  size_t pasts = 0;
  std::vector<Ref> caches;  // What it added to gen->caches.
};

// Block(b, c, l, x, ...), built by Block for the first layer with `window`
// (recorded in `templates`) and copied from it for the others; `later` layers
// follow this one.
Ref BlockOnce(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
              const ModelWide& wide, int64_t window, GenState* gen,
              std::vector<LayerTemplate>& templates, int64_t later) {
  const LayerTemplate* t = nullptr;
  for (const LayerTemplate& candidate : templates) {
    if (candidate.window == window) t = &candidate;
  }
  std::vector<Ref> weights = LayerRefs(l);
  if (t == nullptr) {
    LayerTemplate made;
    made.window = window;
    made.input = x;
    made.first_past = gen != nullptr ? gen->next_past : 0;
    const size_t first_cache = gen != nullptr ? gen->caches.size() : 0;
    b.StartRecording();
    made.output = Block(b, c, l, x, wide, window, gen);
    made.recording = b.StopRecording();
    // Room for the later layers' copies, and one more layer's worth for what
    // follows them (the final norm and the head, smaller than a layer).
    const GraphBuilder::Recording& r = made.recording;
    b.Reserve(static_cast<int>((later + 1) * (r.end_value - r.first_value)),
              static_cast<int>((later + 1) * (r.end_node - r.first_node)));
    if (gen != nullptr) {
      made.pasts = gen->next_past - made.first_past;
      made.caches.assign(
          gen->caches.begin() + static_cast<std::ptrdiff_t>(first_cache),
          gen->caches.end());
    }
    made.weights = std::move(weights);
    templates.push_back(std::move(made));
    return templates.back().output;
  }
  // The template's input, weights and pasts read this layer's.
  std::vector<std::pair<int, int>> inputs = {{t->input.id, x.id}};
  for (size_t i = 0; i < weights.size(); ++i) {
    if (t->weights[i].id >= 0)
      inputs.emplace_back(t->weights[i].id, weights[i].id);
  }
  for (size_t i = 0; i < t->pasts; ++i) {
    inputs.emplace_back(gen->pasts[t->first_past + i].id,
                        gen->pasts[gen->next_past + i].id);
  }
  const std::vector<int> ids = b.Replay(t->recording, inputs);
  auto copy = [&](Ref r) {
    return Ref{ids.at(r.id - t->recording.first_value)};
  };
  if (gen != nullptr) {
    gen->next_past += t->pasts;
    for (Ref cache : t->caches) gen->caches.push_back(copy(cache));
  }
  return copy(t->output);
}

}  // namespace

Result<BuiltModel> BuildLlama(const LlamaConfig& config) {
  // NB: with tp > 1 the graph is built on Megatron's padded vocabulary
  // (builder/megatron.h).
  LlamaConfig c = config;
  Validator v("llama");
  v.Layers("layers", c.layers);
  v.Positive("hidden", c.hidden);
  v.Positive("heads", c.heads);
  v.Positive("kv_heads", c.kv_heads);
  v.Positive("intermediate", c.intermediate);
  v.Positive("vocab", c.vocab);
  if (c.head_dim == 0) v.Divides("heads", c.heads, "hidden", c.hidden);
  v.Require(c.head_dim >= 0 && c.head_dim < kMaxConfigInt,
            "head_dim=" + std::to_string(c.head_dim) +
                " must be >= 0 (0: hidden / heads)");
  v.Divides("kv_heads", c.kv_heads, "heads", c.heads);
  v.Positive("tp", c.tp);
  v.Divides("tp", c.tp, "kv_heads", c.kv_heads);
  v.Divides("tp", c.tp, "intermediate", c.intermediate);
  v.Positive("make_vocab_size_divisible_by", c.vocab_multiple);
  v.Require(
      c.heads <= 0 || c.head_dim > 0 || c.hidden % c.heads != 0 ||
          (c.hidden / c.heads) % 2 == 0,
      "hidden/heads=" + std::to_string(c.heads > 0 ? c.hidden / c.heads : 0) +
          " must be even (RoPE rotates pairs)");
  v.Require(c.head_dim % 2 == 0, "head_dim=" + std::to_string(c.head_dim) +
                                     " must be even (RoPE rotates pairs)");
  v.Require(c.rotary_dim >= 0 && c.rotary_dim % 2 == 0 &&
                (c.heads <= 0 || (c.head_dim == 0 && c.hidden % c.heads != 0) ||
                 c.rotary_dim <= HeadDim(c)),
            "rotary_dim=" + std::to_string(c.rotary_dim) +
                " must be even and at most head_dim (0: every dim)");
  v.Require(c.act == "silu" || c.act == "gelu_tanh" || c.act == "gelu",
            "act=" + c.act + " must be silu, gelu_tanh or gelu");
  // NB: Megatron's splits of biased row-parallel layers, of fused projections
  // and of biases under sequence parallelism are not modelled.
  v.Require(c.tp == 1 || !(c.o_bias || c.mlp_bias || c.fused),
            "tp=" + std::to_string(c.tp) +
                " needs no o_bias, mlp_bias or fused projections");
  v.Require(!(c.sp && c.tp > 1 && c.qkv_bias),
            "sp=true with tp > 1 needs qkv_bias=false");
  v.Require(!c.classes.empty(), "classes must not be empty");
  v.Require(c.experts >= 0 && c.experts <= 4096,
            "experts=" + std::to_string(c.experts) + " must be in [0, 4096]");
  v.Require(c.experts == 0 || (c.top_k >= 1 && c.top_k <= c.experts),
            "top_k=" + std::to_string(c.top_k) +
                " must be in [1, experts=" + std::to_string(c.experts) + "]");
  v.Require(c.expert_intermediate >= 0 && c.expert_intermediate < kMaxConfigInt,
            "expert_intermediate=" + std::to_string(c.expert_intermediate) +
                " must be >= 0");
  v.Require(c.shared_intermediate >= 0 && c.shared_intermediate < kMaxConfigInt,
            "shared_intermediate=" + std::to_string(c.shared_intermediate) +
                " must be >= 0");
  v.Require(!(c.qk_norm && c.fused),
            "qk_norm needs separate projections (fused=false)");
  v.Require(!c.qk_norm_full || (c.qk_norm && c.tp == 1),
            "qk_norm_full needs qk_norm=true and tp=1");
  v.Require(!c.post_norms ||
                (!c.sandwich && c.experts == 0 && c.residual_multiplier == 0),
            "post_norms needs sandwich=false, experts=0 and no "
            "residual_multiplier");
  v.Require(c.experts == 0 || !c.fused, "experts need no fused projections");
  v.Require(
      c.experts == 0 || c.tp == 1 || (c.ep == 1 && !c.sp),
      "experts with tp=" + std::to_string(c.tp) + " need ep=1 and sp=false");
  if (c.experts > 0) {
    v.Divides("tp", c.tp, "expert_intermediate", ExpertIntermediate(c));
    if (c.shared_intermediate > 0)
      v.Divides("tp", c.tp, "shared_intermediate", c.shared_intermediate);
  }
  v.Require(c.capacity_factor >= 0 && c.capacity_factor <= 1e6 &&
                std::isfinite(c.capacity_factor),
            "capacity_factor must be in [0, 1e6] (0: no capacity)");
  v.Require(c.capacity_factor == 0 || std::llround(c.capacity_factor * 1e6) > 0,
            "capacity_factor must be 0 or at least 1e-6");
  v.Require(!c.pad_to_capacity || c.capacity_factor > 0,
            "pad_to_capacity=true needs capacity_factor > 0");
  v.Require(c.ep >= 1 && c.ep <= 4096,
            "ep=" + std::to_string(c.ep) + " must be in [1, 4096]");
  v.Require(c.ep == 1 || (c.experts > 0 && c.experts % c.ep == 0),
            "ep=" + std::to_string(c.ep) +
                " must divide experts=" + std::to_string(c.experts));
  v.Require(c.ep == 1 || c.phase.empty(), "phase=" + c.phase + " needs ep=1");
  v.PositiveFloat("eps", c.eps);
  v.PositiveFloat("rope_base", c.rope_base);
  v.Require(c.attn_softcap >= 0 && std::isfinite(c.attn_softcap),
            "attn_softcap must be >= 0 (0: none)");
  v.Require(c.logit_softcap >= 0 && std::isfinite(c.logit_softcap),
            "logit_softcap must be >= 0 (0: none)");
  v.Require(c.query_scalar >= 0 && std::isfinite(c.query_scalar),
            "query_scalar must be >= 0 (0: sqrt(head_dim))");
  v.Require(!c.sandwich || c.experts == 0, "sandwich norms need experts=0");
  v.Require(c.window_pattern >= 0 && c.window_pattern < kMaxConfigInt,
            "window_pattern=" + std::to_string(c.window_pattern) +
                " must be >= 0 (0: no pattern)");
  v.Require(!(c.window_pattern > 0 && c.alternate_window),
            "window_pattern and alternate_window: give one of them");
  v.Require(c.rope_local_base >= 0 && std::isfinite(c.rope_local_base),
            "rope_local_base must be >= 0 (0: rope_base on every layer)");
  v.Require(!c.embed_scale_buffer || c.gemma,
            "embed_scale_buffer needs gemma=true");
  for (const auto& [key, value] :
       {std::pair{"embedding_multiplier", c.embedding_multiplier},
        {"residual_multiplier", c.residual_multiplier},
        {"logits_scaling", c.logits_scaling}}) {
    v.Require(value >= 0 && std::isfinite(value),
              std::string(key) + " must be >= 0 (0: none)");
  }
  v.Require(c.residual_multiplier == 0 || !c.sandwich,
            "residual_multiplier needs sandwich=false");
  v.Require(AttnImplError(c.attn).empty(), AttnImplError(c.attn));
  v.Require(c.window >= 0 && c.window < kMaxConfigInt,
            "window=" + std::to_string(c.window) +
                " must be >= 0 (0: no sliding window)");
  v.ComputeDType("dtype", c.dtype);
  GenState gen = ReadPhase(v, c.phase, c.cache_dtype, c.dtype);
  v.Require(c.phase.empty() || !Sp(c), "phase=" + c.phase + " needs sp=false");
  if (!v.ok()) return v.status();
  if (c.attn == "flash_attention_2") c.attn = "flash";
  c.vocab = PaddedVocab(config.vocab, c.vocab_multiple, c.tp);

  GraphBuilder b(c.classes, c.classes == "Llama" ? "llama (builder)"
                                                 : c.classes + " (builder)");
  b.HiddenSize(c.hidden);
  // Each layer's sliding window (0: none).
  std::vector<int64_t> windows(c.layers);
  for (int64_t i = 0; i < c.layers; ++i) windows[i] = LayerWindow(c, i);
  Ref idx =
      b.Input("idx", {"B", gen.decode ? Dim(1) : Dim("S")}, DType::kInt64);
  if (gen.decode) {
    // The cache before the last decode step: S + T - 2 tokens (the prompt and
    // all new tokens but the last two), or the sliding window's window - 1.
    std::vector<std::string> pasts = FullPasts(c.layers);
    for (int64_t i = 0; i < c.layers; ++i) {
      if (windows[i] > 0)
        pasts[i] = "min(S+T-2, " + std::to_string(windows[i] - 1) + ")";
    }
    // NB: the gathered logits have the whole (padded) vocabulary.
    DeclarePasts(b, gen, c.vocab, c.kv_heads / c.tp, HeadDim(c), pasts);
  }
  LlamaWeights w = Declare(b, c);
  std::optional<ScopeGuard> model;
  EnterPrefix(b, c, model);
  Ref x;
  {
    ScopeGuard s(b, "embed_tokens", "Embedding");
    // NB: Megatron's masking of ids outside the rank's vocabulary range is left
    // out.
    x = AllReduceIf(b, c, b.Embedding(w.embed, idx));
    // Gemma3TextScaledWordEmbedding.forward: embedding * embed_scale.to(dtype).
    if (c.embed_scale_buffer) x = b.Mul(x, b.ToDtype(w.embed_scale, c.dtype));
  }
  // GraniteModel.forward: inputs_embeds * embedding_multiplier.
  if (c.embedding_multiplier > 0)
    x = b.Mul(x, b.ScalarTensor(c.embedding_multiplier));
  ModelWide wide;
  // Hugging Face builds the sliding-window mask once per forward, [B, 1, S, S]
  // (sdpa only).
  if (c.window > 0 && c.attn == "sdpa" && !gen.decode) {
    Ref bsz = b.Size(idx, 0), seq = b.Size(idx, 1);
    Ref m = b.Unsqueeze(b.Unsqueeze(SlidingWindowMask(b, seq, c.window), 0), 0);
    wide.window_mask = b.Expand(m, b.IntList({bsz, 1, seq, seq}));
  }
  {
    // NB: one pair of tables for every layer, [T, hd] for the T tokens of this
    // forward (the whole sequence under sequence parallelism, 1 decoding).
    ScopeGuard s(b, "rotary_emb", c.classes + "RotaryEmbedding");
    wide.rope = RopeTables(b, c, b.Size(idx, 1), c.rope_base);
  }
  if (c.rope_local_base > 0) {
    // Gemma3TextModel.rotary_emb_local: the same tables from another base.
    ScopeGuard s(b, "rotary_emb_local", c.classes + "RotaryEmbedding");
    wide.rope_local = RopeTables(b, c, b.Size(idx, 1), c.rope_local_base);
  }
  // GemmaModel: hidden_states * torch.tensor(hidden_size**0.5,
  // dtype=hidden_states.dtype).
  if (c.gemma && !c.embed_scale_buffer)
    x = b.Mul(
        x, b.ScalarTensor(std::sqrt(static_cast<double>(c.hidden)), c.dtype));
  {
    ScopeGuard list(b, "layers", "ModuleList");
    // NB: a layer is built once per distinct window; the others are copies of
    // its nodes (GraphBuilder::Replay) reading their own weights, input and
    // cache: the graph Block would build.
    std::vector<LayerTemplate> templates;
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard block(b, std::to_string(i), c.classes + "Block");
      x = BlockOnce(b, c, w.layers[i], x, wide, windows[i],
                    gen.generating ? &gen : nullptr, templates,
                    c.layers - i - 1);
    }
  }
  {
    ScopeGuard s(b, "norm", c.classes + "RMSNorm");
    x = RmsNorm(b, c, w.norm, x).out;
  }
  model.reset();
  // generate() passes logits_to_keep=1: lm_head(hidden_states[:, -1:, :]).
  if (gen.generating) x = b.Slice(x, 1, -1, kSliceToEnd);
  {
    ScopeGuard s(b, "lm_head", "Linear");
    x = ColumnLinear(b, c, CopyToTpRegionIf(b, c, x), w.lm_head);
  }
  // NB: greedy decoding reads the whole vocabulary: generating with tp > 1,
  // each rank's slice of the logits is gathered (Megatron's output layer with
  // parallel_output=False); training keeps the slice for the vocab-parallel
  // cross entropy.
  if (gen.generating && c.tp > 1)
    x = b.Op1("torchcost::all_gather", "", {{"self", x}, {"world", c.tp}});
  // Gemma2ForCausalLM: logits = cap * tanh(logits / cap).
  if (c.logit_softcap > 0) x = SoftCap(b, x, c.logit_softcap);
  // GraniteForCausalLM: logits / logits_scaling.
  if (c.logits_scaling > 0) x = b.Div(x, b.ScalarTensor(c.logits_scaling));
  BuiltModel m = FinishCausalLm(b, x, gen, windows);
  m.default_loss = TensorParallelLoss(m.default_loss, c.tp);
  if (c.experts > 0) {
    const std::string e = std::to_string(c.experts),
                      k = std::to_string(c.top_k);
    m.notes.push_back(
        "experts: balanced routing: each of the " + e +
        " experts computes on (B*S*" + k + ") // " + e + " tokens" +
        (c.phase == "decode"
             ? "; decoding, the B*" + k +
                   " assignments dealt one by one: expert i gets (B*" + k +
                   " + " + std::to_string(c.experts - 1) + " - i) // " + e
             : ""));
    if (c.capacity_factor > 0) {
      std::string cf = std::to_string(c.capacity_factor);
      cf.erase(cf.find_last_not_of('0') + 1);
      if (cf.back() == '.') cf.pop_back();
      m.notes.push_back(
          "experts: capacity_factor=" + cf + ": capacity = ceil(tokens*" + k +
          "/" + e + "*" + cf +
          ") per expert per rank (Megatron-core get_capacity); " +
          (c.pad_to_capacity
               ? "every expert computes on capacity rows (padded)"
               : "an expert computes on min(its routed tokens, capacity)") +
          "; dropped per expert: max(0, routed - capacity), none under "
          "balanced routing when "
          "capacity_factor >= 1");
    }
    if (c.ep > 1) {
      m.notes.push_back("experts: ep=" + std::to_string(c.ep) +
                        ": this rank holds " +
                        std::to_string(c.experts / c.ep) + " of the " + e +
                        " experts (params, gradients, optimizer states); "
                        "attention, router and "
                        "norms replicated; tokens dispatched and combined by "
                        "all-to-all (expert_parallel in JSON)");
    }
  }
  if (c.vocab != config.vocab)
    m.notes.push_back(
        PaddedVocabNote(config.vocab, c.vocab, c.vocab_multiple, c.tp));
  if (c.sp && c.tp == 1) m.notes.push_back(kSpOffNote);
  if (gen.generating && c.tp > 1) {
    const std::string t = std::to_string(c.tp);
    m.notes.push_back(
        "tp=" + t + ": one rank of " + t +
        " (Megatron's shards): its weights, its " +
        std::to_string(c.kv_heads / c.tp) + " of the " +
        std::to_string(c.kv_heads) +
        " KV heads in the cache and its activations; with a GPU, the "
        "all-reduces and the logits' all-gather are timed as NCCL's tuner "
        "times a ring (a decode step's: its latency, microseconds each)");
  }
  return m;
}

}  // namespace torchcost::builder
