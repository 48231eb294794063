// Module paths from call names, as both TorchScript readers resolve them.
#include "import/module_scopes.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>

namespace torchcost::import {
namespace {

// A GPT-like tree: h (a ModuleList, iterated, never called) holds blocks 0 and
// 1, each with attn; head is called directly.
struct Tree {
  ir::Graph graph;
  std::unordered_map<std::string, int> index;
  Tree() {
    for (const char* path :
         {"", "h", "h.0", "h.0.attn", "h.1", "h.1.attn", "head"}) {
      index[path] = graph.GetOrAddScope(path, "Module");
    }
  }
};

TEST(ModuleScopesTest, JoinsPaths) {
  EXPECT_EQ(JoinModulePath("", "h"), "h");
  EXPECT_EQ(JoinModulePath("h.0", "attn"), "h.0.attn");
}

TEST(ModuleScopesTest, DirectChildWins) {
  Tree t;
  EXPECT_EQ(ResolveChildScope(t.graph, t.index, "", "head"), "head");
  EXPECT_EQ(ResolveChildScope(t.graph, t.index, "h.0", "attn"), "h.0.attn");
}

// "0" called from the root is h.0: the list h left no call of its own.
TEST(ModuleScopesTest, UncalledContainerIsLookedThrough) {
  Tree t;
  EXPECT_EQ(ResolveChildScope(t.graph, t.index, "", "0"), "h.0");
}

// "attn" under the root matches h.0.attn and h.1.attn: ambiguous, so the direct
// path.
TEST(ModuleScopesTest, AmbiguousOrUnknownIsTheDirectPath) {
  Tree t;
  EXPECT_EQ(ResolveChildScope(t.graph, t.index, "", "attn"), "attn");
  EXPECT_EQ(ResolveChildScope(t.graph, t.index, "nowhere", "x"), "nowhere.x");
}

}  // namespace
}  // namespace torchcost::import
