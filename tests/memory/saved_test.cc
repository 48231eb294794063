// Tests of saved tensors on the MLP: what each node keeps for backward, the
// bytes counted once per storage, and each module's share.
#include "memory/saved.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "memory/backward.h"
#include "memory/checkpoint_replay.h"
#include "memory/prepared_step.h"
#include "testing/timeline.h"

namespace torchcost::memory {
namespace {

using testing::At;
using testing::BuildMlp;
using testing::PreparedStep;

void MarkSavedIn(StepState* st) {
  AssignStorages(st->g, st->shapes, &st->storages);
  FindBackwardNodes(st);
  PlanCheckpoints(st);
  MarkSaved(st);
}

// l1 saves x (W1's gradient needs it; x needs none, so W1 is not saved); relu
// saves its output; l2 saves that output again (W2's gradient) and W2 (the
// relu output's gradient).
TEST(SavedTest, WhatTheMlpSaves) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  MarkSavedIn(&st);
  const auto& saved = st.tr.saved;
  ASSERT_EQ(saved.size(), 4u);
  EXPECT_EQ(saved[0].node, 0);
  EXPECT_EQ(saved[0].storage, 2);  // x
  EXPECT_TRUE(saved[0].counted);
  EXPECT_EQ(saved[1].node, 1);
  EXPECT_EQ(saved[1].storage, 4);  // relu's output
  EXPECT_TRUE(saved[1].counted);
  int relu_out = 0, w2 = 0;
  for (size_t i = 2; i < 4; ++i) {
    EXPECT_EQ(saved[i].node, 2);
    EXPECT_FALSE(saved[i].counted);  // Counted already, or a parameter.
    relu_out += saved[i].storage == 4;
    w2 += saved[i].storage == 1;
  }
  EXPECT_EQ(relu_out, 1);
  EXPECT_EQ(w2, 1);
  // x (5*8 floats) and relu's output (5*4 floats), once each.
  EXPECT_EQ(At(st.tr.saved_bytes), 5 * 8 * 4 + 5 * 4 * 4);
  EXPECT_EQ(st.storages[4].category, MemCategory::kAct);
  // An input stays OTH.
  EXPECT_EQ(st.storages[2].category, MemCategory::kOther);
  // h: nobody keeps it.
  EXPECT_EQ(st.storages[3].category, MemCategory::kTemp);
  EXPECT_EQ(st.storages[4].saved_by, 2);
  EXPECT_EQ(st.storages[1].saved_by, 1);
}

TEST(SavedTest, ModuleActivationBytes) {
  PreparedStep p;
  BuildMlp(&p.builder());
  StepState& st = p.Prepare("5,8");
  MarkSavedIn(&st);
  // Scopes: root, l1, act, l2. l2's W2 is a parameter: not an activation.
  const auto& m = st.tr.module_act_bytes;
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(At(m[1]), 5 * 8 * 4);
  EXPECT_EQ(At(m[2]), 5 * 4 * 4);
  EXPECT_EQ(At(m[3]), 5 * 4 * 4);
  EXPECT_EQ(At(m[0]), 5 * 8 * 4 + 5 * 4 * 4);  // The relu output once.
}

TEST(SavedTest, InferenceSavesNothing) {
  PreparedStep p;
  BuildMlp(&p.builder());
  TrainingOptions t;
  t.mode = StepMode::kInfer;
  StepState& st = p.Prepare("5,8", t);
  MarkSavedIn(&st);
  EXPECT_TRUE(st.tr.saved.empty());
  EXPECT_EQ(At(st.tr.saved_bytes), 0);
}

// bmm saves torch.matmul's copy of a broadcast argument, not the argument's
// own storage (testing::BuildOneKvHeadScores): q, and for q's gradient the
// copy of kt, B*3*4*5 floats where B > 1 and k's B*5*4 where B = 1.
TEST(SavedTest, BatchedMatmulSavesItsCopyOfABroadcastArgument) {
  PreparedStep p(/*builtin_rules=*/true);
  const testing::OneKvHeadScores v =
      testing::BuildOneKvHeadScores(&p.builder());
  StepState& st = p.Prepare("B,3,5,4");
  MarkSavedIn(&st);
  const int copy = st.storages.FoldCopyOf(v.matmul, v.kt);
  ASSERT_GE(copy, 0);
  const auto& mine = st.saved_storages[v.matmul];
  EXPECT_NE(std::find(mine.begin(), mine.end(), copy), mine.end());
  EXPECT_EQ(std::find(mine.begin(), mine.end(), st.storages.storage_of[v.k]),
            mine.end());
  EXPECT_EQ(st.storages[copy].category, MemCategory::kAct);
  // x [B, 3, 5, 4] (OTH: an input, saved by the muls for w's gradient, its
  // slice too), q for kt's gradient, and the copy for q's.
  for (const auto& [b, copy_bytes] :
       {std::pair<int64_t, int64_t>{1, 5 * 4 * 4}, {2, 2 * 3 * 4 * 5 * 4}}) {
    EXPECT_EQ(*sym::Evaluate(st.tr.saved_bytes, {{"B", b}}),
              2 * b * 3 * 5 * 4 * 4 + copy_bytes)
        << "B = " << b;
  }
}

}  // namespace
}  // namespace torchcost::memory
