// Tests of the value that reads a parameter or buffer table entry.
#include "import/table_value.h"

#include <gtest/gtest.h>

#include <vector>

namespace torchcost::import {
namespace {

ir::TensorEntry Entry(const char* name, std::vector<int64_t> shape,
                      DType dtype) {
  ir::TensorEntry e;
  e.name = name;
  e.shape = std::move(shape);
  e.dtype = dtype;
  return e;
}

TEST(TableValueTest, FirstUseAddsTheValueLaterUsesShareIt) {
  ir::Graph g;
  g.params.push_back(Entry("fc.weight", {4, 8}, DType::kFloat32));
  g.buffers.push_back(Entry("bn.running_mean", {4}, DType::kBFloat16));
  const int w = TableValue(&g, true, 0);
  EXPECT_EQ(g.values.size(), 1u);
  EXPECT_EQ(TableValue(&g, true, 0), w);
  EXPECT_EQ(g.values.size(), 1u);
  EXPECT_EQ(g.params[0].value, w);
  const ir::Value& v = g.values[w];
  EXPECT_EQ(v.name, "fc.weight");
  EXPECT_EQ(v.role, ir::ValueRole::kParam);
  EXPECT_EQ(v.table_index, 0);
  EXPECT_EQ(v.kind, ir::ValueKind::kTensor);
  EXPECT_TRUE(v.has_traced_shape);
  EXPECT_EQ(v.traced_shape, std::vector<int64_t>({4, 8}));
  EXPECT_EQ(v.dtype, DType::kFloat32);

  const int m = TableValue(&g, false, 0);
  EXPECT_NE(m, w);
  EXPECT_EQ(g.buffers[0].value, m);
  EXPECT_EQ(g.values[m].role, ir::ValueRole::kBuffer);
  EXPECT_EQ(g.values[m].name, "bn.running_mean");
  EXPECT_EQ(g.values[m].dtype, DType::kBFloat16);
}

}  // namespace
}  // namespace torchcost::import
