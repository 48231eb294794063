#include "torchcost/graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchcost::ir {
namespace {

TEST(GraphTest, AddNodeSetsProducers) {
  Graph g;
  Value x;
  x.name = "x";
  x.role = ValueRole::kInput;
  const int in = g.AddValue(x);
  const int out = g.AddValue(Value{});
  EXPECT_EQ(in, 0);
  EXPECT_EQ(out, 1);
  Node n;
  n.op = "aten::relu";
  n.inputs = {in};
  n.outputs = {out};
  const int node = g.AddNode(n);
  EXPECT_EQ(node, 0);
  EXPECT_EQ(g.values[out].producer, 0);
  EXPECT_EQ(g.values[in].producer, -1);
}

TEST(GraphTest, GetOrAddScopeBuildsTree) {
  Graph g;
  EXPECT_EQ(g.GetOrAddScope("", "ResNet"), 0);
  const int layer = g.GetOrAddScope("layer1", "Sequential");
  const int block = g.GetOrAddScope("layer1.0", "BasicBlock");
  const int conv = g.GetOrAddScope("layer1.0.conv1", "Conv2d");
  EXPECT_EQ(g.GetOrAddScope("layer1.0", "ignored"), block);
  ASSERT_EQ(g.scopes.size(), 4u);
  EXPECT_EQ(g.scopes[0].name, "ResNet");
  EXPECT_EQ(g.scopes[0].type, "ResNet");
  EXPECT_EQ(g.scopes[0].parent, -1);
  EXPECT_EQ(g.scopes[conv].name, "conv1");
  EXPECT_EQ(g.scopes[conv].type, "Conv2d");
  EXPECT_EQ(g.scopes[conv].parent, block);
  EXPECT_EQ(g.scopes[conv].depth, 3);
  EXPECT_EQ(g.scopes[block].parent, layer);
  EXPECT_EQ(g.scopes[0].children, std::vector<int>{layer});
  EXPECT_EQ(g.scopes[block].children, std::vector<int>{conv});
}

TEST(GraphTest, GetOrAddScopeCreatesAncestors) {
  Graph g;
  const int deep = g.GetOrAddScope("a.b.c", "Linear");
  ASSERT_EQ(g.scopes.size(), 4u);  // Root, a, a.b, a.b.c.
  EXPECT_EQ(g.scopes[0].path, "");
  EXPECT_EQ(g.scopes[deep].type, "Linear");
  EXPECT_EQ(g.scopes[deep].depth, 3);
  const int ab = g.scopes[deep].parent;
  EXPECT_EQ(g.scopes[ab].path, "a.b");
  EXPECT_EQ(g.scopes[ab].name, "b");
  EXPECT_EQ(g.scopes[ab].type, "");
}

// The same calls through GetOrAddChildScope and GetOrAddScope give the same
// scopes, whether the hint is the parent, a module without that child, or
// the path has a dotted tail (whose ancestors must be made).
TEST(GraphTest, GetOrAddChildScopeIsGetOrAddScope) {
  Graph hinted, plain;
  for (Graph* g : {&hinted, &plain}) g->GetOrAddScope("", "Model");
  struct Call {
    int parent;
    const char* path;
    const char* type;
  };
  const Call calls[] = {{0, "layers", "ModuleList"},
                        {1, "layers.0", "Block"},
                        {2, "layers.0.attn", "Attention"},
                        {2, "layers.0.attn", "ignored"},  // Exists.
                        {1, "layers.1", "Block"},
                        {0, "layers.1.mlp", "MLP"},       // Not 0's child.
                        {4, "layers.1.mlp.up.x", "Lin"},  // Dotted tail.
                        {0, "norm", "Norm"}};
  for (const Call& c : calls) {
    const int a = hinted.GetOrAddChildScope(c.parent, c.path, c.type);
    const int b = plain.GetOrAddScope(c.path, c.type);
    EXPECT_EQ(a, b) << c.path;
  }
  ASSERT_EQ(hinted.scopes.size(), plain.scopes.size());
  // The root, 7 distinct paths and the ancestor layers.1.mlp.up.
  ASSERT_EQ(hinted.scopes.size(), 9u);
  for (size_t i = 0; i < plain.scopes.size(); ++i) {
    const Scope &h = hinted.scopes[i], &p = plain.scopes[i];
    EXPECT_EQ(h.path, p.path);
    EXPECT_EQ(h.name, p.name) << p.path;
    EXPECT_EQ(h.type, p.type) << p.path;
    EXPECT_EQ(h.parent, p.parent) << p.path;
    EXPECT_EQ(h.depth, p.depth) << p.path;
    EXPECT_EQ(h.children, p.children) << p.path;
  }
  EXPECT_EQ(hinted.scopes[2].name, "0");
  EXPECT_EQ(hinted.scopes[2].parent, 1);
}

TEST(GraphTest, GetOrAddScopeIsIterativeAndIndexed) {
  // 5,000 levels: a recursive walk per level would exhaust the stack long
  // before a path this deep; the loop and the index do not.
  Graph g;
  std::string path = "m0";
  for (int i = 1; i < 5000; ++i) path += ".m" + std::to_string(i);
  const int deep = g.GetOrAddScope(path, "Leaf");
  ASSERT_EQ(g.scopes.size(), 5001u);  // Root and 5,000 levels.
  EXPECT_EQ(g.scopes[deep].depth, 5000);
  EXPECT_EQ(g.scopes[deep].name, "m4999");
  EXPECT_EQ(g.scopes[deep].type, "Leaf");
  EXPECT_EQ(g.GetOrAddScope(path, "ignored"), deep);
  // A copy keeps answering from its own scopes.
  Graph copy = g;
  EXPECT_EQ(copy.GetOrAddScope("m0.m1", ""), 2);
  // Scopes edited by hand (not through GetOrAddScope) are found too.
  Scope extra;
  extra.path = "by.hand";
  extra.parent = 0;
  copy.scopes.push_back(extra);
  EXPECT_EQ(copy.GetOrAddScope("by.hand", ""), 5001);
}

TEST(GraphTest, NodeLocation) {
  Graph g;
  g.GetOrAddScope("", "Net");
  const int scope = g.GetOrAddScope("layer1.0", "BasicBlock");
  Node n;
  n.op = "aten::foo";
  n.scope = scope;
  n.debug_name = "%x.17";
  g.AddNode(n);
  Node root;
  root.op = "aten::bar";
  root.debug_name = "%y";
  g.AddNode(root);
  EXPECT_EQ(g.NodeLocation(0), "node %x.17 (aten::foo, module layer1.0)");
  EXPECT_EQ(g.NodeLocation(1), "node %y (aten::bar, module Net)");
  EXPECT_EQ(g.NodeLocation(7), "node #7");
}

}  // namespace
}  // namespace torchcost::ir
