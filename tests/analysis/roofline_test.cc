// The roofline time, derived by hand from datasheet figures: a bfloat16
// matmul (compute-bound), a float32 relu (memory-bound), a training step's
// phases and its MFU, and the errors of unbound symbols.
#include "torchcost/roofline.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/graph_builder.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;

// A100 80GB SXM (gpus/gpus.yaml): 312 TFLOP/s bf16, 19.5 TFLOP/s fp32, 2039
// GB/s.
constexpr double kBf16 = 312e12, kFp32 = 19.5e12, kBandwidth = 2039e9;

class RooflineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto r = RuleSet::Builtin();
    ASSERT_TRUE(r.ok()) << r.status().message();
    rules_ = std::move(r).value();
    auto gpu = FindGpu("A100-80GB-SXM");
    ASSERT_TRUE(gpu.ok()) << gpu.status().message();
    gpu_ = *gpu;
  }
  Report Run(const std::string& input, StepMode mode,
             DType param_dtype = DType::kUnknown) {
    AnalysisOptions opts;
    opts.training.mode = mode;
    opts.param_dtype = param_dtype;
    opts.moved_bytes = true;
    opts.inputs.push_back(*ParseInputSpec(ctx_, input));
    auto r = Analyze(b_.graph(), rules_, ctx_, opts);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? std::move(r).value() : Report();
  }
  // x [256, 1024] @ W^T, W [4096, 1024], no bias.
  void Linear() {
    int x = b_.Input();
    int w = b_.Param("fc.weight", {4096, 1024});
    b_.Scope("fc", "Linear");
    b_.Output(
        b_.One("aten::linear", {x, w, b_.None()}, {"input", "weight", "bias"}));
  }
  GraphBuilder b_;
  RuleSet rules_;
  sym::Context ctx_;
  GpuSpec gpu_;
};

TEST_F(RooflineTest, MatmulBytesAndComputeBoundTime) {
  Linear();
  Report r = Run("256,1024:bfloat16", StepMode::kInfer, DType::kBFloat16);
  const int node = static_cast<int>(r.nodes.size()) - 1;
  // Reads x and W, writes y, 2 bytes each: (256*1024 + 4096*1024 + 256*4096)
  // * 2.
  const int64_t bytes = (256 * 1024 + 4096 * 1024 + 256 * 4096) * 2;
  EXPECT_EQ(r.nodes[node].bytes, sym::Expr(bytes));
  EXPECT_EQ(r.nodes[node].op_class, OpClass::kMatmul);
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  // 2*256*1024*4096 FLOPs at 312 TFLOP/s (6.88 us) exceed 11.0 MB at 2039 GB/s
  // (5.40 us).
  const double flops = 2.0 * 256 * 1024 * 4096;
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[node], flops / kBf16);
  EXPECT_GT(flops / kBf16, bytes / kBandwidth);
  EXPECT_DOUBLE_EQ(t->forward_seconds, flops / kBf16);
  EXPECT_DOUBLE_EQ(t->step_seconds, flops / kBf16);
  EXPECT_DOUBLE_EQ(t->module_forward_seconds[0],
                   flops / kBf16);  // The root's subtree.
  // Inference MFU: forward FLOPs / (seconds * bf16 peak) = 1 for one
  // compute-bound matmul.
  EXPECT_EQ(t->peak_dtype, "bfloat16");
  EXPECT_DOUBLE_EQ(t->mfu, 1.0);
  // Samples: a float input's first dim.
  EXPECT_EQ(t->throughput_unit, "samples");
  EXPECT_DOUBLE_EQ(t->items_per_second, 256 / (flops / kBf16));
  EXPECT_EQ(t->source, "roofline on A100-80GB-SXM");
}

TEST_F(RooflineTest, PointwiseIsMemoryBound) {
  int x = b_.Input();
  b_.Output(b_.One("aten::relu", {x}, {"self"}));
  Report r = Run("1024,1024", StepMode::kInfer);
  // Reads and writes 1024*1024 float32: 2 * 4 MiB.
  const int64_t bytes = 2 * 1024 * 1024 * 4;
  EXPECT_EQ(r.nodes[0].bytes, sym::Expr(bytes));
  EXPECT_EQ(r.nodes[0].op_class, OpClass::kPointwise);
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  // 8.39 MB at 2039 GB/s = 4.11 us; 1 Mi FLOPs at 19.5 TFLOP/s = 0.05 us.
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[0], bytes / kBandwidth);
  // A class efficiency divides it: half the bandwidth achieved, twice the time.
  gpu_.efficiency[static_cast<int>(OpClass::kPointwise)] = 0.5;
  t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[0], 2 * bytes / kBandwidth);
  EXPECT_DOUBLE_EQ(
      t->class_roofline_seconds[static_cast<int>(OpClass::kPointwise)],
      bytes / kBandwidth);
  EXPECT_EQ(t->source, "roofline on A100-80GB-SXM with fitted efficiencies");
}

TEST_F(RooflineTest, TrainingStepPhasesAndMfu) {
  Linear();
  Report r = Run("256,1024:bfloat16", StepMode::kTrain, DType::kBFloat16);
  const int node = static_cast<int>(r.nodes.size()) - 1;
  // Backward of the weight only (x needs no gradient): reads grad_out [256,
  // 4096] and the saved x, writes dW [4096, 1024], 2 bytes each.
  const int64_t bwd_bytes = (256 * 4096 + 256 * 1024 + 4096 * 1024) * 2;
  ASSERT_EQ(r.training.node_bwd_bytes.size(), r.nodes.size());
  EXPECT_EQ(r.training.node_bwd_bytes[node], sym::Expr(bwd_bytes));
  // AdamW on W (bfloat16, states in bfloat16): W read and written, dW read,
  // exp_avg and exp_avg_sq read and written, and the float32 step tensor (4
  // bytes) read and written.
  const int64_t w = 4096 * 1024 * 2;
  const int64_t opt_bytes = 3 * w + 2 * (2 * w + 4);
  EXPECT_EQ(r.training.optimizer_bytes, sym::Expr(opt_bytes));
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  const double mm = 2.0 * 256 * 1024 * 4096 /
                    kBf16;  // Forward and dW: one compute-bound matmul each.
  EXPECT_DOUBLE_EQ(t->forward_seconds, mm);
  EXPECT_DOUBLE_EQ(t->backward_seconds, mm);
  const double opt_flops =
      static_cast<double>(*r.training.flops_optimizer.AsConstant());
  const double opt = std::max(opt_flops / kFp32, opt_bytes / kBandwidth);
  EXPECT_DOUBLE_EQ(t->optimizer_seconds, opt);
  EXPECT_DOUBLE_EQ(t->step_seconds, 2 * mm + opt);
  // Per class and phase: the matmul in each of forward and backward, the
  // optimizer's pass apart.
  const int mm_class = static_cast<int>(OpClass::kMatmul);
  EXPECT_DOUBLE_EQ(t->class_forward_roofline_seconds[mm_class], mm);
  EXPECT_DOUBLE_EQ(t->class_backward_roofline_seconds[mm_class], mm);
  EXPECT_DOUBLE_EQ(
      t->class_roofline_seconds[static_cast<int>(OpClass::kOptimizer)], opt);
  // MFU = step FLOPs / (step seconds * 312 TFLOP/s); the precision is "bf16".
  const double step_flops =
      static_cast<double>(*r.training.flops_step.AsConstant());
  EXPECT_DOUBLE_EQ(step_flops, 2 * 2.0 * 256 * 1024 * 4096 + opt_flops);
  EXPECT_DOUBLE_EQ(t->mfu, step_flops / ((2 * mm + opt) * kBf16));
  EXPECT_LT(t->mfu, 1.0);
}

TEST_F(RooflineTest, KernelOverheadPerNodeAndParameter) {
  // relu -> linear (W [4096, 1024], no bias) in training: forward 2 kernels
  // (relu, matmul); backward 1, the linear's dW (x needs no gradient, so
  // neither dx nor the relu's backward runs); optimizer 9 (AdamW, the
  // default, on one tensor: adamw.py's param.mul_, exp_avg.mul_().add_(),
  // exp_avg_sq.mul_().addcmul_(), sqrt, / bc2_sqrt, .add_(eps), addcdiv_).
  int x = b_.Input();
  int h = b_.One("aten::relu", {x}, {"self"});
  int w = b_.Param("fc.weight", {4096, 1024});
  b_.Output(
      b_.One("aten::linear", {h, w, b_.None()}, {"input", "weight", "bias"}));
  Report r = Run("256,1024", StepMode::kTrain);
  Result<TimeReport> base = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(base.ok()) << base.status().message();
  EXPECT_EQ(base->overhead_seconds, 0);  // Not modelled unless given.
  const int mm = static_cast<int>(OpClass::kMatmul);
  const int pw = static_cast<int>(OpClass::kPointwise);
  const int opt = static_cast<int>(OpClass::kOptimizer);
  EXPECT_EQ(base->class_kernels[pw], 1);   // The relu's forward.
  EXPECT_EQ(base->class_kernels[mm], 2);   // The linear's forward and backward.
  EXPECT_EQ(base->class_kernels[opt], 9);  // fc.weight.
  EXPECT_EQ(base->class_forward_kernels[mm], 1);
  EXPECT_EQ(base->class_backward_kernels[mm], 1);
  EXPECT_EQ(base->class_backward_kernels[pw], 0);
  gpu_.kernel_overhead = 5e-6;
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  // Twelve kernels, 5 us each, on top of the roofline; per phase: forward 2,
  // backward 1, optimizer 9.
  EXPECT_DOUBLE_EQ(t->overhead_seconds, 12 * 5e-6);
  EXPECT_DOUBLE_EQ(t->kernel_overhead, 5e-6);
  EXPECT_NEAR(t->forward_seconds, base->forward_seconds + 2 * 5e-6, 1e-15);
  EXPECT_NEAR(t->backward_seconds, base->backward_seconds + 5e-6, 1e-15);
  EXPECT_NEAR(t->optimizer_seconds, base->optimizer_seconds + 9 * 5e-6, 1e-15);
  EXPECT_NEAR(t->step_seconds, base->step_seconds + 12 * 5e-6, 1e-15);
  // The roofline seconds a calibration fits against do not include it.
  EXPECT_EQ(t->class_roofline_seconds, base->class_roofline_seconds);
}

// A linear's backward launches one GEMM per operand that needs a gradient
// and a reduction for a bias that needs one (derivatives.yaml: addmm's mat1:
// grad.mm(mat2.t()), mat2: mat1.t().mm(grad), self: grad summed to [OUT]).
// Read per node from the backward seconds with a 1 s overhead per kernel.
TEST_F(RooflineTest, LinearBackwardKernelsFollowTheGradients) {
  // fc1 (bias; x needs no gradient): dW1 + db1 = 2. fc2 (no bias; its input
  // needs one): dh + dW2 = 2.
  int x = b_.Input();
  int w1 = b_.Param("fc1.weight", {64, 32});
  int b1 = b_.Param("fc1.bias", {64});
  int h = b_.One("aten::linear", {x, w1, b1}, {"input", "weight", "bias"});
  int w2 = b_.Param("fc2.weight", {16, 64});
  b_.Output(
      b_.One("aten::linear", {h, w2, b_.None()}, {"input", "weight", "bias"}));
  Report r = Run("8,32", StepMode::kTrain);
  gpu_.kernel_overhead = 1;
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<int> linears;
  for (size_t ni = 0; ni < b_.graph().nodes.size(); ++ni)
    if (b_.graph().nodes[ni].op == "aten::linear")
      linears.push_back(static_cast<int>(ni));
  ASSERT_EQ(linears.size(), 2u);
  EXPECT_NEAR(t->node_backward_seconds[linears[0]], 2, 1e-6);
  EXPECT_NEAR(t->node_backward_seconds[linears[1]], 2, 1e-6);
  EXPECT_EQ(t->class_backward_kernels[static_cast<int>(OpClass::kMatmul)], 4);
}

TEST_F(RooflineTest, LinearWithBiasAndInputGradient) {
  // fc1 (no bias; x needs no gradient): dW1 = 1. fc2 (bias; its input needs
  // one): dh + dW2 + db2 = 3.
  int x = b_.Input();
  int w1 = b_.Param("fc1.weight", {64, 32});
  int h =
      b_.One("aten::linear", {x, w1, b_.None()}, {"input", "weight", "bias"});
  int w2 = b_.Param("fc2.weight", {16, 64});
  int b2 = b_.Param("fc2.bias", {16});
  b_.Output(b_.One("aten::linear", {h, w2, b2}, {"input", "weight", "bias"}));
  Report r = Run("8,32", StepMode::kTrain);
  gpu_.kernel_overhead = 1;
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_TRUE(t.ok()) << t.status().message();
  std::vector<int> linears;
  for (size_t ni = 0; ni < b_.graph().nodes.size(); ++ni)
    if (b_.graph().nodes[ni].op == "aten::linear")
      linears.push_back(static_cast<int>(ni));
  ASSERT_EQ(linears.size(), 2u);
  EXPECT_NEAR(t->node_backward_seconds[linears[0]], 1, 1e-6);
  EXPECT_NEAR(t->node_backward_seconds[linears[1]], 3, 1e-6);
}

// The optimizer's kernels for three trainable tensors (fc1.weight, fc1.bias,
// fc2.weight): Adam's single-tensor loop 3 x 8 = 24; its foreach step one
// launch per multi-tensor op (all three fit one), 8.
TEST_F(RooflineTest, AdamKernelsSingleTensorAndForeach) {
  int x = b_.Input();
  int w1 = b_.Param("fc1.weight", {64, 32});
  int b1 = b_.Param("fc1.bias", {64});
  int h = b_.One("aten::linear", {x, w1, b1}, {"input", "weight", "bias"});
  int w2 = b_.Param("fc2.weight", {16, 64});
  b_.Output(
      b_.One("aten::linear", {h, w2, b_.None()}, {"input", "weight", "bias"}));
  const int opt = static_cast<int>(OpClass::kOptimizer);
  for (bool foreach : {false, true}) {
    AnalysisOptions opts;
    opts.training.mode = StepMode::kTrain;
    opts.training.optimizer = OptimizerKind::kAdam;
    opts.training.foreach = foreach;
    opts.moved_bytes = true;
    opts.inputs.push_back(*ParseInputSpec(ctx_, "8,32"));
    auto r = Analyze(b_.graph(), rules_, ctx_, opts);
    ASSERT_TRUE(r.ok()) << r.status().message();
    Result<TimeReport> t = EstimateTime(b_.graph(), *r, gpu_, {});
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->class_kernels[opt], foreach ? 8 : 24) << foreach;
  }
}

TEST_F(RooflineTest, UnboundSymbolIsAnError) {
  int x = b_.Input();
  b_.Output(b_.One("aten::relu", {x}, {"self"}));
  Report r = Run("B,1024", StepMode::kInfer);
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("'B'"), std::string::npos)
      << t.status().message();
  t = EstimateTime(b_.graph(), r, gpu_, {{"B", 2}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[0], 2 * (2 * 1024 * 4) / kBandwidth);
}

TEST(RooflineSecondsTest, TheLargerOfComputeAndMemory) {
  EXPECT_DOUBLE_EQ(RooflineSeconds(100, 10, 10, 10),
                   10);  // 100 / 10 vs 10 / 10.
  EXPECT_DOUBLE_EQ(RooflineSeconds(10, 100, 10, 10), 10);
  EXPECT_DOUBLE_EQ(RooflineSeconds(0, 0, 10, 10), 0);
}

}  // namespace
}  // namespace torchcost
