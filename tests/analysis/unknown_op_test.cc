// Tests that one op without a rule does not poison the rest: its outputs take
// the frontend's inferred shapes, the layers after it are costed exactly, the
// totals and the step are marked lower bounds, and the parameters before it
// still get gradients. Expected numbers are derived by hand.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::At;
using testing::GraphBuilder;

// x [M, 8] -> l1 (W1 [4, 8]) -> t::widen (no rule: [M, 4] -> [M, 12]) -> l2 (W2
// [2, 12]).
class UnknownOpTest : public testing::ToyGraphTest {
 protected:
  void SetUp() override {
    ToyGraphTest::SetUp();
    int x = b_.Input();
    int w1 = b_.Param("l1.weight", {4, 8});
    int w2 = b_.Param("l2.weight", {2, 12});
    b_.Scope("l1", "Linear");
    int h = b_.One("t::lin", {x, w1}, {"input", "weight"});
    b_.Scope("widen", "Widen");
    int u = b_.One("t::widen", {h}, {"self"});
    b_.graph().nodes.back().origin = 0;
    b_.Scope("l2", "Linear");
    b_.Output(b_.One("t::lin", {u, w2}, {"input", "weight"}));
    b_.graph().infer_shapes =
        [h](int origin, const std::function<ir::ExampleValue(int)>& example_of,
            std::vector<ir::ExampleValue>* outs, std::string* why) {
          ir::ExampleValue in = example_of(h);
          if (in.kind != ir::ValueKind::kTensor) return false;
          in.shape[1] *= 3;
          outs->assign(1, in);
          return true;
        };
  }

  Report Run(const char* input, StepMode mode = StepMode::kTrain) {
    AnalysisOptions opts;
    opts.training.mode = mode;
    return AnalyzeBuiltGraph(opts, input);
  }
};

// Scopes in creation order.
constexpr int kRoot = 0, kL1 = 1, kWiden = 2, kL2 = 3;

TEST_F(UnknownOpTest, LayersAfterTheOpAreCostedExactlyAndTotalsAreLowerBounds) {
  Report r = Run("5,8");
  EXPECT_EQ(At(r.modules[kL1].macs), 5 * 8 * 4);
  // IN = 12 from the inferred [5, 12].
  EXPECT_EQ(At(r.modules[kL2].macs), 5 * 12 * 2);
  EXPECT_EQ(At(r.macs), 5 * 8 * 4 + 5 * 12 * 2);
  EXPECT_TRUE(r.lower_bound);
  EXPECT_TRUE(r.modules[kRoot].lower_bound);
  EXPECT_TRUE(r.modules[kWiden].lower_bound);
  EXPECT_FALSE(r.modules[kL1].lower_bound);
  EXPECT_FALSE(r.modules[kL2].lower_bound);
  EXPECT_TRUE(r.nodes[1].cost_unknown);
  ASSERT_EQ(r.unknown_ops.size(), 1u);
  EXPECT_EQ(r.unknown_ops[0].op, "t::widen");
}

TEST_F(UnknownOpTest, ParametersBeforeTheOpGetGradients) {
  Report r = Run("5,8");
  const TrainingReport& tr = r.training;
  EXPECT_EQ(tr.grad_params, 4 * 8 + 2 * 12);
  PeakInfo p = EvaluatePeak(tr, {});
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_EQ(At(p.category_max[testing::kGrad]), (4 * 8 + 2 * 12) * 4);
  // l1's weight gradient: grad^T @ input, 2*M*IN*OUT; l1's input needs none.
  // l2: both gradients (its input requires one through the unknown op).
  EXPECT_EQ(At(tr.flops_backward), 2 * 5 * 8 * 4 + 2 * (2 * 5 * 12 * 2));
  EXPECT_TRUE(tr.flops_lower_bound);
  // What l1 and l2 save is known (x [5, 8] and widen's output [5, 12], l2's
  // weight is a parameter); what widen saves is not.
  EXPECT_EQ(At(tr.saved_bytes), (5 * 8 + 5 * 12) * 4);
  EXPECT_TRUE(tr.act_lower_bound);
}

// Without a shape inference, widen's output and everything after it are
// unknown, yet every parameter still gets its gradient (their shapes are
// known).
TEST_F(UnknownOpTest, UnknownShapesStillLeaveNoParameterWithoutAGradient) {
  b_.graph().infer_shapes = nullptr;
  Report r = Run("5,8");
  EXPECT_EQ(r.training.grad_params, 4 * 8 + 2 * 12);
  PeakInfo p = EvaluatePeak(r.training, {});
  ASSERT_TRUE(p.error.empty()) << p.error;
  EXPECT_EQ(At(p.category_max[testing::kGrad]), (4 * 8 + 2 * 12) * 4);
  // l2's rule cannot apply to an unknown input.
  EXPECT_TRUE(r.nodes[2].cost_unknown);
  EXPECT_TRUE(r.modules[kL2].lower_bound);
  EXPECT_TRUE(r.training.act_lower_bound);
}

TEST_F(UnknownOpTest, SymbolicBatchStaysSymbolic) {
  Report r = Run("B,8");
  EXPECT_EQ(r.modules[kL2].macs.ToString(), "24*B");  // B * 12 * 2.
  EXPECT_EQ(r.assumptions.size(), 1u);
}

TEST_F(UnknownOpTest, InferenceHasNoActLowerBound) {
  Report r = Run("5,8", StepMode::kInfer);
  EXPECT_TRUE(r.lower_bound);
  EXPECT_FALSE(r.training.act_lower_bound);
}

TEST_F(UnknownOpTest, StrictModeFails) {
  AnalysisOptions opts;
  opts.strict = true;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "5,8"));
  auto r = Analyze(b_.graph(), rules_, ctx_, opts);
  EXPECT_FALSE(r.ok());
}

TEST_F(UnknownOpTest, KnownGraphsAreNotLowerBounds) {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("l.weight", {4, 8});
  b.Output(b.One("t::lin", {x, w}, {"input", "weight"}));
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "5,8"));
  auto r = Analyze(b.graph(), rules_, ctx_, opts);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->lower_bound);
  EXPECT_FALSE(r->training.flops_lower_bound);
  EXPECT_FALSE(r->training.act_lower_bound);
}

}  // namespace
}  // namespace torchcost
