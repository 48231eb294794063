// Tests of the simulated step (memory/step.h) through the whole analysis, on
// a two-layer MLP written as a graph: what is saved, backward FLOPs, the memory
// timeline and its peak, with every expected number derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "testing/toy_graphs.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::At;
using testing::GraphBuilder;
using ::testing::HasSubstr;

// x [M, 8] -> lin1 (W1 [4, 8]) -> relu -> lin2 (W2 [2, 4]) -> out [M, 2].
class StepTest : public testing::ToyGraphTest {
 protected:
  void SetUp() override {
    ToyGraphTest::SetUp();
    testing::ToyMlp(b_);
  }
  Report Run(const char* input, TrainingOptions t) {
    AnalysisOptions opts;
    opts.training = t;
    return AnalyzeBuiltGraph(opts, input);
  }
};

// Parameter bytes (float32).
constexpr int64_t kW1 = 4 * 8 * 4, kW2 = 2 * 4 * 4;

TEST_F(StepTest, SavedBytesAndBackwardFlops) {
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgd;
  Report r = Run("5,8", t);
  // lin1 saves x (W1 needs a gradient; x does not, so W1 is not saved); relu
  // saves its output, which lin2 saves too (one storage); lin2's W2 is a param.
  EXPECT_EQ(At(r.training.saved_bytes),
            5 * 8 * 4 /*x*/ + 5 * 4 * 4 /*relu out*/);
  // lin2: input and weight gradients; relu: one per element; lin1: weight only.
  EXPECT_EQ(At(r.training.flops_backward),
            2 * (2 * 5 * 4 * 2) + 5 * 4 + 2 * 5 * 8 * 4);
  // SGD: p -= lr * g, 2 FLOPs per trainable element.
  EXPECT_EQ(At(r.training.flops_optimizer), 2 * (32 + 8));
  EXPECT_EQ(r.training.grad_params, 32 + 8);
}

TEST_F(StepTest, FrozenLayerCostsOnlyItsInputGradient) {
  TrainingOptions t;
  t.freeze = {"^l2\\."};
  Report r = Run("5,8", t);
  // lin2 frozen: no weight gradient, so its input (relu out) is not saved by
  // it, but its weight is (for the input gradient); relu still saves its
  // output.
  EXPECT_EQ(At(r.training.flops_backward),
            2 * 5 * 4 * 2 + 5 * 4 + 2 * 5 * 8 * 4);
  EXPECT_EQ(r.training.grad_params, 32);
  EXPECT_EQ(At(r.training.saved_bytes), 5 * 8 * 4 + 5 * 4 * 4);
}

TEST_F(StepTest, PeakBreakdownSumsToThePeak) {
  TrainingOptions t;
  t.optimizer = OptimizerKind::kAdam;
  Report r = Run("5,8", t);
  PeakInfo p = EvaluatePeak(r.training, {});
  ASSERT_TRUE(p.decided);
  sym::Expr sum(0);
  for (const auto& c : p.at_peak) sum += c;
  EXPECT_EQ(sum, p.peak);
  // Params and Adam states (2 per element + a 4-byte step per tensor) are live
  // throughout.
  EXPECT_EQ(At(p.category_max[testing::kParam]), kW1 + kW2);
  EXPECT_EQ(At(p.category_max[testing::kOpt]), 2 * (kW1 + kW2) + 2 * 4);
  EXPECT_EQ(At(p.category_max[testing::kGrad]), kW1 + kW2);
  // ACT at its largest: h's storage is relu's output? No: relu allocates a new
  // output; lin1's output h is not saved (relu saves its result), so ACT is the
  // relu output (x is an input, counted under OTH).
  EXPECT_EQ(At(p.category_max[testing::kAct]), 5 * 4 * 4);
}

TEST_F(StepTest, SymbolicBatchGivesExpressions) {
  TrainingOptions t;
  t.optimizer = OptimizerKind::kSgd;
  Report r = Run("B,8", t);
  const sym::Expr B = ctx_.Symbol("B");
  EXPECT_EQ(r.training.saved_bytes, B * 32 + B * 16);
  // Which moment peaks depends on B (gradients and params at small B,
  // activations at large B), so unbound the peak is an exact max(...) of the
  // candidate moments, and it agrees with the simulation at each bound B.
  PeakInfo unbound = EvaluatePeak(r.training, {});
  EXPECT_FALSE(unbound.decided);
  for (int64_t b : {1, 7, 1000}) {
    PeakInfo p = EvaluatePeak(r.training, {{"B", b}});
    ASSERT_TRUE(p.decided);
    EXPECT_EQ(*sym::Evaluate(unbound.peak, {{"B", b}}), *p.peak.AsConstant())
        << "B=" << b;
  }
}

TEST_F(StepTest, InferenceSavesNothingAndHasNoGradients) {
  TrainingOptions t;
  t.mode = StepMode::kInfer;
  Report r = Run("5,8", t);
  EXPECT_EQ(At(r.training.saved_bytes), 0);
  EXPECT_EQ(At(r.training.flops_backward), 0);
  PeakInfo p = EvaluatePeak(r.training, {});
  EXPECT_EQ(At(p.category_max[testing::kGrad]), 0);
  // Peak of the forward: params, input x, and at lin1 h; at relu h and its
  // output; at lin2 the relu output and out: max(20*4 + 20*4, 20*4 + 10*4) over
  // x (160).
  EXPECT_EQ(At(p.peak), kW1 + kW2 + 5 * 8 * 4 + 5 * 4 * 4 + 5 * 4 * 4);
}

TEST_F(StepTest, ZeroGradToZerosKeepsGradientsAllocated) {
  TrainingOptions none;
  none.optimizer = OptimizerKind::kSgd;
  Report a = Run("5,8", none);
  TrainingOptions zeros = none;
  zeros.set_to_none = false;
  Report b = Run("5,8", zeros);
  PeakInfo pa = EvaluatePeak(a.training, {}), pb = EvaluatePeak(b.training, {});
  // Gradients stay allocated: GRAD is the parameters' bytes from the start.
  EXPECT_EQ(At(pb.category_max[testing::kGrad]), kW1 + kW2);
  EXPECT_EQ(At(b.training.timeline[1].live[testing::kGrad]), kW1 + kW2);
  EXPECT_EQ(At(a.training.timeline[0].live[testing::kGrad]), 0);
  // And the step adds each new gradient into .grad: one add per trainable
  // element.
  EXPECT_EQ(At(b.training.flops_backward),
            At(a.training.flops_backward) + 32 + 8);
  EXPECT_GE(At(pb.peak), At(pa.peak));
}

TEST_F(StepTest, GradientAccumulation) {
  TrainingOptions one;
  one.optimizer = OptimizerKind::kSgd;
  Report a = Run("5,8", one);
  TrainingOptions four = one;
  four.accumulate = 4;
  Report b = Run("5,8", four);
  // Four forward and backward passes of the micro-batch, three of them adding
  // into existing gradients (one add per trainable element), one optimizer
  // step.
  EXPECT_EQ(At(b.training.flops_step),
            4 * (At(a.training.flops_forward) + At(a.training.flops_backward)) +
                3 * (32 + 8) + At(a.training.flops_optimizer));
  EXPECT_EQ(At(EvaluatePeak(b.training, {}).category_max[testing::kGrad]),
            kW1 + kW2);
}

// a = linear(x) [1, 4, 4]; a[:, 1:, 1:] += p (add_ into a view of a); out =
// softmax(a). Only the in-place write connects p [3, 3] to the output: its
// gradient exists (PyTorch routes a's gradient into the write through
// CopySlices), so GRAD holds W, b and p: (16 + 4 + 9) floats.
TEST(StepInPlaceTest, AWriteIntoAViewReachesTheLoss) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  sym::Context ctx;
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("l.weight", {4, 4});
  int bias = b.Param("l.bias", {4});
  int p = b.Param("p", {3, 3});
  int a = b.One("aten::linear", {x, w, bias}, {"input", "weight", "bias"});
  int v1 =
      b.One("aten::slice.Tensor", {a, b.Int(1), b.Int(1), b.Int(4), b.Int(1)},
            {"self", "dim", "start", "end", "step"});
  int v2 =
      b.One("aten::slice.Tensor", {v1, b.Int(2), b.Int(1), b.Int(4), b.Int(1)},
            {"self", "dim", "start", "end", "step"});
  b.One("aten::add_.Tensor", {v2, p, b.Int(1)}, {"self", "other", "alpha"});
  b.Output(b.One("aten::softmax.int", {a, b.Int(-1), b.None()},
                 {"self", "dim", "dtype"}));
  AnalysisOptions opts;
  opts.training.optimizer = OptimizerKind::kSgd;
  opts.inputs.push_back(*ParseInputSpec(ctx, "1,4,4"));
  auto r = Analyze(b.graph(), *rules, ctx, opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  PeakInfo peak = EvaluatePeak(r->training, {});
  EXPECT_EQ(*peak.category_max[testing::kGrad].AsConstant(), (16 + 4 + 9) * 4);
}

TEST_F(StepTest, BadFreezeRegexIsAnError) {
  TrainingOptions t;
  t.freeze = {"("};
  AnalysisOptions opts;
  opts.training = t;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "5,8"));
  auto r = Analyze(b_.graph(), rules_, ctx_, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(
      r.status().message(),
      HasSubstr("StepConfig.freeze '(': not a valid regular expression"));
}

}  // namespace
}  // namespace torchcost
