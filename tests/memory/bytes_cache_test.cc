// Tests of the bytes cache: BytesOf's answer, each distinct shape and dtype
// computed once.
#include "memory/bytes_cache.h"

#include <gtest/gtest.h>

#include "memory/storages.h"

namespace torchcost::memory {
namespace {

rules::TensorType Tensor(std::vector<sym::Expr> shape, DType dtype) {
  rules::TensorType t;
  t.shape = std::move(shape);
  t.dtype = dtype;
  return t;
}

TEST(BytesCacheTest, AnswersAsBytesOf) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B"), s = ctx.Symbol("S");
  // [B, S, 4096] bf16: B * S * 4096 * 2 bytes; [3, 5] unknown: taken as 4
  // bytes each, 60.
  const rules::TensorType act =
      Tensor({b, s, sym::Expr(4096)}, DType::kBFloat16);
  const rules::TensorType small =
      Tensor({sym::Expr(3), sym::Expr(5)}, DType::kUnknown);
  BytesCache cache;
  EXPECT_EQ(cache.Of(act), b * s * 8192);
  EXPECT_EQ(cache.Of(small), sym::Expr(60));
  EXPECT_EQ(cache.size(), 2u);
}

TEST(BytesCacheTest, SameShapeAndDtypeComputedOnce) {
  sym::Context ctx;
  const sym::Expr b = ctx.Symbol("B");
  // 32 layers' tensors of one shape, held apart as a graph's values are.
  std::vector<rules::TensorType> layers(
      32, Tensor({b, sym::Expr(64)}, DType::kFloat32));
  BytesCache cache;
  for (const auto& t : layers) EXPECT_EQ(cache.Of(t), b * 256);
  EXPECT_EQ(cache.size(), 1u);
  // Another dtype, or another shape of the same numel, is another entry:
  // [B, 64] fp16 is B * 128 bytes; [64, B] fp32 B * 256 again.
  const rules::TensorType half = Tensor({b, sym::Expr(64)}, DType::kFloat16);
  const rules::TensorType swapped = Tensor({sym::Expr(64), b}, DType::kFloat32);
  EXPECT_EQ(cache.Of(half), b * 128);
  EXPECT_EQ(cache.Of(swapped), b * 256);
  EXPECT_EQ(cache.size(), 3u);
}

}  // namespace
}  // namespace torchcost::memory
