// Tests of the optimizer-state dtype (TrainingOptions::state_dtype): states and
// the step's temporaries in a dtype of their own, with and without master
// weights and sharding, on a one-layer graph whose bytes are derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "testing/toy_graphs.h"
#include "torchcost/analysis.h"
#include "training/optimizer_model.h"

namespace torchcost {
namespace {

using testing::At;
using ::testing::HasSubstr;
using testing::kGrad;
using testing::kOpt;
using testing::kParam;
using testing::kTemp;
using testing::MaxOptimizerTemp;

// One t::lin layer with W [64, 1000]: n = 64000 parameters.
constexpr int64_t kN = 64 * 1000;

class StateDtypeTest : public testing::ToyGraphTest {
 protected:
  void SetUp() override {
    ToyGraphTest::SetUp();
    testing::LinearChain(b_, {1000, 64}, {"l"});
  }

  Result<Report> Run(const TrainingOptions& t) {
    AnalysisOptions opts;
    opts.training = t;
    opts.param_dtype = DType::kBFloat16;
    return TryAnalyzeBuiltGraph(opts, "1,1000:bfloat16");
  }
};

TEST_F(StateDtypeTest,
       Bf16WeightsWithFloat32MomentsAreTwelveBytesPerParameter) {
  // QLoRA (Dettmers et al. 2023, Sec. 1): 16-bit full fine-tuning of a 65B
  // model needs "more than 780 GB", 780 / 65 = 12 bytes per parameter:
  // bf16 weight (2) + bf16 gradient (2) + float32 exp_avg and exp_avg_sq (4 +
  // 4), no master copy. torch 1.13's Adam adds a float32 `step` per tensor (4
  // bytes).
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  t.state_dtype = DType::kFloat32;
  Result<Report> r = Run(t);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TimelinePoint& end = r->training.timeline.back();
  EXPECT_EQ(At(end.live[kParam]), 2 * kN);
  EXPECT_EQ(At(end.live[kGrad]), 2 * kN);
  EXPECT_EQ(At(end.live[kOpt]), 8 * kN + 4);
  EXPECT_EQ(At(end.live[kParam]) + At(end.live[kGrad]) + At(end.live[kOpt]),
            12 * kN + 4);
  // _single_tensor_adam: denom = (exp_avg_sq.sqrt() / c).add_(eps) computes
  // from the float32 state, so the sqrt and its quotient are float32: 2 * 4n.
  EXPECT_EQ(MaxOptimizerTemp(*r), 2 * 4 * kN);
  EXPECT_EQ(r->training.state_dtype, DType::kFloat32);
}

TEST_F(StateDtypeTest, WithoutAStateDtypeStatesFollowTheParameters) {
  // torch's zeros_like(p): bf16 moments (2 + 2 bytes) and bf16 temporaries (2 *
  // 2n).
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  Result<Report> r = Run(t);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(At(r->training.timeline.back().live[kOpt]), 4 * kN + 4);
  EXPECT_EQ(MaxOptimizerTemp(*r), 2 * 2 * kN);
  EXPECT_EQ(r->training.state_dtype, DType::kUnknown);
}

TEST_F(StateDtypeTest, MasterWeightsWithBf16States) {
  // float32 master (4) + bf16 moments (2 + 2) + the float32 step (4 per
  // tensor).
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdamW;
  t.master_weights = true;
  t.state_dtype = DType::kBFloat16;
  Result<Report> r = Run(t);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->training.sharding.opt_bytes, 4 * kN + 4 * kN + 4);
  EXPECT_EQ(At(r->training.timeline.back().live[kOpt]), 8 * kN + 4);
  // The temporaries come from the bf16 states: 2 * 2n.
  EXPECT_EQ(MaxOptimizerTemp(*r), 2 * 2 * kN);
}

TEST_F(StateDtypeTest, ShardedStatesUseTheStateDtype) {
  // ZeRO-2 over 4 ranks: a rank's flat shard of n / 4 elements, float32
  // moments on it (8 bytes each) and one step: 8 * n / 4 + 4.
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  t.state_dtype = DType::kFloat32;
  t.sharding.strategy = ShardStrategy::kZero2;
  t.sharding.world = 4;
  Result<Report> r = Run(t);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->training.sharding.opt_bytes, 8 * kN / 4 + 4);
  EXPECT_EQ(r->training.sharding.grad_bytes, 2 * kN / 4);
}

TEST_F(StateDtypeTest, StateDtypeOfIsTheRule) {
  EXPECT_EQ(training::StateDtype(DType::kBFloat16, DType::kUnknown, false),
            DType::kBFloat16);
  EXPECT_EQ(training::StateDtype(DType::kBFloat16, DType::kUnknown, true),
            DType::kFloat32);
  EXPECT_EQ(training::StateDtype(DType::kFloat32, DType::kUnknown, true),
            DType::kFloat32);
  EXPECT_EQ(training::StateDtype(DType::kBFloat16, DType::kFloat16, true),
            DType::kFloat16);
}

TEST_F(StateDtypeTest, CombinationsThatDoNotApplyAreErrors) {
  TrainingOptions t;
  t.state_dtype = DType::kFloat32;
  for (OptimizerKind k : {OptimizerKind::kSgd, OptimizerKind::kAdafactor,
                          OptimizerKind::kAdam8bit}) {
    t.optimizer = k;
    Result<Report> r = Run(t);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.status().message(), HasSubstr("does not apply to " +
                                                std::string(OptimizerName(k))));
  }
  t.optimizer = OptimizerKind::kAdamW;
  t.foreach = true;
  EXPECT_THAT(CheckOptimizerSettings(t).message(), HasSubstr("foreach"));
  t.foreach = false;
  t.state_dtype = DType::kInt64;
  EXPECT_THAT(CheckOptimizerSettings(t).message(),
              HasSubstr("not a float dtype"));
  t.state_dtype = DType::kFloat32;
  EXPECT_TRUE(CheckOptimizerSettings(t).ok());
}

}  // namespace
}  // namespace torchcost
