// Tests of the operator schemas generated from torch 1.13
// (tools/gen_torchscript_schemas.py): the texts below are the schemas as
// torch._C._jit_get_all_schemas() prints them.
#include "import/ts_schema.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace torchcost::import::ts {
namespace {

const Schema* Find(const std::string& name, const std::string& overload) {
  for (const Schema& s : SchemasFor(name)) {
    if (s.overload == overload) return &s;
  }
  return nullptr;
}

TEST(TsSchemaTest, AddTensor) {
  // aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  const Schema* s = Find("aten::add", "Tensor");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->args.size(), 3u);
  EXPECT_EQ(s->args[0].name, "self");
  EXPECT_EQ(s->args[0].type, "Tensor");
  EXPECT_FALSE(s->args[1].kwarg_only);
  EXPECT_EQ(s->args[2].name, "alpha");
  EXPECT_EQ(s->args[2].type, "number");
  EXPECT_TRUE(s->args[2].kwarg_only);
  EXPECT_TRUE(s->args[2].has_default);
  EXPECT_EQ(s->args[2].default_text, "1");
  EXPECT_THAT(s->returns, ::testing::ElementsAre("Tensor"));
}

TEST(TsSchemaTest, FixedSizeListsAndDefaults) {
  // aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2]
  // padding=0, int[2] dilation=1,
  //                  bool ceil_mode=False) -> Tensor
  const Schema* s = Find("aten::max_pool2d", "");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->args.size(), 6u);
  EXPECT_EQ(s->args[1].type, "List[int]");
  EXPECT_EQ(s->args[1].n, 2);
  EXPECT_FALSE(s->args[1].has_default);
  EXPECT_EQ(s->args[2].default_text, "[]");
  // int[2] padding=0 expands to both dimensions.
  EXPECT_EQ(s->args[3].default_text, "[0, 0]");
  EXPECT_EQ(s->args[5].default_text, "False");
  // aten::gelu(Tensor self, *, str approximate="none") -> Tensor
  const Schema* gelu = Find("aten::gelu", "");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->args[1].default_text, "\"none\"");
  // aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor:
  // ScalarType is an int.
  const Schema* softmax = Find("aten::softmax", "int");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->args[2].type, "Optional[int]");
  EXPECT_EQ(softmax->args[2].default_text, "None");
}

TEST(TsSchemaTest, OutVariantsAndUnknownOpsAreAbsent) {
  EXPECT_EQ(Find("aten::add", "out"), nullptr);
  EXPECT_TRUE(SchemasFor("aten::no_such_op").empty());
  EXPECT_TRUE(SchemasFor("prim::NumToTensor").empty());
  // The same vector on each call.
  EXPECT_EQ(&SchemasFor("aten::relu"), &SchemasFor("aten::relu"));
}

}  // namespace
}  // namespace torchcost::import::ts
