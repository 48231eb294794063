// Tests of the family config checks (src/builder/validate.cc): the first
// failed check is the one-line error, naming the family, key and value.
#include "builder/validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchcost::builder {
namespace {

using ::testing::HasSubstr;

TEST(ValidatorTest, LayersArePositiveAndAtMostTheLimit) {
  Validator ok("test");
  ok.Layers("layers", 1);
  ok.Layers("layers", kMaxLayers);
  EXPECT_TRUE(ok.ok());

  Validator zero("test");
  zero.Layers("layers", 0);
  EXPECT_THAT(zero.status().message(),
              HasSubstr("layers=0 must be a positive integer"));
  Validator many("test");
  many.Layers("layers", kMaxLayers + 1);
  EXPECT_THAT(many.status().message(),
              HasSubstr("layers=100001 is above the limit 100000"));
  // Above the limit of every integer setting: that limit's error first, as
  // Positive gives it.
  Validator huge("test");
  huge.Layers("layers", kMaxConfigInt + 1);
  EXPECT_THAT(huge.status().message(),
              HasSubstr("layers=2147483649 is above the limit 2147483648"));
}

TEST(ValidatorTest, TheFirstFailureIsKept) {
  Validator v("gpt2");
  v.Positive("hidden", -1);
  v.Layers("layers", 0);
  ASSERT_FALSE(v.ok());
  EXPECT_THAT(v.status().message(), HasSubstr("hidden=-1"));
  EXPECT_THAT(v.status().message(), HasSubstr("gpt2"));
}

}  // namespace
}  // namespace torchcost::builder
