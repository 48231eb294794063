// The BERT family: the op sequence of tests/python/hf_encoders.py's Bert
// (Hugging Face transformers' modeling_bert.py at
// 004ad5f50b627b59bf0d581c31bc0052b6cfd40b: BertModel and BertForMaskedLM,
// eager attention) as torch.jit.trace records it on torch 1.13, in the
// config's compute dtype.
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "builder/lm_head.h"
#include "builder/validate.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

struct BertLayer {
  Ref q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, ln1_w, ln1_b, fc_w, fc_b, out_w,
      out_b, ln2_w, ln2_b;
};

struct BertWeights {
  Ref word, position, token_type, ln_w, ln_b, position_ids, token_type_ids;
  std::vector<BertLayer> layers;
  Ref pool_w, pool_b;  // BertModel's pooler.
  // BertForMaskedLM's head.
  Ref transform_w, transform_b, head_ln_w, head_ln_b, decoder_b;
};

bool Mlm(const BertConfig& c) { return c.head == "mlm"; }

// Declares modules, parameters and buffers in registration order
// (BertForMaskedLM: bert.embeddings, bert.encoder, cls.predictions; BertModel:
// no prefix, pooler).
BertWeights Declare(GraphBuilder& b, const BertConfig& c) {
  const int64_t h = c.hidden;
  BertWeights w;
  auto param = [&](const char* n, std::vector<int64_t> shape) {
    return b.Param(b.Qualify(n), shape, c.dtype);
  };
  auto linear = [&](const char* name, int64_t out, int64_t in, Ref* weight,
                    Ref* bias) {
    ScopeGuard s(b, name, "Linear");
    *weight = param("weight", {out, in});
    *bias = param("bias", {out});
  };
  auto layer_norm = [&](Ref* weight, Ref* bias) {
    ScopeGuard s(b, "LayerNorm", "LayerNorm");
    *weight = param("weight", {h});
    *bias = param("bias", {h});
  };
  std::optional<ScopeGuard> model;
  if (Mlm(c)) model.emplace(b, "bert", "BertModel");
  {
    ScopeGuard e(b, "embeddings", "BertEmbeddings");
    {
      ScopeGuard s(b, "word_embeddings", "Embedding");
      w.word = param("weight", {c.vocab, h});
    }
    {
      ScopeGuard s(b, "position_embeddings", "Embedding");
      w.position = param("weight", {c.positions, h});
    }
    {
      ScopeGuard s(b, "token_type_embeddings", "Embedding");
      w.token_type = param("weight", {c.type_vocab, h});
    }
    layer_norm(&w.ln_w, &w.ln_b);
    { ScopeGuard s(b, "dropout", "Dropout"); }
    // position_ids: arange(max_position_embeddings).expand((1, -1));
    // token_type_ids: zeros of its size.
    w.position_ids =
        b.Buffer(b.Qualify("position_ids"), {1, c.positions}, DType::kInt64);
    w.token_type_ids =
        b.Buffer(b.Qualify("token_type_ids"), {1, c.positions}, DType::kInt64);
  }
  {
    ScopeGuard enc(b, "encoder", "BertEncoder");
    ScopeGuard list(b, "layer", "ModuleList");
    for (int64_t i = 0; i < c.layers; ++i) {
      ScopeGuard layer(b, std::to_string(i), "BertLayer");
      BertLayer l;
      {
        ScopeGuard a(b, "attention", "BertAttention");
        {
          ScopeGuard s(b, "self", "BertSelfAttention");
          linear("query", h, h, &l.q_w, &l.q_b);
          linear("key", h, h, &l.k_w, &l.k_b);
          linear("value", h, h, &l.v_w, &l.v_b);
          { ScopeGuard d(b, "dropout", "Dropout"); }
        }
        ScopeGuard o(b, "output", "BertSelfOutput");
        linear("dense", h, h, &l.o_w, &l.o_b);
        layer_norm(&l.ln1_w, &l.ln1_b);
        { ScopeGuard d(b, "dropout", "Dropout"); }
      }
      {
        ScopeGuard s(b, "intermediate", "BertIntermediate");
        linear("dense", c.intermediate, h, &l.fc_w, &l.fc_b);
      }
      {
        ScopeGuard s(b, "output", "BertOutput");
        linear("dense", h, c.intermediate, &l.out_w, &l.out_b);
        layer_norm(&l.ln2_w, &l.ln2_b);
        { ScopeGuard d(b, "dropout", "Dropout"); }
      }
      w.layers.push_back(l);
    }
  }
  if (!Mlm(c)) {
    ScopeGuard s(b, "pooler", "BertPooler");
    linear("dense", h, h, &w.pool_w, &w.pool_b);
    return w;
  }
  model.reset();
  ScopeGuard cls(b, "cls", "BertOnlyMLMHead");
  ScopeGuard pred(b, "predictions", "BertLMPredictionHead");
  {
    ScopeGuard t(b, "transform", "BertPredictionHeadTransform");
    linear("dense", h, h, &w.transform_w, &w.transform_b);
    layer_norm(&w.head_ln_w, &w.head_ln_b);
  }
  // BertLMPredictionHead.bias [vocab]; decoder.weight is the word embeddings'
  // (tied), decoder.bias this bias.
  w.decoder_b = param("bias", {c.vocab});
  DeclareLmHead(b, "decoder", w.word, /*tie=*/true, c.vocab, h, c.dtype);
  b.Alias(w.decoder_b, "cls.predictions.decoder.bias");
  return w;
}

Ref Act(GraphBuilder& b, const BertConfig& c, Ref x) {
  if (c.act == "relu") return b.Relu(x);
  return b.Gelu(x, c.act == "gelu_tanh" ? "tanh" : "none");
}

Ref LayerNorm(GraphBuilder& b, const BertConfig& c, Ref x, Ref weight,
              Ref bias) {
  ScopeGuard s(b, "LayerNorm", "LayerNorm");
  return b.LayerNorm(x, b.IntList({c.hidden}), weight, bias, c.eps);
}

Ref Linear(GraphBuilder& b, const char* name, Ref x, Ref weight, Ref bias) {
  ScopeGuard s(b, name, "Linear");
  return b.Linear(x, weight, bias);
}

Ref Dropout(GraphBuilder& b, Ref x, double p) {
  ScopeGuard s(b, "dropout", "Dropout");
  return b.Dropout(x, p);
}

// BertSelfAttention.forward (eager): transpose_for_scores views each projection
// [B, S, H, d] and permutes it to [B, H, S, d]; scores / sqrt(d) + mask,
// softmax, dropout, @ v, back to [B, S, h].
Ref SelfAttention(GraphBuilder& b, const BertConfig& c, const BertLayer& l,
                  Ref x, Ref mask) {
  const int64_t d = c.hidden / c.heads;
  auto heads = [&](Ref y) {
    y = b.View(y, b.IntList({b.Size(y, 0), b.Size(y, 1), c.heads, d}));
    return b.Permute(y, b.IntList({0, 2, 1, 3}));
  };
  Ref q = Linear(b, "query", x, l.q_w, l.q_b);
  Ref k = heads(Linear(b, "key", x, l.k_w, l.k_b));
  Ref v = heads(Linear(b, "value", x, l.v_w, l.v_b));
  q = heads(q);
  Ref scores = b.Matmul(q, b.Transpose(k, -1, -2));
  scores = b.Div(scores, b.ScalarTensor(std::sqrt(static_cast<double>(d))));
  scores = b.Add(scores, mask);
  Ref probs = Dropout(b, b.Softmax(scores, -1), c.attn_dropout);
  Ref y = b.Contiguous(b.Permute(b.Matmul(probs, v), b.IntList({0, 2, 1, 3})));
  return b.View(y, b.IntList({b.Size(y, 0), b.Size(y, 1), c.hidden}));
}

// BertLayer.forward: post-LN, LayerNorm(dropout(dense(x)) + input) after the
// attention and after the MLP.
Ref Layer(GraphBuilder& b, const BertConfig& c, const BertLayer& l, Ref x,
          Ref mask) {
  Ref attn;
  {
    ScopeGuard a(b, "attention", "BertAttention");
    Ref y;
    {
      ScopeGuard s(b, "self", "BertSelfAttention");
      y = SelfAttention(b, c, l, x, mask);
    }
    ScopeGuard o(b, "output", "BertSelfOutput");
    y = Dropout(b, Linear(b, "dense", y, l.o_w, l.o_b), c.dropout);
    attn = LayerNorm(b, c, b.Add(y, x), l.ln1_w, l.ln1_b);
  }
  Ref h;
  {
    ScopeGuard s(b, "intermediate", "BertIntermediate");
    h = Act(b, c, Linear(b, "dense", attn, l.fc_w, l.fc_b));
  }
  ScopeGuard s(b, "output", "BertOutput");
  h = Dropout(b, Linear(b, "dense", h, l.out_w, l.out_b), c.dropout);
  return LayerNorm(b, c, b.Add(h, attn), l.ln2_w, l.ln2_b);
}

}  // namespace

Result<BuiltModel> BuildBert(const BertConfig& c) {
  Validator v("bert");
  v.Layers("layers", c.layers);
  v.Positive("hidden", c.hidden);
  v.Positive("heads", c.heads);
  v.Positive("intermediate", c.intermediate);
  v.Positive("vocab", c.vocab);
  v.Positive("positions", c.positions);
  v.Positive("type_vocab", c.type_vocab);
  v.Divides("heads", c.heads, "hidden", c.hidden);
  v.PositiveFloat("eps", c.eps);
  v.Probability("dropout", c.dropout);
  v.Probability("attn_dropout", c.attn_dropout);
  v.Require(c.act == "gelu" || c.act == "gelu_tanh" || c.act == "relu",
            "act=" + c.act + " must be gelu, gelu_tanh or relu");
  v.Require(c.head == "mlm" || c.head == "model",
            "head=" + c.head + " must be mlm or model");
  v.Require(
      c.attn == "eager",
      "attn=" + c.attn + " must be eager (the only BERT attention modelled)");
  v.ComputeDType("dtype", c.dtype);
  if (!v.ok()) return v.status();

  GraphBuilder b(Mlm(c) ? "BertForMaskedLM" : "BertModel", "bert (builder)");

  b.HiddenSize(c.hidden);
  Ref idx = b.Input("idx", {"B", "S"}, DType::kInt64);
  // Learned positions: S <= max_position_embeddings.
  b.BoundSymbol("S", c.positions);
  BertWeights w = Declare(b, c);
  Ref x;
  {
    std::optional<ScopeGuard> model;
    if (Mlm(c)) model.emplace(b, "bert", "BertModel");
    Ref bsz = b.Size(idx, 0), seq = b.Size(idx, 1);
    // attention_mask = torch.ones((batch_size, seq_length)) (float32, the
    // default dtype).
    Ref ones = b.Op1("aten::ones", "",
                     {{"size", b.IntList({bsz, seq})},
                      {"dtype", Arg::None()},
                      {"layout", Arg::None()},
                      {"device", Arg::Device("cpu")},
                      {"pin_memory", false}});
    // token_type_ids = the buffer's [:, :seq_length].expand(batch_size,
    // seq_length).
    Ref token_types =
        b.Slice(b.Slice(w.token_type_ids, 0, 0, kSliceToEnd), 1, 0, seq);
    token_types = b.Expand(token_types, b.IntList({bsz, seq}));
    // get_extended_attention_mask: mask[:, None, None, :].to(dtype); (1.0 -
    // mask) * -10000.0.
    Ref mask = b.Slice(
        b.Unsqueeze(b.Unsqueeze(b.Slice(ones, 0, 0, kSliceToEnd), 1), 2), 3, 0,
        kSliceToEnd);
    mask = b.ToDtype(mask, c.dtype);
    mask =
        b.Op1("aten::rsub", "Tensor",
              {{"self", mask}, {"other", b.ScalarTensor(1.0)}, {"alpha", 1}});
    mask = b.Mul(mask, b.ScalarTensor(-10000.0));
    {
      ScopeGuard e(b, "embeddings", "BertEmbeddings");
      Ref position_ids = b.Slice(b.Slice(w.position_ids, 0, 0, kSliceToEnd), 1,
                                 0, b.Size(idx, 1));
      Ref words, types, positions;
      {
        ScopeGuard s(b, "word_embeddings", "Embedding");
        words = b.Embedding(w.word, idx);
      }
      {
        ScopeGuard s(b, "token_type_embeddings", "Embedding");
        types = b.Embedding(w.token_type, token_types);
      }
      x = b.Add(words, types);
      {
        ScopeGuard s(b, "position_embeddings", "Embedding");
        positions = b.Embedding(w.position, position_ids);
      }
      // embeddings += ...
      x = b.Op1("aten::add_", "Tensor",
                {{"self", x}, {"other", positions}, {"alpha", 1}});
      x = Dropout(b, LayerNorm(b, c, x, w.ln_w, w.ln_b), c.dropout);
    }
    {
      ScopeGuard enc(b, "encoder", "BertEncoder");
      ScopeGuard list(b, "layer", "ModuleList");
      for (int64_t i = 0; i < c.layers; ++i) {
        ScopeGuard layer(b, std::to_string(i), "BertLayer");
        x = Layer(b, c, w.layers[i], x, mask);
      }
    }
    if (!Mlm(c)) {
      // BertPooler: tanh(dense(hidden_states[:, 0])).
      Ref pooled;
      {
        ScopeGuard s(b, "pooler", "BertPooler");
        Ref first = b.Select(b.Slice(x, 0, 0, kSliceToEnd), 1, 0);
        pooled =
            b.Op1("aten::tanh", "",
                  {{"self", Linear(b, "dense", first, w.pool_w, w.pool_b)}});
      }
      b.Output(x);
      b.Output(pooled);
      BuiltModel m = b.Finish();
      m.notes.push_back(
          "bert: BertModel (last_hidden_state, pooler_output); no loss of its "
          "own (the step's loss: a sum of the sequence output)");
      return m;
    }
  }
  {
    ScopeGuard cls(b, "cls", "BertOnlyMLMHead");
    ScopeGuard pred(b, "predictions", "BertLMPredictionHead");
    {
      ScopeGuard t(b, "transform", "BertPredictionHeadTransform");
      x = Act(b, c, Linear(b, "dense", x, w.transform_w, w.transform_b));
      x = LayerNorm(b, c, x, w.head_ln_w, w.head_ln_b);
    }
    x = Linear(b, "decoder", x, w.word, w.decoder_b);
  }
  b.Output(x);
  // BertForMaskedLM's CrossEntropyLoss on the flattened scores
  // (src/training/loss.cc).
  b.DefaultLoss("lm");
  return b.Finish();
}

}  // namespace torchcost::builder
