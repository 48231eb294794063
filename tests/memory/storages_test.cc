// Tests of storage assignment: which values own a storage, its bytes and
// category, and that views share their input's.
#include "memory/storages.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "memory/prepared_step.h"
#include "testing/timeline.h"

namespace torchcost::memory {
namespace {

using testing::At;
using testing::BuildMlp;
using testing::PreparedStep;

TEST(StoragesTest, MlpHasOneStoragePerTensor) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  AssignStorages(st.g, st.shapes, &st.storages);
  const StorageTable& t = st.storages;
  ASSERT_EQ(t.size(), 6);
  // float32: W1 4*8, W2 2*4, x 5*8, h 5*4, relu 5*4, out 5*2 elements of 4
  // bytes.
  const int64_t bytes[] = {4 * 8 * 4, 2 * 4 * 4, 5 * 8 * 4,
                           5 * 4 * 4, 5 * 4 * 4, 5 * 2 * 4};
  const MemCategory cats[] = {MemCategory::kParam, MemCategory::kParam,
                              MemCategory::kOther, MemCategory::kTemp,
                              MemCategory::kTemp,  MemCategory::kOther};
  const bool pinned[] = {true, true, true, false, false, true};
  for (int s = 0; s < 6; ++s) {
    EXPECT_EQ(At(t[s].bytes), bytes[s]) << s;
    EXPECT_EQ(t[s].category, cats[s]) << s;
    EXPECT_EQ(t[s].pinned, pinned[s]) << s;
    EXPECT_FALSE(t[s].live);
  }
  EXPECT_EQ(t.setup, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(t.IsSetup(2));
  EXPECT_FALSE(t.IsSetup(3));
  // Each node allocates its one output.
  std::vector<std::vector<int>> node_new;
  for (const ir::SmallInts& n : t.node_new)
    node_new.emplace_back(n.begin(), n.end());
  EXPECT_EQ(node_new, (std::vector<std::vector<int>>{{3}, {4}, {5}}));
  std::vector<int> of;
  t.Of(st.g.outputs[0], &of);
  EXPECT_EQ(of, std::vector<int>{5});
}

TEST(StoragesTest, AViewSharesItsInputsStorage) {
  PreparedStep p(/*builtin_rules=*/true);
  auto& b = p.builder();
  int x = b.Input();
  int w = b.Param("w", {6});
  int y = b.One("aten::mul.Tensor", {x, w}, {"self", "other"});
  int v = b.One("aten::view", {y, b.Ints({3, 2})}, {"self", "size"});
  b.Output(v);
  StepState& st = p.Prepare("6");
  AssignStorages(st.g, st.shapes, &st.storages);
  EXPECT_EQ(st.storages.storage_of[v], st.storages.storage_of[y]);
  // w (0), x (1), y (2): the view allocates nothing, and it being an output
  // pins y's storage.
  EXPECT_EQ(st.storages.size(), 3);
  EXPECT_TRUE(st.storages[2].pinned);
  EXPECT_EQ(st.storages[2].category, MemCategory::kOther);
}

TEST(StoragesTest, BytesOfIsNumelTimesElementSize) {
  rules::TensorType t;
  t.shape = {sym::Expr(3), sym::Expr(5)};
  t.dtype = DType::kFloat16;
  EXPECT_EQ(At(BytesOf(t)), 3 * 5 * 2);
  t.dtype = DType::kUnknown;  // NB: taken as 4 bytes.
  EXPECT_EQ(At(BytesOf(t)), 3 * 5 * 4);
}

// repeat_kv: x [2, 3, 4] -> x[:, :, None] [2, 3, 1, 4] -> expand [2, 3, 5, 4]
// -> reshape [2, 15, 4] merges the broadcast dim (stride 0) with a real one: a
// copy of 2*15*4 floats; a reshape that keeps the non-1 dims is a view.
TEST(StoragesTest, ReshapeOfABroadcastCopies) {
  PreparedStep p(/*builtin_rules=*/true);
  auto& b = p.builder();
  int x = b.Input();
  int w = b.Param("w", {4});
  int y = b.One("aten::mul.Tensor", {x, w}, {"self", "other"});
  int u = b.One("aten::unsqueeze", {y, b.Int(2)}, {"self", "dim"});
  int e = b.One("aten::expand", {u, b.Ints({2, 3, 5, 4}), b.Bool(false)},
                {"self", "size", "implicit"});
  int merged =
      b.One("aten::reshape", {e, b.Ints({2, 15, 4})}, {"self", "shape"});
  int kept =
      b.One("aten::reshape", {e, b.Ints({2, 3, 5, 4, 1})}, {"self", "shape"});
  b.Output(merged);
  b.Output(kept);
  StepState& st = p.Prepare("2,3,4");
  EXPECT_TRUE(ReshapeCopiesBroadcast(st.g, st.shapes, st.g.nodes[3]));
  EXPECT_FALSE(ReshapeCopiesBroadcast(st.g, st.shapes, st.g.nodes[4]));
  // Not a reshape.
  EXPECT_FALSE(ReshapeCopiesBroadcast(st.g, st.shapes, st.g.nodes[0]));
  AssignStorages(st.g, st.shapes, &st.storages);
  const int ys = st.storages.storage_of[y];
  EXPECT_EQ(st.storages.storage_of[e], ys);
  EXPECT_EQ(st.storages.storage_of[kept], ys);
  EXPECT_NE(st.storages.storage_of[merged], ys);
  EXPECT_EQ(At(st.storages[st.storages.storage_of[merged]].bytes),
            2 * 15 * 4 * 4);
}

// One KV head (Hugging Face's repeat_kv with n_rep = heads): k [B, 1, 5, 4]
// -> [:, :, None] -> expand [B, 1, 3, 5, 4] -> reshape [B, 3, 5, 4] is a view,
// the heads at stride 0; its transpose [B, 3, 4, 5] folded to [3B, 4, 5] by
// torch.matmul merges B with that stride-0 dim: a copy of B*3*4*5 floats where
// B > 1 (PyTorch views at B = 1).
TEST(StoragesTest, BatchedMatmulCopiesABroadcastArgument) {
  PreparedStep p(/*builtin_rules=*/true);
  const testing::OneKvHeadScores v =
      testing::BuildOneKvHeadScores(&p.builder());
  const int q = v.q, k = v.k, kt = v.kt, mm = v.matmul;
  StepState& st = p.Prepare("B,3,5,4");
  ASSERT_EQ(st.g.nodes[mm].op, "aten::matmul");
  // The repeat is a view; q has no stride-0 dim.
  EXPECT_FALSE(ReshapeCopiesBroadcast(st.g, st.shapes, st.g.nodes[5]));
  EXPECT_EQ(MatmulFoldCopyBytes(st.g, st.shapes, mm, 0), sym::Expr(0));
  const sym::Expr copy = MatmulFoldCopyBytes(st.g, st.shapes, mm, 1);
  EXPECT_EQ(*sym::Evaluate(copy, {{"B", 1}}), 0);
  EXPECT_EQ(*sym::Evaluate(copy, {{"B", 2}}), 2 * 3 * 4 * 5 * 4);
  AssignStorages(st.g, st.shapes, &st.storages);
  const int own = st.storages.storage_of[k];
  EXPECT_EQ(st.storages.storage_of[kt], own);
  EXPECT_EQ(st.storages.FoldCopyOf(mm, q), -1);
  const int held = st.storages.FoldCopyOf(mm, kt);
  ASSERT_GE(held, 0);
  const auto& temps = st.storages.node_temps[mm];
  EXPECT_NE(std::find(temps.begin(), temps.end(), held), temps.end());
  // B = 1: it stands for k's own B*5*4 floats; else the copy.
  EXPECT_EQ(*sym::Evaluate(st.storages[held].bytes, {{"B", 1}}), 5 * 4 * 4);
  EXPECT_EQ(*sym::Evaluate(st.storages[held].bytes, {{"B", 3}}),
            3 * 3 * 4 * 5 * 4);
}

TEST(StoragesTest, ListsHoldTheirElementsStorages) {
  PreparedStep p(/*builtin_rules=*/true);
  auto& b = p.builder();
  int x = b.Input();
  int w = b.Param("w", {4});
  int a = b.One("aten::mul.Tensor", {x, w}, {"self", "other"});
  int c =
      b.One("aten::add.Tensor", {x, w, b.Int(1)}, {"self", "other", "alpha"});
  int list = b.One("prim::ListConstruct", {a, c}, {}, ir::ValueKind::kList);
  std::vector<int> back = b.Node("prim::ListUnpack", {list}, {}, 2);
  b.Output(b.One("aten::cat", {list, b.Int(0)}, {"tensors", "dim"}));
  StepState& st = p.Prepare("4");
  AssignStorages(st.g, st.shapes, &st.storages);
  const StorageTable& t = st.storages;
  std::vector<int> of;
  t.Of(list, &of);
  EXPECT_EQ(of, (std::vector<int>{t.storage_of[a], t.storage_of[c]}));
  EXPECT_EQ(t.storage_of[back[0]], t.storage_of[a]);
  EXPECT_EQ(t.storage_of[back[1]], t.storage_of[c]);
}

}  // namespace
}  // namespace torchcost::memory
