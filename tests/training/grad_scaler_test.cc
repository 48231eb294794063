// Tests of the GradScaler model: its event sequences (each tensor freed once,
// the bytes of grad_scaler.py's allocations) and what it adds to a step.
#include "training/grad_scaler.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "testing/graph_builder.h"
#include "testing/timeline.h"
#include "torchcost/analysis.h"

namespace torchcost::training {
namespace {

// Replays sequences; returns the largest live bytes and the live bytes at the
// end.
std::pair<int64_t, int64_t> Replay(
    const std::vector<std::vector<training::Event>>& seqs) {
  std::map<int, int64_t> live;
  int64_t now = 0, max = 0;
  for (const auto& seq : seqs) {
    for (const training::Event& e : seq) {
      if (e.kind == training::Event::Kind::kAlloc) {
        EXPECT_EQ(live.count(e.tensor), 0u)
            << "tensor " << e.tensor << " allocated twice";
        live[e.tensor] = e.bytes;
        now += e.bytes;
      } else if (e.kind == training::Event::Kind::kFree) {
        EXPECT_EQ(live.count(e.tensor), 1u)
            << "tensor " << e.tensor << " freed while not live";
        now -= live[e.tensor];
        live.erase(e.tensor);
      }
      max = std::max(max, now);
    }
  }
  return {max, now};
}

TEST(GradScalerTest, Backward) {
  // scaled loss (float32 [1]: 4) + root gradient (4) + grad * _scale (4) +
  // summed to [] (4).
  auto [max, end] =
      Replay({ScaledLossBackward(), ScaledLossGradDone(), ScaledBackwardEnd()});
  EXPECT_EQ(max, 4 + 4 + 4 + 4);
  EXPECT_EQ(end, 4);  // The scaled loss stays with the caller.
}

TEST(GradScalerTest, UnscaleAndUpdate) {
  // _scale.double() (8) and its reciprocal (8) alive together; then inv_scale
  // (4) and found_inf (4).
  auto [max, end] = Replay({Unscale()});
  EXPECT_EQ(max, 8 + 8);
  EXPECT_EQ(end, 4);  // found_inf, until update().
  auto [max2, end2] = Replay({Unscale(), Update()});
  EXPECT_EQ(end2, 0);
}

TEST(GradScalerTest, StateIsOptAndTheStepAddsItsTensors) {
  // x [2, 4] -> linear(W [3, 4]) -> out [2, 3]: the step with and without a
  // scaler.
  testing::GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("fc.weight", {3, 4});
  b.Scope("fc", "Linear");
  b.Output(
      b.One("aten::linear", {x, w, b.None()}, {"input", "weight", "bias"}));
  auto rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  sym::Context ctx;
  AnalysisOptions o;
  InputSpec in;
  in.shape = {sym::Expr(2), sym::Expr(4)};
  o.inputs = {in};
  o.training.optimizer = OptimizerKind::kSgd;
  auto plain = Analyze(b.graph(), *rules, ctx, o);
  o.training.grad_scaler = true;
  auto scaled = Analyze(b.graph(), *rules, ctx, o);
  ASSERT_TRUE(plain.ok() && scaled.ok());
  const PeakInfo p0 = EvaluatePeak(plain->training, {});
  const PeakInfo p1 = EvaluatePeak(scaled->training, {});
  EXPECT_EQ(p1.category_max[testing::kOpt],
            p0.category_max[testing::kOpt] + sym::Expr(kScalerStateBytes));
  // The scaled loss.
  EXPECT_EQ(p1.category_max[testing::kOther],
            p0.category_max[testing::kOther] + sym::Expr(4));
  EXPECT_TRUE(scaled->training.grad_scaler);
  // unscale_ multiplies each of the 12 gradient elements by 1/scale.
  EXPECT_EQ(scaled->training.flops_optimizer,
            plain->training.flops_optimizer + sym::Expr(3 * 4));
}

}  // namespace
}  // namespace torchcost::training
