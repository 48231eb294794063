// Tests of the scopes' pre-order intervals: subtree membership as the walk up
// the parents (memory::InSubtree) answers it.
#include "memory/scope_intervals.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memory/liveness.h"

namespace torchcost::memory {
namespace {

// Every (scope, root) pair of `g` against the walk.
void ExpectAsTheWalk(const ir::Graph& g) {
  const ScopeIntervals tree(g);
  const int n = static_cast<int>(g.scopes.size());
  for (int a = 0; a < n; ++a) {
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(tree.InSubtree(a, r), InSubtree(g, a, r))
          << g.scopes[a].path << " in " << g.scopes[r].path;
    }
  }
}

TEST(ScopeIntervalsTest, NestedModules) {
  ir::Graph g;
  g.GetOrAddScope("", "Model");
  const int a = g.GetOrAddScope("layers.0.attn.q", "Linear");
  const int b = g.GetOrAddScope("layers.1.mlp", "MLP");
  const int head = g.GetOrAddScope("head", "Linear");
  g.GetOrAddScope("layers.0.mlp", "MLP");
  const ScopeIntervals tree(g);
  // Existing scopes: their indices.
  const int layers = g.GetOrAddScope("layers", "ModuleList"),
            l0 = g.GetOrAddScope("layers.0", "Layer");
  EXPECT_TRUE(tree.InSubtree(a, l0));
  EXPECT_TRUE(tree.InSubtree(a, layers));
  EXPECT_TRUE(tree.InSubtree(b, layers));
  EXPECT_FALSE(tree.InSubtree(b, l0));
  EXPECT_FALSE(tree.InSubtree(head, layers));
  EXPECT_TRUE(tree.InSubtree(head, 0));
  EXPECT_TRUE(tree.InSubtree(l0, l0));
  EXPECT_FALSE(tree.InSubtree(layers, a));
  ExpectAsTheWalk(g);
}

// A set of scopes is inside a root iff its first and last in pre-order are:
// checked for every pair (first, last) against every scope between them.
TEST(ScopeIntervalsTest, OrderBoundsSubtrees) {
  ir::Graph g;
  g.GetOrAddScope("", "Model");
  g.GetOrAddScope("layers.0.attn.q", "Linear");
  g.GetOrAddScope("layers.1.mlp", "MLP");
  g.GetOrAddScope("head", "Linear");
  g.GetOrAddScope("layers.0.mlp", "MLP");
  const ScopeIntervals tree(g);
  const int n = static_cast<int>(g.scopes.size());
  std::vector<int> by_order(n, -1);
  for (int s = 0; s < n; ++s) {
    ASSERT_GE(tree.Order(s), 0);
    ASSERT_LT(tree.Order(s), n);
    by_order[tree.Order(s)] = s;
  }
  for (int s : by_order) ASSERT_GE(s, 0);  // A permutation.
  for (int r = 0; r < n; ++r) {
    for (int lo = 0; lo < n; ++lo) {
      for (int hi = lo; hi < n; ++hi) {
        bool all = true;
        for (int k = lo; k <= hi; ++k)
          all = all && InSubtree(g, by_order[k], r);
        EXPECT_EQ(
            tree.InSubtree(by_order[lo], r) && tree.InSubtree(by_order[hi], r),
            all)
            << g.scopes[r].path;
      }
    }
  }
}

// Parents after their children in the array, and two roots: only the parent
// links count.
TEST(ScopeIntervalsTest, ParentsInAnyOrder) {
  ir::Graph g;
  g.scopes.resize(6);
  const int parents[] = {3, 3, -1, 2, -1, 4};
  for (int s = 0; s < 6; ++s) {
    g.scopes[s].parent = parents[s];
    g.scopes[s].path = "s" + std::to_string(s);
  }
  const ScopeIntervals tree(g);
  EXPECT_TRUE(tree.InSubtree(0, 2));  // 0 -> 3 -> 2.
  EXPECT_FALSE(tree.InSubtree(0, 1));
  EXPECT_FALSE(tree.InSubtree(5, 2));  // 5 is under the other root.
  EXPECT_TRUE(tree.InSubtree(5, 4));
  ExpectAsTheWalk(g);
}

}  // namespace
}  // namespace torchcost::memory
