// Attention cores found by the graph's structure (Megatron's selective
// recomputation region), on hand-made graphs in the shapes the families,
// TorchScript traces and exported graphs record; and the "selective"
// checkpoint's segments and its diagnostics.
#include "passes/attention_core.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/graph_builder.h"

namespace torchcost::passes {
namespace {

using testing::GraphBuilder;

// The node index of value `v`'s producer.
int NodeOf(GraphBuilder& b, int v) { return b.graph().values[v].producer; }

TEST(AttentionCoreTest, Gpt2EagerChainFromQkToAv) {
  // att = matmul(q, k^T) / s; where(causal, att, min); softmax; dropout;
  // matmul(att, v).
  GraphBuilder b;
  int q = b.Input("q"), k = b.Input("k"), v = b.Input("v"),
      causal = b.Input("causal"), s = b.Input("s");
  int kt = b.One("aten::transpose", {k, b.Int(-1), b.Int(-2)});
  int qk = b.One("aten::matmul", {q, kt});
  int att = b.One("aten::div", {qk, s});
  // Made between the products: inside.
  int mask_value = b.One("aten::full", {b.Ints({}), b.Int(0)});
  att = b.One("aten::where", {causal, att, mask_value});
  att = b.One("aten::softmax", {att, b.Int(-1), b.None()});
  att = b.One("aten::dropout", {att, b.Int(0), b.Bool(true)});
  int y = b.One("aten::matmul", {att, v});
  b.Output(b.One("aten::contiguous", {y}));
  const std::vector<AttentionCore> cores = FindAttentionCores(b.graph());
  ASSERT_EQ(cores.size(), 1u);
  EXPECT_EQ(cores[0].product, NodeOf(b, qk));
  // k's transpose, read only by the core, is in it.
  EXPECT_EQ(cores[0].first, NodeOf(b, kt));
  EXPECT_EQ(cores[0].last, NodeOf(b, y));
  EXPECT_FALSE(cores[0].fused);
}

TEST(AttentionCoreTest, LlamaChainWithAdditiveMaskAndFp32Softmax) {
  // att = matmul(q, k^T) / s + triu(full(-inf));
  // softmax(dtype=float32).to(q.dtype); matmul(att, v).
  GraphBuilder b;
  int q = b.Input("q"), k = b.Input("k"), v = b.Input("v"), s = b.Input("s");
  int kt = b.One("aten::transpose", {k, b.Int(2), b.Int(3)});
  int qk = b.One("aten::matmul", {q, kt});
  int att = b.One("aten::div", {qk, s});
  int mask = b.One("aten::triu",
                   {b.One("aten::full", {b.Ints({4, 4}), b.Int(0)}), b.Int(1)});
  att = b.One("aten::add", {att, mask, b.Int(1)});
  att = b.One("aten::to",
              {b.One("aten::softmax", {att, b.Int(-1), b.Int(6)}), b.Int(6)});
  int y = b.One("aten::matmul", {att, v});
  b.Output(y);
  const std::vector<AttentionCore> cores = FindAttentionCores(b.graph());
  ASSERT_EQ(cores.size(), 1u);
  EXPECT_EQ(cores[0].product, NodeOf(b, qk));
  EXPECT_EQ(cores[0].first, NodeOf(b, kt));
  EXPECT_EQ(cores[0].last, NodeOf(b, y));
}

TEST(AttentionCoreTest, ExportedBmmChainWithNativeDropoutAndViews) {
  // torch.export's decomposition: expand, view, bmm, view, div, _softmax,
  // native_dropout (out, mask), expand, view, bmm.
  GraphBuilder b;
  int q = b.Input("q"), k = b.Input("k"), v = b.Input("v"), s = b.Input("s");
  int qe = b.One("aten::expand", {q, b.Ints({2, 4, 8, 16})});
  int qv = b.One("aten::view", {qe, b.Ints({8, 8, 16})});
  int kv = b.One("aten::view", {k, b.Ints({8, 16, 8})});
  int qk = b.One("aten::bmm", {qv, kv});
  int att = b.One("aten::div",
                  {b.One("aten::_unsafe_view", {qk, b.Ints({2, 4, 8, 8})}), s});
  att = b.One("aten::_softmax", {att, b.Int(-1), b.Bool(false)});
  std::vector<int> drop =
      b.Node("aten::native_dropout", {att, b.Int(0), b.Bool(true)}, {}, 2);
  int av_in = b.One("aten::view",
                    {b.One("aten::expand", {drop[0], b.Ints({2, 4, 8, 8})}),
                     b.Ints({8, 8, 8})});
  int y =
      b.One("aten::bmm", {av_in, b.One("aten::view", {v, b.Ints({8, 8, 16})})});
  b.Output(y);
  const std::vector<AttentionCore> cores = FindAttentionCores(b.graph());
  ASSERT_EQ(cores.size(), 1u);
  EXPECT_EQ(cores[0].product, NodeOf(b, qk));
  // The layout ops before the bmm (q's expand and view, k's view) are the
  // core's.
  EXPECT_EQ(cores[0].first, NodeOf(b, qe));
  EXPECT_EQ(cores[0].last, NodeOf(b, y));
}

TEST(AttentionCoreTest, LayoutOpsReadAfterTheCoreStayOutside) {
  // k's transpose is read again after the core: the core starts at its product.
  GraphBuilder b;
  int q = b.Input("q"), k = b.Input("k"), v = b.Input("v");
  int kt = b.One("aten::transpose", {k, b.Int(-1), b.Int(-2)});
  int qk = b.One("aten::matmul", {q, kt});
  int y = b.One("aten::matmul",
                {b.One("aten::softmax", {qk, b.Int(-1), b.None()}), v});
  b.Output(b.One("aten::add", {y, kt}));
  const std::vector<AttentionCore> cores = FindAttentionCores(b.graph());
  ASSERT_EQ(cores.size(), 1u);
  EXPECT_EQ(cores[0].first, NodeOf(b, qk));
}

TEST(AttentionCoreTest, FusedAttentionIsOneNode) {
  GraphBuilder b;
  int q = b.Input("q"), k = b.Input("k"), v = b.Input("v");
  int y = b.One("aten::scaled_dot_product_attention", {q, k, v});
  b.Output(b.One("aten::contiguous", {y}));
  const std::vector<AttentionCore> cores = FindAttentionCores(b.graph());
  ASSERT_EQ(cores.size(), 1u);
  EXPECT_EQ(cores[0].first, NodeOf(b, y));
  EXPECT_EQ(cores[0].last, NodeOf(b, y));
  EXPECT_TRUE(cores[0].fused);
}

TEST(AttentionCoreTest, SoftmaxWithoutTwoProductsIsNoCore) {
  GraphBuilder b;
  int x = b.Input("x"), w = b.Input("w"), v = b.Input("v");
  // A classifier: linear then softmax, nothing after.
  int p = b.One("aten::softmax",
                {b.One("aten::linear", {x, w}), b.Int(-1), b.None()});
  // Scores from a product, but the probabilities go through a reduction first.
  int sc = b.One("aten::softmax",
                 {b.One("aten::matmul", {x, w}), b.Int(-1), b.None()});
  int y = b.One("aten::matmul", {b.One("aten::sum", {sc, b.Ints({-1})}), v});
  // Scores that reach the softmax through an op that is neither a scale, a mask
  // nor a cast.
  int e = b.One("aten::softmax",
                {b.One("aten::exp", {b.One("aten::matmul", {x, w})}), b.Int(-1),
                 b.None()});
  b.Output(b.One("aten::matmul", {e, v}));
  b.Output(p);
  b.Output(y);
  EXPECT_TRUE(FindAttentionCores(b.graph()).empty());
}

TEST(AttentionCoreTest, WalksVisitEachValueOnce) {
  // 60 reconverging adds (x + x) between the product and the softmax: a walk
  // that revisited values would take 2^60 steps; the product lies past the
  // 12-hop bound, so there is no core.
  GraphBuilder b;
  int x = b.Input("x"), v = b.Input("v");
  int att = b.One("aten::matmul", {x, x});
  for (int i = 0; i < 60; ++i) att = b.One("aten::add", {att, att, b.Int(1)});
  att = b.One("aten::softmax", {att, b.Int(-1), b.None()});
  b.Output(b.One("aten::matmul", {att, v}));
  EXPECT_TRUE(FindAttentionCores(b.graph()).empty());
}

}  // namespace
}  // namespace torchcost::passes
