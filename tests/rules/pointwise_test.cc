// Tests of rules/pointwise.yaml and the broadcast impls of
// src/rules/builtin.cc.
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

TEST(PointwiseRuleTest, AddBroadcastConcrete) {
  OpRunner r;
  OpResult res = r.Run("aten::add.Tensor", {{"self", OpArg::Tensor("2,1,4")},
                                            {"other", OpArg::Tensor("3,1")},
                                            {"alpha", OpArg::Int(1)}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[2, 3, 4]");
  EXPECT_EQ(res.flops, sym::Expr(2 * 3 * 4));  // 1 add per output element
  OpResult alpha = r.Run("aten::sub.Tensor", {{"self", OpArg::Tensor("5")},
                                              {"other", OpArg::Tensor("5")},
                                              {"alpha", OpArg::Float(2.0)}});
  ASSERT_TRUE(alpha.errors.empty()) << alpha.errors[0];
  EXPECT_EQ(alpha.flops, sym::Expr(2 * 5));  // scale + sub
  OpResult scalar =
      r.Run("aten::add.Scalar", {{"self", OpArg::Tensor("5", DType::kInt64)},
                                 {"other", OpArg::Float(1.5)},
                                 {"alpha", OpArg::Int(1)}});
  ASSERT_TRUE(scalar.errors.empty()) << scalar.errors[0];
  // int tensor + Python float -> default float
  EXPECT_EQ(scalar.output_dtypes[0], DType::kFloat32);
  EXPECT_EQ(scalar.flops, sym::Expr(5));
}

TEST(PointwiseRuleTest, BroadcastSymbolicAndPromotion) {
  OpRunner r;
  OpResult res = r.Run("aten::mul.Tensor",
                       {{"self", OpArg::Tensor("N,C,H,W", DType::kFloat16)},
                        {"other", OpArg::Tensor("N,C,1,1", DType::kFloat32)}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[N, C, H, W]");
  EXPECT_EQ(res.output_dtypes[0], DType::kFloat32);
  EXPECT_EQ(res.flops, r.S("N") * r.S("C") * r.S("H") * r.S("W"));
  // A 0-dim float32 tensor does not raise a float16 tensor.
  OpResult zero = r.Run("aten::mul.Tensor",
                        {{"self", OpArg::Tensor("4", DType::kFloat16)},
                         {"other", OpArg::Tensor("", DType::kFloat32)}});
  ASSERT_TRUE(zero.errors.empty()) << zero.errors[0];
  EXPECT_EQ(zero.output_dtypes[0], DType::kFloat16);
  // Two different symbols: assumed equal, recorded.
  OpResult assume =
      r.Run("aten::add.Tensor",
            {{"self", OpArg::Tensor("B,T")}, {"other", OpArg::Tensor("B,S")}});
  ASSERT_TRUE(assume.errors.empty()) << assume.errors[0];
  EXPECT_FALSE(assume.assumptions.empty());
}

TEST(PointwiseRuleTest, BroadcastBad) {
  OpRunner r;
  OpResult res = r.Run("aten::add.Tensor", {{"self", OpArg::Tensor("2,3")},
                                            {"other", OpArg::Tensor("4")}});
  ASSERT_FALSE(res.errors.empty());
  EXPECT_THAT(res.errors[0], HasSubstr("not broadcastable"));
  OpResult inplace =
      r.Run("aten::add_.Tensor",
            {{"self", OpArg::Tensor("3")}, {"other", OpArg::Tensor("2,3")}});
  ASSERT_FALSE(inplace.errors.empty());
  EXPECT_THAT(inplace.errors[0],
              HasSubstr("does not broadcast to the in-place self"));
}

TEST(PointwiseRuleTest, InplaceAndDivision) {
  OpRunner r;
  OpResult add_ =
      r.Run("aten::add_.Tensor", {{"self", OpArg::Tensor("N,64,H,W")},
                                  {"other", OpArg::Tensor("N,64,H,W")},
                                  {"alpha", OpArg::Int(1)}});
  ASSERT_TRUE(add_.errors.empty()) << add_.errors[0];
  EXPECT_EQ(add_.output_shapes[0], "[N, 64, H, W]");
  EXPECT_EQ(add_.flops, 64 * r.S("N") * r.S("H") * r.S("W"));
  OpResult div =
      r.Run("aten::div.Tensor", {{"self", OpArg::Tensor("4", DType::kInt64)},
                                 {"other", OpArg::Tensor("4", DType::kInt64)}});
  ASSERT_TRUE(div.errors.empty()) << div.errors[0];
  EXPECT_EQ(div.output_dtypes[0], DType::kFloat32);  // true division
  OpResult floor = r.Run("aten::div.Tensor_mode",
                         {{"self", OpArg::Tensor("4", DType::kInt64)},
                          {"other", OpArg::Tensor("4", DType::kInt64)},
                          {"rounding_mode", OpArg::Str("floor")}});
  ASSERT_TRUE(floor.errors.empty()) << floor.errors[0];
  EXPECT_EQ(floor.output_dtypes[0], DType::kInt64);
  EXPECT_EQ(floor.flops, sym::Expr(2 * 4));  // div + round
  OpResult fd = r.Run("aten::floor_divide", {{"self", OpArg::Tensor("6")},
                                             {"other", OpArg::Tensor("")}});
  ASSERT_TRUE(fd.errors.empty()) << fd.errors[0];
  EXPECT_EQ(fd.flops, sym::Expr(2 * 6));
}

TEST(PointwiseRuleTest, UnaryTranscendentalsPowClampWhere) {
  OpRunner r;
  OpResult e = r.Run("aten::exp", {{"self", OpArg::Tensor("B,10")}});
  ASSERT_TRUE(e.errors.empty()) << e.errors[0];
  EXPECT_EQ(e.flops, sym::Expr(0));
  EXPECT_EQ(e.transcendentals, 10 * r.S("B"));
  OpResult sq = r.Run("aten::rsqrt", {{"self", OpArg::Tensor("3,4")}});
  EXPECT_EQ(sq.transcendentals, sym::Expr(12));
  OpResult p2 =
      r.Run("aten::pow.Tensor_Scalar",
            {{"self", OpArg::Tensor("3,4")}, {"exponent", OpArg::Int(2)}});
  ASSERT_TRUE(p2.errors.empty()) << p2.errors[0];
  EXPECT_EQ(p2.flops, sym::Expr(12));  // x*x
  EXPECT_EQ(p2.transcendentals, sym::Expr(0));
  OpResult ph =
      r.Run("aten::pow.Tensor_Scalar",
            {{"self", OpArg::Tensor("3,4")}, {"exponent", OpArg::Float(0.5)}});
  ASSERT_TRUE(ph.errors.empty()) << ph.errors[0];
  EXPECT_EQ(ph.transcendentals, sym::Expr(12));
  OpResult neg = r.Run("aten::neg", {{"self", OpArg::Tensor("3,4")}});
  EXPECT_EQ(neg.flops, sym::Expr(12));
  OpResult cl = r.Run("aten::clamp", {{"self", OpArg::Tensor("3,4")},
                                      {"min", OpArg::Float(0)},
                                      {"max", OpArg::None()}});
  ASSERT_TRUE(cl.errors.empty()) << cl.errors[0];
  EXPECT_EQ(cl.flops, sym::Expr(12));  // one bound: 1 max per element
  OpResult w = r.Run("aten::where.self",
                     {{"condition", OpArg::Tensor("T,1", DType::kBool)},
                      {"self", OpArg::Tensor("T,D")},
                      {"other", OpArg::Tensor("")}});
  ASSERT_TRUE(w.errors.empty()) << w.errors[0];
  EXPECT_EQ(w.output_shapes[0], "[T, D]");
  EXPECT_EQ(w.output_dtypes[0], DType::kFloat32);
  OpResult eq = r.Run("aten::eq.Tensor", {{"self", OpArg::Tensor("4")},
                                          {"other", OpArg::Tensor("4")}});
  ASSERT_TRUE(eq.errors.empty()) << eq.errors[0];
  EXPECT_EQ(eq.output_dtypes[0], DType::kBool);
}

}  // namespace
}  // namespace torchcost
