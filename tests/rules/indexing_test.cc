// Tests of the impls of src/rules/impl_indexing.cc (index, tensor_split,
// upsample) and the rules of rules/indexing.yaml, rules/upsample.yaml,
// rules/creation.yaml and rules/pointwise.yaml that use or sit beside them.
// Expected shapes follow PyTorch's documented semantics; FLOPs follow the
// conventions written at the top of each rule file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/apply.h"
#include "rules/op_rule.h"
#include "testing/op_runner.h"
#include "torchcost/dtype.h"
#include "torchcost/rules.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;

OpResult Ok(OpRunner& r, const std::string& op,
            const std::vector<std::pair<std::string, OpArg>>& args) {
  OpResult res = r.Run(op, args);
  EXPECT_TRUE(res.has_rule) << op;
  EXPECT_TRUE(res.errors.empty())
      << op << ": " << (res.errors.empty() ? "" : res.errors[0]);
  return res;
}

TEST(AdvancedIndexRuleTest, IndexByAdjacentIndicesReplacesTheIndexedDims) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // Swin: table[169, 3][index[2401]] -> [2401, 3]; a gather: 0 FLOPs forward,
  // backward index_put_ with accumulate: 1 add per grad element (2401*3).
  OpResult res = Ok(r, "aten::index",
                    {{"self", OpArg::Tensor("169,3")},
                     {"indices", OpArg::TensorList({"2401"}, DType::kInt64)}});
  ASSERT_EQ(res.output_shapes.size(), 1u);
  EXPECT_EQ(res.output_shapes[0], "[2401, 3]");
  EXPECT_EQ(res.flops, sym::Expr(0));
  EXPECT_EQ(res.bwd_flops, sym::Expr(2401 * 3));
  // IndexBackward0 saves the int64 index
  EXPECT_EQ(res.saved_bytes, sym::Expr(2401 * 8));
  // Two indices broadcast ([4, 1] and [5]) over dims 0 and 1 of [6, 7, 8] ->
  // [4, 5, 8].
  OpResult two =
      Ok(r, "aten::index",
         {{"self", OpArg::Tensor("6,7,8")},
          {"indices", OpArg::TensorList({"4,1", "5"}, DType::kInt64)}});
  EXPECT_EQ(two.output_shapes[0], "[4, 5, 8]");
}

TEST(IndexAddRuleTest, AddsEachSourceRowOnceAndSavesTheIndex) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // final[64, 16].index_add_(0, top_x[24], current[24, 16]) (Mixtral's expert
  // combine): 24*16 adds; backward: grad passes to self, grad.index_select(0,
  // top_x) to source (gathers: 0 FLOPs); IndexAddBackward0 saves the int64
  // index.
  OpResult res = Ok(r, "aten::index_add_",
                    {{"self", OpArg::Tensor("64,16")},
                     {"dim", OpArg::Int(0)},
                     {"index", OpArg::Tensor("24", DType::kInt64)},
                     {"source", OpArg::Tensor("24,16")}});
  ASSERT_EQ(res.output_shapes.size(), 1u);
  EXPECT_EQ(res.output_shapes[0], "[64, 16]");
  EXPECT_EQ(res.flops, sym::Expr(24 * 16));
  EXPECT_EQ(res.bwd_flops, sym::Expr(0));
  EXPECT_EQ(res.saved_bytes, sym::Expr(24 * 8));
}

TEST(AdvancedIndexRuleTest, IndexRejectsBoolMasksAndTooManyIndices) {
  OpRunner r;
  OpResult mask = r.Run(
      "aten::index", {{"self", OpArg::Tensor("4,5")},
                      {"indices", OpArg::TensorList({"4,5"}, DType::kBool)}});
  ASSERT_FALSE(mask.errors.empty());
  EXPECT_THAT(mask.errors[0], HasSubstr("data-dependent"));
  OpResult many =
      r.Run("aten::index",
            {{"self", OpArg::Tensor("4")},
             {"indices", OpArg::TensorList({"2", "2"}, DType::kInt64)}});
  ASSERT_FALSE(many.errors.empty());
  EXPECT_THAT(many.errors[0], HasSubstr("too many indices"));
}

TEST(AdvancedIndexRuleTest, RollNewZerosZeroAndTensorSplit) {
  OpRunner r;
  OpResult roll = Ok(r, "aten::roll",
                     {{"self", OpArg::Tensor("B,8,8,96")},
                      {"shifts", OpArg::Ints({-3, -3})},
                      {"dims", OpArg::Ints({1, 2})}});
  EXPECT_EQ(roll.output_shapes[0], "[B, 8, 8, 96]");
  EXPECT_EQ(roll.flops, sym::Expr(0));
  OpResult nz = Ok(r, "aten::new_zeros",
                   {{"self", OpArg::Tensor("2,3", DType::kBFloat16)},
                    {"size", OpArg::Ints({1, 21, 21})}});
  EXPECT_EQ(nz.output_shapes[0], "[1, 21, 21]");
  // self's dtype when dtype is None
  EXPECT_EQ(nz.output_dtypes[0], DType::kBFloat16);
  OpResult zero = Ok(r, "aten::zero_", {{"self", OpArg::Tensor("4,5")}});
  EXPECT_EQ(zero.output_shapes[0], "[4, 5]");
  // tensor_split(x, [1], dim=2) of [B, 3, 50, 96] (MViT's class token): the
  // pieces' shapes are checked through tests/python/test_corpus.py (mvit);
  // here: an index past the dim clamps, no error.
  Ok(r, "aten::tensor_split.indices",
     {{"self", OpArg::Tensor("B,3,50,96")},
      {"indices", OpArg::Ints({1, 60})},
      {"dim", OpArg::Int(2)}});
}

TEST(UpsampleRuleTest, OutputSizeAndTapsPerMode) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // bilinear [1, 2, 5, 6] -> size (10, 12): E = 240 outputs, 4 taps: 7 FLOPs
  // forward (4 muls, 3 adds), 8 backward (4 muls, 4 adds) per output; saves
  // nothing.
  OpResult bl = Ok(r, "aten::upsample_bilinear2d.vec",
                   {{"input", OpArg::Tensor("1,2,5,6")},
                    {"output_size", OpArg::Ints({10, 12})},
                    {"align_corners", OpArg::Bool(false)},
                    {"scale_factors", OpArg::None()}});
  EXPECT_EQ(bl.output_shapes[0], "[1, 2, 10, 12]");
  EXPECT_EQ(bl.flops, sym::Expr(7 * 240));
  EXPECT_EQ(bl.bwd_flops, sym::Expr(8 * 240));
  EXPECT_EQ(bl.macs, sym::Expr(0));
  EXPECT_EQ(bl.saved_bytes, sym::Expr(0));
  // nearest with scale 2 on a symbolic size: [N, C, 2H, 2W]; 0 FLOPs forward, 1
  // add per output backward.
  OpResult nn = Ok(r, "aten::upsample_nearest2d.vec",
                   {{"input", OpArg::Tensor("N,C,H,W")},
                    {"output_size", OpArg::None()},
                    {"scale_factors", OpArg::Float(2.0)}});
  sym::Expr N = r.S("N"), C = r.S("C"), H = r.S("H"), W = r.S("W");
  EXPECT_EQ(nn.output_shapes[0],
            "[N, C, " + (H * 2).ToString() + ", " + (W * 2).ToString() + "]");
  EXPECT_EQ(nn.flops, sym::Expr(0));
  EXPECT_EQ(nn.bwd_flops, N * C * (H * 2) * (W * 2));
  // nearest-exact with scale 1.5 on 5: floor(7.5) = 7.
  OpResult ne = Ok(r, "aten::_upsample_nearest_exact1d.vec",
                   {{"input", OpArg::Tensor("1,2,5")},
                    {"output_size", OpArg::None()},
                    {"scale_factors", OpArg::Float(1.5)}});
  EXPECT_EQ(ne.output_shapes[0], "[1, 2, 7]");
  // trilinear: 8 taps, 15 FLOPs per output; bicubic: 16 taps, 31 FLOPs per
  // output.
  OpResult tri = Ok(r, "aten::upsample_trilinear3d.vec",
                    {{"input", OpArg::Tensor("1,1,2,2,2")},
                     {"output_size", OpArg::Ints({4, 4, 4})},
                     {"align_corners", OpArg::Bool(true)},
                     {"scale_factors", OpArg::None()}});
  EXPECT_EQ(tri.flops, sym::Expr(15 * 64));
  OpResult bc = Ok(r, "aten::upsample_bicubic2d.vec",
                   {{"input", OpArg::Tensor("1,1,3,3")},
                    {"output_size", OpArg::Ints({3, 4})},
                    {"align_corners", OpArg::Bool(true)},
                    {"scale_factors", OpArg::None()}});
  EXPECT_EQ(bc.flops, sym::Expr(31 * 12));
}

// The forward workspace (scratch bytes) the builtin rule of an antialiased
// upsample gives for a float32 input of `in` resized to `size` (not in the
// report: checked on the rule).
sym::Expr AntialiasWorkspace(const std::string& op, std::vector<int64_t> in,
                             std::vector<int64_t> size) {
  static Result<RuleSet> rs = RuleSet::Builtin();
  static sym::Context ctx;
  const rules::OpRule* rule = rs->Find(op, "vec");
  EXPECT_NE(rule, nullptr) << op;
  if (rule == nullptr) return sym::Expr(-1);
  rules::TensorType t;
  for (int64_t d : in) t.shape.push_back(sym::Expr(d));
  t.dtype = DType::kFloat32;
  std::vector<sym::Expr> sz(size.begin(), size.end());
  std::vector<rules::RValue> values = {
      rules::RValue::Tensor(t), rules::RValue::IntList(sz),
      rules::RValue::Bool(false), rules::RValue::None()};
  std::vector<const rules::RValue*> args;
  for (const auto& v : values) args.push_back(&v);
  rules::Applied applied;
  Status st = rules::ApplyRule(*rule, args, ctx, &applied);
  EXPECT_TRUE(st.ok()) << st.message();
  return applied.workspace_fwd;
}

TEST(UpsampleRuleTest, AntialiasedPassesAndTaps) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // bilinear (K = 2), antialias=True, [1, 2, 8, 8] -> (4, 4): each output's
  // window spans K * 8/4 = 4 input elements, so one row's 4 outputs read 16
  // taps: 16 muls + (16 - 4) adds = 28 FLOPs per row. Width pass: 2*8 rows
  // ([1, 2, 8, 4]); height pass: 2*4 columns: 28 each. Backward: 3 FLOPs per
  // (height tap, width tap) pair, 16*16 pairs per channel. The width pass's
  // result (64 floats) is scratch. (The kernel clips its border windows: its
  // taps are 3, 4, 4, 3 per row, 14 not 16: the rule's count is an estimate.)
  OpResult bl = Ok(r, "aten::_upsample_bilinear2d_aa.vec",
                   {{"input", OpArg::Tensor("1,2,8,8")},
                    {"output_size", OpArg::Ints({4, 4})},
                    {"align_corners", OpArg::Bool(false)},
                    {"scale_factors", OpArg::None()}});
  EXPECT_EQ(bl.output_shapes[0], "[1, 2, 4, 4]");
  EXPECT_EQ(bl.flops, sym::Expr(16 * 28 + 8 * 28));
  EXPECT_EQ(bl.bwd_flops, sym::Expr(3 * 2 * 16 * 16));
  EXPECT_EQ(bl.saved_bytes, sym::Expr(0));
  EXPECT_EQ(
      AntialiasWorkspace("aten::_upsample_bilinear2d_aa", {1, 2, 8, 8}, {4, 4}),
      sym::Expr(64 * 4));
  // A non-integer scale, width only: [1, 1, 7, 10] -> (7, 4): windows of
  // 2 * 10/4 = 5 elements, 20 taps per row (the kernel: 4 + 5 + 5 + 4 = 18),
  // 20 muls + 16 adds on each of 7 rows; one pass, so no scratch.
  OpResult nw = Ok(r, "aten::_upsample_bilinear2d_aa.vec",
                   {{"input", OpArg::Tensor("1,1,7,10")},
                    {"output_size", OpArg::Ints({7, 4})},
                    {"align_corners", OpArg::Bool(false)},
                    {"scale_factors", OpArg::None()}});
  EXPECT_EQ(nw.flops, sym::Expr(7 * 36));
  EXPECT_EQ(AntialiasWorkspace("aten::_upsample_bilinear2d_aa", {1, 1, 7, 10},
                               {7, 4}),
            sym::Expr(0));
  // bicubic (K = 4), upsampling [1, 1, 3, 3] -> (3, 6): 4 taps per output, 24
  // per row: 24 muls + 18 adds on each of 3 rows (the height is unchanged).
  OpResult bc = Ok(r, "aten::_upsample_bicubic2d_aa",
                   {{"self", OpArg::Tensor("1,1,3,3")},
                    {"output_size", OpArg::Ints({3, 6})},
                    {"align_corners", OpArg::Bool(true)}});
  EXPECT_EQ(bc.output_shapes[0], "[1, 1, 3, 6]");
  EXPECT_EQ(bc.flops, sym::Expr(3 * 42));
}

TEST(PixelShuffleRuleTest, MovesChannelsIntoSpace) {
  OpRunner r;
  r.set_inputs_require_grad(true);
  // [1, 8, 3, 3] with r = 2: 8/4 = 2 channels of 6x6; unshuffle inverts it.
  // Copies: 0 FLOPs.
  OpResult ps = Ok(
      r, "aten::pixel_shuffle",
      {{"self", OpArg::Tensor("1,8,3,3")}, {"upscale_factor", OpArg::Int(2)}});
  EXPECT_EQ(ps.output_shapes[0], "[1, 2, 6, 6]");
  EXPECT_EQ(ps.flops, sym::Expr(0));
  EXPECT_EQ(ps.saved_bytes, sym::Expr(0));
  OpResult pu = Ok(
      r, "aten::pixel_unshuffle",
      {{"self", OpArg::Tensor("2,6,6")}, {"downscale_factor", OpArg::Int(3)}});
  EXPECT_EQ(pu.output_shapes[0], "[18, 2, 2]");
  // 6 channels do not split into 2*2 blocks.
  OpResult bad = r.Run(
      "aten::pixel_shuffle",
      {{"self", OpArg::Tensor("1,6,3,3")}, {"upscale_factor", OpArg::Int(2)}});
  EXPECT_FALSE(bad.errors.empty());
}

TEST(UpsampleRuleTest, BadArguments) {
  OpRunner r;
  OpResult neither = r.Run("aten::upsample_nearest2d.vec",
                           {{"input", OpArg::Tensor("1,2,5,6")},
                            {"output_size", OpArg::None()},
                            {"scale_factors", OpArg::None()}});
  ASSERT_FALSE(neither.errors.empty());
  EXPECT_THAT(neither.errors[0], HasSubstr("'output_size' or 'scale_factors'"));
  OpResult rank = r.Run("aten::upsample_bilinear2d.vec",
                        {{"input", OpArg::Tensor("5,6")},
                         {"output_size", OpArg::Ints({10, 12})},
                         {"align_corners", OpArg::Bool(false)},
                         {"scale_factors", OpArg::None()}});
  ASSERT_FALSE(rank.errors.empty());
  EXPECT_THAT(rank.errors[0], HasSubstr("[N, C, 2 spatial dims]"));
}

}  // namespace
}  // namespace torchcost
