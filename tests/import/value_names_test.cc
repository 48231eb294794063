// Tests of the value names both TorchScript readers give their graphs.
#include "import/value_names.h"

#include <gtest/gtest.h>

#include <string>

namespace torchcost::import {
namespace {

int Add(ir::Graph& g, const std::string& name, ir::ValueRole role) {
  ir::Value v;
  v.name = name;
  v.role = role;
  return g.AddValue(std::move(v));
}

TEST(ValueNamesTest, SourceNamesNumbersAndConstants) {
  ir::Graph g;
  g.GetOrAddScope("", "Net");
  const int x = Add(g, "x.1", ir::ValueRole::kInput);
  const int w = Add(g, "fc.weight", ir::ValueRole::kParam);
  // Defined first, used second.
  const int c_late = Add(g, "41", ir::ValueRole::kConstant);
  const int c_early = Add(g, "7", ir::ValueRole::kConstant);
  // A dotted attribute path stays.
  const int attr = Add(g, "layer.eps", ir::ValueRole::kConstant);
  const int a = Add(g, "input.7", ir::ValueRole::kIntermediate);
  const int b = Add(g, "112", ir::ValueRole::kIntermediate);
  const int c = Add(g, "input.3", ir::ValueRole::kIntermediate);
  const int d = Add(g, "99", ir::ValueRole::kIntermediate);
  g.inputs = {x};
  ir::Node n1;
  n1.op = "aten::linear";
  n1.inputs = {x, w, c_early};
  n1.outputs = {a};
  g.AddNode(n1);
  ir::Node n2;
  n2.op = "aten::add";
  n2.inputs = {a, c_late, attr};
  n2.outputs = {b, c};
  g.AddNode(n2);
  ir::Node n3;
  n3.op = "aten::relu";
  n3.inputs = {c};
  n3.outputs = {d};
  g.AddNode(n3);
  ir::Node n4;
  n4.op = "prim::RaiseException";
  g.AddNode(n4);
  CanonicalizeValueNames(&g);
  EXPECT_EQ(g.values[x].name, "x");
  EXPECT_EQ(g.values[w].name, "fc.weight");
  EXPECT_EQ(g.values[c_early].name, "c0");  // First used by the first node.
  EXPECT_EQ(g.values[c_late].name, "c1");
  EXPECT_EQ(g.values[attr].name, "layer.eps");
  // The first "input" in graph order ...
  EXPECT_EQ(g.values[a].name, "input");
  // ... and the second, whatever LibTorch's suffixes were.
  EXPECT_EQ(g.values[c].name, "input.1");
  EXPECT_EQ(g.values[b].name, "0");
  EXPECT_EQ(g.values[d].name, "1");
  EXPECT_EQ(g.nodes[0].debug_name, "%input");
  EXPECT_EQ(g.nodes[1].debug_name, "%0");
  EXPECT_EQ(g.nodes[2].debug_name, "%1");
  EXPECT_EQ(g.nodes[3].debug_name, "%3");  // No outputs: its index.
}

}  // namespace
}  // namespace torchcost::import
