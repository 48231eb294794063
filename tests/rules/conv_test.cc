// Tests of rules/conv.yaml: N-d convolutions through the real analysis.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/op_runner.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;

// aten::_convolution's 13 arguments, as torch.jit.trace records them.
std::vector<std::pair<std::string, OpArg>> Conv(
    const std::string& in, const std::string& w, bool bias,
    std::vector<int64_t> stride, std::vector<int64_t> padding,
    std::vector<int64_t> dilation, bool transposed,
    std::vector<int64_t> output_padding, int64_t groups,
    const std::string& bias_shape = "") {
  return {{"input", OpArg::Tensor(in)},
          {"weight", OpArg::Tensor(w)},
          {"bias", bias ? OpArg::Tensor(bias_shape) : OpArg::None()},
          {"stride", OpArg::Ints(stride)},
          {"padding", OpArg::Ints(padding)},
          {"dilation", OpArg::Ints(dilation)},
          {"transposed", OpArg::Bool(transposed)},
          {"output_padding", OpArg::Ints(output_padding)},
          {"groups", OpArg::Int(groups)},
          {"benchmark", OpArg::Bool(false)},
          {"deterministic", OpArg::Bool(false)},
          {"cudnn_enabled", OpArg::Bool(true)},
          {"allow_tf32", OpArg::Bool(true)}};
}

TEST(ConvRuleTest, Conv2dConcreteWithBias) {
  OpRunner r;
  OpResult res =
      r.Run("aten::_convolution", Conv("2,3,8,8", "8,3,3,3", true, {1, 1},
                                       {0, 0}, {1, 1}, false, {0, 0}, 1, "8"));
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  ASSERT_EQ(res.output_shapes.size(), 1u);
  EXPECT_EQ(res.output_shapes[0], "[2, 8, 6, 6]");
  const int64_t macs =
      2 /*N*/ * 8 /*K*/ * 6 * 6 /*OH*OW*/ * 3 /*Cg*/ * 3 * 3 /*R*S*/;
  EXPECT_EQ(res.macs, sym::Expr(macs));
  EXPECT_EQ(res.flops,
            sym::Expr(2 * macs + 2 * 8 * 6 * 6 /*bias: one add per output*/));
  EXPECT_EQ(res.transcendentals, sym::Expr(0));
}

TEST(ConvRuleTest, StridedPaddedDilatedGrouped) {
  OpRunner r;
  // 16 -> 8 channels in 4 groups; H: floor((15 + 2*2 - 2*(3-1) - 1)/2) + 1 = 8;
  // W: floor((9 + 2 - 2 - 1)/2)+1 = 5.
  OpResult res =
      r.Run("aten::_convolution", Conv("1,16,15,9", "8,4,3,3", false, {2, 2},
                                       {2, 1}, {2, 1}, false, {0, 0}, 4));
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[1, 8, 8, 5]");
  EXPECT_EQ(res.macs, sym::Expr(1 /*N*/ * 8 /*K*/ * 8 * 5 /*OSP*/ * 4 /*Cg*/ *
                                3 * 3 /*KS*/));
  EXPECT_EQ(res.flops, sym::Expr(2 * 1 * 8 * 8 * 5 * 4 * 3 * 3));  // no bias
}

TEST(ConvRuleTest, DepthwiseConv1dAnd3d) {
  OpRunner r;
  // Depthwise 1-d: groups = C = K = 6, Cg = 1.
  OpResult d1 = r.Run("aten::_convolution", Conv("4,6,10", "6,1,3", false, {1},
                                                 {1}, {1}, false, {0}, 6));
  ASSERT_TRUE(d1.errors.empty()) << d1.errors[0];
  EXPECT_EQ(d1.output_shapes[0], "[4, 6, 10]");
  EXPECT_EQ(d1.macs, sym::Expr(4 * 6 * 10 * 1 * 3));
  // 3-d.
  OpResult d3 = r.Run("aten::_convolution",
                      Conv("1,2,4,6,6", "3,2,2,3,3", false, {1, 1, 1},
                           {0, 1, 1}, {1, 1, 1}, false, {0, 0, 0}, 1));
  ASSERT_TRUE(d3.errors.empty()) << d3.errors[0];
  EXPECT_EQ(d3.output_shapes[0], "[1, 3, 3, 6, 6]");
  EXPECT_EQ(d3.macs, sym::Expr(1 * 3 * (3 * 6 * 6) * 2 * (2 * 3 * 3)));
}

TEST(ConvRuleTest, Transposed) {
  OpRunner r;
  // ConvTranspose2d(4 -> 6, k=3, stride=2, padding=1, output_padding=1): OH =
  // (5-1)*2 - 2 + 2 + 1 + 1 = 10.
  OpResult res =
      r.Run("aten::_convolution", Conv("2,4,5,5", "4,3,3,3", true, {2, 2},
                                       {1, 1}, {1, 1}, true, {1, 1}, 2, "6"));
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[2, 6, 10, 10]");
  const int64_t macs =
      2 /*N*/ * 4 /*C*/ * 5 * 5 /*input SP*/ * 3 /*Kg*/ * 3 * 3 /*KS*/;
  EXPECT_EQ(res.macs, sym::Expr(macs));
  EXPECT_EQ(res.flops, sym::Expr(2 * macs + 2 * 6 * 10 * 10 /*bias*/));
}

TEST(ConvRuleTest, SymbolicBatchAndSpatial) {
  OpRunner r;
  OpResult res =
      r.Run("aten::_convolution", Conv("N,3,H,W", "64,3,7,7", false, {2, 2},
                                       {3, 3}, {1, 1}, false, {0, 0}, 1));
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  sym::Expr N = r.S("N"), H = r.S("H"), W = r.S("W");
  // (H + 6 - 6 - 1) / 2 + 1
  sym::Expr OH = sym::FloorDiv(H - 1, 2) + 1, OW = sym::FloorDiv(W - 1, 2) + 1;
  EXPECT_EQ(res.output_shapes[0],
            "[N, 64, " + OH.ToString() + ", " + OW.ToString() + "]");
  EXPECT_EQ(res.output_shapes[0],
            "[N, 64, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]");
  EXPECT_EQ(res.macs, N * 64 * OH * OW * 3 * 7 * 7);
  EXPECT_EQ(res.flops, 2 * res.macs);
}

TEST(ConvRuleTest, SymbolicKernelCoverageIsAnAssumption) {
  OpRunner r;
  // Without padding, a 3x3 kernel needs H >= 3: unknown for H in [1, inf), so
  // recorded.
  OpResult res =
      r.Run("aten::_convolution", Conv("1,3,H,8", "4,3,3,3", false, {1, 1},
                                       {0, 0}, {1, 1}, false, {0, 0}, 1));
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[1, 4, H - 2, 6]");
  EXPECT_FALSE(res.assumptions.empty());
}

TEST(ConvRuleTest, Conv2dDirectBatchedAndUnbatched) {
  OpRunner r;
  OpResult b = r.Run("aten::conv2d", {{"input", OpArg::Tensor("2,3,8,8")},
                                      {"weight", OpArg::Tensor("8,3,3,3")},
                                      {"bias", OpArg::Tensor("8")},
                                      {"stride", OpArg::Ints({1})},
                                      {"padding", OpArg::Ints({1})},
                                      {"dilation", OpArg::Ints({1})},
                                      {"groups", OpArg::Int(1)}});
  ASSERT_TRUE(b.errors.empty()) << b.errors[0];
  EXPECT_EQ(b.output_shapes[0], "[2, 8, 8, 8]");
  EXPECT_EQ(b.macs, sym::Expr(2 * 8 * 8 * 8 * 3 * 3 * 3));
  // Unbatched [C, H, W], defaults for stride/padding/dilation/groups.
  OpResult u = r.Run("aten::conv2d", {{"input", OpArg::Tensor("3,8,8")},
                                      {"weight", OpArg::Tensor("8,3,3,3")}});
  ASSERT_TRUE(u.errors.empty()) << u.errors[0];
  EXPECT_EQ(u.output_shapes[0], "[8, 6, 6]");
  EXPECT_EQ(u.macs, sym::Expr(1 * 8 * 6 * 6 * 3 * 3 * 3));
}

TEST(ConvRuleTest, Conv1dAnd3dAndPaddingSame) {
  OpRunner r;
  OpResult c1 = r.Run("aten::conv1d", {{"input", OpArg::Tensor("2,4,16")},
                                       {"weight", OpArg::Tensor("8,4,5")}});
  ASSERT_TRUE(c1.errors.empty()) << c1.errors[0];
  EXPECT_EQ(c1.output_shapes[0], "[2, 8, 12]");
  OpResult c3 = r.Run("aten::conv3d", {{"input", OpArg::Tensor("1,2,5,5,5")},
                                       {"weight", OpArg::Tensor("4,2,3,3,3")}});
  ASSERT_TRUE(c3.errors.empty()) << c3.errors[0];
  EXPECT_EQ(c3.output_shapes[0], "[1, 4, 3, 3, 3]");
  OpResult same =
      r.Run("aten::conv2d.padding", {{"input", OpArg::Tensor("N,4,H,W")},
                                     {"weight", OpArg::Tensor("8,4,4,3")},
                                     {"padding", OpArg::Str("same")},
                                     {"dilation", OpArg::Ints({2, 1})}});
  ASSERT_TRUE(same.errors.empty()) << same.errors[0];
  EXPECT_EQ(same.output_shapes[0], "[N, 8, H, W]");
  OpResult valid =
      r.Run("aten::conv2d.padding", {{"input", OpArg::Tensor("1,4,9,9")},
                                     {"weight", OpArg::Tensor("8,4,3,3")},
                                     {"padding", OpArg::Str("valid")}});
  ASSERT_TRUE(valid.errors.empty()) << valid.errors[0];
  EXPECT_EQ(valid.output_shapes[0], "[1, 8, 7, 7]");
}

TEST(ConvRuleTest, ConvTranspose2dDirect) {
  OpRunner r;
  OpResult res =
      r.Run("aten::conv_transpose2d", {{"input", OpArg::Tensor("1,8,7,7")},
                                       {"weight", OpArg::Tensor("8,4,2,2")},
                                       {"stride", OpArg::Ints({2, 2})}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[1, 4, 14, 14]");  // (7-1)*2 + (2-1) + 1
  EXPECT_EQ(res.macs, sym::Expr(1 * 8 * 7 * 7 * 4 * 2 * 2));
}

TEST(ConvRuleTest, BadInputs) {
  OpRunner r;
  // Channel mismatch: C = 4 but Cg * groups = 3.
  OpResult ch =
      r.Run("aten::_convolution", Conv("1,4,8,8", "8,3,3,3", false, {1, 1},
                                       {0, 0}, {1, 1}, false, {0, 0}, 1));
  ASSERT_FALSE(ch.errors.empty());
  EXPECT_THAT(ch.errors[0], HasSubstr("C == Cg*groups"));
  // Rank mismatch: 4-d input, 3-d weight.
  OpResult rank =
      r.Run("aten::_convolution",
            Conv("1,3,8,8", "8,3,3", false, {1}, {0}, {1}, false, {0}, 1));
  ASSERT_FALSE(rank.errors.empty());
  EXPECT_THAT(rank.errors[0], HasSubstr("len(SP) == len(KS)"));
  // Kernel larger than the input.
  OpResult big =
      r.Run("aten::_convolution", Conv("1,3,2,2", "8,3,3,3", false, {1, 1},
                                       {0, 0}, {1, 1}, false, {0, 0}, 1));
  ASSERT_FALSE(big.errors.empty());
  EXPECT_THAT(big.errors[0], HasSubstr("does not hold"));
  // Bias of the wrong size.
  OpResult bias =
      r.Run("aten::_convolution", Conv("1,3,8,8", "8,3,3,3", true, {1, 1},
                                       {0, 0}, {1, 1}, false, {0, 0}, 1, "7"));
  ASSERT_FALSE(bias.errors.empty());
  EXPECT_THAT(bias.errors[0], HasSubstr("argument 'bias' dim 0 must equal K"));
  // Output channels not divisible by groups.
  OpResult g =
      r.Run("aten::_convolution", Conv("1,4,8,8", "6,1,3,3", false, {1, 1},
                                       {0, 0}, {1, 1}, false, {0, 0}, 4));
  ASSERT_FALSE(g.errors.empty());
  EXPECT_THAT(g.errors[0], HasSubstr("mod(K, groups) == 0"));
}

}  // namespace
}  // namespace torchcost
