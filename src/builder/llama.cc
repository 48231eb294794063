// The LLaMA family: the op sequence of tools/hf_reference.py's Llama (Hugging
// Face transformers' modeling_llama.py, eager attention) as torch.jit.trace
// records it on torch 1.13, in the config's compute dtype.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "builder/attention.h"
#include "builder/finfo.h"
#include "builder/megatron.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::build {
namespace {

struct LlamaLayer {
  Ref input_norm, q, k, v, o, post_norm, gate, up, down;
};

struct LlamaWeights {
  Ref embed, norm, lm_head;
  std::vector<LlamaLayer> layers;
};

// Declares modules and parameters in registration order.
LlamaWeights Declare(GraphBuilder& b, const LlamaConfig& c) {
  // NB: with tensor parallelism t, one rank's shards (Megatron): q/k/v,
  // gate and up split by output rows (heads / t), o_proj and down_proj by
  // input columns, embedding and lm_head by vocabulary; norms replicated.
  const int64_t h = c.hidden, hd = c.hidden / c.heads, t = c.tp;
  LlamaWeights w;
  auto linear = [&](const char* name, int64_t out, int64_t in) {
    ScopeGuard s(b, name, "Linear");
    return b.Param(b.Qualify("weight"), {out, in}, c.dtype);
  };
  auto norm = [&](const char* name) {
    ScopeGuard s(b, name, "LlamaRMSNorm");
    return b.Param(b.Qualify("weight"), {h}, c.dtype);
  };
  {
    ScopeGuard s(b, "embed_tokens", "Embedding");
    w.embed = b.Param(b.Qualify("weight"), {c.vocab / t, h}, c.dtype);
  }
  {
    ScopeGuard list(b, "layers", "ModuleList");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard block(b, std::to_string(i), "LlamaBlock");
      LlamaLayer l;
      l.input_norm = norm("input_layernorm");
      {
        ScopeGuard s(b, "self_attn", "LlamaAttention");
        l.q = linear("q_proj", c.heads / t * hd, h);
        l.k = linear("k_proj", c.kv_heads / t * hd, h);
        l.v = linear("v_proj", c.kv_heads / t * hd, h);
        l.o = linear("o_proj", h, c.heads / t * hd);
      }
      l.post_norm = norm("post_attention_layernorm");
      {
        ScopeGuard s(b, "mlp", "LlamaMLP");
        l.gate = linear("gate_proj", c.intermediate / t, h);
        l.up = linear("up_proj", c.intermediate / t, h);
        l.down = linear("down_proj", h, c.intermediate / t);
      }
      w.layers.push_back(l);
    }
  }
  w.norm = norm("norm");
  if (c.tie) {
    { ScopeGuard s(b, "lm_head", "Linear"); }
    b.Alias(w.embed, "lm_head.weight");  // Tied: one storage, two names.
    w.lm_head = w.embed;
  } else {
    w.lm_head = linear("lm_head", c.vocab / t, h);
  }
  return w;
}

// What RMSNorm's trace yields: the output, and the value the block's
// residual reads (HF: residual = hidden_states, taken before the norm).
// NB: in float32, x.to(float32) returns x itself, and the tracer then stands
// the to() output for that tensor object, so the residual reads xf; in a half
// dtype the cast is a new float32 tensor and the residual reads x.
struct NormOut {
  Ref out, residual;
};

// LlamaRMSNorm: input_dtype = x.dtype; xf = x.to(float32);
// variance = xf.pow(2).mean(-1, keepdim=True); xf = xf * rsqrt(variance + eps);
// weight * xf.to(input_dtype).
NormOut RmsNorm(GraphBuilder& b, const LlamaConfig& c, Ref weight, Ref x) {
  Ref xf = b.ToDtype(x, DType::kFloat32);
  Ref var = b.MeanDim(b.PowScalar(xf, 2), b.IntList({-1}), /*keepdim=*/true);
  Ref r = b.Rsqrt(b.Add(var, b.ScalarTensor(c.eps)));
  Ref xn = b.ToDtype(b.Mul(xf, r), c.dtype);
  return {b.Mul(weight, xn), c.dtype == DType::kFloat32 ? xf : x};
}

struct Rope {
  Ref cos, sin;
};

// cos and sin tables [T, hd] from arange: inv_freq = 1 / base^(arange(0, hd, 2) / hd),
// freqs = outer(arange(T), inv_freq), emb = cat(freqs, freqs), computed in
// float32 and cast to x's dtype (HF: cos.to(dtype=x.dtype)).
Rope RopeTables(GraphBuilder& b, const LlamaConfig& c, Ref t) {
  const int64_t hd = c.hidden / c.heads;
  Ref ar = b.ArangeStartStep(0, hd, 2, Arg::None());
  ar = b.Div(b.ToDtype(ar, DType::kFloat32), b.ScalarTensorInt(hd));
  Ref base = b.Detach(b.ToDevice(b.ScalarTensor(c.rope_base, DType::kFloat32), "cpu", DType::kFloat32));
  Ref inv_freq = b.Mul(b.Reciprocal(b.PowTensor(base, ar)), b.ScalarTensor(1.0));
  Ref pos = b.Arange(t, Arg::ScalarType(DType::kFloat32));
  Ref freqs = b.Outer(pos, inv_freq);
  Ref emb = b.Cat(b.TensorList({freqs, freqs}), -1);
  return {b.ToDtype(b.Cos(emb), c.dtype), b.ToDtype(b.Sin(emb), c.dtype)};
}

// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., h:], x[..., :h]).
Ref ApplyRope(GraphBuilder& b, const Rope& rope, Ref x) {
  Ref x_cos = b.Mul(x, rope.cos);
  Ref half = b.FloorDivide(b.NumToTensor(b.Size(x, 3)), b.ScalarTensorInt(2));
  Ref half_hi = b.IntOf(half), half_lo = b.IntOf(half);
  Ref x1 = b.Slice(x, 3, 0, half_lo);
  Ref x2 = b.Slice(x, 3, half_hi, kSliceToEnd);
  Ref rotated = b.Cat(b.TensorList({b.Neg(x2), x1}), -1);
  return b.Add(x_cos, b.Mul(rotated, rope.sin));
}

// Whether Megatron's sequence parallelism applies (it is off at tp = 1).
bool Sp(const LlamaConfig& c) { return c.sp && c.tp > 1; }

// Megatron's row-parallel output (and the vocabulary-parallel embedding):
// the ranks' partial results summed by torchcost::all_reduce, in place; with
// sp, reduce-scattered to this rank's S/t of the sequence.
Ref AllReduceIf(GraphBuilder& b, const LlamaConfig& c, Ref partial) {
  if (c.tp == 1) return partial;
  return Sp(c) ? b.Op1("torchcost::reduce_scatter", "", {{"self", partial}, {"world", c.tp}})
               : b.Op1("torchcost::all_reduce", "", {{"self", partial}});
}

// A column-parallel linear: with sp, on the sequence-parallel shard (rules/distributed.yaml).
Ref ColumnLinear(GraphBuilder& b, const LlamaConfig& c, Ref x, Ref weight) {
  return Sp(c) ? b.Op1("torchcost::sp_linear", "", {{"input", x}, {"weight", weight}, {"world", c.tp}})
               : b.Linear(x, weight);
}

// The sdpa and flash cores (Hugging Face's sdpa_attention_forward,
// transformers src/transformers/integrations/sdpa_attention.py at
// 00c238bd242b4c6ddfb2c17d4573174ec2daaec8, and _flash_attention_forward,
// src/transformers/modeling_flash_attention_utils.py at 7713be1e51fbf31eb2c5eb27624369e08af29243):
// q [B, H, T, hd], k and v [B, Hk, T, hd] after RoPE; returns [B, T, H, hd].
// NB: sdpa models torch >= 2.5: without a mask, grouped K/V go in as they are
// (enable_gqa=True); with the sliding-window mask, repeat_kv first. flash
// takes [B, T, H, hd] views (transpose(1, 2)) and grouped K/V natively.
Ref FusedCore(GraphBuilder& b, const LlamaConfig& c, Ref q, Ref k, Ref v, Ref window_mask) {
  if (c.attn == "flash") {
    return FlashAttnFunc(b, b.Transpose(q, 1, 2), b.Transpose(k, 1, 2), b.Transpose(v, 1, 2), 0.0, true, c.window);
  }
  const int64_t rep = c.heads / c.kv_heads;
  Ref y = c.window > 0 ? Sdpa(b, q, RepeatKv(b, k, rep), RepeatKv(b, v, rep), window_mask, 0.0, false, false)
                       : Sdpa(b, q, k, v, Arg::None(), 0.0, true, true);
  // NB: no copy: PyTorch's flash and memory-efficient kernels return a
  // transposed view of a [B, T, H, hd] buffer, so transpose(1, 2).contiguous()
  // returns it as is (the math backend copies one [B, T, H, hd]: not modelled).
  return b.Transpose(y, 1, 2);
}

Ref Attention(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x, Ref window_mask) {
  const int64_t hd = c.hidden / c.heads;
  Ref bsz = b.Size(x, 0), t = b.Size(x, 1);
  auto project = [&](const char* name, Ref weight, int64_t heads) {
    Ref y;
    {
      ScopeGuard s(b, name, "Linear");
      y = ColumnLinear(b, c, x, weight);
    }
    if (Sp(c)) t = b.Size(y, 1);  // The gathered sequence.
    return b.Transpose(b.View(y, b.IntList({bsz, t, heads, hd})), 1, 2);
  };
  Ref q = project("q_proj", l.q, c.heads / c.tp);
  Ref k = project("k_proj", l.k, c.kv_heads / c.tp);
  Ref v = project("v_proj", l.v, c.kv_heads / c.tp);
  const Rope rope = RopeTables(b, c, t);
  q = ApplyRope(b, rope, q);
  k = ApplyRope(b, rope, k);
  if (c.attn != "eager") {
    Ref y = b.Reshape(FusedCore(b, c, q, k, v, window_mask), b.IntList({bsz, t, c.heads / c.tp * hd}));
    ScopeGuard s(b, "o_proj", "Linear");
    return AllReduceIf(b, c, b.Linear(y, l.o));
  }
  // Grouped-query attention: each K/V head serves heads / kv_heads query heads.
  const int64_t rep = c.heads / c.kv_heads;
  k = RepeatKv(b, k, rep);
  v = RepeatKv(b, v, rep);
  Ref att = b.Div(b.Matmul(q, b.Transpose(k, 2, 3)), b.ScalarTensor(std::sqrt(static_cast<double>(hd))));
  // Additive causal mask in the compute dtype: full((T, T), finfo(dtype).min, dtype).triu(1).
  Ref mask = b.Triu(b.Full(b.IntList({t, t}), FinfoMin(c.dtype), Arg::ScalarType(c.dtype)), 1);
  // Sliding window: keys at or before q - window are masked too (tril(-window)).
  if (c.window > 0) {
    Ref low = b.Full(b.IntList({t, t}), FinfoMin(c.dtype), Arg::ScalarType(c.dtype));
    mask = b.Add(mask, b.Op1("aten::tril", "", {{"self", low}, {"diagonal", -c.window}}));
  }
  att = b.Add(att, mask);
  // NB: the eager softmax's fp32 island: softmax(att, dim=-1, dtype=float32).to(query.dtype).
  att = b.ToDtype(b.Softmax(att, -1, Arg::ScalarType(DType::kFloat32)), c.dtype);
  Ref y = b.Contiguous(b.Transpose(b.Matmul(att, v), 1, 2));
  y = b.Reshape(y, b.IntList({bsz, t, c.heads / c.tp * hd}));
  ScopeGuard s(b, "o_proj", "Linear");
  return AllReduceIf(b, c, b.Linear(y, l.o));
}

// down(silu(gate(x)) * up(x)).
Ref Mlp(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x) {
  Ref gate, up;
  {
    ScopeGuard s(b, "gate_proj", "Linear");
    gate = ColumnLinear(b, c, x, l.gate);
  }
  gate = b.Silu(gate);
  {
    ScopeGuard s(b, "up_proj", "Linear");
    up = ColumnLinear(b, c, x, l.up);
  }
  Ref h = b.Mul(gate, up);
  ScopeGuard s(b, "down_proj", "Linear");
  return AllReduceIf(b, c, b.Linear(h, l.down));
}

Ref Block(GraphBuilder& b, const LlamaConfig& c, const LlamaLayer& l, Ref x, Ref window_mask) {
  NormOut n;
  {
    ScopeGuard s(b, "input_layernorm", "LlamaRMSNorm");
    n = RmsNorm(b, c, l.input_norm, x);
  }
  Ref h;
  {
    ScopeGuard s(b, "self_attn", "LlamaAttention");
    h = Attention(b, c, l, n.out, window_mask);
  }
  x = b.Add(n.residual, h);
  {
    ScopeGuard s(b, "post_attention_layernorm", "LlamaRMSNorm");
    n = RmsNorm(b, c, l.post_norm, x);
  }
  {
    ScopeGuard s(b, "mlp", "LlamaMLP");
    h = Mlp(b, c, l, n.out);
  }
  return b.Add(n.residual, h);
}

}  // namespace

Result<BuiltModel> BuildLlama(const LlamaConfig& config) {
  // NB: with tp > 1 the graph is built on Megatron's padded vocabulary (build/megatron.h).
  LlamaConfig c = config;
  Validator v("llama");
  v.Positive("layers", c.layers);
  v.AtMost("layers", c.layers, kMaxLayers);
  v.Positive("hidden", c.hidden);
  v.Positive("heads", c.heads);
  v.Positive("kv_heads", c.kv_heads);
  v.Positive("intermediate", c.intermediate);
  v.Positive("vocab", c.vocab);
  v.Divides("heads", c.heads, "hidden", c.hidden);
  v.Divides("kv_heads", c.kv_heads, "heads", c.heads);
  v.Positive("tp", c.tp);
  v.Divides("tp", c.tp, "kv_heads", c.kv_heads);
  v.Divides("tp", c.tp, "intermediate", c.intermediate);
  v.Positive("make_vocab_size_divisible_by", c.vocab_multiple);
  v.Require(c.heads <= 0 || c.hidden % c.heads != 0 || (c.hidden / c.heads) % 2 == 0,
            "hidden/heads=" + std::to_string(c.heads > 0 ? c.hidden / c.heads : 0) +
                " must be even (RoPE rotates pairs)");
  v.PositiveFloat("eps", c.eps);
  v.PositiveFloat("rope_base", c.rope_base);
  v.Require(AttnImplError(c.attn).empty(), AttnImplError(c.attn));
  v.Require(c.window >= 0 && c.window < kMaxConfigInt,
            "window=" + std::to_string(c.window) + " must be >= 0 (0: no sliding window)");
  v.ComputeDType("dtype", c.dtype);
  if (!v.ok()) return v.status();
  if (c.attn == "flash_attention_2") c.attn = "flash";
  c.vocab = PaddedVocab(config.vocab, c.vocab_multiple, c.tp);

  GraphBuilder b("Llama", "llama (builder)");
  Ref idx = b.Input("idx", {"B", "S"}, DType::kInt64);
  LlamaWeights w = Declare(b, c);
  Ref x;
  {
    ScopeGuard s(b, "embed_tokens", "Embedding");
    // NB: Megatron's masking of ids outside the rank's vocabulary range is left out.
    x = AllReduceIf(b, c, b.Embedding(w.embed, idx));
  }
  // Hugging Face builds the sliding-window mask once per forward, [B, 1, S, S] (sdpa only).
  Ref window_mask;
  if (c.window > 0 && c.attn == "sdpa") {
    Ref bsz = b.Size(idx, 0), seq = b.Size(idx, 1);
    Ref m = b.Unsqueeze(b.Unsqueeze(SlidingWindowMask(b, seq, c.window), 0), 0);
    window_mask = b.Expand(m, b.IntList({bsz, 1, seq, seq}));
  }
  {
    ScopeGuard list(b, "layers", "ModuleList");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard block(b, std::to_string(i), "LlamaBlock");
      x = Block(b, c, w.layers[i], x, window_mask);
    }
  }
  {
    ScopeGuard s(b, "norm", "LlamaRMSNorm");
    x = RmsNorm(b, c, w.norm, x).out;
  }
  {
    ScopeGuard s(b, "lm_head", "Linear");
    x = ColumnLinear(b, c, x, w.lm_head);
  }
  b.Output(x);
  b.DefaultLoss("causal_lm");  // Hugging Face's causal-LM loss (src/training/loss.cc).
  BuiltModel m = b.Finish();
  if (c.vocab != config.vocab) m.notes.push_back(PaddedVocabNote(config.vocab, c.vocab, c.vocab_multiple, c.tp));
  if (c.sp && c.tp == 1) m.notes.push_back(kSpOffNote);
  return m;
}

}  // namespace torchcost::build
