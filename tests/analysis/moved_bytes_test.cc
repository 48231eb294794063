// Bytes moved per node: the default from inputs and outputs, views moving
// nothing, the default backward (output gradients, saved tensors, input
// gradients), a rule's `bytes:` and `class:` overriding them, and the class
// taken from the rule file's family.
#include "analysis/moved_bytes.h"

#include <gtest/gtest.h>

#include "testing/analyze_graph.h"
#include "testing/graph_builder.h"
#include "testing/one_kv_head.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;

// A fused op whose kernel reads its input twice: the rule says so.
constexpr const char kFusedRule[] = R"yaml(
version: 1
rules:
  - op: t::fused
    schema: "fused(Tensor self) -> Tensor"
    outputs:
      out: self
    flops:
      fwd: numel(self)
      bwd:
        self: numel(self)
    bytes:
      fwd: 3*numel(self)*itemsize(self)    # self read twice, out written
      bwd:
        self: 5                             # a made-up figure the test can spot
    class: attention

  # Collectives in a group of 4 ranks, with made-up figures the test can
  # spot.
  - op: t::collective
    schema: "collective(Tensor self) -> Tensor"
    outputs:
      out: self
    alias:
      out: self
    collectives:
      group: 4
      fwd: {all_gather: 7*numel(self)}
      bwd:
        self: [{reduce_scatter: 11}, {all_reduce: 13}]
)yaml";

class MovedBytesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = RuleSet::Builtin();
    ASSERT_TRUE(r.ok()) << r.status().message();
    rules_ = std::move(r).value();
    Status s = rules_.AddText(kFusedRule, "fused.yaml");
    ASSERT_TRUE(s.ok()) << s.message();
  }
  Report Run(const std::string& input, bool input_grad, bool moved = true) {
    AnalysisOptions opts;
    opts.moved_bytes = moved;
    opts.training.inputs_require_grad = input_grad;
    return testing::AnalyzeGraph(b_.graph(), rules_, ctx_, opts, input);
  }
  GraphBuilder b_;
  RuleSet rules_;
  sym::Context ctx_;
};

TEST_F(MovedBytesTest, ViewsMoveNothingAndPointwiseReadsAndWrites) {
  int x = b_.Input();
  int v = b_.One("aten::view", {x, b_.Ints({8, 4})}, {"self", "size"});
  b_.Output(b_.One("aten::relu", {v}, {"self"}));
  Report r = Run("4,8", /*input_grad=*/true);
  int view = -1, relu = -1;
  for (size_t i = 0; i < b_.graph().nodes.size(); ++i) {
    if (b_.graph().nodes[i].op == "aten::view") view = static_cast<int>(i);
    if (b_.graph().nodes[i].op == "aten::relu") relu = static_cast<int>(i);
  }
  ASSERT_GE(view, 0);
  ASSERT_GE(relu, 0);
  EXPECT_EQ(r.nodes[view].bytes, sym::Expr(0));
  EXPECT_EQ(r.training.node_bwd_bytes[view],
            sym::Expr(0));  // view's backward is a view of the gradient.
  // relu: reads and writes 32 float32.
  EXPECT_EQ(r.nodes[relu].bytes, sym::Expr(2 * 32 * 4));
  // relu's backward: reads grad_out and the saved output, writes grad_in: 3 *
  // 32 * 4.
  EXPECT_EQ(r.training.node_bwd_bytes[relu], sym::Expr(3 * 32 * 4));
}

TEST_F(MovedBytesTest, RuleOverridesBytesAndClass) {
  int x = b_.Input();
  b_.Output(b_.One("t::fused", {x}, {"self"}));
  Report r = Run("4,8", /*input_grad=*/true);
  EXPECT_EQ(r.nodes[0].bytes, sym::Expr(3 * 32 * 4));
  EXPECT_EQ(r.training.node_bwd_bytes[0], sym::Expr(5));
  EXPECT_EQ(r.nodes[0].op_class, OpClass::kAttention);
  // No input gradient: no backward bytes.
  GraphBuilder b2;
  b_ = b2;
  x = b_.Input();
  b_.Output(b_.One("t::fused", {x}, {"self"}));
  r = Run("4,8", /*input_grad=*/false);
  EXPECT_EQ(r.training.node_bwd_bytes[0], sym::Expr(0));
}

TEST_F(MovedBytesTest, CollectivesOfANodeEvenAView) {
  int x = b_.Input();
  b_.Output(b_.One("t::collective", {x}, {"self"}));
  Report r = Run("4,8", /*input_grad=*/true);
  EXPECT_EQ(r.nodes[0].bytes, sym::Expr(0));  // A view moves nothing.
  ASSERT_EQ(r.collectives.size(), 1u);
  const NodeCollectives& c = r.collectives[0];
  EXPECT_EQ(c.node, 0);
  EXPECT_EQ(c.group, sym::Expr(4));
  ASSERT_EQ(c.forward.size(), 1u);
  EXPECT_EQ(c.forward[0].kind, CollectiveKind::kAllGather);
  EXPECT_EQ(c.forward[0].payload, sym::Expr(7 * 32));
  ASSERT_EQ(c.backward.size(), 2u);  // A list: its calls in order.
  EXPECT_EQ(c.backward[0].kind, CollectiveKind::kReduceScatter);
  EXPECT_EQ(c.backward[0].payload, sym::Expr(11));
  EXPECT_EQ(c.backward[1].kind, CollectiveKind::kAllReduce);
  EXPECT_EQ(c.backward[1].payload, sym::Expr(13));
  // No input gradient: none in backward.
  GraphBuilder b2;
  b_ = b2;
  x = b_.Input();
  b_.Output(b_.One("t::collective", {x}, {"self"}));
  r = Run("4,8", /*input_grad=*/false);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_TRUE(r.collectives[0].backward.empty());
  // Ops without `collectives:` run none.
  GraphBuilder b3;
  b_ = b3;
  b_.Output(b_.One("aten::relu", {b_.Input()}, {"self"}));
  EXPECT_TRUE(Run("4,8", true).collectives.empty());
}

TEST_F(MovedBytesTest, AnEmptyMatmulReadsNothing) {
  // linear on [N-1, 4] rows (0 rows at N = 1, as an expert no token is routed
  // to) with a weight [3, 4]: its kernel returns before reading the weight.
  int x = b_.Input();
  int w = b_.Param("w", {3, 4});
  b_.Output(b_.One("aten::linear", {x, w}, {"input", "weight"}));
  Report r = Run("N-1,4", /*input_grad=*/false);
  auto at = [&](int64_t n) {
    return sym::Evaluate(r.nodes[0].bytes, {{"N", n}}).value();
  };
  EXPECT_EQ(at(1), 0);
  // N = 3: 2 rows: input 2*4, weight 3*4, output 2*3 float32.
  EXPECT_EQ(at(3), (2 * 4 + 3 * 4 + 2 * 3) * 4);
  // Rows provably >= 1 leave the default expression as it was: no min().
  GraphBuilder b2;
  b_ = b2;
  x = b_.Input();
  w = b_.Param("w", {3, 4});
  b_.Output(b_.One("aten::linear", {x, w}, {"input", "weight"}));
  r = Run("N,4", /*input_grad=*/false);
  EXPECT_EQ(r.nodes[0].bytes.ToString().find("min"), std::string::npos)
      << r.nodes[0].bytes.ToString();
}

// One KV head (testing::BuildOneKvHeadScores, float32): the scores' matmul
// q [B, 3, 5, 4] @ kt [B, 3, 4, 5] -> [B, 3, 5, 5] reads q and kt and writes
// the scores; where B > 1 torch.matmul first copies kt, whose heads are at
// stride 0, to [3B, 4, 5] for bmm: 3B*4*5 floats read and as many written.
// At B = 1 it views: no copy.
TEST_F(MovedBytesTest, OneKvHeadMatmulMovesItsFoldCopy) {
  const testing::OneKvHeadScores v = testing::BuildOneKvHeadScores(&b_);
  Report r = Run("B,3,5,4", /*input_grad=*/false);
  ASSERT_EQ(b_.graph().nodes[v.matmul].op, "aten::matmul");
  auto at = [&](int64_t batch) {
    return sym::Evaluate(r.nodes[v.matmul].bytes, {{"B", batch}}).value();
  };
  // q, kt and the scores: B*3*5*4 + B*3*4*5 + B*3*5*5 float32.
  auto plain = [](int64_t b) { return (b * 60 + b * 60 + b * 75) * 4; };
  // The copy of kt: 2 (read, written) x B*3*4*5 float32.
  auto copy = [](int64_t b) { return 2 * (b * 3 * 4 * 5) * 4; };
  EXPECT_EQ(at(1), plain(1));
  EXPECT_EQ(at(2), plain(2) + copy(2));
  EXPECT_EQ(at(4), plain(4) + copy(4));
}

TEST_F(MovedBytesTest, OffByDefault) {
  int x = b_.Input();
  b_.Output(b_.One("aten::relu", {x}, {"self"}));
  Report r = Run("4,8", /*input_grad=*/true, /*moved=*/false);
  EXPECT_EQ(r.nodes[0].bytes, sym::Expr(0));
  EXPECT_TRUE(r.training.node_bwd_bytes.empty());
}

TEST_F(MovedBytesTest, ClassFromTheRuleFile) {
  const struct {
    const char* op;
    OpClass want;
  } cases[] = {{"aten::linear", OpClass::kMatmul},
               {"aten::_convolution", OpClass::kConvolution},
               {"aten::scaled_dot_product_attention", OpClass::kAttention},
               {"aten::sum", OpClass::kReduction},
               {"aten::layer_norm", OpClass::kReduction},
               {"aten::relu", OpClass::kPointwise}};
  for (const auto& c : cases) {
    const rules::OpRule* rule = rules_.Find(c.op);
    ASSERT_NE(rule, nullptr) << c.op;
    EXPECT_EQ(analysis::ClassOf(*rule, rule->variants.front()), c.want) << c.op;
  }
}

TEST_F(MovedBytesTest, BadClassNamesTheRule) {
  RuleSet rules;
  Status s = rules.AddText(R"yaml(
version: 1
rules:
  - op: t::bad
    schema: "bad(Tensor self) -> Tensor"
    outputs:
      out: self
    class: conv
)yaml",
                           "bad.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bad.yaml:8:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unknown op class 'conv'"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace torchcost
