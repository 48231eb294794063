// Tests of method specs ("lora:r=8", "qlora", ...), the rows of torchcost
// compare.
#include "torchcost/method.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost {
namespace {

using ::testing::HasSubstr;

TEST(MethodTest, ParsesEachMethod) {
  auto full = ParseMethodSpec("full");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->kind, MethodSpec::Kind::kFull);
  auto lora = ParseMethodSpec("lora:r=16,alpha=32,targets=q_proj|v_proj");
  ASSERT_TRUE(lora.ok());
  EXPECT_EQ(lora->kind, MethodSpec::Kind::kLora);
  EXPECT_EQ(lora->lora.rank, 16);
  EXPECT_EQ(lora->lora.alpha, 32);
  EXPECT_FALSE(lora->lora.use_dora);
  EXPECT_EQ(lora->text, "lora:r=16,alpha=32,targets=q_proj|v_proj");
  auto dora = ParseMethodSpec("dora:r=8");
  ASSERT_TRUE(dora.ok());
  EXPECT_TRUE(dora->lora.use_dora);
  auto qlora = ParseMethodSpec("qlora");
  ASSERT_TRUE(qlora.ok());
  EXPECT_EQ(qlora->qlora.lora.targets, "all-linear");
  EXPECT_EQ(qlora->qlora.compute_dtype, DType::kBFloat16);
  auto galore = ParseMethodSpec("galore:r=128");
  ASSERT_TRUE(galore.ok());
  EXPECT_EQ(galore->kind, MethodSpec::Kind::kGalore);
  EXPECT_EQ(galore->settings, "r=128");
}

TEST(MethodTest, ErrorsNameTheSpec) {
  EXPECT_THAT(ParseMethodSpec("prefix:r=8").status().message(),
              HasSubstr("unknown method 'prefix'"));
  EXPECT_THAT(ParseMethodSpec("full:r=8").status().message(),
              HasSubstr("full takes no settings"));
  EXPECT_THAT(ParseMethodSpec("lora:r=0").status().message(),
              HasSubstr("'lora:r=0': r=0 must be a positive integer"));
}

}  // namespace
}  // namespace torchcost
