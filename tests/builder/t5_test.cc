// The T5 family: parameter counts against closed forms (ReLU and gated MLPs,
// tied and untied heads), the relative position bias in each stack's first
// block only, the decoder's second input, and config errors.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "testing/built_models.h"
#include "torchcost/families.h"

namespace torchcost::builder {
namespace {

using testing::AnalyzeBuilt;

T5Config TinyT5() {
  T5Config c;
  c.layers = 2;
  c.decoder_layers = 3;
  c.d_model = 64;
  c.d_ff = 128;
  c.d_kv = 16;
  c.heads = 4;
  c.vocab = 100;
  return c;
}

TEST(T5Test, ParamsMatchTheClosedForm) {
  // shared V*d (+ lm_head V*d untied); encoder blocks: attention 4*d*inner +
  // norm d + MLP (2 or 3)*d*d_ff
  // + norm d; decoder blocks add a cross-attention 4*d*inner + norm d; a
  // relative bias 32*H and a final norm d per stack.
  const int64_t V = 100, d = 64, ff = 128, inner = 4 * 16, H = 4;
  for (const bool gated : {false, true}) {
    for (const bool tie : {true, false}) {
      T5Config c = TinyT5();
      c.gated = gated;
      c.tie = tie;
      Result<BuiltModel> m = BuildT5(c);
      ASSERT_TRUE(m.ok()) << m.status().message();
      sym::Context ctx;
      const Report r = AnalyzeBuilt(*m, ctx);
      const int64_t mlp = (gated ? 3 : 2) * d * ff;
      const int64_t encoder = 2 * (4 * d * inner + d + mlp + d) + 32 * H + d;
      const int64_t decoder =
          3 * (2 * (4 * d * inner + d) + mlp + d) + 32 * H + d;
      EXPECT_EQ(r.params, V * d * (tie ? 1 : 2) + encoder + decoder)
          << "gated " << gated << " tie " << tie;
      EXPECT_TRUE(r.unknown_ops.empty()) << r.unknown_ops[0].op;
    }
  }
}

TEST(T5Test, RelativeBiasInTheFirstBlockOfEachStack) {
  Result<BuiltModel> m = BuildT5(TinyT5());
  ASSERT_TRUE(m.ok()) << m.status().message();
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const ir::TensorEntry& e : m->graph.params) shapes[e.name] = e.shape;
  EXPECT_EQ(shapes["encoder.block.0.layer.0.SelfAttention.relative_attention_"
                   "bias.weight"],
            (std::vector<int64_t>{32, 4}));
  EXPECT_EQ(shapes["decoder.block.0.layer.0.SelfAttention.relative_attention_"
                   "bias.weight"],
            (std::vector<int64_t>{32, 4}));
  EXPECT_EQ(shapes.count("encoder.block.1.layer.0.SelfAttention.relative_"
                         "attention_bias.weight"),
            0u);
  EXPECT_EQ(shapes["decoder.block.2.layer.1.EncDecAttention.q.weight"],
            (std::vector<int64_t>{64, 64}));
  ASSERT_EQ(m->inputs.size(), 2u);
  EXPECT_EQ(m->inputs[1].name, "decoder_input_ids");
  EXPECT_EQ(m->inputs[1].shape[1].symbol(), "T");
  EXPECT_EQ(m->default_loss, "lm");
}

TEST(T5Test, BadConfigsAreOneLineErrors) {
  const struct {
    const char* config;
    const char* says;
  } bad[] = {
      {"act=swish", "act=swish must be relu or gelu_tanh"},
      {"attn=sdpa", "attn=sdpa must be eager"},
      {"buckets=2", "buckets=2 must be >= 4"},
      {"d_kv=0", "d_kv=0"},
  };
  for (const auto& c : bad) {
    Result<BuiltModel> m =
        BuildNamedModel("t5", std::string("layers=1,d_model=64,") + c.config);
    ASSERT_FALSE(m.ok()) << c.config;
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << m.status().message();
    EXPECT_EQ(m.status().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace torchcost::builder
