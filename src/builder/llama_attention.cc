#include "builder/llama_attention.h"

#include <cmath>

#include "builder/attention.h"
#include "builder/finfo.h"

namespace torchcost::builder {
namespace {

// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., h:], x[...,
// :h]).
Ref ApplyRope(GraphBuilder& b, const Rope& rope, Ref x) {
  Ref x_cos = b.Mul(x, rope.cos);
  Ref half = b.FloorDivide(b.NumToTensor(b.Size(x, 3)), b.ScalarTensorInt(2));
  Ref half_hi = b.IntOf(half), half_lo = b.IntOf(half);
  Ref x1 = b.Slice(x, 3, 0, half_lo);
  Ref x2 = b.Slice(x, 3, half_hi, kSliceToEnd);
  Ref rotated = b.Cat(b.TensorList({b.Neg(x2), x1}), -1);
  return b.Add(x_cos, b.Mul(rotated, rope.sin));
}

// RoPE on the first rotary_dim dims of x, the rest passed through (Phi-3's
// apply_rotary_pos_emb: cat([rope(x[..., :rd]), x[..., rd:]], -1)); all dims
// when rotary_dim is 0.
Ref ApplyPartialRope(GraphBuilder& b, const LlamaConfig& c, const Rope& rope,
                     Ref x) {
  if (c.rotary_dim == 0 || c.rotary_dim == HeadDim(c))
    return ApplyRope(b, rope, x);
  Ref rot = b.Slice(x, 3, 0, c.rotary_dim);
  Ref pass = b.Slice(x, 3, c.rotary_dim, kSliceToEnd);
  return b.Cat(b.TensorList({ApplyRope(b, rope, rot), pass}), -1);
}

// The sdpa and flash cores (Hugging Face's sdpa_attention_forward,
// transformers src/transformers/integrations/sdpa_attention.py at
// 00c238bd242b4c6ddfb2c17d4573174ec2daaec8, and _flash_attention_forward,
// src/transformers/modeling_flash_attention_utils.py at
// 7713be1e51fbf31eb2c5eb27624369e08af29243): q [B, H, T, hd], k and v [B, Hk,
// T, hd] after RoPE; returns [B, T, H, hd]. NB: sdpa models torch >= 2.5:
// without a mask, grouped K/V go in as they are (enable_gqa=True); with the
// sliding-window mask, repeat_kv first. flash takes [B, T, H, hd] views
// (transpose(1, 2)) and grouped K/V natively. `window` is this layer's (0:
// none). NB: Gemma-2's soft-capping is not applied here: Hugging Face's sdpa
// path drops it, flash-attn applies it inside the kernel.
Ref FusedCore(GraphBuilder& b, const LlamaConfig& c, Ref q, Ref k, Ref v,
              Ref window_mask, int64_t window, bool decode) {
  if (decode && c.attn != "flash") {
    // NB: one query: sdpa_attention_forward's is_causal is query.shape[2] > 1
    // (false), and no mask (every cached key visible; the sliding window's
    // cache holds window - 1 keys).
    return b.Transpose(Sdpa(b, q, k, v, Arg::None(), 0.0, false, true), 1, 2);
  }
  if (c.attn == "flash") {
    return FlashAttnFunc(b, b.Transpose(q, 1, 2), b.Transpose(k, 1, 2),
                         b.Transpose(v, 1, 2), 0.0, true, window);
  }
  const int64_t rep = c.heads / c.kv_heads;
  Ref y = window > 0 ? Sdpa(b, q, RepeatKv(b, k, rep), RepeatKv(b, v, rep),
                            window_mask, 0.0, false, false)
                     : Sdpa(b, q, k, v, Arg::None(), 0.0, true, true);
  // NB: no copy: PyTorch's flash and memory-efficient kernels return a
  // transposed view of a [B, T, H, hd] buffer, so transpose(1, 2).contiguous()
  // returns it as is (the math backend copies one [B, T, H, hd]: not modelled).
  return b.Transpose(y, 1, 2);
}

}  // namespace

// cos and sin tables [T, hd] from arange: inv_freq = 1 / base^(arange(0, hd, 2)
// / hd), freqs = outer(arange(T), inv_freq), emb = cat(freqs, freqs), computed
// in float32 and cast to x's dtype (HF: cos.to(dtype=x.dtype)). Made once per
// forward, as LlamaModel.forward's position_embeddings are (transformers
// src/transformers/models/llama/modeling_llama.py at
// 5dd4a63548857797727ae73eeb6a6e886ea02a3e).
Rope RopeTables(GraphBuilder& b, const LlamaConfig& c, Ref t,
                double rope_base) {
  // NB: hd is the rotated dims: Phi-3's int(head_dim * partial_rotary_factor).
  const int64_t hd = c.rotary_dim > 0 ? c.rotary_dim : HeadDim(c);
  Ref ar = b.ArangeStartStep(0, hd, 2, Arg::None());
  ar = b.Div(b.ToDtype(ar, DType::kFloat32), b.ScalarTensorInt(hd));
  Ref base = b.Detach(b.ToDevice(b.ScalarTensor(rope_base, DType::kFloat32),
                                 "cpu", DType::kFloat32));
  Ref inv_freq =
      b.Mul(b.Reciprocal(b.PowTensor(base, ar)), b.ScalarTensor(1.0));
  Ref pos = b.Arange(t, Arg::ScalarType(DType::kFloat32));
  Ref freqs = b.Outer(pos, inv_freq);
  Ref emb = b.Cat(b.TensorList({freqs, freqs}), -1);
  return {b.ToDtype(b.Cos(emb), c.dtype), b.ToDtype(b.Sin(emb), c.dtype)};
}

// This layer's sliding window: Gemma-2 windows the even layers only (is_sliding
// = not layer_idx % 2).
int64_t LayerWindow(const LlamaConfig& c, int64_t layer) {
  if (c.alternate_window && layer % 2 != 0) return 0;
  // Gemma-3: sliding_window_pattern P makes layer i global when (i + 1) % P
  // == 0.
  if (c.window_pattern > 0 && (layer + 1) % c.window_pattern == 0) return 0;
  return c.window;
}

Ref Attention(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x,
              const ModelWide& wide, int64_t window, GenState* gen) {
  const int64_t hd = HeadDim(c);
  x = CopyToTpRegionIf(b, c, x);
  Ref bsz = b.Size(x, 0), t = b.Size(x, 1);
  // [B, T, heads * hd] -> [B, heads, T, hd]; Qwen3 normalizes each head
  // first: q_norm(q_proj(x).view(B, T, -1, hd)).transpose(1, 2). NB: Gemma-3
  // normalizes after the transpose: the same sizes, FLOPs and saved bytes.
  auto heads_view = [&](Ref y, int64_t heads, const char* norm_name = "",
                        Ref norm = Ref()) {
    y = b.View(y, b.IntList({bsz, t, heads, hd}));
    if (norm.id >= 0) {
      ScopeGuard s(b, norm_name, c.classes + "RMSNorm");
      y = RmsNorm(b, c, norm, y).out;
    }
    return b.Transpose(y, 1, 2);
  };
  auto project = [&](const char* name, Ref weight, Ref bias, int64_t heads,
                     const char* norm_name = "", Ref norm = Ref()) {
    Ref y;
    {
      ScopeGuard s(b, name, "Linear");
      y = bias.id >= 0 && !Sp(c) ? b.Linear(x, weight, bias)
                                 : ColumnLinear(b, c, x, weight);
    }
    if (Sp(c)) t = b.Size(y, 1);  // The gathered sequence.
    if (c.qk_norm_full && norm.id >= 0) {
      // OLMo-2: q_norm(q_proj(x)), then the view into heads.
      ScopeGuard s(b, norm_name, c.classes + "RMSNorm");
      return heads_view(RmsNorm(b, c, norm, y).out, heads);
    }
    return heads_view(y, heads, norm_name, norm);
  };
  Ref q, k, v;
  if (c.fused) {
    // Phi3Attention: qkv = qkv_proj(x); q, k, v = qkv[..., :qpos], qkv[...,
    // qpos:qpos + kv], qkv[..., qpos + kv:].
    Ref qkv;
    {
      ScopeGuard s(b, "qkv_proj", "Linear");
      qkv = b.Linear(x, l.q, BiasArg(l.q_bias));
    }
    const int64_t qpos = c.heads * hd, kv = c.kv_heads * hd;
    q = heads_view(b.Slice(qkv, 2, 0, qpos), c.heads);
    k = heads_view(b.Slice(qkv, 2, qpos, qpos + kv), c.kv_heads);
    v = heads_view(b.Slice(qkv, 2, qpos + kv, kSliceToEnd), c.kv_heads);
  } else {
    q = project("q_proj", l.q, l.q_bias, c.heads / c.tp, "q_norm", l.q_norm);
    k = project("k_proj", l.k, l.k_bias, c.kv_heads / c.tp, "k_norm", l.k_norm);
    v = project("v_proj", l.v, l.v_bias, c.kv_heads / c.tp);
  }
  // Gemma-3: the windowed layers rotate with the local tables.
  const Rope& rope =
      window > 0 && c.rope_local_base > 0 ? wide.rope_local : wide.rope;
  q = ApplyPartialRope(b, c, rope, q);
  k = ApplyPartialRope(b, c, rope, k);
  const bool decode = gen != nullptr && gen->decode;
  if (gen != nullptr) {
    k = CacheUpdate(b, *gen, k);
    v = CacheUpdate(b, *gen, v);
  }
  if (c.attn != "eager") {
    Ref y =
        b.Reshape(FusedCore(b, c, q, k, v, wide.window_mask, window, decode),
                  b.IntList({bsz, t, c.heads / c.tp * hd}));
    ScopeGuard s(b, "o_proj", "Linear");
    return AllReduceIf(b, c, b.Linear(y, l.o, BiasArg(l.o_bias)));
  }
  // Grouped-query attention: each K/V head serves heads / kv_heads query heads.
  const int64_t rep = c.heads / c.kv_heads;
  k = RepeatKv(b, k, rep);
  v = RepeatKv(b, v, rep);
  // NB: Llama divides by sqrt(hd); Qwen2, Gemma and Phi-3 multiply by hd**-0.5
  // (one elementwise op either way). Gemma-2 multiplies by
  // query_pre_attn_scalar**-0.5, then soft-caps.
  Ref att = b.Matmul(q, b.Transpose(k, 2, 3));
  att = c.query_scalar > 0
            ? b.Mul(att, b.ScalarTensor(std::pow(c.query_scalar, -0.5)))
            : b.Div(att, b.ScalarTensor(std::sqrt(static_cast<double>(hd))));
  if (c.attn_softcap > 0) att = SoftCap(b, att, c.attn_softcap);
  if (decode) {
    // NB: one query sees every cached key: the additive mask (zeros) is left
    // out.
    att = b.ToDtype(b.Softmax(att, -1, Arg::ScalarType(DType::kFloat32)),
                    c.dtype);
    Ref y = b.Reshape(b.Contiguous(b.Transpose(b.Matmul(att, v), 1, 2)),
                      b.IntList({bsz, t, c.heads / c.tp * hd}));
    ScopeGuard s(b, "o_proj", "Linear");
    return AllReduceIf(b, c, b.Linear(y, l.o, BiasArg(l.o_bias)));
  }
  // Additive causal mask in the compute dtype: full((T, T), finfo(dtype).min,
  // dtype).triu(1).
  Ref mask = b.Triu(
      b.Full(b.IntList({t, t}), FinfoMin(c.dtype), Arg::ScalarType(c.dtype)),
      1);
  // Sliding window: keys at or before q - window are masked too
  // (tril(-window)).
  if (window > 0) {
    Ref low =
        b.Full(b.IntList({t, t}), FinfoMin(c.dtype), Arg::ScalarType(c.dtype));
    mask = b.Add(
        mask, b.Op1("aten::tril", "", {{"self", low}, {"diagonal", -window}}));
  }
  att = b.Add(att, mask);
  // NB: the eager softmax's fp32 island: softmax(att, dim=-1,
  // dtype=float32).to(query.dtype).
  att =
      b.ToDtype(b.Softmax(att, -1, Arg::ScalarType(DType::kFloat32)), c.dtype);
  Ref y = b.Contiguous(b.Transpose(b.Matmul(att, v), 1, 2));
  y = b.Reshape(y, b.IntList({bsz, t, c.heads / c.tp * hd}));
  ScopeGuard s(b, "o_proj", "Linear");
  return AllReduceIf(b, c, b.Linear(y, l.o, BiasArg(l.o_bias)));
}

}  // namespace torchcost::builder
