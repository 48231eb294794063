// Tests of which backward GEMMs Megatron's asynchronous backward collectives
// run beside, on hand-built graphs with each GEMM's seconds given.
#include "analysis/async_backward.h"

#include <gtest/gtest.h>

#include "testing/builtin_graph_test.h"

namespace torchcost::analysis {
namespace {

class AsyncBackwardTest : public testing::BuiltinGraphTest {
 protected:
  Report Analyze(const std::string& input) {
    AnalysisOptions opts;
    opts.moved_bytes = true;  // Views move nothing.
    opts.training.mode = StepMode::kTrain;
    return AnalyzeBuiltGraph(opts, input);
  }
  std::vector<char> Grads(std::initializer_list<int> values) {
    std::vector<char> grad(b_.graph().values.size(), 0);
    for (int v : values) grad[v] = 1;
    return grad;
  }
};

// x [4, 8] -> f -> view [4, 8] -> addmm(b1, ., W1): GPT-2's Conv1D;
// f -> linear(., W2); f -> linear(., W3) with W3 frozen; and a linear on x
// itself. f's all-reduce runs beside W1's and W2's gradient GEMMs only.
TEST_F(AsyncBackwardTest, AllReduceBesideTheWeightGradientsOfItsProducts) {
  const int x = b_.Input();
  const int w1 = b_.Param("w1", {8, 8}), b1 = b_.Param("b1", {8}),
            w2 = b_.Param("w2", {8, 8}), w3 = b_.Param("w3", {8, 8}, false),
            w4 = b_.Param("w4", {8, 8});
  const int f =
      b_.One("torchcost::copy_to_tp_region", {x, b_.Int(2)}, {"self", "world"});
  const int v = b_.One("aten::view", {f, b_.Ints({4, 8})}, {"self", "size"});
  b_.Output(b_.One("aten::addmm", {b1, v, w1}, {"self", "mat1", "mat2"}));
  b_.Output(
      b_.One("aten::linear", {f, w2, b_.None()}, {"input", "weight", "bias"}));
  b_.Output(
      b_.One("aten::linear", {f, w3, b_.None()}, {"input", "weight", "bias"}));
  b_.Output(
      b_.One("aten::linear", {x, w4, b_.None()}, {"input", "weight", "bias"}));
  const Report r = Analyze("4,8");
  // Nodes: 0 f, 1 view, 2 addmm, 3 linear W2, 4 linear W3, 5 linear W4.
  const std::vector<double> gemm = {0, 0, 1e-6, 2e-6, 4e-6, 8e-6};
  const std::vector<char> grad = Grads({w1, b1, w2, w4});
  const AsyncBackwardOverlap overlap(b_.graph(), r, grad, gemm);
  EXPECT_DOUBLE_EQ(overlap.Beside(0, CollectiveKind::kAllReduce), 3e-6);
  EXPECT_EQ(overlap.Beside(0, CollectiveKind::kAllGather), 0);
  EXPECT_EQ(overlap.Beside(3, CollectiveKind::kAllReduce), 0);  // Not an f.
}

// Sequence parallelism's gathering linear: the reduce-scatter of the input
// gradient beside its own weight gradient's GEMM, the all-gather of the
// input (for the weight gradient) beside its input gradient's.
TEST_F(AsyncBackwardTest, SequenceParallelLinearHidesBehindItsOwnGemms) {
  const int x = b_.Input();
  const int w = b_.Param("w", {8, 8});
  b_.Output(b_.One("torchcost::sp_linear", {x, w, b_.None(), b_.Int(2)},
                   {"input", "weight", "bias", "world"}));
  const Report r = Analyze("1,4,8");
  const std::vector<double> gemm = {5e-6};
  const std::vector<char> both_grads = Grads({x, w}), input_grad = Grads({x});
  const AsyncBackwardOverlap both(b_.graph(), r, both_grads, gemm);
  EXPECT_DOUBLE_EQ(both.Beside(0, CollectiveKind::kReduceScatter), 5e-6);
  EXPECT_DOUBLE_EQ(both.Beside(0, CollectiveKind::kAllGather), 5e-6);
  EXPECT_EQ(both.Beside(0, CollectiveKind::kAllReduce), 0);
  // The weight frozen: no weight-gradient GEMM for the reduce-scatter.
  const AsyncBackwardOverlap frozen(b_.graph(), r, input_grad, gemm);
  EXPECT_EQ(frozen.Beside(0, CollectiveKind::kReduceScatter), 0);
  EXPECT_DOUBLE_EQ(frozen.Beside(0, CollectiveKind::kAllGather), 5e-6);
}

}  // namespace
}  // namespace torchcost::analysis
