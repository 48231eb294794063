// The GPT-2 family: the op sequence of tools/make_fixtures.py's GPT2 (Hugging
// Face's structure) as torch.jit.trace records it on torch 1.13.
#include <cmath>
#include <string>
#include <vector>

#include "builder/attention.h"
#include "builder/finfo.h"
#include "builder/generation_phase.h"
#include "builder/lm_head.h"
#include "builder/megatron.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

struct Gpt2Layer {
  Ref ln_1_w, ln_1_b, c_attn_w, c_attn_b, c_proj_w, c_proj_b, bias;
  Ref ln_2_w, ln_2_b, fc_w, fc_b, proj_w, proj_b;
};

struct Gpt2Weights {
  Ref wte, wpe, ln_f_w, ln_f_b;
  std::vector<Gpt2Layer> layers;
};

// Declares modules, parameters and buffers in registration order
// (named_modules, named_parameters, named_buffers), as the importer lists them.
Gpt2Weights Declare(GraphBuilder& b, const Gpt2Config& c) {
  // NB: with tensor parallelism t, one rank's shards (Megatron, Shoeybi et al.
  // 2019, Sec. 3): c_attn and c_fc split by output columns, both c_proj by
  // input rows (their biases replicated), the token embedding by vocabulary.
  const int64_t h = c.hidden, t = c.tp;
  Gpt2Weights w;
  auto param = [&](const std::string& n, std::vector<int64_t> shape) {
    return b.Param(b.Qualify(n), shape, c.dtype);
  };
  {
    ScopeGuard s(b, "wte", "Embedding");
    w.wte = param("weight", {c.vocab / t, h});
  }
  {
    ScopeGuard s(b, "wpe", "Embedding");
    w.wpe = param("weight", {c.context, h});
  }
  { ScopeGuard s(b, "drop", "Dropout"); }
  ScopeGuard list(b, "h", "ModuleList");
  for (int64_t i = 0; i < c.layers; ++i) {
    ScopeGuard block(b, std::to_string(i), "GPT2Block");
    Gpt2Layer l;
    {
      ScopeGuard s(b, "ln_1", "LayerNorm");
      l.ln_1_w = param("weight", {h});
      l.ln_1_b = param("bias", {h});
    }
    {
      ScopeGuard s(b, "attn", "GPT2Attention");
      // Conv1D weights are [in, out].
      l.c_attn_w = param("c_attn_weight", {h, 3 * h / t});
      l.c_attn_b = param("c_attn_bias", {3 * h / t});
      l.c_proj_w = param("c_proj_weight", {h / t, h});
      l.c_proj_b = param("c_proj_bias", {h});
      { ScopeGuard d(b, "attn_dropout", "Dropout"); }
      { ScopeGuard d(b, "resid_dropout", "Dropout"); }
    }
    {
      ScopeGuard s(b, "ln_2", "LayerNorm");
      l.ln_2_w = param("weight", {h});
      l.ln_2_b = param("bias", {h});
    }
    {
      ScopeGuard s(b, "c_fc", "Linear");
      l.fc_w = param("weight", {4 * h / t, h});
      l.fc_b = param("bias", {4 * h / t});
    }
    { ScopeGuard s(b, "act", "GELU"); }
    {
      ScopeGuard s(b, "c_proj", "Linear");
      l.proj_w = param("weight", {h, 4 * h / t});
      l.proj_b = param("bias", {h});
    }
    { ScopeGuard s(b, "drop", "Dropout"); }
    w.layers.push_back(l);
  }
  return w;
}

// Declares the rest: ln_f, lm_head (tied), and the buffers.
void DeclareTail(GraphBuilder& b, const Gpt2Config& c, Gpt2Weights& w) {
  {
    ScopeGuard s(b, "ln_f", "LayerNorm");
    w.ln_f_w = b.Param(b.Qualify("weight"), {c.hidden}, c.dtype);
    w.ln_f_b = b.Param(b.Qualify("bias"), {c.hidden}, c.dtype);
  }
  DeclareLmHead(b, "lm_head", w.wte, /*tie=*/true, c.vocab / c.tp, c.hidden,
                c.dtype);
  // The causal mask: a bool tril(ones(ctx, ctx)) buffer viewed [1, 1, ctx,
  // ctx].
  for (int64_t i = 0; i < c.layers; ++i) {
    w.layers[i].bias = b.Buffer("h." + std::to_string(i) + ".attn.bias",
                                {1, 1, c.context, c.context}, DType::kBool);
  }
}

Ref LayerNorm(GraphBuilder& b, Ref x, int64_t h, Ref weight, Ref bias,
              double eps) {
  return b.LayerNorm(x, b.IntList({h}), weight, bias, eps);
}

// Whether Megatron's sequence parallelism applies (it is off at tp = 1).
bool Sp(const Gpt2Config& c) { return c.sp && c.tp > 1; }

// Megatron's row-parallel output: the partial products of the ranks summed
// (torchcost::all_reduce, in place), then the replicated bias added once.
// With sp, the [B, S, h] partials are reduce-scattered to this rank's [B, S/t,
// h].
Ref RowParallelOut(GraphBuilder& b, const Gpt2Config& c, Ref partial,
                   Ref bias) {
  Ref sum = Sp(c) ? b.Op1("torchcost::reduce_scatter", "",
                          {{"self", partial}, {"world", c.tp}})
                  : b.Op1("torchcost::all_reduce", "",
                          {{"self", partial}, {"world", c.tp}});
  return b.Add(sum, bias);
}

// Megatron's `f` before a column-parallel layer (tp > 1 without sp): the
// identity in forward, the all-reduce of x's gradient in backward.
Ref CopyToTpRegionIf(GraphBuilder& b, const Gpt2Config& c, Ref x) {
  if (c.tp == 1 || Sp(c)) return x;
  return b.Op1("torchcost::copy_to_tp_region", "",
               {{"self", x}, {"world", c.tp}});
}

// A column-parallel linear on the sequence-parallel shard
// (rules/distributed.yaml).
Ref SpLinear(GraphBuilder& b, const Gpt2Config& c, Ref x, Ref weight,
             Arg bias) {
  return b.Op1(
      "torchcost::sp_linear", "",
      {{"input", x}, {"weight", weight}, {"bias", bias}, {"world", c.tp}});
}

// The eager core (matmul + softmax, as the torch 1.13 trace records it) on
// q, k, v [B, H, T, hd]; returns [B, T, H, hd], contiguous.
Ref EagerCore(GraphBuilder& b, const Gpt2Config& c, const Gpt2Layer& l, Ref q,
              Ref k, Ref v, Ref t, bool decode) {
  // att = matmul(q, k.transpose(-1, -2)) / sqrt(hd)
  Ref att = b.Matmul(q, b.Transpose(k, -1, -2));
  att = b.Div(
      att, b.ScalarTensor(std::sqrt(static_cast<double>(c.hidden / c.heads))));
  // NB: a decode step's one query sees every cached key: the mask is left out,
  // as llama.cc's decode does.
  if (!decode) {
    // causal = self.bias[:, :, :T, :T]
    Ref causal = b.Slice(l.bias, 0, 0, kSliceToEnd);
    causal = b.Slice(causal, 1, 0, kSliceToEnd);
    causal = b.Slice(causal, 2, 0, t);
    causal = b.Slice(causal, 3, 0, t);
    // mask_value = torch.full([], finfo(att.dtype).min, dtype=att.dtype); the
    // softmax then runs in the compute dtype (HF GPT-2's eager _attn has no
    // fp32 island).
    Ref mask_value =
        b.Full(b.IntList({}), FinfoMin(c.dtype), Arg::ScalarType(c.dtype));
    att = b.Where(causal, att, mask_value);
  }
  att = b.Softmax(att, -1);
  {
    ScopeGuard s(b, "attn_dropout", "Dropout");
    att = b.Dropout(att, c.dropout);
  }
  Ref y = b.Matmul(att, v);
  y = b.Contiguous(b.Permute(y, b.IntList({0, 2, 1, 3})));
  return y;
}

// The sdpa and flash cores (Hugging Face's GPT2Attention with
// attn_implementation "sdpa" / "flash_attention_2": transformers
// src/transformers/integrations/sdpa_attention.py at
// 00c238bd242b4c6ddfb2c17d4573174ec2daaec8, no mask, is_causal, dropout
// attn_pdrop in training; flash on [B, T, H, hd] views); returns [B, T, H, hd].
Ref FusedCore(GraphBuilder& b, const Gpt2Config& c, Ref q, Ref k, Ref v,
              bool decode) {
  // NB: one query sees every cached key: is_causal is query.shape[2] > 1
  // (false), no mask.
  if (decode && c.attn != "flash")
    return b.Transpose(Sdpa(b, q, k, v, Arg::None(), 0.0, false, false), 1, 2);
  if (c.attn == "flash") {
    return FlashAttnFunc(b, b.Transpose(q, 1, 2), b.Transpose(k, 1, 2),
                         b.Transpose(v, 1, 2), c.dropout, true, 0);
  }
  // NB: no copy in transpose(1, 2).contiguous(), as in llama.cc's FusedCore.
  return b.Transpose(Sdpa(b, q, k, v, Arg::None(), c.dropout, true, false), 1,
                     2);
}

Ref Attention(GraphBuilder& b, const Gpt2Config& c, const Gpt2Layer& l, Ref x,
              GenState& gen) {
  const int64_t tp = c.tp, local_heads = c.heads / tp;
  x = CopyToTpRegionIf(b, c, x);
  // B, T, C = x.size()
  Ref bsz = b.Size(x, 0), t = b.Size(x, 1), cdim = b.Size(x, 2);
  Ref ct = b.NumToTensor(cdim);
  // qkv = addmm(c_attn_bias, x.view(-1, C), c_attn_weight).view(B, T, 3 * C)
  // NB: with sp, Conv1D's [in, out] weight is read transposed (a view) by the
  // gathering linear.
  Ref qkv =
      Sp(c) ? SpLinear(b, c, x, b.Transpose(l.c_attn_w, 0, 1), l.c_attn_b)
            : b.Addmm(l.c_attn_b, b.View(x, b.IntList({-1, cdim})), l.c_attn_w);
  if (Sp(c)) t = b.Size(qkv, 1);  // The gathered sequence.
  Ref three_c = tp == 1 ? b.IntOf(b.Mul(ct, b.ScalarTensorInt(3))) : Ref();
  qkv = b.View(qkv, tp == 1 ? b.IntList({bsz, t, three_c})
                            : b.IntList({bsz, t, 3 * c.hidden / tp}));
  std::vector<Ref> qkv_parts = b.Split(qkv, c.hidden / tp, 2, 3);
  // hd = C // n_head, read once per view.
  Ref hd = b.FloorDivide(ct, b.ScalarTensorInt(c.heads));
  Ref hd_v = b.IntOf(hd), hd_k = b.IntOf(hd), hd_q = b.IntOf(hd);
  auto heads = [&](Ref part, Ref head_dim) {
    Ref v = b.View(part, b.IntList({bsz, t, local_heads, head_dim}));
    return b.Permute(v, b.IntList({0, 2, 1, 3}));
  };
  Ref q = heads(qkv_parts[0], hd_q);
  Ref k = heads(qkv_parts[1], hd_k);
  Ref v = heads(qkv_parts[2], hd_v);
  if (gen.generating) {
    k = CacheUpdate(b, gen, k);
    v = CacheUpdate(b, gen, v);
  }
  Ref y = c.attn == "eager" ? EagerCore(b, c, l, q, k, v, t, gen.decode)
                            : FusedCore(b, c, q, k, v, gen.decode);
  if (tp == 1) {
    y = b.View(y, b.IntList({bsz, t, cdim}));
    y = b.Addmm(l.c_proj_b, b.View(y, b.IntList({-1, cdim})), l.c_proj_w);
  } else if (Sp(c)) {
    y = b.View(y, b.IntList({bsz, t, c.hidden / tp}));
    y = RowParallelOut(b, c, b.Matmul(y, l.c_proj_w), l.c_proj_b);
  } else {
    y = b.View(y, b.IntList({-1, c.hidden / tp}));
    y = RowParallelOut(b, c, b.Matmul(y, l.c_proj_w), l.c_proj_b);
  }
  if (!Sp(c)) y = b.View(y, b.IntList({bsz, t, cdim}));
  ScopeGuard s(b, "resid_dropout", "Dropout");
  return b.Dropout(y, c.dropout);
}

Ref Block(GraphBuilder& b, const Gpt2Config& c, const Gpt2Layer& l, Ref x,
          GenState& gen) {
  Ref h;
  {
    ScopeGuard s(b, "ln_1", "LayerNorm");
    h = LayerNorm(b, x, c.hidden, l.ln_1_w, l.ln_1_b, c.eps);
  }
  {
    ScopeGuard s(b, "attn", "GPT2Attention");
    h = Attention(b, c, l, h, gen);
  }
  x = b.Add(x, h);
  {
    ScopeGuard s(b, "ln_2", "LayerNorm");
    h = LayerNorm(b, x, c.hidden, l.ln_2_w, l.ln_2_b, c.eps);
  }
  {
    ScopeGuard s(b, "c_fc", "Linear");
    h = Sp(c) ? SpLinear(b, c, h, l.fc_w, l.fc_b)
              : b.Linear(CopyToTpRegionIf(b, c, h), l.fc_w, l.fc_b);
  }
  {
    ScopeGuard s(b, "act", "GELU");
    h = b.Gelu(h, "tanh");
  }
  {
    ScopeGuard s(b, "c_proj", "Linear");
    h = c.tp == 1 ? b.Linear(h, l.proj_w, l.proj_b)
                  : RowParallelOut(b, c, b.Linear(h, l.proj_w), l.proj_b);
  }
  {
    ScopeGuard s(b, "drop", "Dropout");
    h = b.Dropout(h, c.dropout);
  }
  return b.Add(x, h);
}

}  // namespace

Result<BuiltModel> BuildGpt2(const Gpt2Config& config) {
  // NB: with tp > 1 the graph is built on Megatron's padded vocabulary
  // (builder/megatron.h).
  Gpt2Config c = config;
  Validator v("gpt2");
  v.Layers("layers", c.layers);
  v.Positive("hidden", c.hidden);
  v.Positive("heads", c.heads);
  v.Positive("vocab", c.vocab);
  v.Positive("context", c.context);
  v.Divides("heads", c.heads, "hidden", c.hidden);
  v.Positive("tp", c.tp);
  v.Divides("tp", c.tp, "heads", c.heads);
  v.Positive("make_vocab_size_divisible_by", c.vocab_multiple);
  v.Probability("dropout", c.dropout);
  v.PositiveFloat("eps", c.eps);
  v.Require(AttnImplError(c.attn).empty(), AttnImplError(c.attn));
  v.ComputeDType("dtype", c.dtype);
  GenState gen = ReadPhase(v, c.phase, c.cache_dtype, c.dtype);
  v.Require(c.phase.empty() || (c.tp == 1 && !c.sp),
            "phase=" + c.phase + " needs tp=1");
  if (!v.ok()) return v.status();
  if (c.attn == "flash_attention_2") c.attn = "flash";
  c.vocab = PaddedVocab(config.vocab, c.vocab_multiple, c.tp);

  GraphBuilder b("GPT2", "gpt2 (builder)");

  b.HiddenSize(c.hidden);
  Ref idx =
      b.Input("idx", {"B", gen.decode ? Dim(1) : Dim("S")}, DType::kInt64);
  // Learned positions: S may not exceed the table.
  b.BoundSymbol("S", c.context);
  // The cache before the last decode step: S + T - 2 tokens of heads x
  // head_dim.
  if (gen.decode)
    DeclarePasts(b, gen, c.vocab, c.heads, c.hidden / c.heads,
                 FullPasts(c.layers));
  Gpt2Weights w = Declare(b, c);
  DeclareTail(b, c, w);

  // pos = arange(0, T, dtype=long).unsqueeze(0)
  Ref t = b.ScalarOf(b.NumToTensor(b.Size(idx, 1)));
  Ref pos = b.Unsqueeze(b.ArangeStart(0, t, Arg::ScalarType(DType::kInt64)), 0);
  Ref tok, pe;
  {
    ScopeGuard s(b, "wte", "Embedding");
    tok = b.Embedding(w.wte, idx);
    // Vocabulary-parallel: each rank looks up its rows, the ranks' partial
    // results are summed. NB: Megatron's masking of ids outside the rank's
    // range (a few integer ops) is left out.
    if (c.tp > 1)
      tok =
          b.Op1("torchcost::all_reduce", "", {{"self", tok}, {"world", c.tp}});
  }
  {
    ScopeGuard s(b, "wpe", "Embedding");
    pe = b.Embedding(w.wpe, pos);
  }
  Ref x = b.Add(tok, pe);
  // Sequence parallel: this rank's S/t of the sequence from here on
  // (LanguageModelEmbedding: scatter_to_sequence_parallel_region, then a
  // clone).
  if (Sp(c))
    x = b.Op1("torchcost::scatter", "", {{"self", x}, {"world", c.tp}});
  {
    ScopeGuard s(b, "drop", "Dropout");
    x = b.Dropout(x, c.dropout);
  }
  {
    ScopeGuard list(b, "h", "ModuleList");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard block(b, std::to_string(i), "GPT2Block");
      x = Block(b, c, w.layers[i], x, gen);
    }
  }
  {
    ScopeGuard s(b, "ln_f", "LayerNorm");
    x = LayerNorm(b, x, c.hidden, w.ln_f_w, w.ln_f_b, c.eps);
  }
  // generate() passes logits_to_keep=1: lm_head(hidden_states[:, -1:, :]).
  if (gen.generating) x = b.Slice(x, 1, -1, kSliceToEnd);
  {
    ScopeGuard s(b, "lm_head", "Linear");
    x = Sp(c) ? SpLinear(b, c, x, w.wte, Arg::None())
              : b.Linear(CopyToTpRegionIf(b, c, x), w.wte, Arg::None());
  }
  // No sliding window.
  BuiltModel m = FinishCausalLm(b, x, gen, std::vector<int64_t>(c.layers, 0));
  m.default_loss = TensorParallelLoss(m.default_loss, c.tp);
  if (c.vocab != config.vocab)
    m.notes.push_back(
        PaddedVocabNote(config.vocab, c.vocab, c.vocab_multiple, c.tp));
  if (c.sp && c.tp == 1) m.notes.push_back(kSpOffNote);
  return m;
}

}  // namespace torchcost::builder
