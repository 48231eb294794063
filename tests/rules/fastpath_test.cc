// Tests of rules/fastpath.yaml: the fused transformer fast paths that
// nn.MultiheadAttention and nn.TransformerEncoderLayer take under no_grad.
// Expected values are derived here from the math path's GEMMs and elementwise
// ops.
#include <gtest/gtest.h>

#include "testing/op_runner.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;

TEST(FastPathRuleTest, NativeMultiHeadAttention) {
  OpRunner r;
  // B = 1, L = 5, E = 16, 2 heads, weights averaged over heads.
  OpResult res = r.Run("aten::_native_multi_head_attention",
                       {{"query", OpArg::Tensor("1,5,16")},
                        {"key", OpArg::Tensor("1,5,16")},
                        {"value", OpArg::Tensor("1,5,16")},
                        {"embed_dim", OpArg::Int(16)},
                        {"num_head", OpArg::Int(2)},
                        {"qkv_weight", OpArg::Tensor("48,16")},
                        {"qkv_bias", OpArg::Tensor("48")},
                        {"proj_weight", OpArg::Tensor("16,16")},
                        {"proj_bias", OpArg::Tensor("16")},
                        {"mask", OpArg::None()},
                        {"need_weights", OpArg::Bool(true)},
                        {"average_attn_weights", OpArg::Bool(true)},
                        {"mask_type", OpArg::None()}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  ASSERT_EQ(res.output_shapes.size(), 2u);
  EXPECT_EQ(res.output_shapes[0], "[1, 5, 16]");
  EXPECT_EQ(res.output_shapes[1], "[1, 5, 5]");
  // q, k, v and out projections: 4 * 5 tokens * 16*16; Q K^T and A V: 2 *
  // 5*5*16.
  const int64_t macs = 4 * 5 * 16 * 16 + 2 * 5 * 5 * 16;
  EXPECT_EQ(res.macs, sym::Expr(macs));
  // 2 per MAC; biases 4E per token; q scale E per token; softmax 4 per [2, 5,
  // 5] element; averaging: 2 adds + 1 divide per [5, 5] element.
  EXPECT_EQ(res.flops,
            sym::Expr(2 * macs + 4 * 5 * 16 + 5 * 16 + 4 * 2 * 25 + 3 * 25));
  EXPECT_EQ(res.transcendentals, sym::Expr(2 * 25));
  // Its FLOPs are GEMMs': timed at the matmul peak, not the vector rate.
  EXPECT_EQ(res.op_class, OpClass::kMatmul);
}

TEST(FastPathRuleTest, TransformerEncoderLayerGelu) {
  OpRunner r;
  // B = 2, L = 3, E = 8, 2 heads, F = 32, gelu, norm_first.
  OpResult res = r.Run("aten::_transformer_encoder_layer_fwd",
                       {{"src", OpArg::Tensor("2,3,8")},
                        {"embed_dim", OpArg::Int(8)},
                        {"num_heads", OpArg::Int(2)},
                        {"qkv_weight", OpArg::Tensor("24,8")},
                        {"qkv_bias", OpArg::Tensor("24")},
                        {"proj_weight", OpArg::Tensor("8,8")},
                        {"proj_bias", OpArg::Tensor("8")},
                        {"use_gelu", OpArg::Bool(true)},
                        {"norm_first", OpArg::Bool(true)},
                        {"eps", OpArg::Float(1e-5)},
                        {"norm_weight_1", OpArg::Tensor("8")},
                        {"norm_bias_1", OpArg::Tensor("8")},
                        {"norm_weight_2", OpArg::Tensor("8")},
                        {"norm_bias_2", OpArg::Tensor("8")},
                        {"ffn_weight_1", OpArg::Tensor("32,8")},
                        {"ffn_bias_1", OpArg::Tensor("32")},
                        {"ffn_weight_2", OpArg::Tensor("8,32")},
                        {"ffn_bias_2", OpArg::Tensor("8")},
                        {"mask", OpArg::None()},
                        {"mask_type", OpArg::None()}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[2, 3, 8]");
  const int64_t tokens = 6;
  // attention GEMMs + FFN
  const int64_t macs = 4 * tokens * 64 + 2 * 2 * 9 * 8 + 2 * tokens * 8 * 32;
  EXPECT_EQ(res.macs, sym::Expr(macs));
  // Transcendentals: softmax exp over [2, 2, 3, 3], 2 rsqrt per token, erf per
  // FFN element.
  EXPECT_EQ(res.transcendentals,
            sym::Expr(2 * 2 * 9 + 2 * tokens + tokens * 32));
  EXPECT_EQ(res.op_class, OpClass::kMatmul);
}

}  // namespace
}  // namespace torchcost
