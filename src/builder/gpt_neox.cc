// The GPT-NeoX family: the op sequence of tests/python/hf_decoders.py's
// GPTNeoX (Hugging Face transformers' modeling_gpt_neox.py at
// 006bd23dd0ce18d54e1cf260b09b15fa943a731d, eager attention) as
// torch.jit.trace records it on torch 1.13, in the config's compute dtype.
#include <cmath>
#include <string>
#include <vector>

#include "builder/attention.h"
#include "builder/finfo.h"
#include "builder/generation_phase.h"
#include "builder/lm_head.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

struct NeoxLayer {
  Ref ln1_w, ln1_b, ln2_w, ln2_b, mask, cos, sin, qkv_w, qkv_b, dense_w,
      dense_b;
  Ref fc_w, fc_b, proj_w, proj_b;
};

struct NeoxWeights {
  Ref embed, ln_f_w, ln_f_b, embed_out;
  std::vector<NeoxLayer> layers;
};

int64_t HeadDim(const GptNeoxConfig& c) { return c.hidden / c.heads; }
// GPTNeoXAttention.rotary_ndims = int(head_size * rotary_pct).
int64_t RotaryDims(const GptNeoxConfig& c) {
  return static_cast<int64_t>(HeadDim(c) * c.rotary_pct);
}

// Declares modules, parameters and buffers in registration order
// (GPTNeoXForCausalLM: gpt_neox.embed_in, emb_dropout, layers,
// final_layer_norm; embed_out).
NeoxWeights Declare(GraphBuilder& b, const GptNeoxConfig& c) {
  const int64_t h = c.hidden, rd = RotaryDims(c);
  NeoxWeights w;
  auto param = [&](const std::string& n, std::vector<int64_t> shape) {
    return b.Param(b.Qualify(n), shape, c.dtype);
  };
  auto layer_norm = [&](const char* name, Ref* weight, Ref* bias) {
    ScopeGuard s(b, name, "LayerNorm");
    *weight = param("weight", {h});
    *bias = param("bias", {h});
  };
  auto linear = [&](const char* name, int64_t out, int64_t in, bool bias,
                    Ref* weight, Ref* bias_ref) {
    ScopeGuard s(b, name, "Linear");
    *weight = param("weight", {out, in});
    if (bias) *bias_ref = param("bias", {out});
  };
  ScopeGuard model(b, "gpt_neox", "GPTNeoXModel");
  {
    ScopeGuard s(b, "embed_in", "Embedding");
    w.embed = param("weight", {c.vocab, h});
  }
  { ScopeGuard s(b, "emb_dropout", "Dropout"); }
  {
    ScopeGuard list(b, "layers", "ModuleList");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard layer(b, std::to_string(i), "GPTNeoXLayer");
      NeoxLayer l;
      layer_norm("input_layernorm", &l.ln1_w, &l.ln1_b);
      layer_norm("post_attention_layernorm", &l.ln2_w, &l.ln2_b);
      { ScopeGuard d(b, "post_attention_dropout", "Dropout"); }
      { ScopeGuard d(b, "post_mlp_dropout", "Dropout"); }
      {
        ScopeGuard s(b, "attention", "GPTNeoXAttention");
        // The causal mask: a bool tril(ones(ctx, ctx)) buffer viewed [1, 1,
        // ctx, ctx]; masked_bias a 0-dim float; the rotary caches [ctx, rd]
        // (cat(freqs, freqs)).
        l.mask = b.Buffer(b.Qualify("bias"), {1, 1, c.context, c.context},
                          DType::kBool);
        b.Buffer(b.Qualify("masked_bias"), {}, c.dtype);
        {
          ScopeGuard r(b, "rotary_emb", "GPTNeoXRotaryEmbedding");
          b.Buffer(b.Qualify("inv_freq"), {rd / 2}, c.dtype);
          l.cos = b.Buffer(b.Qualify("cos_cached"), {c.context, rd}, c.dtype);
          l.sin = b.Buffer(b.Qualify("sin_cached"), {c.context, rd}, c.dtype);
        }
        linear("query_key_value", 3 * h, h, c.bias, &l.qkv_w, &l.qkv_b);
        linear("dense", h, h, c.bias, &l.dense_w, &l.dense_b);
        { ScopeGuard d(b, "attention_dropout", "Dropout"); }
      }
      {
        ScopeGuard s(b, "mlp", "GPTNeoXMLP");
        linear("dense_h_to_4h", c.intermediate, h, true, &l.fc_w, &l.fc_b);
        linear("dense_4h_to_h", h, c.intermediate, true, &l.proj_w, &l.proj_b);
        { ScopeGuard a(b, "act", "GELUActivation"); }
      }
      w.layers.push_back(l);
    }
  }
  layer_norm("final_layer_norm", &w.ln_f_w, &w.ln_f_b);
  return w;
}

Arg BiasArg(Ref bias) { return bias.id >= 0 ? Arg(bias) : Arg::None(); }

// x[..., :n // 2] and x[..., n // 2:] with n = x.shape[-1] read for each slice,
// then cat((-x2, x1), -1) (modeling_gpt_neox.rotate_half).
Ref RotateHalf(GraphBuilder& b, Ref x) {
  auto half = [&] {
    return b.IntOf(
        b.FloorDivide(b.NumToTensor(b.Size(x, 3)), b.ScalarTensorInt(2)));
  };
  Ref x1 = b.Slice(x, 3, 0, half());
  Ref x2 = b.Slice(x, 3, half(), kSliceToEnd);
  return b.Cat(b.TensorList({b.Neg(x2), x1}), -1);
}

// The eager core (GPTNeoXAttention._attn) on q, k, v [B, H, T, hd]; returns [B,
// H, T, hd]. NB: a decode step's one query sees every cached key: the mask is
// left out, as llama.cc's decode does (its row of the mask buffer is all true).
Ref EagerCore(GraphBuilder& b, const GptNeoxConfig& c, const NeoxLayer& l,
              Ref q, Ref k, Ref v, bool decode) {
  Ref bsz = b.Size(q, 0), nh = b.Size(q, 1), ql = b.Size(q, 2),
      hd = b.Size(q, 3);
  Ref kl = b.Size(k, 2);
  Ref mask;
  if (!decode) {
    // causal_mask = self.bias[:, :, key_length - query_length : key_length,
    // :key_length]
    Ref start = b.IntOf(b.Op1("aten::sub", "Tensor",
                              {{"self", b.NumToTensor(kl)},
                               {"other", b.NumToTensor(ql)},
                               {"alpha", 1}}));
    mask = b.Slice(b.Slice(l.mask, 0, 0, kSliceToEnd), 1, 0, kSliceToEnd);
    mask = b.Slice(b.Slice(mask, 2, start, kl), 3, 0, kl);
  }
  // batch_size * num_attention_heads, computed for each of its three uses.
  auto bh = [&] {
    return b.IntOf(b.Mul(b.NumToTensor(bsz), b.NumToTensor(nh)));
  };
  q = b.View(q, b.IntList({bh(), ql, hd}));
  k = b.View(k, b.IntList({bh(), kl, hd}));
  Ref zeros = b.Op1("aten::zeros", "",
                    {{"size", b.IntList({bh(), ql, kl})},
                     {"dtype", Arg::ScalarType(c.dtype)},
                     {"layout", Arg::None()},
                     {"device", Arg::Device("cpu")},
                     {"pin_memory", false}});
  const double norm_factor = 1.0 / std::sqrt(static_cast<double>(HeadDim(c)));
  Ref scores = b.Op1("aten::baddbmm", "",
                     {{"self", zeros},
                      {"batch1", q},
                      {"batch2", b.Transpose(k, 1, 2)},
                      {"beta", 1.0},
                      {"alpha", norm_factor}});
  scores = b.View(scores, b.IntList({bsz, nh, ql, kl}));
  if (!decode) {
    // mask_value = torch.tensor(finfo(dtype).min, dtype=dtype).to(device): a
    // 0-dim constant.
    Ref mask_value =
        b.Full(b.IntList({}), FinfoMin(c.dtype), Arg::ScalarType(c.dtype));
    scores = b.Where(mask, scores, mask_value);
  }
  // NB: no fp32 island: softmax in the compute dtype, then .to(value.dtype) (a
  // no-op).
  Ref att = b.ToDtype(b.Softmax(scores, -1), c.dtype);
  {
    ScopeGuard s(b, "attention_dropout", "Dropout");
    att = b.Dropout(att, c.attn_dropout);
  }
  return b.Matmul(att, v);
}

Ref Attention(GraphBuilder& b, const GptNeoxConfig& c, const NeoxLayer& l,
              Ref x, Ref position_ids, GenState& gen) {
  const int64_t hd = HeadDim(c), rd = RotaryDims(c);
  Ref qkv;
  {
    ScopeGuard s(b, "query_key_value", "Linear");
    qkv = b.Linear(x, l.qkv_w, BiasArg(l.qkv_b));
  }
  // [B, T, 3h] -> [B, T, H, 3 hd]; q, k, v = thirds of each head's slice,
  // permuted to [B, H, T, hd].
  qkv =
      b.View(qkv, b.IntList({b.Size(qkv, 0), b.Size(qkv, 1), c.heads, 3 * hd}));
  Ref perm = b.IntList({0, 2, 1, 3});
  Ref q = b.Permute(b.Slice(qkv, 3, 0, hd), perm);
  Ref k = b.Permute(b.Slice(qkv, 3, hd, 2 * hd), b.IntList({0, 2, 1, 3}));
  Ref v =
      b.Permute(b.Slice(qkv, 3, 2 * hd, kSliceToEnd), b.IntList({0, 2, 1, 3}));
  // Partial rotary: the first rd dims of each head rotate, the rest pass.
  Ref q_rot = b.Slice(q, 3, 0, rd), q_pass = b.Slice(q, 3, rd, kSliceToEnd);
  Ref k_rot = b.Slice(k, 3, 0, rd), k_pass = b.Slice(k, 3, rd, kSliceToEnd);
  Ref seq = b.Size(k, 2);
  Ref cos, sin;
  {
    // rotary_emb(value, seq_len): cos_cached[:seq_len], sin_cached[:seq_len].
    ScopeGuard s(b, "rotary_emb", "GPTNeoXRotaryEmbedding");
    cos = b.Slice(l.cos, 0, 0, seq);
    sin = b.Slice(l.sin, 0, 0, seq);
  }
  // apply_rotary_pos_emb: cos[position_ids].unsqueeze(1) (a gather, [1, 1, T,
  // rd]).
  cos = b.Unsqueeze(
      b.Op1("aten::index", "Tensor",
            {{"self", cos}, {"indices", b.TensorList({position_ids})}}),
      1);
  sin = b.Unsqueeze(
      b.Op1("aten::index", "Tensor",
            {{"self", sin}, {"indices", b.TensorList({position_ids})}}),
      1);
  Ref q_emb = b.Add(b.Mul(q_rot, cos), b.Mul(RotateHalf(b, q_rot), sin));
  Ref k_emb = b.Add(b.Mul(k_rot, cos), b.Mul(RotateHalf(b, k_rot), sin));
  q = b.Cat(b.TensorList({q_emb, q_pass}), -1);
  k = b.Cat(b.TensorList({k_emb, k_pass}), -1);
  if (gen.generating) {
    k = CacheUpdate(b, gen, k);
    v = CacheUpdate(b, gen, v);
  }
  Ref y;
  if (c.attn == "eager") {
    y = EagerCore(b, c, l, q, k, v, gen.decode);
    // _merge_heads: permute(0, 2, 1, 3).contiguous().view(B, T, h).
    y = b.Contiguous(b.Permute(y, b.IntList({0, 2, 1, 3})));
    y = b.View(y, b.IntList({b.Size(y, 0), b.Size(y, 1), c.hidden}));
  } else if (c.attn == "flash") {
    y = FlashAttnFunc(b, b.Transpose(q, 1, 2), b.Transpose(k, 1, 2),
                      b.Transpose(v, 1, 2), c.attn_dropout, true, 0);
    y = b.Reshape(y, b.IntList({b.Size(x, 0), b.Size(x, 1), c.hidden}));
  } else {
    // GPTNeoXSdpaAttention: is_causal without a mask (not in a decode step:
    // query.shape[2] > 1 is false); transpose(1, 2).contiguous().view(B, T, h).
    // NB: no copy in the contiguous(), as in llama.cc's FusedCore.
    y = b.Transpose(
        Sdpa(b, q, k, v, Arg::None(), c.attn_dropout, !gen.decode, false), 1,
        2);
    y = b.Reshape(y, b.IntList({b.Size(x, 0), b.Size(x, 1), c.hidden}));
  }
  ScopeGuard s(b, "dense", "Linear");
  return b.Linear(y, l.dense_w, BiasArg(l.dense_b));
}

Ref Mlp(GraphBuilder& b, const GptNeoxConfig& c, const NeoxLayer& l, Ref x) {
  {
    ScopeGuard s(b, "dense_h_to_4h", "Linear");
    x = b.Linear(x, l.fc_w, l.fc_b);
  }
  {
    ScopeGuard s(b, "act", "GELUActivation");
    x = c.act == "relu" ? b.Relu(x)
                        : b.Gelu(x, c.act == "gelu_tanh" ? "tanh" : "none");
  }
  ScopeGuard s(b, "dense_4h_to_h", "Linear");
  return b.Linear(x, l.proj_w, l.proj_b);
}

Ref LayerNorm(GraphBuilder& b, const GptNeoxConfig& c, const char* name, Ref x,
              Ref weight, Ref bias) {
  ScopeGuard s(b, name, "LayerNorm");
  return b.LayerNorm(x, b.IntList({c.hidden}), weight, bias, c.eps);
}

// GPTNeoXLayer.forward: parallel, x + attn(ln1(x)) + mlp(ln2(x)) as (mlp +
// attn) + x; sequential, a = attn(ln1(x)) + x, then mlp(ln2(a)) + a.
Ref Layer(GraphBuilder& b, const GptNeoxConfig& c, const NeoxLayer& l, Ref x,
          Ref position_ids, GenState& gen) {
  Ref attn;
  {
    Ref h = LayerNorm(b, c, "input_layernorm", x, l.ln1_w, l.ln1_b);
    ScopeGuard s(b, "attention", "GPTNeoXAttention");
    attn = Attention(b, c, l, h, position_ids, gen);
  }
  {
    ScopeGuard s(b, "post_attention_dropout", "Dropout");
    attn = b.Dropout(attn, c.dropout);
  }
  if (!c.parallel_residual) attn = b.Add(attn, x);
  Ref h = LayerNorm(b, c, "post_attention_layernorm",
                    c.parallel_residual ? x : attn, l.ln2_w, l.ln2_b);
  {
    ScopeGuard s(b, "mlp", "GPTNeoXMLP");
    h = Mlp(b, c, l, h);
  }
  {
    ScopeGuard s(b, "post_mlp_dropout", "Dropout");
    h = b.Dropout(h, c.dropout);
  }
  return c.parallel_residual ? b.Add(b.Add(h, attn), x) : b.Add(h, attn);
}

}  // namespace

Result<BuiltModel> BuildGptNeox(const GptNeoxConfig& config) {
  GptNeoxConfig c = config;
  Validator v("gpt_neox");
  v.Layers("layers", c.layers);
  v.Positive("hidden", c.hidden);
  v.Positive("heads", c.heads);
  v.Positive("intermediate", c.intermediate);
  v.Positive("vocab", c.vocab);
  v.Positive("context", c.context);
  v.Divides("heads", c.heads, "hidden", c.hidden);
  v.Require(
      c.rotary_pct > 0 && c.rotary_pct <= 1,
      "rotary_pct=" + std::to_string(c.rotary_pct) + " must be in (0, 1]");
  v.Require(
      !v.ok() || c.heads <= 0 || (RotaryDims(c) > 0 && RotaryDims(c) % 2 == 0),
      "rotary dims int(hidden / heads * rotary_pct)=" +
          std::to_string(c.heads > 0 ? RotaryDims(c) : 0) +
          " must be even and positive (RoPE rotates pairs)");
  v.PositiveFloat("rope_base", c.rope_base);
  v.PositiveFloat("eps", c.eps);
  v.Probability("dropout", c.dropout);
  v.Probability("attn_dropout", c.attn_dropout);
  v.Require(c.act == "gelu" || c.act == "gelu_tanh" || c.act == "relu",
            "act=" + c.act + " must be gelu, gelu_tanh or relu");
  v.Require(AttnImplError(c.attn).empty(), AttnImplError(c.attn));
  v.ComputeDType("dtype", c.dtype);
  GenState gen = ReadPhase(v, c.phase, c.cache_dtype, c.dtype);
  if (!v.ok()) return v.status();
  if (c.attn == "flash_attention_2") c.attn = "flash";

  GraphBuilder b("GPTNeoXForCausalLM", "gpt_neox (builder)");

  b.HiddenSize(c.hidden);
  Ref idx =
      b.Input("idx", {"B", gen.decode ? Dim(1) : Dim("S")}, DType::kInt64);
  // The causal-mask buffer and the rotary caches have `context` rows.
  b.BoundSymbol("S", c.context);
  // The cache before the last decode step: S + T - 2 tokens of heads x
  // head_dim.
  if (gen.decode)
    DeclarePasts(b, gen, c.vocab, c.heads, HeadDim(c), FullPasts(c.layers));
  NeoxWeights w = Declare(b, c);
  w.embed_out =
      DeclareLmHead(b, "embed_out", w.embed, c.tie, c.vocab, c.hidden, c.dtype);
  Ref x;
  {
    ScopeGuard model(b, "gpt_neox", "GPTNeoXModel");
    // position_ids = arange(past_length, seq_length + past_length,
    // dtype=long).unsqueeze(0), past_length 0.
    Ref seq =
        b.IntOf(b.Add(b.NumToTensor(b.Size(idx, 1)), b.ScalarTensorInt(0)));
    Ref position_ids =
        b.Unsqueeze(b.ArangeStart(0, seq, Arg::ScalarType(DType::kInt64)), 0);
    {
      ScopeGuard s(b, "embed_in", "Embedding");
      x = b.Embedding(w.embed, idx);
    }
    {
      ScopeGuard s(b, "emb_dropout", "Dropout");
      x = b.Dropout(x, c.dropout);
    }
    {
      ScopeGuard list(b, "layers", "ModuleList");
      for (int64_t i = 0; i < c.layers; ++i) {
        ScopeGuard layer(b, std::to_string(i), "GPTNeoXLayer");
        x = Layer(b, c, w.layers[i], x, position_ids, gen);
      }
    }
    x = LayerNorm(b, c, "final_layer_norm", x, w.ln_f_w, w.ln_f_b);
  }
  // generate() passes logits_to_keep=1: embed_out(hidden_states[:, -1:, :]).
  if (gen.generating) x = b.Slice(x, 1, -1, kSliceToEnd);
  {
    ScopeGuard s(b, "embed_out", "Linear");
    x = b.Linear(x, w.embed_out, Arg::None());
  }
  // No sliding window.
  return FinishCausalLm(b, x, gen, std::vector<int64_t>(c.layers, 0));
}

}  // namespace torchcost::builder
