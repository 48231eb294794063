// The T5 family: the op sequence of tests/python/hf_encoders.py's
// T5ForConditionalGeneration (Hugging Face transformers' modeling_t5.py at
// 6b8b757dfcb582379a64f013cdce46c43629f2b0, eager attention, no cache) as
// torch.jit.trace records it on torch 1.13, in the config's compute dtype.
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "builder/finfo.h"
#include "builder/lm_head.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

struct T5AttnWeights {
  // bias: relative_attention_bias [buckets, heads] (first layer's
  // self-attention).
  Ref q, k, v, o, bias;
};

struct T5BlockWeights {
  T5AttnWeights self_attn, cross_attn;
  Ref self_norm, cross_norm, ff_norm;
  Ref wi, wi_1, wo;  // wi: wi (relu) or wi_0 (gated).
};

struct T5Weights {
  Ref shared, lm_head, enc_norm, dec_norm;
  std::vector<T5BlockWeights> encoder, decoder;
};

int64_t DecoderLayers(const T5Config& c) {
  return c.decoder_layers > 0 ? c.decoder_layers : c.layers;
}

// Declares modules and parameters in registration order (shared, encoder,
// decoder, lm_head).
T5Weights Declare(GraphBuilder& b, const T5Config& c) {
  const int64_t d = c.d_model, inner = c.heads * c.d_kv;
  T5Weights w;
  auto linear = [&](const char* name, int64_t out, int64_t in) {
    ScopeGuard s(b, name, "Linear");
    return b.Param(b.Qualify("weight"), {out, in}, c.dtype);
  };
  auto norm = [&](const char* name) {
    ScopeGuard s(b, name, "T5LayerNorm");
    return b.Param(b.Qualify("weight"), {d}, c.dtype);
  };
  auto attention = [&](const char* name, bool relative) {
    ScopeGuard s(b, name, "T5Attention");
    T5AttnWeights a;
    a.q = linear("q", inner, d);
    a.k = linear("k", inner, d);
    a.v = linear("v", inner, d);
    a.o = linear("o", d, inner);
    if (relative) {
      ScopeGuard e(b, "relative_attention_bias", "Embedding");
      a.bias = b.Param(b.Qualify("weight"), {c.buckets, c.heads}, c.dtype);
    }
    return a;
  };
  {
    ScopeGuard s(b, "shared", "Embedding");
    w.shared = b.Param(b.Qualify("weight"), {c.vocab, d}, c.dtype);
  }
  for (const bool decoder : {false, true}) {
    ScopeGuard stack(b, decoder ? "decoder" : "encoder", "T5Stack");
    { ScopeGuard s(b, "embed_tokens", "Embedding"); }
    // T5Stack(config, self.shared): one module.
    b.Alias(w.shared, b.Qualify("embed_tokens.weight"));
    {
      ScopeGuard list(b, "block", "ModuleList");
      const int64_t layers = decoder ? DecoderLayers(c) : c.layers;
      for (int64_t i = 0; i < layers; ++i) {
        ScopeGuard block(b, std::to_string(i), "T5Block");
        ScopeGuard sub(b, "layer", "ModuleList");
        T5BlockWeights bw;
        {
          ScopeGuard l(b, "0", "T5LayerSelfAttention");
          bw.self_attn = attention("SelfAttention", i == 0);
          bw.self_norm = norm("layer_norm");
          { ScopeGuard dr(b, "dropout", "Dropout"); }
        }
        if (decoder) {
          ScopeGuard l(b, "1", "T5LayerCrossAttention");
          bw.cross_attn = attention("EncDecAttention", false);
          bw.cross_norm = norm("layer_norm");
          { ScopeGuard dr(b, "dropout", "Dropout"); }
        }
        ScopeGuard l(b, decoder ? "2" : "1", "T5LayerFF");
        {
          ScopeGuard ff(b, "DenseReluDense",
                        c.gated ? "T5DenseGatedActDense" : "T5DenseActDense");
          if (c.gated) {
            bw.wi = linear("wi_0", c.d_ff, d);
            bw.wi_1 = linear("wi_1", c.d_ff, d);
          } else {
            bw.wi = linear("wi", c.d_ff, d);
          }
          bw.wo = linear("wo", d, c.d_ff);
          { ScopeGuard dr(b, "dropout", "Dropout"); }
        }
        bw.ff_norm = norm("layer_norm");
        { ScopeGuard dr(b, "dropout", "Dropout"); }
        (decoder ? w.decoder : w.encoder).push_back(bw);
      }
    }
    (decoder ? w.dec_norm : w.enc_norm) = norm("final_layer_norm");
    { ScopeGuard dr(b, "dropout", "Dropout"); }
  }
  w.lm_head = DeclareLmHead(b, "lm_head", w.shared, c.tie, c.vocab, d, c.dtype);
  return w;
}

Ref Dropout(GraphBuilder& b, Ref x, double p, const char* scope = "dropout") {
  ScopeGuard s(b, scope, "Dropout");
  return b.Dropout(x, p);
}

// What T5LayerNorm's trace yields: the output, and the value the residual
// reads. NB: as llama.cc's RmsNorm: in float32 x.to(float32) is x itself and
// the tracer stands its output for x, so the residual and the product read it.
struct NormOut {
  Ref out, residual;
};

// T5LayerNorm: variance = x.to(float32).pow(2).mean(-1, keepdim=True);
// x = x * rsqrt(variance + eps); x.to(weight.dtype) when half; weight * x.
NormOut LayerNorm(GraphBuilder& b, const T5Config& c, const char* name,
                  Ref weight, Ref x) {
  ScopeGuard s(b, name, "T5LayerNorm");
  Ref xf = b.ToDtype(x, DType::kFloat32);
  Ref var = b.MeanDim(b.PowScalar(xf, 2), b.IntList({-1}), /*keepdim=*/true);
  Ref r = b.Rsqrt(b.Add(var, b.ScalarTensor(c.eps)));
  const bool fp32 = c.dtype == DType::kFloat32;
  Ref h = b.Mul(fp32 ? xf : x, r);
  if (!fp32) h = b.ToDtype(h, c.dtype);
  return {b.Mul(weight, h), fp32 ? xf : x};
}

// (1.0 - ones(B, n)[:, None, None, :].to(dtype)) * finfo(dtype).min: the
// additive [B, 1, 1, n] mask of get_extended_attention_mask /
// invert_attention_mask.
Ref PaddingMask(GraphBuilder& b, const T5Config& c, Ref bsz, Ref n) {
  Ref ones = b.Op1("aten::ones", "",
                   {{"size", b.IntList({bsz, n})},
                    {"dtype", Arg::None()},
                    {"layout", Arg::None()},
                    {"device", Arg::Device("cpu")},
                    {"pin_memory", false}});
  Ref m =
      b.Slice(b.Unsqueeze(b.Unsqueeze(b.Slice(ones, 0, 0, kSliceToEnd), 1), 2),
              3, 0, kSliceToEnd);
  m = b.ToDtype(m, c.dtype);
  m = b.Op1("aten::rsub", "Tensor",
            {{"self", m}, {"other", b.ScalarTensor(1.0)}, {"alpha", 1}});
  return b.Mul(m, b.ScalarTensor(FinfoMin(c.dtype)));
}

// T5Attention._relative_position_bucket + compute_bias on [q, k] int64
// positions; returns the bias [1, heads, q, k] (the embedding of the buckets,
// permuted).
Ref ComputeBias(GraphBuilder& b, const T5Config& c, Ref table, Ref q_len,
                Ref k_len, bool decoder) {
  Ref context =
      b.Unsqueeze(b.Slice(b.Arange(q_len, Arg::ScalarType(DType::kInt64)), 0, 0,
                          kSliceToEnd),
                  1);
  Ref memory =
      b.Slice(b.Unsqueeze(b.Arange(k_len, Arg::ScalarType(DType::kInt64)), 0),
              1, 0, kSliceToEnd);
  Ref rel = b.Op1("aten::sub", "Tensor",
                  {{"self", memory}, {"other", context}, {"alpha", 1}});
  int64_t buckets = c.buckets;
  Ref result;  // relative_buckets, 0 + ... for the bidirectional half.
  if (!decoder) {
    buckets /= 2;
    Ref positive =
        b.ToDtype(b.Op1("aten::gt", "Scalar", {{"self", rel}, {"other", 0}}),
                  DType::kInt64);
    result = b.Add(b.Mul(positive, b.ScalarTensorInt(buckets)),
                   b.ScalarTensorInt(0));
    rel = b.Op1("aten::abs", "", {{"self", rel}});
  } else {
    Ref zeros = b.Op1("aten::zeros_like", "",
                      {{"self", rel},
                       {"dtype", Arg::ScalarType(DType::kInt64)},
                       {"layout", 0},
                       {"device", Arg::Device("cpu")},
                       {"pin_memory", false},
                       {"memory_format", Arg::None()}});
    rel = b.Neg(b.Op1("aten::min", "other", {{"self", rel}, {"other", zeros}}));
  }
  const int64_t max_exact = buckets / 2;
  Ref is_small =
      b.Op1("aten::lt", "Scalar", {{"self", rel}, {"other", max_exact}});
  // max_exact + (log(rel.float() / max_exact) / log(max_distance / max_exact) *
  // (buckets - max_exact)).to(long)
  Ref large =
      b.Div(b.ToDtype(rel, DType::kFloat32), b.ScalarTensorInt(max_exact));
  large = b.Op1("aten::log", "", {{"self", large}});
  large = b.Div(large, b.ScalarTensor(std::log(
                           static_cast<double>(c.max_distance) / max_exact)));
  large = b.ToDtype(b.Mul(large, b.ScalarTensorInt(buckets - max_exact)),
                    DType::kInt64);
  large = b.Add(large, b.ScalarTensorInt(max_exact));
  Ref cap = b.Op1("aten::full_like", "",
                  {{"self", large},
                   {"fill_value", buckets - 1},
                   {"dtype", Arg::ScalarType(DType::kInt64)},
                   {"layout", 0},
                   {"device", Arg::Device("cpu")},
                   {"pin_memory", false},
                   {"memory_format", Arg::None()}});
  large = b.Op1("aten::min", "other", {{"self", large}, {"other", cap}});
  Ref chosen = b.Where(is_small, rel, large);
  result = decoder ? b.Add(chosen, b.ScalarTensorInt(0))
                   : b.Op1("aten::add_", "Tensor",
                           {{"self", result}, {"other", chosen}, {"alpha", 1}});
  Ref values;
  {
    ScopeGuard s(b, "relative_attention_bias", "Embedding");
    values = b.Embedding(table, result);
  }
  return b.Unsqueeze(b.Permute(values, b.IntList({2, 0, 1})), 0);
}

// T5Attention.forward (eager): `bias` is the position bias of the stack's
// first layer, reused by the others (an unset Ref in the first, which makes
// it).
Ref Attention(GraphBuilder& b, const T5Config& c, const T5AttnWeights& w, Ref x,
              Ref kv, Ref mask, Ref* bias, bool decoder) {
  Ref bsz = b.Size(x, 0), seq = b.Size(x, 1);
  auto heads = [&](Ref y) {
    return b.Transpose(b.View(y, b.IntList({bsz, -1, c.heads, c.d_kv})), 1, 2);
  };
  auto linear = [&](const char* name, Ref in, Ref weight) {
    ScopeGuard s(b, name, "Linear");
    return b.Linear(in, weight);
  };
  Ref q = heads(linear("q", x, w.q));
  Ref k = linear("k", kv, w.k);
  Ref v = linear("v", kv, w.v);
  k = heads(k);
  v = heads(v);
  Ref scores = b.Matmul(q, b.Transpose(k, 3, 2));
  if (bias->id < 0) {
    Ref key_len = b.Size(k, 2);
    Ref pb;
    if (w.bias.id >= 0) {
      pb = ComputeBias(b, c, w.bias, seq, key_len, decoder);
      // position_bias[:, :, -seq_length:, :]. NB: the bias has seq_length rows
      // (no cache), so the slice starts at 0; the trace's aten::neg of the
      // length is kept (one FLOP), its value unused (the slice rule takes
      // non-negative symbolic starts).
      b.IntOf(b.Neg(b.NumToTensor(seq)));
      pb = b.Slice(
          b.Slice(b.Slice(b.Slice(pb, 0, 0, kSliceToEnd), 1, 0, kSliceToEnd), 2,
                  0, kSliceToEnd),
          3, 0, kSliceToEnd);
    } else {
      pb = b.Op1("aten::zeros", "",
                 {{"size", b.IntList({1, c.heads, seq, key_len})},
                  {"dtype", Arg::ScalarType(c.dtype)},
                  {"layout", Arg::None()},
                  {"device", Arg::Device("cpu")},
                  {"pin_memory", false}});
    }
    Ref m = b.Slice(
        b.Slice(b.Slice(b.Slice(mask, 0, 0, kSliceToEnd), 1, 0, kSliceToEnd), 2,
                0, kSliceToEnd),
        3, 0, b.Size(k, 2));
    *bias = b.Add(pb, m);
  }
  scores = b.Op1("aten::add_", "Tensor",
                 {{"self", scores}, {"other", *bias}, {"alpha", 1}});
  // softmax(scores.float(), dim=-1).type_as(scores): in float32 the float()
  // output stands for scores.
  Ref sf = b.ToDtype(scores, DType::kFloat32);
  Ref att = b.Op1("aten::type_as", "",
                  {{"self", b.Softmax(sf, -1)},
                   {"other", c.dtype == DType::kFloat32 ? sf : scores}});
  att = b.Dropout(att, c.dropout);
  Ref y = b.Contiguous(b.Transpose(b.Matmul(att, v), 1, 2));
  y = b.View(y, b.IntList({bsz, -1, c.heads * c.d_kv}));
  return linear("o", y, w.o);
}

// T5LayerFF: x + dropout(DenseReluDense(layer_norm(x))).
Ref FeedForward(GraphBuilder& b, const T5Config& c, const T5BlockWeights& w,
                Ref x) {
  NormOut n = LayerNorm(b, c, "layer_norm", w.ff_norm, x);
  Ref h;
  {
    ScopeGuard ff(b, "DenseReluDense",
                  c.gated ? "T5DenseGatedActDense" : "T5DenseActDense");
    auto linear = [&](const char* name, Ref in, Ref weight) {
      ScopeGuard s(b, name, "Linear");
      return b.Linear(in, weight);
    };
    auto act = [&](Ref y) {
      ScopeGuard s(b, "act", c.act == "relu" ? "ReLU" : "NewGELUActivation");
      return c.act == "relu" ? b.Relu(y) : b.Gelu(y, "tanh");
    };
    if (c.gated) {
      Ref gelu = act(linear("wi_0", n.out, w.wi));
      h = b.Mul(gelu, linear("wi_1", n.out, w.wi_1));
    } else {
      h = act(linear("wi", n.out, w.wi));
    }
    h = linear("wo", Dropout(b, h, c.dropout), w.wo);
  }
  return b.Add(n.residual, Dropout(b, h, c.dropout));
}

// T5Stack.forward over ids; `encoder_out` set for the decoder.
Ref Stack(GraphBuilder& b, const T5Config& c, const T5Weights& w, Ref ids,
          Ref encoder_out) {
  const bool decoder = encoder_out.id >= 0;
  Ref x;
  {
    ScopeGuard s(b, "embed_tokens", "Embedding");
    x = b.Embedding(w.shared, ids);
  }
  Ref bsz = b.Size(ids, 0), seq = b.Size(ids, 1);
  Ref mask, enc_mask;
  if (decoder) {
    // full((T, T), finfo.min).triu(1)[None, None]; the cross-attention's mask
    // over the encoder's S.
    mask = b.Triu(b.Full(b.IntList({seq, seq}), FinfoMin(c.dtype),
                         Arg::ScalarType(c.dtype)),
                  1);
    mask = b.Unsqueeze(b.Unsqueeze(mask, 0), 1);
    enc_mask = PaddingMask(b, c, bsz, b.Size(encoder_out, 1));
  } else {
    mask = PaddingMask(b, c, bsz, seq);
  }
  x = Dropout(b, x, c.dropout);
  Ref bias, enc_bias;
  {
    ScopeGuard list(b, "block", "ModuleList");
    const std::vector<T5BlockWeights>& blocks = decoder ? w.decoder : w.encoder;
    for (size_t i = 0; i < blocks.size(); ++i) {
      ScopeGuard block(b, std::to_string(i), "T5Block");
      ScopeGuard sub(b, "layer", "ModuleList");
      const T5BlockWeights& bw = blocks[i];
      {
        ScopeGuard l(b, "0", "T5LayerSelfAttention");
        NormOut n = LayerNorm(b, c, "layer_norm", bw.self_norm, x);
        Ref h;
        {
          ScopeGuard s(b, "SelfAttention", "T5Attention");
          h = Attention(b, c, bw.self_attn, n.out, n.out, mask, &bias, decoder);
        }
        x = b.Add(n.residual, Dropout(b, h, c.dropout));
      }
      if (decoder) {
        ScopeGuard l(b, "1", "T5LayerCrossAttention");
        NormOut n = LayerNorm(b, c, "layer_norm", bw.cross_norm, x);
        Ref h;
        {
          ScopeGuard s(b, "EncDecAttention", "T5Attention");
          h = Attention(b, c, bw.cross_attn, n.out, encoder_out, enc_mask,
                        &enc_bias, true);
        }
        x = b.Add(n.residual, Dropout(b, h, c.dropout));
      }
      ScopeGuard l(b, decoder ? "2" : "1", "T5LayerFF");
      x = FeedForward(b, c, bw, x);
    }
  }
  x = LayerNorm(b, c, "final_layer_norm", decoder ? w.dec_norm : w.enc_norm, x)
          .out;
  return Dropout(b, x, c.dropout);
}

}  // namespace

Result<BuiltModel> BuildT5(const T5Config& c) {
  Validator v("t5");
  v.Layers("layers", c.layers);
  v.Require(c.decoder_layers >= 0 && c.decoder_layers <= kMaxLayers,
            "decoder_layers=" + std::to_string(c.decoder_layers) +
                " must be in [0, 100000] (0: layers)");
  v.Positive("d_model", c.d_model);
  v.Positive("d_ff", c.d_ff);
  v.Positive("d_kv", c.d_kv);
  v.Positive("heads", c.heads);
  v.Positive("vocab", c.vocab);
  v.Require(c.buckets >= 4 && c.buckets < kMaxConfigInt,
            "buckets=" + std::to_string(c.buckets) + " must be >= 4");
  v.Positive("max_distance", c.max_distance);
  v.PositiveFloat("eps", c.eps);
  v.Probability("dropout", c.dropout);
  v.Require(c.act == "relu" || c.act == "gelu_tanh",
            "act=" + c.act + " must be relu or gelu_tanh");
  v.Require(
      c.attn == "eager",
      "attn=" + c.attn + " must be eager (the only T5 attention modelled)");
  v.ComputeDType("dtype", c.dtype);
  if (!v.ok()) return v.status();

  GraphBuilder b("T5ForConditionalGeneration", "t5 (builder)");

  b.HiddenSize(c.d_model);
  Ref ids = b.Input("input_ids", {"B", "S"}, DType::kInt64);
  Ref dec_ids = b.Input("decoder_input_ids", {"B", "T"}, DType::kInt64);
  T5Weights w = Declare(b, c);
  Ref enc;
  {
    ScopeGuard s(b, "encoder", "T5Stack");
    enc = Stack(b, c, w, ids, Ref());
  }
  Ref x;
  {
    ScopeGuard s(b, "decoder", "T5Stack");
    x = Stack(b, c, w, dec_ids, enc);
  }
  // Tied: sequence_output * (model_dim ** -0.5) before lm_head.
  if (c.tie)
    x = b.Mul(x,
              b.ScalarTensor(std::pow(static_cast<double>(c.d_model), -0.5)));
  {
    ScopeGuard s(b, "lm_head", "Linear");
    x = b.Linear(x, w.lm_head);
  }
  b.Output(x);
  // T5ForConditionalGeneration's CrossEntropyLoss(ignore_index=-100)
  // (src/training/loss.cc).
  b.DefaultLoss("lm");
  return b.Finish();
}

}  // namespace torchcost::builder
