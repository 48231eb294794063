// Tests of rules/views.yaml and the impls of src/rules/builtin.cc behind it.
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

// Runs and expects no error; returns the first output's shape.
std::string Shape(OpRunner& r, const std::string& op,
                  const std::vector<std::pair<std::string, OpArg>>& args,
                  size_t out = 0) {
  OpResult res = r.Run(op, args);
  EXPECT_TRUE(res.errors.empty())
      << op << ": " << (res.errors.empty() ? "" : res.errors[0]);
  EXPECT_EQ(res.flops, sym::Expr(0)) << op;
  return out < res.output_shapes.size() ? res.output_shapes[out] : "<none>";
}

// Runs and expects an error; returns the first message.
std::string Error(OpRunner& r, const std::string& op,
                  const std::vector<std::pair<std::string, OpArg>>& args) {
  OpResult res = r.Run(op, args);
  EXPECT_FALSE(res.errors.empty()) << op << " unexpectedly succeeded";
  return res.errors.empty() ? "" : res.errors[0];
}

TEST(ViewsRuleTest, ViewAndReshapeConcrete) {
  OpRunner r;
  EXPECT_EQ(
      Shape(r, "aten::view",
            {{"self", OpArg::Tensor("2,3,4")}, {"size", OpArg::Ints({6, 4})}}),
      "[6, 4]");
  EXPECT_EQ(
      Shape(r, "aten::view",
            {{"self", OpArg::Tensor("2,3,4")}, {"size", OpArg::Ints({-1, 2})}}),
      "[12, 2]");
  EXPECT_EQ(Shape(r, "aten::reshape",
                  {{"self", OpArg::Tensor("2,3,4")},
                   {"shape", OpArg::Ints({4, -1})}}),
            "[4, 6]");
}

TEST(ViewsRuleTest, ViewSymbolicInfersMinusOne) {
  OpRunner r;
  // x.view(B, -1): the batch factor cancels exactly.
  OpResult res = r.Run("aten::view", {{"self", OpArg::Tensor("B,512,7,7")},
                                      {"size", OpArg::Ints({-1, 25088})}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_EQ(res.output_shapes[0], "[B, 25088]");
  // Heads split: [B, T, 768] -> [B, T, 12, -1].
  OpResult heads = r.Run("aten::view", {{"self", OpArg::Tensor("B,T,768")},
                                        {"size", OpArg::Ints({-1, 12, 64})}});
  ASSERT_TRUE(heads.errors.empty()) << heads.errors[0];
  sym::Expr B = r.S("B"), T = r.S("T");
  EXPECT_EQ(heads.output_shapes[0], "[" + (B * T).ToString() + ", 12, 64]");
}

TEST(ViewsRuleTest, ViewErrors) {
  OpRunner r;
  EXPECT_THAT(Error(r, "aten::view",
                    {{"self", OpArg::Tensor("2,3,4")},
                     {"size", OpArg::Ints({2, -1, -1})}}),
              HasSubstr("shape '[2, -1, -1]' has more than one -1"));
  EXPECT_THAT(
      Error(r, "aten::view",
            {{"self", OpArg::Tensor("2,3,4")}, {"size", OpArg::Ints({5, 5})}}),
      HasSubstr("number of elements"));
  EXPECT_THAT(
      Error(r, "aten::view",
            {{"self", OpArg::Tensor("2,3,4")}, {"size", OpArg::Ints({5, -1})}}),
      HasSubstr("divide"));
}

TEST(ViewsRuleTest, Flatten) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::flatten.using_ints",
                  {{"self", OpArg::Tensor("N,C,H,W")},
                   {"start_dim", OpArg::Int(1)},
                   {"end_dim", OpArg::Int(-1)}}),
            "[N, " + (r.S("C") * r.S("H") * r.S("W")).ToString() + "]");
  EXPECT_EQ(Shape(r, "aten::flatten",
                  {{"self", OpArg::Tensor("2,3,4,5")},
                   {"start_dim", OpArg::Int(-3)},
                   {"end_dim", OpArg::Int(-2)}}),
            "[2, 12, 5]");
  EXPECT_EQ(Shape(r, "aten::flatten", {{"self", OpArg::Tensor("")}}), "[1]");
  EXPECT_THAT(
      Error(r, "aten::flatten",
            {{"self", OpArg::Tensor("2,3")}, {"start_dim", OpArg::Int(2)}}),
      HasSubstr("dim 2 out of range for a tensor of rank 2"));
  EXPECT_THAT(Error(r, "aten::flatten",
                    {{"self", OpArg::Tensor("2,3,4")},
                     {"start_dim", OpArg::Int(2)},
                     {"end_dim", OpArg::Int(1)}}),
              HasSubstr("start_dim"));
}

TEST(ViewsRuleTest, Unflatten) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::unflatten",
                  {{"self", OpArg::Tensor("B,2304")},
                   {"dim", OpArg::Int(-1)},
                   {"sizes", OpArg::Ints({3, -1})}}),
            "[B, 3, 768]");
  EXPECT_THAT(Error(r, "aten::unflatten",
                    {{"self", OpArg::Tensor("B,10")},
                     {"dim", OpArg::Int(1)},
                     {"sizes", OpArg::Ints({3, 4})}}),
              HasSubstr("number of elements"));
}

TEST(ViewsRuleTest, PermuteTransposeT) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::permute",
                  {{"self", OpArg::Tensor("N,C,H,W")},
                   {"dims", OpArg::Ints({0, 2, -1, 1})}}),
            "[N, H, W, C]");
  EXPECT_THAT(Error(r, "aten::permute",
                    {{"self", OpArg::Tensor("2,3,4")},
                     {"dims", OpArg::Ints({0, 0, 1})}}),
              HasSubstr("repeats"));
  EXPECT_THAT(
      Error(r, "aten::permute",
            {{"self", OpArg::Tensor("2,3,4")}, {"dims", OpArg::Ints({0, 1})}}),
      HasSubstr("rank 3"));
  EXPECT_EQ(Shape(r, "aten::transpose.int",
                  {{"self", OpArg::Tensor("B,T,D")},
                   {"dim0", OpArg::Int(0)},
                   {"dim1", OpArg::Int(-2)}}),
            "[T, B, D]");
  EXPECT_THAT(
      Error(r, "aten::transpose.int",
            {{"self", OpArg::Tensor("2,3,4,5")},
             {"dim0", OpArg::Int(5)},
             {"dim1", OpArg::Int(0)}}),
      HasSubstr("dim 5 out of range for a tensor of rank 4 (argument 'dim0')"));
  EXPECT_EQ(Shape(r, "aten::t", {{"self", OpArg::Tensor("M,K")}}), "[K, M]");
  EXPECT_EQ(Shape(r, "aten::t", {{"self", OpArg::Tensor("K")}}), "[K]");
  EXPECT_THAT(Error(r, "aten::t", {{"self", OpArg::Tensor("2,3,4")}}),
              HasSubstr("at most 2 dims"));
}

TEST(ViewsRuleTest, SqueezeUnsqueeze) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::squeeze", {{"self", OpArg::Tensor("2,1,3,1")}}),
            "[2, 3]");
  EXPECT_EQ(
      Shape(r, "aten::squeeze.dim",
            {{"self", OpArg::Tensor("2,1,3,1")}, {"dim", OpArg::Int(-1)}}),
      "[2, 1, 3]");
  EXPECT_EQ(Shape(r, "aten::squeeze.dim",
                  {{"self", OpArg::Tensor("2,1,3")}, {"dim", OpArg::Int(0)}}),
            "[2, 1, 3]");  // dim 0 is 2: kept
  EXPECT_EQ(
      Shape(r, "aten::squeeze.dims",
            {{"self", OpArg::Tensor("1,4,1")}, {"dim", OpArg::Ints({0, 2})}}),
      "[4]");
  // A symbolic dim that might be 1 is kept, with an assumption.
  OpResult sym = r.Run("aten::squeeze", {{"self", OpArg::Tensor("B,1,7")}});
  ASSERT_TRUE(sym.errors.empty()) << sym.errors[0];
  EXPECT_EQ(sym.output_shapes[0], "[B, 7]");
  EXPECT_FALSE(sym.assumptions.empty());
  EXPECT_EQ(Shape(r, "aten::unsqueeze",
                  {{"self", OpArg::Tensor("B,T")}, {"dim", OpArg::Int(-1)}}),
            "[B, T, 1]");
  EXPECT_EQ(Shape(r, "aten::unsqueeze",
                  {{"self", OpArg::Tensor("B,T")}, {"dim", OpArg::Int(0)}}),
            "[1, B, T]");
  EXPECT_THAT(Error(r, "aten::unsqueeze",
                    {{"self", OpArg::Tensor("B,T")}, {"dim", OpArg::Int(3)}}),
              HasSubstr("dim 3 out of range for a tensor of rank 3"));
}

TEST(ViewsRuleTest, Expand) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::expand",
                  {{"self", OpArg::Tensor("1,1,768")},
                   {"size", OpArg::Ints({4, -1, -1})}}),
            "[4, 1, 768]");
  EXPECT_EQ(
      Shape(r, "aten::expand",
            {{"self", OpArg::Tensor("3,1")}, {"size", OpArg::Ints({2, 3, 5})}}),
      "[2, 3, 5]");
  EXPECT_EQ(Shape(r, "aten::expand_as",
                  {{"self", OpArg::Tensor("C,1,1")},
                   {"other", OpArg::Tensor("N,C,H,W")}}),
            "[N, C, H, W]");
  EXPECT_THAT(
      Error(r, "aten::expand",
            {{"self", OpArg::Tensor("3,2")}, {"size", OpArg::Ints({3, 4})}}),
      HasSubstr("neither 1 nor 4"));
  EXPECT_THAT(
      Error(r, "aten::expand",
            {{"self", OpArg::Tensor("3,2")}, {"size", OpArg::Ints({2})}}),
      HasSubstr("fewer dims"));
}

TEST(ViewsRuleTest, SelectSliceNarrow) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::select.int",
                  {{"self", OpArg::Tensor("B,197,768")},
                   {"dim", OpArg::Int(1)},
                   {"index", OpArg::Int(0)}}),
            "[B, 768]");
  EXPECT_THAT(Error(r, "aten::select.int",
                    {{"self", OpArg::Tensor("2,3")},
                     {"dim", OpArg::Int(1)},
                     {"index", OpArg::Int(3)}}),
              HasSubstr("index 3 out of range"));
  // x[:, 1:] traces end = INT64_MAX.
  EXPECT_EQ(Shape(r, "aten::slice.Tensor",
                  {{"self", OpArg::Tensor("B,T,D")},
                   {"dim", OpArg::Int(1)},
                   {"start", OpArg::Int(1)},
                   {"end", OpArg::Int(9223372036854775807LL)},
                   {"step", OpArg::Int(1)}}),
            "[B, T - 1, D]");
  // Concrete: negative start, step 3: [-7:10:3] of 10 -> indices 3, 6, 9.
  EXPECT_EQ(Shape(r, "aten::slice.Tensor",
                  {{"self", OpArg::Tensor("10")},
                   {"start", OpArg::Int(-7)},
                   {"end", OpArg::Int(10)},
                   {"step", OpArg::Int(3)}}),
            "[3]");
  // Out-of-range end clamps; None start.
  EXPECT_EQ(Shape(r, "aten::slice.Tensor",
                  {{"self", OpArg::Tensor("4,5")},
                   {"dim", OpArg::Int(-1)},
                   {"start", OpArg::None()},
                   {"end", OpArg::Int(100)}}),
            "[4, 5]");
  // end before start: empty.
  EXPECT_EQ(Shape(r, "aten::slice.Tensor",
                  {{"self", OpArg::Tensor("8")},
                   {"start", OpArg::Int(5)},
                   {"end", OpArg::Int(2)}}),
            "[0]");
  EXPECT_THAT(Error(r, "aten::slice.Tensor",
                    {{"self", OpArg::Tensor("8")}, {"step", OpArg::Int(0)}}),
              HasSubstr("step"));
  EXPECT_EQ(Shape(r, "aten::narrow",
                  {{"self", OpArg::Tensor("B,10")},
                   {"dim", OpArg::Int(1)},
                   {"start", OpArg::Int(2)},
                   {"length", OpArg::Int(5)}}),
            "[B, 5]");
  EXPECT_THAT(Error(r, "aten::narrow",
                    {{"self", OpArg::Tensor("B,10")},
                     {"dim", OpArg::Int(1)},
                     {"start", OpArg::Int(8)},
                     {"length", OpArg::Int(5)}}),
              HasSubstr("start + length"));
}

TEST(ViewsRuleTest, ChunkSplitUnbind) {
  OpRunner r;
  // chunk(10, 3) -> 4, 4, 2.
  OpResult c = r.Run("aten::chunk", {{"self", OpArg::Tensor("10,B")},
                                     {"chunks", OpArg::Int(3)},
                                     {"dim", OpArg::Int(0)}});
  ASSERT_TRUE(c.errors.empty()) << c.errors[0];
  // Symbolic: divisibility recorded, equal pieces.
  OpResult cs = r.Run("aten::chunk", {{"self", OpArg::Tensor("B,T,C")},
                                      {"chunks", OpArg::Int(2)},
                                      {"dim", OpArg::Int(-1)}});
  ASSERT_TRUE(cs.errors.empty()) << cs.errors[0];
  EXPECT_FALSE(cs.assumptions.empty());
  OpResult s = r.Run("aten::split.Tensor", {{"self", OpArg::Tensor("7,B")},
                                            {"split_size", OpArg::Int(3)}});
  ASSERT_TRUE(s.errors.empty()) << s.errors[0];
  EXPECT_THAT(
      Error(r, "aten::split.Tensor",
            {{"self", OpArg::Tensor("T,B")}, {"split_size", OpArg::Int(3)}}),
      HasSubstr("number of pieces"));
  EXPECT_THAT(Error(r, "aten::split_with_sizes",
                    {{"self", OpArg::Tensor("7,B")},
                     {"split_sizes", OpArg::Ints({3, 3})}}),
              HasSubstr("must sum"));
  EXPECT_THAT(Error(r, "aten::unbind.int", {{"self", OpArg::Tensor("T,B")}}),
              HasSubstr("symbolic size"));
  EXPECT_THAT(Error(r, "aten::chunk",
                    {{"self", OpArg::Tensor("4")}, {"chunks", OpArg::Int(0)}}),
              HasSubstr("'chunks' must be positive"));
}

TEST(ViewsRuleTest, CatAndStack) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::cat",
                  {{"tensors",
                    OpArg::TensorList({"N,64,H,W", "N,32,H,W", "N,C,H,W"})},
                   {"dim", OpArg::Int(1)}}),
            "[N, " + (r.S("C") + 96).ToString() + ", H, W]");
  EXPECT_EQ(Shape(r, "aten::cat",
                  {{"tensors", OpArg::TensorList({"B,1,768", "B,196,768"})},
                   {"dim", OpArg::Int(-2)}}),
            "[B, 197, 768]");
  EXPECT_THAT(Error(r, "aten::cat",
                    {{"tensors", OpArg::TensorList({"2,3", "4,5"})},
                     {"dim", OpArg::Int(0)}}),
              HasSubstr("sizes must match except in dim 0"));
  EXPECT_THAT(Error(r, "aten::cat",
                    {{"tensors", OpArg::TensorList({"2,3", "4,3"})},
                     {"dim", OpArg::Int(2)}}),
              HasSubstr("dim 2 out of range for a tensor of rank 2"));
  EXPECT_EQ(Shape(r, "aten::stack",
                  {{"tensors", OpArg::TensorList({"B,4", "B,4", "B,4"})},
                   {"dim", OpArg::Int(-1)}}),
            "[B, 4, 3]");
  EXPECT_THAT(
      Error(r, "aten::stack", {{"tensors", OpArg::TensorList({"2,3", "2,4"})}}),
      HasSubstr("equal shapes"));
}

TEST(ViewsRuleTest, CopiesAndCasts) {
  OpRunner r;
  EXPECT_EQ(Shape(r, "aten::contiguous", {{"self", OpArg::Tensor("B,T,D")}}),
            "[B, T, D]");
  EXPECT_EQ(Shape(r, "aten::clone", {{"self", OpArg::Tensor("B,T,D")}}),
            "[B, T, D]");
  EXPECT_EQ(Shape(r, "aten::detach", {{"self", OpArg::Tensor("B,T,D")}}),
            "[B, T, D]");
  OpResult to = r.Run("aten::to.dtype", {{"self", OpArg::Tensor("B,3")},
                                         {"dtype", OpArg::Int(5) /*float16*/},
                                         {"non_blocking", OpArg::Bool(false)},
                                         {"copy", OpArg::Bool(false)}});
  ASSERT_TRUE(to.errors.empty()) << to.errors[0];
  EXPECT_EQ(to.output_dtypes[0], DType::kFloat16);
  OpResult ta =
      r.Run("aten::type_as", {{"self", OpArg::Tensor("B,3")},
                              {"other", OpArg::Tensor("4", DType::kInt64)}});
  ASSERT_TRUE(ta.errors.empty()) << ta.errors[0];
  EXPECT_EQ(ta.output_dtypes[0], DType::kInt64);
  EXPECT_EQ(Shape(r, "aten::constant_pad_nd",
                  {{"self", OpArg::Tensor("N,C,H,W")},
                   {"pad", OpArg::Ints({1, 2, 0, 1})}}),
            "[N, C, H + 1, W + 3]");
}

}  // namespace
}  // namespace torchcost
