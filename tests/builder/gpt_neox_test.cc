// The GPT-NeoX family: parameter and buffer counts against closed forms,
// every attention implementation analysed without unknown ops, config errors.
#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

GptNeoxConfig TinyNeox() {
  GptNeoxConfig c;
  c.layers = 2;
  c.hidden = 64;
  c.heads = 4;
  c.intermediate = 256;
  c.vocab = 100;
  c.context = 32;
  return c;
}

TEST(GptNeoxTest, ParamsMatchTheClosedForm) {
  // embed_in V*h + per layer (LayerNorms 4h, query_key_value 3h^2 + 3h, dense
  // h^2 + h, MLP 2*h*I + I + h) + final LayerNorm 2h + embed_out V*h.
  const int64_t V = 100, h = 64, L = 2, I = 256;
  const int64_t per_layer =
      4 * h + 3 * h * h + 3 * h + h * h + h + 2 * h * I + I + h;
  for (const bool tie : {false, true}) {
    for (const bool bias : {true, false}) {
      GptNeoxConfig c = TinyNeox();
      c.tie = tie;
      c.bias = bias;
      Result<BuiltModel> m = BuildGptNeox(c);
      ASSERT_TRUE(m.ok()) << m.status().message();
      sym::Context ctx;
      const Report r = AnalyzeBuilt(*m, ctx);
      EXPECT_EQ(r.params, V * h + L * (per_layer - (bias ? 0 : 3 * h + h)) +
                              2 * h + (tie ? 0 : V * h))
          << "tie " << tie << " bias " << bias;
      EXPECT_TRUE(r.unknown_ops.empty()) << r.unknown_ops[0].op;
    }
  }
}

TEST(GptNeoxTest, BuffersAreTheMaskAndTheRotaryCaches) {
  // Per layer: bias bool [1, 1, 32, 32]; masked_bias a 0-dim float; rotary on
  // int(16 * 0.25) = 4 dims: inv_freq [2], cos_cached and sin_cached [32, 4],
  // float32.
  Result<BuiltModel> m = BuildGptNeox(TinyNeox());
  ASSERT_TRUE(m.ok()) << m.status().message();
  int64_t bytes = 0;
  for (const ir::TensorEntry& e : m->graph.buffers) {
    int64_t n = 1;
    for (int64_t d : e.shape) n *= d;
    bytes += n * (e.dtype == DType::kBool ? 1 : 4);
  }
  EXPECT_EQ(bytes, 2 * (32 * 32 * 1 + 4 + 2 * 4 + 2 * 32 * 4 * 4));
}

TEST(GptNeoxTest, AttentionImplementationsAnalyse) {
  for (const char* attn : {"eager", "sdpa", "flash"}) {
    GptNeoxConfig c = TinyNeox();
    c.attn = attn;
    c.parallel_residual = std::string(attn) != "sdpa";
    Result<BuiltModel> m = BuildGptNeox(c);
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = AnalyzeBuilt(*m, ctx);
    EXPECT_TRUE(r.unknown_ops.empty()) << attn << ": " << r.unknown_ops[0].op;
    EXPECT_TRUE(r.diagnostics.empty())
        << attn << ": " << r.diagnostics[0].message;
  }
}

TEST(GptNeoxTest, BadConfigsAreOneLineErrors) {
  const struct {
    const char* config;
    const char* says;
  } bad[] = {
      {"rotary_pct=0.1", "must be even and positive"},  // int(16 * 0.1) = 1.
      {"rotary_pct=1.5", "rotary_pct="},
      {"heads=5", "not divisible by heads=5"},
      {"act=swish", "act=swish must be gelu, gelu_tanh or relu"},
  };
  for (const auto& c : bad) {
    Result<BuiltModel> m = BuildNamedModel(
        "gpt_neox",
        std::string("layers=1,hidden=64,heads=4,context=32,") + c.config);
    ASSERT_FALSE(m.ok()) << c.config;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << m.status().message();
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace torchcost::builder
