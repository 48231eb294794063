// Tests of the TorchScript type and class names the reader without LibTorch
// reads.
#include "import/ts_types.h"

#include <gtest/gtest.h>

#include <string>

namespace torchcost::import::ts {
namespace {

TEST(TsTypesTest, ShortClassNameDropsTheQualification) {
  EXPECT_EQ(
      ShortClassName(
          "__torch__.torchvision.models.resnet.___torch_mangle_12.BasicBlock"),
      "BasicBlock");
  EXPECT_EQ(ShortClassName("Net"), "Net");
}

TEST(TsTypesTest, InnerTypeSplitsOnePrefix) {
  std::string inner;
  EXPECT_TRUE(InnerType("Optional[List[int]]", "Optional", &inner));
  EXPECT_EQ(inner, "List[int]");
  EXPECT_FALSE(InnerType("List[int]", "Optional", &inner));
  EXPECT_FALSE(InnerType("List", "List", &inner));
  EXPECT_FALSE(InnerType("Lists[int]", "List", &inner));
}

TEST(TsTypesTest, KindsAndListElements) {
  EXPECT_EQ(KindOf("Tensor"), ir::ValueKind::kTensor);
  EXPECT_EQ(KindOf("Optional[float]"), ir::ValueKind::kFloat);
  EXPECT_EQ(KindOf("List[Tensor]"), ir::ValueKind::kList);
  EXPECT_EQ(KindOf("Tuple[int, int]"), ir::ValueKind::kOther);
  ir::Value v;
  SetTypeInfo("Optional[List[int]]", &v);
  EXPECT_EQ(v.kind, ir::ValueKind::kList);
  EXPECT_EQ(v.elem_kind, ir::ValueKind::kInt);
}

TEST(TsTypesTest, SubtypesTracedCodeUses) {
  EXPECT_TRUE(SubtypeOf("int", "int"));
  EXPECT_TRUE(SubtypeOf("Tensor", "Any"));
  EXPECT_TRUE(SubtypeOf("NoneType", "Optional[Tensor]"));
  EXPECT_TRUE(SubtypeOf("Tensor", "Optional[Tensor]"));
  EXPECT_TRUE(SubtypeOf("float", "number"));
  EXPECT_FALSE(SubtypeOf("bool", "number"));
  EXPECT_FALSE(SubtypeOf("int", "float"));
}

TEST(TsTypesTest, ElementSizes) {
  // c10::ScalarType codes: 0 uint8, 3 int32, 5 float16, 6 float32, 7 float64,
  // 10 complex128, 11 bool, 15 bfloat16.
  EXPECT_EQ(ConstantElementSize(0), 1);
  EXPECT_EQ(ConstantElementSize(6), 4);
  EXPECT_EQ(ConstantElementSize(7), 8);
  // float16 0-dim constants are not read.
  EXPECT_EQ(ConstantElementSize(5), 0);
  EXPECT_EQ(StorageElementSize(5), 2);
  EXPECT_EQ(StorageElementSize(10), 16);
  EXPECT_EQ(StorageElementSize(15), 2);
  EXPECT_EQ(StorageElementSize(16), 0);
  EXPECT_EQ(StorageElementSize(-1), 0);
}

}  // namespace
}  // namespace torchcost::import::ts
