// The BERT family: parameter counts of both heads against closed forms, the
// tied decoder and its bias, the masked-LM loss by default, inference, and
// config errors.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "testing/built_models.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

BertConfig TinyBert() {
  BertConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.intermediate = 256;
  c.vocab = 100;
  c.positions = 32;
  return c;
}

TEST(BertTest, ParamsMatchTheClosedForm) {
  // Embeddings: word V*h, position P*h, token type T*h, LayerNorm 2h. Per
  // layer: query, key, value, attention dense 4(h^2 + h), two LayerNorms 4h,
  // MLP 2*h*I + I + h. BertModel: + pooler h^2 + h. BertForMaskedLM: +
  // transform h^2 + h, LayerNorm 2h, decoder bias V (its weight is the word
  // embeddings').
  const int64_t V = 100, P = 32, T = 2, h = 64, L = 2, I = 256;
  const int64_t body = V * h + P * h + T * h + 2 * h +
                       L * (4 * (h * h + h) + 4 * h + 2 * h * I + I + h);
  for (const char* head : {"mlm", "model"}) {
    BertConfig c = TinyBert();
    c.head = head;
    Result<BuiltModel> m = BuildBert(c);
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    const int64_t expected =
        body + (c.head == "mlm" ? h * h + h + 2 * h + V : h * h + h);
    EXPECT_EQ(r.params, expected) << head;
    EXPECT_TRUE(r.unknown_ops.empty()) << head << ": " << r.unknown_ops[0].op;
  }
}

TEST(BertTest, TheDecoderIsTiedAndBiased) {
  Result<BuiltModel> m = BuildBert(TinyBert());
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::map<std::string, std::string> alias_of;
  for (const ir::TensorEntry& e : m->graph.params) {
    for (const std::string& a : e.aliases) alias_of[a] = e.name;
  }
  EXPECT_EQ(alias_of["cls.predictions.decoder.weight"],
            "bert.embeddings.word_embeddings.weight");
  EXPECT_EQ(alias_of["cls.predictions.decoder.bias"], "cls.predictions.bias");
  EXPECT_EQ(m->default_loss, "lm");
  // The position and token-type id buffers: int64 [1, positions] each.
  ASSERT_EQ(m->graph.buffers.size(), 2u);
  for (const ir::TensorEntry& e : m->graph.buffers) {
    EXPECT_EQ(e.dtype, DType::kInt64);
    EXPECT_EQ(e.shape, (std::vector<int64_t>{1, 32}));
  }
}

TEST(BertTest, BertModelOutputsTheSequenceAndThePooledOutput) {
  BertConfig c = TinyBert();
  c.head = "model";
  Result<BuiltModel> m = BuildBert(c);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->graph.outputs.size(), 2u);
  EXPECT_EQ(m->default_loss, "");
}

TEST(BertTest, BadConfigsAreOneLineErrors) {
  const struct {
    const char* config;
    const char* says;
  } bad[] = {
      {"heads=5", "not divisible by heads=5"},
      {"act=swish", "act=swish must be gelu, gelu_tanh or relu"},
      {"head=nsp", "head=nsp must be mlm or model"},
      {"attn=sdpa", "attn=sdpa must be eager"},
      {"dropout=2", "dropout"},
  };
  for (const auto& c : bad) {
    Result<BuiltModel> m = BuildNamedModel(
        "bert", std::string("layers=1,hidden=64,heads=4,") + c.config);
    ASSERT_FALSE(m.ok()) << c.config;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << m.status().message();
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace torchcost::builder
