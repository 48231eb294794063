#include "torchcost/evaluator.h"

#include <gtest/gtest.h>

#include <vector>

namespace torchcost {
namespace {

// Hand-made costs: params 3 H^2, FLOPs 2 B H^2 and 4 B H^2, the peak
// max(100 + B H, 10 B H + 7).
TEST(EvaluatorTest, EvaluatesABatchOfCandidates) {
  sym::Context ctx;
  const sym::Expr h = ctx.Symbol("H"), b = ctx.Symbol("B");
  SymbolicCosts c;
  c.params = 3 * h * h;
  c.trainable_params = h * h;
  c.flops_forward = 2 * b * h * h;
  c.flops_backward = 4 * b * h * h;
  c.peak_candidates = {100 + b * h, 10 * b * h + 7};
  Result<Evaluator> ev = Evaluator::Compile(c, {"H", "B"});
  ASSERT_TRUE(ev.ok()) << ev.status().message();
  EXPECT_EQ(ev->num_peak_candidates(), 2u);
  const std::vector<int64_t> values = {2, 3, /**/ 10, 1};
  CandidateCosts out[2];
  ev->Evaluate(values.data(), 2, out);
  ASSERT_TRUE(out[0].ok && out[1].ok);
  EXPECT_EQ(out[0].params, 12);
  EXPECT_EQ(out[0].trainable_params, 4);
  EXPECT_EQ(out[0].flops_forward, 24);
  EXPECT_EQ(out[0].flops_backward, 48);
  EXPECT_EQ(out[0].peak_bytes, 106);  // max(100 + 6, 60 + 7) at H = 2, B = 3.
  EXPECT_EQ(out[1].peak_bytes, 110);  // max(100 + 10, 100 + 7).
}

TEST(EvaluatorTest, MissingSymbolIsAnError) {
  sym::Context ctx;
  SymbolicCosts c;
  c.params = ctx.Symbol("H");
  Result<Evaluator> ev = Evaluator::Compile(c, {"B"});
  ASSERT_FALSE(ev.ok());
  EXPECT_NE(ev.status().message().find("'H'"), std::string::npos)
      << ev.status().message();
}

// 2^40 * H^2 leaves int64 at H = 2^12: the candidate is marked, the next one is
// fine.
TEST(EvaluatorTest, OverflowMarksTheCandidate) {
  sym::Context ctx;
  const sym::Expr h = ctx.Symbol("H");
  SymbolicCosts c;
  c.flops_forward = (int64_t{1} << 40) * h * h;
  Result<Evaluator> ev = Evaluator::Compile(c, {"H"});
  ASSERT_TRUE(ev.ok());
  const std::vector<int64_t> values = {int64_t{1} << 12, 2};
  CandidateCosts out[2];
  ev->Evaluate(values.data(), 2, out);
  EXPECT_FALSE(out[0].ok);
  EXPECT_TRUE(out[1].ok);
  EXPECT_EQ(out[1].flops_forward, int64_t{1} << 42);
}

}  // namespace
}  // namespace torchcost
