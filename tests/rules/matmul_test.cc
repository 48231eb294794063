// Tests of rules/matmul.yaml.
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

TEST(MatmulRuleTest, LinearConcrete) {
  OpRunner r;
  OpResult res = r.Run("aten::linear", {{"input", OpArg::Tensor("4,10,16")},
                                        {"weight", OpArg::Tensor("32,16")},
                                        {"bias", OpArg::Tensor("32")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[4, 10, 32]");
  EXPECT_EQ(res.macs, sym::Expr(4 * 10 /*M*/ * 16 /*IN*/ * 32 /*OUT*/));
  EXPECT_EQ(res.flops, sym::Expr(2 * 4 * 10 * 16 * 32 + 4 * 10 * 32 /*bias*/));
  OpResult vec = r.Run("aten::linear", {{"input", OpArg::Tensor("16")},
                                        {"weight", OpArg::Tensor("8,16")}});
  ASSERT_TRUE(vec.errors.empty()) << vec.errors[0];
  EXPECT_EQ(vec.output_shapes[0], "[8]");
  EXPECT_EQ(vec.flops, sym::Expr(2 * 16 * 8));
}

TEST(MatmulRuleTest, LinearSymbolic) {
  OpRunner r;
  OpResult res = r.Run("aten::linear", {{"input", OpArg::Tensor("B,T,768")},
                                        {"weight", OpArg::Tensor("3072,768")},
                                        {"bias", OpArg::Tensor("3072")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  sym::Expr B = r.S("B"), T = r.S("T");
  EXPECT_EQ(res.output_shapes[0], "[B, T, 3072]");
  EXPECT_EQ(res.macs, B * T * 768 * 3072);
  EXPECT_EQ(res.flops, 2 * B * T * 768 * 3072 + B * T * 3072);
}

TEST(MatmulRuleTest, LinearBad) {
  OpRunner r;
  OpResult res = r.Run("aten::linear", {{"input", OpArg::Tensor("4,16")},
                                        {"weight", OpArg::Tensor("8,15")}});
  ASSERT_FALSE(res.errors.empty());
  EXPECT_THAT(res.errors[0],
              HasSubstr("argument 'weight' dim 1 must equal IN"));
}

TEST(MatmulRuleTest, MatmulAllRanks) {
  OpRunner r;
  OpResult dot = r.Run("aten::matmul", {{"self", OpArg::Tensor("5")},
                                        {"other", OpArg::Tensor("5")}});
  ASSERT_TRUE(dot.errors.empty()) << dot.errors[0];
  EXPECT_EQ(dot.output_shapes[0], "[]");
  EXPECT_EQ(dot.macs, sym::Expr(5));
  OpResult vm = r.Run("aten::matmul", {{"self", OpArg::Tensor("5")},
                                       {"other", OpArg::Tensor("3,5,7")}});
  ASSERT_TRUE(vm.errors.empty()) << vm.errors[0];
  EXPECT_EQ(vm.output_shapes[0], "[3, 7]");
  EXPECT_EQ(vm.macs, sym::Expr(3 * 7 * 5));
  OpResult mv = r.Run("aten::matmul", {{"self", OpArg::Tensor("3,4,5")},
                                       {"other", OpArg::Tensor("5")}});
  ASSERT_TRUE(mv.errors.empty()) << mv.errors[0];
  EXPECT_EQ(mv.output_shapes[0], "[3, 4]");
  // Batch broadcast: [2, 1, 4, 5] @ [3, 5, 6] -> [2, 3, 4, 6].
  OpResult bm = r.Run("aten::matmul", {{"self", OpArg::Tensor("2,1,4,5")},
                                       {"other", OpArg::Tensor("3,5,6")}});
  ASSERT_TRUE(bm.errors.empty()) << bm.errors[0];
  EXPECT_EQ(bm.output_shapes[0], "[2, 3, 4, 6]");
  EXPECT_EQ(bm.macs, sym::Expr(2 * 3 /*B*/ * 4 * 6 * 5));
  EXPECT_EQ(bm.flops, sym::Expr(2 * 2 * 3 * 4 * 6 * 5));
  // Symbolic attention scores: [B, H, T, 64] @ [B, H, 64, T].
  OpResult at = r.Run("aten::matmul", {{"self", OpArg::Tensor("B,12,T,64")},
                                       {"other", OpArg::Tensor("B,12,64,T")}});
  ASSERT_TRUE(at.errors.empty()) << at.errors[0];
  EXPECT_EQ(at.output_shapes[0], "[B, 12, T, T]");
  EXPECT_EQ(at.macs, r.S("B") * 12 * r.S("T") * r.S("T") * 64);
  OpResult bad = r.Run("aten::matmul", {{"self", OpArg::Tensor("4,5")},
                                        {"other", OpArg::Tensor("6,7")}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("must equal K"));
}

TEST(MatmulRuleTest, MmBmmAddmmBaddbmm) {
  OpRunner r;
  OpResult mm = r.Run("aten::mm", {{"self", OpArg::Tensor("M,K")},
                                   {"mat2", OpArg::Tensor("K,N")}});
  ASSERT_TRUE(mm.errors.empty()) << mm.errors[0];
  EXPECT_EQ(mm.output_shapes[0], "[M, N]");
  EXPECT_EQ(mm.flops, 2 * r.S("M") * r.S("N") * r.S("K"));
  OpResult bmm = r.Run("aten::bmm", {{"self", OpArg::Tensor("12,197,64")},
                                     {"mat2", OpArg::Tensor("12,64,197")}});
  ASSERT_TRUE(bmm.errors.empty()) << bmm.errors[0];
  EXPECT_EQ(bmm.output_shapes[0], "[12, 197, 197]");
  EXPECT_EQ(bmm.macs, sym::Expr(12 /*B*/ * 197 /*M*/ * 197 /*N*/ * 64 /*K*/));
  OpResult bad = r.Run("aten::bmm", {{"self", OpArg::Tensor("12,197,64")},
                                     {"mat2", OpArg::Tensor("6,64,197")}});
  ASSERT_FALSE(bad.errors.empty());
  EXPECT_THAT(bad.errors[0], HasSubstr("argument 'mat2' dim 0 must equal B"));
  OpResult addmm = r.Run("aten::addmm", {{"self", OpArg::Tensor("8")},
                                         {"mat1", OpArg::Tensor("4,16")},
                                         {"mat2", OpArg::Tensor("16,8")}});
  ASSERT_TRUE(addmm.errors.empty()) << addmm.errors[0];
  EXPECT_EQ(addmm.output_shapes[0], "[4, 8]");
  EXPECT_EQ(addmm.flops, sym::Expr(2 * 4 * 8 * 16 + 4 * 8 /*add self*/));
  OpResult scaled = r.Run("aten::addmm", {{"self", OpArg::Tensor("8")},
                                          {"mat1", OpArg::Tensor("4,16")},
                                          {"mat2", OpArg::Tensor("16,8")},
                                          {"beta", OpArg::Float(0.5)},
                                          {"alpha", OpArg::Int(1)}});
  ASSERT_TRUE(scaled.errors.empty()) << scaled.errors[0];
  EXPECT_EQ(scaled.flops, sym::Expr(2 * 4 * 8 * 16 + 4 * 8 + 4 * 8 /*beta*/));
  OpResult baddbmm =
      r.Run("aten::baddbmm", {{"self", OpArg::Tensor("B,4,8")},
                              {"batch1", OpArg::Tensor("B,4,16")},
                              {"batch2", OpArg::Tensor("B,16,8")}});
  ASSERT_TRUE(baddbmm.errors.empty()) << baddbmm.errors[0];
  EXPECT_EQ(baddbmm.output_shapes[0], "[B, 4, 8]");
  EXPECT_EQ(baddbmm.flops, r.S("B") * (2 * 4 * 8 * 16 + 4 * 8));
}

}  // namespace
}  // namespace torchcost
