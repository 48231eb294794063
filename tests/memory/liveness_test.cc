// Tests of liveness: module call ends and each storage's last forward use,
// with eager PyTorch's rule that a module's argument lives until the call
// that reads it returns.
#include "memory/liveness.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory/prepared_step.h"

namespace torchcost::memory {
namespace {

using testing::BuildMlp;
using testing::PreparedStep;

TEST(LivenessTest, InSubtreeFollowsParents) {
  testing::GraphBuilder b;
  const int blk = b.graph().GetOrAddScope("blk", "Block");
  const int a = b.graph().GetOrAddScope("blk.a", "Linear");
  const int head = b.graph().GetOrAddScope("head", "Linear");
  EXPECT_TRUE(InSubtree(b.graph(), a, blk));
  EXPECT_TRUE(InSubtree(b.graph(), a, a));
  EXPECT_TRUE(InSubtree(b.graph(), head, 0));  // Everything is in the root.
  EXPECT_FALSE(InSubtree(b.graph(), head, blk));
  EXPECT_FALSE(InSubtree(b.graph(), blk, a));
}

// n0 in blk.a, n1 in blk.b, n2 in head: blk's call is n0..n1.
TEST(LivenessTest, CallEndsPerEnclosingModule) {
  PreparedStep p;
  auto& b = p.builder();
  int x = b.Input();
  int w = b.Param("w", {8, 8});
  b.Scope("blk.a", "Linear");
  int h = b.One("t::lin", {x, w}, {"input", "weight"});
  b.Scope("blk.b", "ReLU");
  int r = b.One("t::relu", {h}, {"self"});
  b.Scope("head", "ReLU");
  b.Output(b.One("t::relu", {r}, {"self"}));
  const CallEndTable t = CallEnds(b.graph());
  ASSERT_EQ(t.offsets.size(), 4u);
  auto ends = [&](int node) {
    return std::vector<int>(t.Of(node), t.Of(node) + t.Depth(node));
  };
  EXPECT_EQ(ends(0), (std::vector<int>{0, 1}));  // blk.a ends at n0, blk at n1.
  EXPECT_EQ(ends(1), (std::vector<int>{1, 1}));
  EXPECT_EQ(ends(2), (std::vector<int>{2}));
}

// Nested and re-entered modules against the definition, checked node by node:
// the call of an enclosing module s that node i is in ends at the last j >= i
// with nodes i..j all in s's subtree.
TEST(LivenessTest, CallEndsMatchTheDefinitionOnNestedAndReenteredModules) {
  PreparedStep p;
  auto& b = p.builder();
  int v = b.Input();
  // Scope per node: a.x, a.x.y, a.x, a, b, a.x (a re-entered), root, b.z, b.z.
  const char* paths[] = {"a.x", "a.x.y", "a.x", "a",  "b",
                         "a.x", "",      "b.z", "b.z"};
  for (const char* path : paths) {
    b.Scope(path, "M");
    v = b.One("t::relu", {v}, {"self"});
  }
  b.Output(v);
  const ir::Graph& g = b.graph();
  const CallEndTable t = CallEnds(g);
  const int n = static_cast<int>(g.nodes.size());
  ASSERT_EQ(n, 9);
  ASSERT_EQ(t.offsets.size(), 10u);
  for (int i = 0; i < n; ++i) {
    int k = 0;
    for (int sc = g.nodes[i].scope; sc > 0; sc = g.scopes[sc].parent, ++k) {
      int j = i;
      while (j + 1 < n && InSubtree(g, g.nodes[j + 1].scope, sc)) ++j;
      ASSERT_LT(k, t.Depth(i)) << i;
      EXPECT_EQ(t.Of(i)[k], j)
          << "node " << i << " module " << g.scopes[sc].path;
    }
    EXPECT_EQ(k, t.Depth(i)) << i;
  }
  // Spelled out for node 0 (a.x, a): a.x's call is n0..n2, a's n0..n3.
  EXPECT_EQ(t.Of(0)[0], 2);
  EXPECT_EQ(t.Of(0)[1], 3);
  // n5 (a.x, a) re-enters a: a new call, ending at once.
  EXPECT_EQ(t.Of(5)[0], 5);
  EXPECT_EQ(t.Of(5)[1], 5);
}

TEST(LivenessTest, LastUsesOfTheMlp) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  const auto release_at = ComputeLastUses(st.g, &st.storages);
  // W1 and x are read by n0, h by n1, W2 and relu's output by n2; out by
  // nothing.
  const int last[] = {0, 2, 0, 1, 2, -1};
  for (int s = 0; s < 6; ++s) EXPECT_EQ(st.storages[s].last_use, last[s]) << s;
  std::vector<std::vector<int>> lists;
  for (const ir::SmallInts& r : release_at)
    lists.emplace_back(r.begin(), r.end());
  EXPECT_EQ(lists, (std::vector<std::vector<int>>{{0, 2}, {3}, {1, 4}}));
}

// A value held as a list of storages passes its last use to each of them; a
// value no node reads leaves its storages' last uses as they were.
TEST(LivenessTest, EachStorageOfAListLivesToTheListsLastUse) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  StorageTable& t = st.storages;
  auto value_of = [&](int s) {
    return static_cast<int>(
        std::find(t.storage_of.begin(), t.storage_of.end(), s) -
        t.storage_of.begin());
  };
  // relu's output (read by n2) held as the list {4, 0} instead of storage 4.
  const int r = value_of(4);
  t.storage_of[r] = -1;
  t.list_storages[r].push_back(4);
  t.list_storages[r].push_back(0);
  t[5].last_use = 1;  // out's storage; out is read by nothing.
  ComputeLastUses(st.g, &t);
  // W1: n0 and, through the list, n2; W2, x and h as in the MLP.
  const int last[] = {2, 2, 0, 1, 2, 1};
  for (int s = 0; s < 6; ++s) EXPECT_EQ(t[s].last_use, last[s]) << s;
}

// The storages' last uses in x -> PARENT.0 (lin, h) -> PARENT.1 (relu, r) ->
// head (relu), PARENT being a module of type `parent_type`.
struct LastUses {
  int x, h, r;
};
LastUses LastUsesUnder(const char* parent_type) {
  PreparedStep p;
  auto& b = p.builder();
  int x = b.Input();
  int w = b.Param("w", {8, 8});
  b.graph().GetOrAddScope("blk", parent_type);
  b.Scope("blk.0", "Linear");
  int h = b.One("t::lin", {x, w}, {"input", "weight"});
  b.Scope("blk.1", "ReLU");
  int r = b.One("t::relu", {h}, {"self"});
  b.Scope("head", "ReLU");
  b.Output(b.One("t::relu", {r}, {"self"}));
  StepState& st = p.Prepare("2,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  ComputeLastUses(st.g, &st.storages);
  auto last_use = [&](int v) {
    return st.storages[st.storages.storage_of[v]].last_use;
  };
  return {last_use(x), last_use(h), last_use(r)};
}

// x is read only by blk.0's node, but blk (n0..n1) took it as its argument:
// it lives to n1. h, made inside blk and read inside, dies at its last use.
TEST(LivenessTest, AModulesArgumentLivesUntilTheCallReturns) {
  const LastUses u = LastUsesUnder("Block");
  EXPECT_EQ(u.x, 1);
  EXPECT_EQ(u.h, 1);
  EXPECT_EQ(u.r, 2);
}

// A ModuleList has no forward, so it is never called: x, read by blk.0 only,
// dies when blk.0 returns (n0), not when the list's last block does
// (`for block in self.layers: x = block(x)` drops the old x). NB: consecutive
// blocks form one run of the list's subtree, which would otherwise read as one
// call of `blk` (n0..n1).
TEST(LivenessTest, AModuleListIsNotACall) {
  const LastUses u = LastUsesUnder("ModuleList");
  EXPECT_EQ(u.x, 0);
  EXPECT_EQ(u.h, 1);
  EXPECT_EQ(u.r, 2);
}

}  // namespace
}  // namespace torchcost::memory
