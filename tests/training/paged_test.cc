// Tests of bitsandbytes' paged optimizers (TrainingOptions::paged): which
// states are paged to the host and what stays on the device, derived from
// bitsandbytes' Optimizer2State.init_state and get_state_buffer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "testing/toy_graphs.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::At;
using ::testing::HasSubstr;
using testing::kGrad;
using testing::kOpt;
using testing::kParam;
using testing::kTemp;
using testing::MaxOptimizerTemp;

// l1: W [400, 1000] (4e5 elements: paged); l2: W [10, 400] (4000: on the
// device).
class PagedTest : public testing::ToyGraphTest {
 protected:
  void SetUp() override {
    ToyGraphTest::SetUp();
    testing::LinearChain(b_, {1000, 400, 10}, {"l1", "l2"});
  }

  Result<Report> Run(OptimizerKind kind) {
    AnalysisOptions opts;
    opts.training.optimizer = kind;
    opts.training.paged = true;
    return TryAnalyzeBuiltGraph(opts, "2,1000");
  }
};

TEST_F(PagedTest, PagedAdamWKeepsLargeStatesOnTheHost) {
  // PagedAdamW (optim_bits=32): state1, state2 float32; l1's 2 * 4e5 * 4 paged,
  // l2's 2 * 4000 * 4 on the device (under 1e5 elements); `step` a Python int.
  Result<Report> r = Run(OptimizerKind::kAdamW);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->training.paged);
  EXPECT_EQ(r->training.paged_opt_bytes, 2 * 400000 * 4);
  EXPECT_EQ(At(r->training.timeline.front().live[kOpt]), 2 * 4000 * 4);
  // One fused in-place kernel per tensor: no temporaries.
  EXPECT_EQ(MaxOptimizerTemp(*r), 0);
}

TEST_F(PagedTest, PagedAdam8bitPagesTheCodesOnly) {
  // l1: uint8 state1, state2 (2 * 4e5) paged; its absmax (2 * ceil(4e5 / 2048)
  // = 2 * 196 float32) on the device. l2: under min_8bit_size (4096): float32
  // states 2 * 4000 * 4 on the device. The two 256-entry float32 code books:
  // 2048.
  Result<Report> r = Run(OptimizerKind::kAdam8bit);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->training.paged_opt_bytes, 2 * 400000);
  EXPECT_EQ(At(r->training.timeline.front().live[kOpt]),
            2 * 196 * 4 + 2 * 4000 * 4 + 2 * 256 * 4);
}

TEST_F(PagedTest, WhatIsNotPagedIsRefused) {
  Result<Report> r = Run(OptimizerKind::kLion);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("adam, adamw and adam8bit"));
  TrainingOptions t;
  t.paged = true;
  t.master_weights = true;
  EXPECT_THAT(CheckOptimizerSettings(t).message(), HasSubstr("not modelled"));
  t.master_weights = false;
  EXPECT_TRUE(CheckOptimizerSettings(t).ok());
}

}  // namespace
}  // namespace torchcost
