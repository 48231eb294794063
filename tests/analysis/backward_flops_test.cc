// Backward FLOPs follow which gradients are needed, on the shipped conv rule:
// the first layer (input needs no gradient) costs only its weight gradient,
// a frozen layer only its input gradient.
#include <gtest/gtest.h>

#include <utility>

#include "testing/builtin_graph_test.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

// x [2,3,8,8] -> conv1 (8x3x3x3, pad 1) -> conv2 (4x8x3x3, pad 1), no biases.
class ConvBackwardTest : public testing::BuiltinGraphTest {
 protected:
  void SetUp() override {
    int x = b_.Input();
    int w1 = b_.Param("conv1.weight", {8, 3, 3, 3});
    int w2 = b_.Param("conv2.weight", {4, 8, 3, 3});
    b_.Scope("conv1", "Conv2d");
    int h = Conv(x, w1);
    b_.Scope("conv2", "Conv2d");
    b_.Output(Conv(h, w2));
  }
  int Conv(int x, int w) {
    return b_.One(
        "aten::_convolution",
        {x, w, b_.None(), b_.Ints({1, 1}), b_.Ints({1, 1}), b_.Ints({1, 1}),
         b_.Bool(false), b_.Ints({0, 0}), b_.Int(1), b_.Bool(false),
         b_.Bool(false), b_.Bool(true), b_.Bool(true)},
        {"input", "weight", "bias", "stride", "padding", "dilation",
         "transposed", "output_padding", "groups", "benchmark", "deterministic",
         "cudnn_enabled", "allow_tf32"});
  }
  Report Run(TrainingOptions t) {
    AnalysisOptions opts;
    opts.training = t;
    return AnalyzeBuiltGraph(std::move(opts), "2,3,8,8");
  }
};

// MACs of each conv: N * K * OH * OW * Cg * R * S (stride 1, pad 1: OH = OW =
// 8).
constexpr int64_t kMacs1 = 2 * 8 * 8 * 8 * 3 * 3 * 3;
constexpr int64_t kMacs2 = 2 * 4 * 8 * 8 * 8 * 3 * 3;

TEST_F(ConvBackwardTest, FirstLayerCostsOnlyItsWeightGradient) {
  Report r = Run(TrainingOptions{});
  // conv2: input gradient 2*macs + weight gradient 2*macs; conv1: weight
  // gradient only.
  EXPECT_EQ(r.training.flops_backward,
            sym::Expr(2 * kMacs2 + 2 * kMacs2 + 2 * kMacs1));
  EXPECT_EQ(r.training.node_bwd_flops[r.training.node_bwd_flops.size() - 1],
            sym::Expr(4 * kMacs2));
}

TEST_F(ConvBackwardTest, InputsRequiringGradAddTheFirstInputGradient) {
  TrainingOptions t;
  t.inputs_require_grad = true;
  Report r = Run(t);
  EXPECT_EQ(r.training.flops_backward, sym::Expr(4 * kMacs2 + 4 * kMacs1));
}

TEST_F(ConvBackwardTest, FrozenLayerCostsOnlyItsInputGradient) {
  TrainingOptions t;
  t.freeze = {"^conv2\\."};
  Report r = Run(t);
  // conv2 frozen: its input gradient only (conv1's weight still needs it).
  EXPECT_EQ(r.training.flops_backward, sym::Expr(2 * kMacs2 + 2 * kMacs1));
  EXPECT_EQ(r.training.grad_params, 8 * 3 * 3 * 3);
}

TEST_F(ConvBackwardTest, EverythingFrozenMeansNoBackward) {
  TrainingOptions t;
  t.freeze = {"weight"};
  Report r = Run(t);
  EXPECT_EQ(r.training.flops_backward, sym::Expr(0));
  EXPECT_EQ(r.training.saved_bytes, sym::Expr(0));
}

TEST_F(ConvBackwardTest, ParamDtypeConvertsParameters) {
  AnalysisOptions opts;
  opts.param_dtype = DType::kBFloat16;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "2,3,8,8:bf16"));
  auto r = Analyze(b_.graph(), rules_, ctx_, opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->param_bytes, (8 * 3 * 3 * 3 + 4 * 8 * 3 * 3) * 2);
  // conv1 saves x (bf16) for its weight gradient; conv2 saves conv1's output
  // (bf16).
  EXPECT_EQ(r->training.saved_bytes,
            sym::Expr(2 * 3 * 8 * 8 * 2 + 2 * 8 * 8 * 8 * 2));
}

}  // namespace
}  // namespace torchcost
