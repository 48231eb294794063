// Tests of rules/activation.yaml, norm.yaml, pooling.yaml, reduction.yaml,
// dropout.yaml and embedding.yaml.
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

// ---- activations
// ------------------------------------------------------------------

// {op, flops per element, transcendentals per element}.
struct ActCase {
  const char* op;
  int64_t flops;
  int64_t trans;
};
constexpr ActCase kActs[] = {
    {"aten::relu", 1, 0},         {"aten::relu_", 1, 0},
    {"aten::hardtanh_", 2, 0},    {"aten::hardtanh", 2, 0},
    {"aten::relu6", 2, 0},        {"aten::hardsigmoid", 4, 0},
    {"aten::hardswish_", 5, 0},   {"aten::hardswish", 5, 0},
    {"aten::sigmoid", 2, 1},      {"aten::sigmoid_", 2, 1},
    {"aten::tanh", 0, 1},         {"aten::silu_", 3, 1},
    {"aten::silu", 3, 1},         {"aten::gelu", 4, 1},
    {"aten::leaky_relu", 2, 0},   {"aten::elu", 4, 1},
    {"aten::hardsigmoid_", 4, 0}, {"aten::tanh_", 0, 1},
};

TEST(ActivationRuleTest, ConcretePerElement) {
  OpRunner r;
  for (const ActCase& a : kActs) {
    OpResult res = r.Run(a.op, {{"self", OpArg::Tensor("2,3,4")}});
    ASSERT_TRUE(res.errors.empty()) << a.op << ": " << res.errors[0];
    EXPECT_EQ(res.output_shapes[0], "[2, 3, 4]") << a.op;
    EXPECT_EQ(res.flops, sym::Expr(a.flops * 2 * 3 * 4)) << a.op;
    EXPECT_EQ(res.transcendentals, sym::Expr(a.trans * 2 * 3 * 4)) << a.op;
  }
}

TEST(ActivationRuleTest, SymbolicAndGeluTanh) {
  OpRunner r;
  sym::Expr E = r.S("B") * r.S("T") * 768;
  OpResult g = r.Run("aten::gelu", {{"self", OpArg::Tensor("B,T,768")},
                                    {"approximate", OpArg::Str("tanh")}});
  ASSERT_TRUE(g.errors.empty()) << g.errors[0];
  EXPECT_EQ(g.output_shapes[0], "[B, T, 768]");
  EXPECT_EQ(g.flops, 8 * E);  // x^3 2, *c 1, +x 1, *k 1, 1+t 1, *x 1, *0.5 1
  EXPECT_EQ(g.transcendentals, E);
  OpResult n = r.Run("aten::gelu", {{"self", OpArg::Tensor("B,T,768")},
                                    {"approximate", OpArg::Str("none")}});
  EXPECT_EQ(n.flops, 4 * E);
}

TEST(ActivationRuleTest, Softmax) {
  OpRunner r;
  OpResult s = r.Run("aten::softmax.int", {{"self", OpArg::Tensor("B,12,T,T")},
                                           {"dim", OpArg::Int(-1)},
                                           {"dtype", OpArg::None()}});
  ASSERT_TRUE(s.errors.empty()) << s.errors[0];
  sym::Expr E = r.S("B") * 12 * r.S("T") * r.S("T");
  EXPECT_EQ(s.output_shapes[0], "[B, 12, T, T]");
  EXPECT_EQ(s.flops, 4 * E);  // max, sub, sum, div
  EXPECT_EQ(s.transcendentals, E);
  OpResult half = r.Run("aten::softmax.int",
                        {{"self", OpArg::Tensor("2,5", DType::kFloat16)},
                         {"dim", OpArg::Int(1)},
                         {"dtype", OpArg::Int(6) /*float32*/}});
  ASSERT_TRUE(half.errors.empty()) << half.errors[0];
  EXPECT_EQ(half.output_dtypes[0], DType::kFloat32);
  OpResult ls = r.Run("aten::log_softmax.int", {{"self", OpArg::Tensor("4,10")},
                                                {"dim", OpArg::Int(1)}});
  ASSERT_TRUE(ls.errors.empty()) << ls.errors[0];
  EXPECT_EQ(ls.flops, sym::Expr(4 * 40));
  EXPECT_EQ(ls.transcendentals, sym::Expr(40 /*exp*/ + 4 /*log per row*/));
  OpResult bad =
      r.Run("aten::log_softmax.int",
            {{"self", OpArg::Tensor("4,10")}, {"dim", OpArg::Int(2)}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("out of range"));
}

// ---- norms
// -------------------------------------------------------------------------

std::vector<std::pair<std::string, OpArg>> BatchNorm(const std::string& in,
                                                     const std::string& c,
                                                     bool affine,
                                                     bool training) {
  return {{"input", OpArg::Tensor(in)},
          {"weight", affine ? OpArg::Tensor(c) : OpArg::None()},
          {"bias", affine ? OpArg::Tensor(c) : OpArg::None()},
          {"running_mean", OpArg::Tensor(c)},
          {"running_var", OpArg::Tensor(c)},
          {"training", OpArg::Bool(training)},
          {"momentum", OpArg::Float(0.1)},
          {"eps", OpArg::Float(1e-5)},
          {"cudnn_enabled", OpArg::Bool(true)}};
}

TEST(NormRuleTest, BatchNormEvalAndTraining) {
  OpRunner r;
  // NB: `training` follows the step's mode (AnalysisOptions::training): eval
  // needs an inference runner.
  OpRunner infer;
  infer.set_mode(StepMode::kInfer);
  const int64_t E = 2 * 8 * 5 * 5;
  OpResult eval =
      infer.Run("aten::batch_norm", BatchNorm("2,8,5,5", "8", true, false));
  ASSERT_TRUE(eval.errors.empty()) << eval.errors[0];
  EXPECT_EQ(eval.output_shapes[0], "[2, 8, 5, 5]");
  EXPECT_EQ(eval.flops, sym::Expr(2 * E));        // y = x*a + b
  EXPECT_EQ(eval.transcendentals, sym::Expr(8));  // rsqrt per channel
  OpResult eval_plain =
      infer.Run("aten::batch_norm", BatchNorm("2,8,5,5", "8", false, false));
  EXPECT_EQ(eval_plain.flops, sym::Expr(2 * E));
  OpResult train =
      r.Run("aten::batch_norm", BatchNorm("2,8,5,5", "8", true, true));
  ASSERT_TRUE(train.errors.empty()) << train.errors[0];
  // mean 1, var 3, normalize 2, affine 1+1
  EXPECT_EQ(train.flops, sym::Expr(6 * E + E + E));
  OpResult bn1d =
      infer.Run("aten::batch_norm", BatchNorm("N,16", "16", true, false));
  ASSERT_TRUE(bn1d.errors.empty()) << bn1d.errors[0];
  EXPECT_EQ(bn1d.flops, 2 * 16 * infer.S("N"));
  OpResult bad =
      r.Run("aten::batch_norm", BatchNorm("2,8,5,5", "7", true, false));
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("argument 'weight' dim 0 must equal C"));
}

TEST(NormRuleTest, LayerGroupInstanceNorm) {
  OpRunner r;
  OpResult ln =
      r.Run("aten::layer_norm", {{"input", OpArg::Tensor("B,T,768")},
                                 {"normalized_shape", OpArg::Ints({768})},
                                 {"weight", OpArg::Tensor("768")},
                                 {"bias", OpArg::Tensor("768")},
                                 {"eps", OpArg::Float(1e-6)},
                                 {"cudnn_enable", OpArg::Bool(true)}});
  ASSERT_TRUE(ln.errors.empty()) << ln.errors[0];
  sym::Expr M = r.S("B") * r.S("T");
  EXPECT_EQ(ln.output_shapes[0], "[B, T, 768]");
  EXPECT_EQ(ln.flops, 8 * M * 768);  // 6 + affine 2 per element
  EXPECT_EQ(ln.transcendentals, M);  // rsqrt per row
  OpResult lnbad =
      r.Run("aten::layer_norm", {{"input", OpArg::Tensor("B,T,768")},
                                 {"normalized_shape", OpArg::Ints({512})}});
  ASSERT_FALSE(lnbad.errors.empty());
  EXPECT_THAT(lnbad.errors[0], HasSubstr("argument 'input'"));
  OpResult gn = r.Run("aten::group_norm", {{"input", OpArg::Tensor("2,32,4,4")},
                                           {"num_groups", OpArg::Int(8)}});
  ASSERT_TRUE(gn.errors.empty()) << gn.errors[0];
  EXPECT_EQ(gn.flops, sym::Expr(6 * 2 * 32 * 4 * 4));  // no affine
  // rsqrt per (sample, group)
  EXPECT_EQ(gn.transcendentals, sym::Expr(2 * 8));
  OpResult gnbad = r.Run(
      "aten::group_norm",
      {{"input", OpArg::Tensor("2,30,4,4")}, {"num_groups", OpArg::Int(8)}});
  ASSERT_FALSE(gnbad.errors.empty());
  EXPECT_THAT(gnbad.errors[0], HasSubstr("mod(C, num_groups) == 0"));
  OpResult in =
      r.Run("aten::instance_norm", {{"input", OpArg::Tensor("2,3,4,4")},
                                    {"weight", OpArg::None()},
                                    {"bias", OpArg::None()},
                                    {"running_mean", OpArg::None()},
                                    {"running_var", OpArg::None()},
                                    {"use_input_stats", OpArg::Bool(true)},
                                    {"momentum", OpArg::Float(0.1)},
                                    {"eps", OpArg::Float(1e-5)},
                                    {"cudnn_enabled", OpArg::Bool(false)}});
  ASSERT_TRUE(in.errors.empty()) << in.errors[0];
  EXPECT_EQ(in.flops, sym::Expr(6 * 2 * 3 * 4 * 4));
  EXPECT_EQ(in.transcendentals, sym::Expr(2 * 3));
}

// ---- pooling
// -------------------------------------------------------------------------

TEST(PoolingRuleTest, MaxPool2d) {
  OpRunner r;
  // ResNet stem: k3 s2 p1 on 112 -> 56.
  OpResult res =
      r.Run("aten::max_pool2d", {{"self", OpArg::Tensor("2,64,112,112")},
                                 {"kernel_size", OpArg::Ints({3, 3})},
                                 {"stride", OpArg::Ints({2, 2})},
                                 {"padding", OpArg::Ints({1, 1})},
                                 {"dilation", OpArg::Ints({1, 1})},
                                 {"ceil_mode", OpArg::Bool(false)}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[2, 64, 56, 56]");
  // k-1 comparisons per output
  EXPECT_EQ(res.flops, sym::Expr(2 * 64 * 56 * 56 * (3 * 3 - 1)));
  // Default stride = kernel; unbatched; ceil_mode (GoogLeNet: 112, k3 s2 ceil
  // -> 56; 7, k2 s2 ceil -> 4).
  OpResult c = r.Run("aten::max_pool2d", {{"self", OpArg::Tensor("64,7,112")},
                                          {"kernel_size", OpArg::Ints({2, 3})},
                                          {"stride", OpArg::Ints({2, 2})},
                                          {"ceil_mode", OpArg::Bool(true)}});
  ASSERT_TRUE(c.errors.empty()) << c.errors[0];
  EXPECT_EQ(c.output_shapes[0], "[64, 4, 56]");
  OpResult d =
      r.Run("aten::max_pool2d", {{"self", OpArg::Tensor("1,1,8,8")},
                                 {"kernel_size", OpArg::Ints({2, 2})}});
  ASSERT_TRUE(d.errors.empty()) << d.errors[0];
  EXPECT_EQ(d.output_shapes[0], "[1, 1, 4, 4]");
  // Symbolic.
  OpResult s = r.Run("aten::max_pool2d", {{"self", OpArg::Tensor("N,C,H,W")},
                                          {"kernel_size", OpArg::Ints({3, 3})},
                                          {"stride", OpArg::Ints({2, 2})},
                                          {"padding", OpArg::Ints({1, 1})}});
  ASSERT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_EQ(s.output_shapes[0],
            "[N, C, floordiv(H - 1, 2) + 1, floordiv(W - 1, 2) + 1]");
  // Bad: padding over half the kernel; kernel larger than input.
  OpResult p = r.Run("aten::max_pool2d", {{"self", OpArg::Tensor("1,1,8,8")},
                                          {"kernel_size", OpArg::Ints({2, 2})},
                                          {"padding", OpArg::Ints({2, 2})}});
  ASSERT_FALSE(p.errors.empty());
  EXPECT_THAT(p.errors[0], HasSubstr("does not hold"));
  OpResult k =
      r.Run("aten::max_pool2d", {{"self", OpArg::Tensor("1,1,2,2")},
                                 {"kernel_size", OpArg::Ints({3, 3})}});
  ASSERT_FALSE(k.errors.empty());
  OpResult rank = r.Run(
      "aten::max_pool2d",
      {{"self", OpArg::Tensor("8,8")}, {"kernel_size", OpArg::Ints({2, 2})}});
  ASSERT_FALSE(rank.errors.empty());
}

TEST(PoolingRuleTest, AvgAndAdaptiveAnd1d3d) {
  OpRunner r;
  OpResult a =
      r.Run("aten::avg_pool2d", {{"self", OpArg::Tensor("1,8,7,7")},
                                 {"kernel_size", OpArg::Ints({3, 3})},
                                 {"stride", OpArg::Ints({2, 2})},
                                 {"padding", OpArg::Ints({1, 1})},
                                 {"ceil_mode", OpArg::Bool(true)},
                                 {"count_include_pad", OpArg::Bool(false)},
                                 {"divisor_override", OpArg::None()}});
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  // ceil((7 + 2 - 3)/2) + 1 = 4; last start 6 < 7 + 1
  EXPECT_EQ(a.output_shapes[0], "[1, 8, 4, 4]");
  // 8 adds + 1 divide per output
  EXPECT_EQ(a.flops, sym::Expr(1 * 8 * 4 * 4 * 9));
  OpResult ad = r.Run("aten::adaptive_avg_pool2d",
                      {{"self", OpArg::Tensor("N,512,7,7")},
                       {"output_size", OpArg::Ints({1, 1})}});
  ASSERT_TRUE(ad.errors.empty()) << ad.errors[0];
  EXPECT_EQ(ad.output_shapes[0], "[N, 512, 1, 1]");
  EXPECT_EQ(ad.flops, 512 * 49 * r.S("N"));  // 48 adds + 1 divide per output
  OpResult am = r.Run("aten::adaptive_max_pool2d",
                      {{"self", OpArg::Tensor("2,4,8,8")},
                       {"output_size", OpArg::Ints({2, 2})}});
  ASSERT_TRUE(am.errors.empty()) << am.errors[0];
  ASSERT_EQ(am.output_shapes.size(), 2u);
  EXPECT_EQ(am.output_shapes[1], "[2, 4, 2, 2]");
  EXPECT_EQ(am.output_dtypes[1], DType::kInt64);
  EXPECT_EQ(am.flops, sym::Expr(2 * 4 * 8 * 8 - 2 * 4 * 2 * 2));
  OpResult m1 = r.Run("aten::max_pool1d", {{"self", OpArg::Tensor("2,4,10")},
                                           {"kernel_size", OpArg::Ints({3})}});
  ASSERT_TRUE(m1.errors.empty()) << m1.errors[0];
  EXPECT_EQ(m1.output_shapes[0], "[2, 4, 3]");
  OpResult a3 =
      r.Run("aten::avg_pool3d", {{"self", OpArg::Tensor("1,2,4,4,4")},
                                 {"kernel_size", OpArg::Ints({2, 2, 2})}});
  ASSERT_TRUE(a3.errors.empty()) << a3.errors[0];
  EXPECT_EQ(a3.output_shapes[0], "[1, 2, 2, 2, 2]");
  OpResult aa1 = r.Run(
      "aten::adaptive_avg_pool1d",
      {{"self", OpArg::Tensor("2,3,12")}, {"output_size", OpArg::Ints({4})}});
  ASSERT_TRUE(aa1.errors.empty()) << aa1.errors[0];
  EXPECT_EQ(aa1.output_shapes[0], "[2, 3, 4]");
}

// ---- reductions
// ------------------------------------------------------------------------

TEST(ReductionRuleTest, SumMeanAmaxMax) {
  OpRunner r;
  OpResult s = r.Run("aten::sum.dim_IntList", {{"self", OpArg::Tensor("2,3,4")},
                                               {"dim", OpArg::Ints({0, -1})},
                                               {"keepdim", OpArg::Bool(true)},
                                               {"dtype", OpArg::None()}});
  ASSERT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_EQ(s.output_shapes[0], "[1, 3, 1]");
  EXPECT_EQ(s.flops, sym::Expr(24 - 3));  // k - 1 adds per output
  OpResult all =
      r.Run("aten::sum", {{"self", OpArg::Tensor("2,3", DType::kInt32)},
                          {"dtype", OpArg::None()}});
  ASSERT_TRUE(all.errors.empty()) << all.errors[0];
  EXPECT_EQ(all.output_shapes[0], "[]");
  EXPECT_EQ(all.output_dtypes[0], DType::kInt64);
  OpResult m = r.Run("aten::mean.dim", {{"self", OpArg::Tensor("N,C,H,W")},
                                        {"dim", OpArg::Ints({2, 3})},
                                        {"keepdim", OpArg::Bool(false)}});
  ASSERT_TRUE(m.errors.empty()) << m.errors[0];
  EXPECT_EQ(m.output_shapes[0], "[N, C]");
  EXPECT_EQ(m.flops, r.S("N") * r.S("C") * r.S("H") * r.S("W"));
  OpResult a = r.Run("aten::amax", {{"self", OpArg::Tensor("4,5")},
                                    {"dim", OpArg::Ints({1})}});
  ASSERT_TRUE(a.errors.empty()) << a.errors[0];
  EXPECT_EQ(a.output_shapes[0], "[4]");
  OpResult md = r.Run("aten::max.dim", {{"self", OpArg::Tensor("4,5")},
                                        {"dim", OpArg::Int(-1)},
                                        {"keepdim", OpArg::Bool(true)}});
  ASSERT_TRUE(md.errors.empty()) << md.errors[0];
  ASSERT_EQ(md.output_shapes.size(), 2u);
  EXPECT_EQ(md.output_shapes[0], "[4, 1]");
  EXPECT_EQ(md.output_dtypes[1], DType::kInt64);
  EXPECT_EQ(md.flops, sym::Expr(20 - 4));
  OpResult dup =
      r.Run("aten::sum.dim_IntList",
            {{"self", OpArg::Tensor("2,3")}, {"dim", OpArg::Ints({1, -1})}});
  ASSERT_FALSE(dup.errors.empty());
  EXPECT_THAT(dup.errors[0], HasSubstr("appears multiple times"));
  OpResult oob = r.Run("aten::mean.dim", {{"self", OpArg::Tensor("2,3")},
                                          {"dim", OpArg::Ints({2})}});
  ASSERT_FALSE(oob.errors.empty());
  EXPECT_THAT(oob.errors[0],
              HasSubstr("dim 2 out of range for a tensor of rank 2"));
}

// ---- dropout and embedding
// ----------------------------------------------------------------

TEST(DropoutRuleTest, EvalTrainAndFeature) {
  // NB: device cuda (the default): the fused kernel's FLOPs; saved_test.cc has
  // cpu's.
  OpRunner r;
  // NB: `train` follows the step's mode (AnalysisOptions::training): eval needs
  // an inference runner.
  OpRunner infer;
  infer.set_mode(StepMode::kInfer);
  OpResult eval =
      infer.Run("aten::dropout", {{"input", OpArg::Tensor("B,4096")},
                                  {"p", OpArg::Float(0.5)},
                                  {"train", OpArg::Bool(false)}});
  ASSERT_TRUE(eval.errors.empty()) << eval.errors[0];
  EXPECT_EQ(eval.output_shapes[0], "[B, 4096]");
  EXPECT_EQ(eval.flops, sym::Expr(0));
  OpResult train = r.Run("aten::dropout", {{"input", OpArg::Tensor("B,4096")},
                                           {"p", OpArg::Float(0.5)},
                                           {"train", OpArg::Bool(true)}});
  ASSERT_TRUE(train.errors.empty()) << train.errors[0];
  EXPECT_EQ(train.flops, 2 * 4096 * r.S("B"));  // mask compare, multiply
  OpResult inpl = r.Run("aten::dropout_", {{"self", OpArg::Tensor("8")},
                                           {"p", OpArg::Float(0.2)},
                                           {"train", OpArg::Bool(true)}});
  ASSERT_TRUE(inpl.errors.empty()) << inpl.errors[0];
  EXPECT_EQ(inpl.flops, sym::Expr(16));
  OpResult feat =
      r.Run("aten::feature_dropout", {{"input", OpArg::Tensor("2,3,4,4")},
                                      {"p", OpArg::Float(0.5)},
                                      {"train", OpArg::Bool(true)}});
  ASSERT_TRUE(feat.errors.empty()) << feat.errors[0];
  EXPECT_EQ(feat.flops, sym::Expr(2 * 2 * 3 /*mask compare, div_ by 1-p*/ +
                                  2 * 3 * 4 * 4 /*multiply*/));
  OpResult bad = r.Run("aten::feature_dropout", {{"input", OpArg::Tensor("3")},
                                                 {"p", OpArg::Float(0.5)},
                                                 {"train", OpArg::Bool(true)}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("argument 'input'"));
}

TEST(EmbeddingRuleTest, Lookup) {
  OpRunner r;
  OpResult e = r.Run("aten::embedding",
                     {{"weight", OpArg::Tensor("30522,768")},
                      {"indices", OpArg::Tensor("B,T", DType::kInt64)}});
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  EXPECT_EQ(e.output_shapes[0], "[B, T, 768]");
  EXPECT_EQ(e.output_dtypes[0], DType::kFloat32);
  EXPECT_EQ(e.flops, sym::Expr(0));
  OpResult bad = r.Run("aten::embedding",
                       {{"weight", OpArg::Tensor("30522")},
                        {"indices", OpArg::Tensor("B,T", DType::kInt64)}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("argument 'weight'"));
}

}  // namespace
}  // namespace torchcost
