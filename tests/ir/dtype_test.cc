#include "torchcost/dtype.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost {
namespace {

using ::testing::HasSubstr;

TEST(DTypeTest, ParsesNamesAndAliases) {
  struct Row {
    const char* name;
    DType expected;
  };
  const std::vector<Row> rows = {
      {"float32", DType::kFloat32},
      {"float", DType::kFloat32},
      {"fp32", DType::kFloat32},
      {"float16", DType::kFloat16},
      {"half", DType::kFloat16},
      {"fp16", DType::kFloat16},
      {"bfloat16", DType::kBFloat16},
      {"bf16", DType::kBFloat16},
      {"float64", DType::kFloat64},
      {"double", DType::kFloat64},
      {"int64", DType::kInt64},
      {"long", DType::kInt64},
      {"int32", DType::kInt32},
      {"int", DType::kInt32},
      {"int16", DType::kInt16},
      {"short", DType::kInt16},
      {"int8", DType::kInt8},
      {"uint8", DType::kUInt8},
      {"bool", DType::kBool},
      {"complex64", DType::kComplex64},
      {"complex128", DType::kComplex128},
      {"torch.bfloat16", DType::kBFloat16},
  };
  for (const Row& row : rows) {
    Result<DType> parsed = ParseDType(row.name);
    ASSERT_TRUE(parsed.ok()) << row.name << ": " << parsed.status().message();
    EXPECT_EQ(*parsed, row.expected) << row.name;
  }
}

TEST(DTypeTest, ParseErrorListsAcceptedNames) {
  Result<DType> parsed = ParseDType("float8");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(parsed.status().message(), HasSubstr("'float8'"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("float32, float, fp32"));
  EXPECT_THAT(parsed.status().message(), HasSubstr("complex128"));
  EXPECT_EQ(parsed.status().message().find('\n'), std::string::npos);
}

TEST(DTypeTest, NamesRoundTrip) {
  const std::vector<DType> all = {
      DType::kUInt8,     DType::kInt8,      DType::kInt16,      DType::kInt32,
      DType::kInt64,     DType::kFloat16,   DType::kFloat32,    DType::kFloat64,
      DType::kComplex32, DType::kComplex64, DType::kComplex128, DType::kBool,
      DType::kBFloat16};
  for (DType d : all) {
    Result<DType> parsed = ParseDType(DTypeName(d));
    ASSERT_TRUE(parsed.ok()) << DTypeName(d);
    EXPECT_EQ(*parsed, d);
  }
  EXPECT_EQ(DTypeName(DType::kUnknown), "unknown");
}

TEST(DTypeTest, ElementSizes) {
  EXPECT_EQ(ElementSize(DType::kBool), 1);
  EXPECT_EQ(ElementSize(DType::kUInt8), 1);
  EXPECT_EQ(ElementSize(DType::kBFloat16), 2);
  EXPECT_EQ(ElementSize(DType::kFloat16), 2);
  EXPECT_EQ(ElementSize(DType::kFloat32), 4);
  EXPECT_EQ(ElementSize(DType::kInt64), 8);
  EXPECT_EQ(ElementSize(DType::kComplex32), 2 * 2);   // Two float16.
  EXPECT_EQ(ElementSize(DType::kComplex64), 2 * 4);   // Two float32.
  EXPECT_EQ(ElementSize(DType::kComplex128), 2 * 8);  // Two float64.
  EXPECT_EQ(ElementSize(DType::kUnknown), 0);
}

TEST(DTypeTest, ScalarTypeCodes) {
  // c10::ScalarType: Byte=0 ... Bool=11, QInt8=12, QUInt8=13, QInt32=14,
  // BFloat16=15.
  EXPECT_EQ(DTypeFromScalarTypeCode(0), DType::kUInt8);
  EXPECT_EQ(DTypeFromScalarTypeCode(6), DType::kFloat32);
  EXPECT_EQ(DTypeFromScalarTypeCode(11), DType::kBool);
  EXPECT_EQ(DTypeFromScalarTypeCode(12), DType::kUnknown);
  EXPECT_EQ(DTypeFromScalarTypeCode(15), DType::kBFloat16);
  EXPECT_EQ(DTypeFromScalarTypeCode(-1), DType::kUnknown);
  EXPECT_EQ(DTypeFromScalarTypeCode(99), DType::kUnknown);
}

TEST(DTypeTest, FloatingPoint) {
  EXPECT_TRUE(IsFloatingPoint(DType::kBFloat16));
  EXPECT_TRUE(IsFloatingPoint(DType::kComplex64));
  EXPECT_FALSE(IsFloatingPoint(DType::kInt64));
  EXPECT_FALSE(IsFloatingPoint(DType::kBool));
  EXPECT_FALSE(IsFloatingPoint(DType::kUnknown));
}

TEST(DTypeTest, Promotion) {
  // Rows checked against torch.promote_types (torch 1.13).
  struct Row {
    DType a, b, expected;
  };
  const std::vector<Row> rows = {
      {DType::kUInt8, DType::kInt8, DType::kInt16},
      {DType::kBool, DType::kBool, DType::kBool},
      {DType::kBool, DType::kInt8, DType::kInt8},
      {DType::kInt32, DType::kInt64, DType::kInt64},
      {DType::kInt64, DType::kFloat16, DType::kFloat16},
      {DType::kFloat16, DType::kBFloat16, DType::kFloat32},
      {DType::kBFloat16, DType::kInt64, DType::kBFloat16},
      {DType::kFloat32, DType::kFloat64, DType::kFloat64},
      {DType::kComplex32, DType::kFloat32, DType::kComplex64},
      {DType::kFloat64, DType::kComplex64, DType::kComplex128},
      {DType::kFloat32, DType::kUnknown, DType::kUnknown},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(PromoteTypes(row.a, row.b), row.expected)
        << DTypeName(row.a) << " + " << DTypeName(row.b);
    EXPECT_EQ(PromoteTypes(row.b, row.a), row.expected)
        << DTypeName(row.b) << " + " << DTypeName(row.a);
  }
}

}  // namespace
}  // namespace torchcost
