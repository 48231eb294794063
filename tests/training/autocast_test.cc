// Tests of the autocast rewrite on small graphs with the built-in rules: which
// casts torch.autocast makes, the weight cache, and the bytes the analysis
// then finds, each derived from the shapes and dtypes by hand.
#include "torchcost/autocast.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;
using ::testing::HasSubstr;

const RuleSet& Builtin() {
  static const RuleSet* rules = [] {
    auto r = RuleSet::Builtin();
    EXPECT_TRUE(r.ok()) << r.status().message();
    return new RuleSet(std::move(r).value());
  }();
  return *rules;
}

// The ops of the graph's nodes, in order, with "aten::to" written as
// "to(DTYPE)".
std::vector<std::string> Ops(const ir::Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) {
    if (n.op == "aten::to") {
      const ir::Value& d = g.values[n.inputs[1]];
      ops.push_back("to(" +
                    std::string(DTypeName(DTypeFromScalarTypeCode(
                        std::get<int64_t>(d.constant)))) +
                    ")");
    } else {
      ops.push_back(n.op);
    }
  }
  return ops;
}

class AutocastTest : public ::testing::Test {
 protected:
  AnalysisOptions Options(const std::string& device, DType autocast,
                          std::vector<std::vector<int64_t>> inputs) {
    AnalysisOptions o;
    o.device = device;
    o.autocast = autocast;
    for (const auto& shape : inputs) {
      InputSpec in;
      for (int64_t d : shape) in.shape.push_back(sym::Expr(d));
      o.inputs.push_back(in);
    }
    return o;
  }

  // x [4, 8] -> fc (Linear 8 -> 6, bias) -> softmax(dim=-1).
  ir::Graph LinearSoftmax() {
    GraphBuilder b;
    const int x = b.Input();
    const int w = b.Param("fc.weight", {6, 8});
    const int bias = b.Param("fc.bias", {6});
    b.Scope("fc", "Linear");
    const int h =
        b.One("aten::linear", {x, w, bias}, {"input", "weight", "bias"});
    b.Scope("", "Net");
    b.Output(b.One("aten::softmax.int", {h, b.Int(-1), b.None()},
                   {"self", "dim", "dtype"}));
    return b.graph();
  }

  sym::Context ctx_;
};

TEST_F(AutocastTest, LinearThenSoftmaxOnCudaFp16) {
  const AnalysisOptions o = Options("cuda", DType::kFloat16, {{4, 8}});
  auto g = ApplyAutocast(LinearSoftmax(), Builtin(), ctx_, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  // linear is `lower`: x, W and b cast to float16; softmax is `fp32` on CUDA:
  // the float16 linear output is cast back up. W and b are trainable float32
  // parameters: their copies are autocast's weight cache, held to the region's
  // end.
  EXPECT_THAT(Ops(*g), ::testing::ElementsAre("to(float16)", "to(float16)",
                                              "to(float16)", "aten::linear",
                                              "to(float32)", "aten::softmax",
                                              kAutocastExitOp));
  EXPECT_EQ(g->nodes.back().inputs.size(), 2u);  // W's and b's copies.

  auto r = Analyze(*g, Builtin(), ctx_, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const int linear_out = g->nodes[3].outputs[0];
  EXPECT_EQ(r->values[linear_out].dtype, DType::kFloat16);
  EXPECT_EQ(r->values[g->outputs[0]].dtype, DType::kFloat32);
  // Saved: linear's input copy (float16, for W's gradient; its weight copy
  // only serves x's gradient, which nothing needs), softmax's result (float32).
  const int64_t saved = /*x16*/ 4 * 8 * 2 + /*softmax out*/ 4 * 6 * 4;
  EXPECT_EQ(r->training.saved_bytes, sym::Expr(saved));
  // Master weights: parameters and their gradients stay float32.
  const PeakInfo peak = EvaluatePeak(r->training, {});
  ASSERT_TRUE(peak.decided);
  EXPECT_EQ(peak.category_max[testing::kParam], sym::Expr((6 * 8 + 6) * 4));
  EXPECT_EQ(peak.category_max[testing::kGrad], sym::Expr((6 * 8 + 6) * 4));
  // Casts cost no FLOPs: the forward is linear (2*M*IN*OUT + M*OUT) and softmax
  // (4 per element).
  EXPECT_EQ(r->flops, sym::Expr(2 * 4 * 8 * 6 + 4 * 6 + 4 * 4 * 6));
  EXPECT_EQ(r->training.precision, "fp16-mixed");
}

TEST_F(AutocastTest, CpuBf16LeavesSoftmaxInBf16) {
  const AnalysisOptions o = Options("cpu", DType::kBFloat16, {{4, 8}});
  auto g = ApplyAutocast(LinearSoftmax(), Builtin(), ctx_, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  // CPU autocast (torch 1.13) has no softmax in its float32 list.
  EXPECT_THAT(Ops(*g), ::testing::ElementsAre(
                           "to(bfloat16)", "to(bfloat16)", "to(bfloat16)",
                           "aten::linear", "aten::softmax", kAutocastExitOp));
  auto r = Analyze(*g, Builtin(), ctx_, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->values[g->outputs[0]].dtype, DType::kBFloat16);
  const int64_t saved = /*x16*/ 4 * 8 * 2 + /*softmax out, bf16*/ 4 * 6 * 2;
  EXPECT_EQ(r->training.saved_bytes, sym::Expr(saved));
}

TEST_F(AutocastTest, WeightCacheSharesOneCastPerTrainableParameter) {
  // x [2, 4] -> (x @ W^T) + (x @ W^T) and the same with a frozen V.
  GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("w", {4, 4});
  const int v = b.Param("v", {4, 4}, /*requires_grad=*/false);
  const int none = b.None();
  const int a1 =
      b.One("aten::linear", {x, w, none}, {"input", "weight", "bias"});
  const int a2 =
      b.One("aten::linear", {a1, w, none}, {"input", "weight", "bias"});
  const int c1 =
      b.One("aten::linear", {a2, v, none}, {"input", "weight", "bias"});
  b.Output(b.One("aten::linear", {c1, v, none}, {"input", "weight", "bias"}));
  const AnalysisOptions o = Options("cuda", DType::kBFloat16, {{2, 4}});
  auto g = ApplyAutocast(b.graph(), Builtin(), ctx_, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  // x cast once; W cast once (cached) and reused; the frozen V is not cached
  // (autocast caches leaves that require grad): cast before each use. The
  // linears after the first get bfloat16 inputs already.
  EXPECT_THAT(Ops(*g), ::testing::ElementsAre(
                           "to(bfloat16)", "to(bfloat16)", "aten::linear",
                           "aten::linear", "to(bfloat16)", "aten::linear",
                           "to(bfloat16)", "aten::linear", kAutocastExitOp));
  EXPECT_EQ(g->nodes[2].inputs[1], g->nodes[3].inputs[1]);  // One copy of W.
  ASSERT_EQ(g->nodes.back().inputs.size(), 1u);
  EXPECT_EQ(g->nodes.back().inputs[0], g->nodes[1].outputs[0]);
}

TEST_F(AutocastTest, CachedWeightCopyLivesToTheEndOfTheForward) {
  // Inference: nothing is saved, so W's copy outlives the linear only because
  // of the cache. x [2, 4] -> linear(W [16, 4]) -> relu -> relu.
  GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("w", {16, 4});
  const int h =
      b.One("aten::linear", {x, w, b.None()}, {"input", "weight", "bias"});
  const int r1 = b.One("aten::relu", {h}, {"self"});
  b.Output(b.One("aten::relu", {r1}, {"self"}));
  AnalysisOptions o = Options("cuda", DType::kBFloat16, {{2, 4}});
  o.training.mode = StepMode::kInfer;
  auto g = ApplyAutocast(b.graph(), Builtin(), ctx_, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto r = Analyze(*g, Builtin(), ctx_, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const PeakInfo peak = EvaluatePeak(r->training, {});
  ASSERT_TRUE(peak.decided);
  // At the linear: x's copy (2*4*2 = 16) + W's copy (16*4*2 = 128) + h (2*16*2
  // = 64) = 208. At either relu: W's copy (cached: 128) + two [2, 16] bfloat16
  // tensors (64 each) = 256, the peak; without the cache it would be 208.
  const int64_t baseline = /*W*/ 16 * 4 * 4 + /*x*/ 2 * 4 * 4;
  EXPECT_EQ(peak.peak, sym::Expr(baseline + 128 + 64 + 64));
}

TEST_F(AutocastTest, PromoteCastsToTheWidestInput) {
  // addcmul(x, h, h) on CUDA with h a bfloat16 linear output: promote casts h
  // up to x's float32.
  GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("w", {4, 4});
  const int h =
      b.One("aten::linear", {x, w, b.None()}, {"input", "weight", "bias"});
  b.Output(b.One("aten::addcmul", {x, h, h, b.Int(1)},
                 {"self", "tensor1", "tensor2", "value"}));
  const AnalysisOptions o = Options("cuda", DType::kBFloat16, {{2, 4}});
  auto g = ApplyAutocast(b.graph(), Builtin(), ctx_, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_THAT(Ops(*g), ::testing::ElementsAre("to(bfloat16)", "to(bfloat16)",
                                              "aten::linear", "to(float32)",
                                              "to(float32)", "aten::addcmul",
                                              kAutocastExitOp));
}

TEST_F(AutocastTest, ExplicitDtypeIsNotAutocast) {
  GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("w", {4, 4});
  const int h =
      b.One("aten::linear", {x, w, b.None()}, {"input", "weight", "bias"});
  // softmax(h, -1, dtype=torch.float32): 6 is float32's ScalarType code.
  b.Output(b.One("aten::softmax.int", {h, b.Int(-1), b.Int(6)},
                 {"self", "dim", "dtype"}));
  const AnalysisOptions o = Options("cuda", DType::kFloat16, {{2, 4}});
  auto g = ApplyAutocast(b.graph(), Builtin(), ctx_, o);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_THAT(Ops(*g), ::testing::ElementsAre("to(float16)", "to(float16)",
                                              "aten::linear", "aten::softmax",
                                              kAutocastExitOp));
}

TEST_F(AutocastTest, NoLowPrecisionOpsLeavesTheGraphAlone) {
  GraphBuilder b;
  b.Output(b.One("aten::relu", {b.Input()}, {"self"}));
  auto g = ApplyAutocast(b.graph(), Builtin(), ctx_,
                         Options("cuda", DType::kFloat16, {{2, 4}}));
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_THAT(Ops(*g), ::testing::ElementsAre("aten::relu"));
}

TEST_F(AutocastTest, BadOptionsAreErrors) {
  auto cpu16 = ApplyAutocast(LinearSoftmax(), Builtin(), ctx_,
                             Options("cpu", DType::kFloat16, {{4, 8}}));
  ASSERT_FALSE(cpu16.ok());
  EXPECT_THAT(cpu16.status().message(), HasSubstr("bfloat16 only"));
  auto f64 = ApplyAutocast(LinearSoftmax(), Builtin(), ctx_,
                           Options("cuda", DType::kFloat64, {{4, 8}}));
  ASSERT_FALSE(f64.ok());
  EXPECT_THAT(f64.status().message(), HasSubstr("float16 or bfloat16"));
}

TEST(PrecisionNameTest, NamesEachPrecision) {
  AnalysisOptions o;
  EXPECT_EQ(PrecisionName(o), "fp32");
  o.param_dtype = DType::kBFloat16;
  EXPECT_EQ(PrecisionName(o), "bf16");
  o.autocast = DType::kBFloat16;
  EXPECT_EQ(PrecisionName(o), "bf16-mixed");
  o.autocast = DType::kFloat16;
  EXPECT_EQ(PrecisionName(o), "fp16-mixed");
}

}  // namespace
}  // namespace torchcost
