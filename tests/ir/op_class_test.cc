// Op class names round-trip and a bad name is named in the error.
#include "torchcost/op_class.h"

#include <gtest/gtest.h>

namespace torchcost {
namespace {

TEST(OpClassTest, NamesRoundTrip) {
  for (int i = 0; i < kNumOpClasses; ++i) {
    const OpClass c = static_cast<OpClass>(i);
    Result<OpClass> back = ParseOpClass(OpClassName(c));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, c);
  }
  EXPECT_EQ(OpClassName(OpClass::kAttention), "attention");
}

TEST(OpClassTest, UnknownNameIsAnError) {
  Result<OpClass> bad = ParseOpClass("conv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown op class 'conv'"),
            std::string::npos);
}

}  // namespace
}  // namespace torchcost
