// The LLaMA family's attention (src/builder/llama_attention.cc): each layer's
// sliding window as Gemma-2's and Gemma-3's configs define it, the core each
// attention implementation builds, and RoPE tables as wide as the rotated
// dims.
#include "builder/llama_attention.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/built_models.h"

namespace torchcost::builder {
namespace {

TEST(LlamaAttentionTest, LayerWindowFollowsEachFamilysPattern) {
  LlamaConfig c;
  EXPECT_EQ(LayerWindow(c, 0), 0);  // No window.
  c.window = 4096;                  // Mistral: every layer.
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(LayerWindow(c, i), 4096);
  // Gemma-2 (modeling_gemma2.py): is_sliding = not bool(layer_idx % 2).
  c.alternate_window = true;
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(LayerWindow(c, i), i % 2 == 0 ? 4096 : 0) << i;
  // Gemma-3 (modeling_gemma3.py): is_sliding = bool((layer_idx + 1) %
  // sliding_window_pattern).
  c.alternate_window = false;
  c.window_pattern = 6;
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(LayerWindow(c, i), (i + 1) % 6 != 0 ? 4096 : 0) << i;
}

// The ops of a one-layer model built with `config`, counted by name.
int64_t CountOps(const std::string& config, const std::string& op) {
  Result<BuiltModel> m = BuildNamedModel(
      "llama",
      "layers=1,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=64," +
          config);
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return -1;
  int64_t n = 0;
  for (const ir::Node& node : m->graph.nodes) n += node.op == op;
  return n;
}

TEST(LlamaAttentionTest, EachImplementationBuildsItsCore) {
  // Eager: q k^T and the weights times v; the causal mask made in the layer.
  EXPECT_EQ(CountOps("attn=eager", "aten::matmul"), 2);
  EXPECT_EQ(CountOps("attn=eager", "aten::triu"), 1);
  EXPECT_EQ(CountOps("attn=eager", "aten::scaled_dot_product_attention"), 0);
  // sdpa: one fused call, grouped K/V passed as they are (no repeat_kv).
  EXPECT_EQ(CountOps("attn=sdpa", "aten::scaled_dot_product_attention"), 1);
  EXPECT_EQ(CountOps("attn=sdpa", "aten::matmul"), 0);
  EXPECT_EQ(CountOps("attn=sdpa", "aten::expand"), 0);
  EXPECT_EQ(CountOps("attn=eager", "aten::expand"), 2);
}

TEST(LlamaAttentionTest, RopeTablesAreAsWideAsTheRotatedDims) {
  // head_dim 16; rotary_dim 8 rotates half of each head: the tables' cos is
  // [S, 8], and the other 8 dims are sliced off and concatenated back.
  for (int64_t rotary : {0, 8}) {
    Result<BuiltModel> m = BuildNamedModel(
        "llama",
        "layers=1,hidden=64,heads=4,kv_heads=4,intermediate=128,vocab=64,"
        "rotary_dim=" +
            std::to_string(rotary));
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    const Report r = testing::AnalyzeBuilt(*m, ctx);
    int64_t cos_width = -1;
    for (size_t i = 0; i < m->graph.nodes.size(); ++i) {
      const ir::Node& n = m->graph.nodes[i];
      if (n.op != "aten::cos") continue;
      const sym::Shape& s = r.values[n.outputs[0]].shape;
      ASSERT_EQ(s.size(), 2u);
      cos_width = *s[1].AsConstant();
    }
    EXPECT_EQ(cos_width, rotary == 0 ? 16 : rotary);
  }
}

}  // namespace
}  // namespace torchcost::builder
