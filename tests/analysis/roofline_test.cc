// The roofline time, derived by hand from datasheet figures: a bfloat16
// matmul (compute-bound), a float32 relu (memory-bound), a training step's
// phases and its MFU, and the errors of unbound symbols.
#include "torchcost/roofline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "testing/builtin_graph_test.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

// A100 80GB SXM (gpus/gpus.yaml): 312 TFLOP/s bf16, 19.5 TFLOP/s fp32, 2039
// GB/s.
constexpr double kBf16 = 312e12, kFp32 = 19.5e12, kBandwidth = 2039e9;

// Indices of the op classes in TimeReport's per-class arrays.
constexpr int kMm = static_cast<int>(OpClass::kMatmul);
constexpr int kPw = static_cast<int>(OpClass::kPointwise);
constexpr int kOptim = static_cast<int>(OpClass::kOptimizer);

class RooflineTest : public testing::BuiltinGraphTest {
 protected:
  void SetUp() override {
    auto gpu = FindGpu("A100-80GB-SXM");
    ASSERT_TRUE(gpu.ok()) << gpu.status().message();
    gpu_ = *gpu;
  }
  // Analyses the built graph with moved bytes under `opts`, x of shape
  // `input`.
  Report Run(const std::string& input, AnalysisOptions opts) {
    opts.moved_bytes = true;
    return AnalyzeBuiltGraph(std::move(opts), input);
  }
  Report Run(const std::string& input, StepMode mode,
             DType param_dtype = DType::kUnknown) {
    AnalysisOptions opts;
    opts.training.mode = mode;
    opts.param_dtype = param_dtype;
    return Run(input, std::move(opts));
  }
  // The roofline time of `r` on gpu_ with `bindings`.
  Result<TimeReport> Time(const Report& r, const sym::Bindings& bindings = {}) {
    Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, bindings);
    EXPECT_TRUE(t.ok()) << t.status().message();
    return t;
  }
  // x [256, 1024] @ W^T, W [4096, 1024], no bias.
  void Linear() {
    int x = b_.Input();
    int w = b_.Param("fc.weight", {4096, 1024});
    b_.Scope("fc", "Linear");
    b_.Output(
        b_.One("aten::linear", {x, w, b_.None()}, {"input", "weight", "bias"}));
  }
  // x [8, 32] -> fc1 (Linear 32 -> 64) -> fc2 (Linear 64 -> 16), each with a
  // bias where asked.
  void TwoLinears(bool fc1_bias, bool fc2_bias) {
    int x = b_.Input();
    int w1 = b_.Param("fc1.weight", {64, 32});
    int b1 = fc1_bias ? b_.Param("fc1.bias", {64}) : b_.None();
    int h = b_.One("aten::linear", {x, w1, b1}, {"input", "weight", "bias"});
    int w2 = b_.Param("fc2.weight", {16, 64});
    int b2 = fc2_bias ? b_.Param("fc2.bias", {16}) : b_.None();
    b_.Output(b_.One("aten::linear", {h, w2, b2}, {"input", "weight", "bias"}));
  }
  // x [256, 1024] -> relu -> linear (W [4096, 1024], no bias): a training
  // step's report.
  Report ReluThenLinearStep() {
    int x = b_.Input();
    int h = b_.One("aten::relu", {x}, {"self"});
    int w = b_.Param("fc.weight", {4096, 1024});
    b_.Output(
        b_.One("aten::linear", {h, w, b_.None()}, {"input", "weight", "bias"}));
    return Run("256,1024", StepMode::kTrain);
  }
  // x -> relu.
  void Relu() {
    int x = b_.Input();
    b_.Output(b_.One("aten::relu", {x}, {"self"}));
  }
  // Times a training step of the built graph ("8,32") with a 1 s overhead
  // per kernel, keeping it in time_; returns the backward seconds of each
  // aten::linear node in order (its kernels, to within the roofline's
  // microseconds).
  std::vector<double> LinearBackwardSeconds() {
    Report r = Run("8,32", StepMode::kTrain);
    gpu_.kernel_overhead = 1;
    Result<TimeReport> t = Time(r);
    if (!t.ok()) return {};
    time_ = std::move(t).value();
    std::vector<double> seconds;
    for (size_t ni = 0; ni < b_.graph().nodes.size(); ++ni)
      if (b_.graph().nodes[ni].op == "aten::linear")
        seconds.push_back(time_.node_backward_seconds[ni]);
    return seconds;
  }
  GpuSpec gpu_;
  TimeReport time_;
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
  Result<TimeReport> t = Time(r);
  ASSERT_TRUE(t.ok());
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
  Relu();
  Report r = Run("1024,1024", StepMode::kInfer);
  // Reads and writes 1024*1024 float32: 2 * 4 MiB.
  const int64_t bytes = 2 * 1024 * 1024 * 4;
  EXPECT_EQ(r.nodes[0].bytes, sym::Expr(bytes));
  EXPECT_EQ(r.nodes[0].op_class, OpClass::kPointwise);
  Result<TimeReport> t = Time(r);
  ASSERT_TRUE(t.ok());
  // 8.39 MB at 2039 GB/s = 4.11 us; 1 Mi FLOPs at 19.5 TFLOP/s = 0.05 us.
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[0], bytes / kBandwidth);
  // A class efficiency divides it: half the bandwidth achieved, twice the time.
  gpu_.efficiency[kPw] = 0.5;
  t = Time(r);
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[0], 2 * bytes / kBandwidth);
  EXPECT_DOUBLE_EQ(t->class_roofline_seconds[kPw], bytes / kBandwidth);
  EXPECT_EQ(t->source, "roofline on A100-80GB-SXM with fitted efficiencies");
}

// Each op type's class is its rule file's (moved_bytes.cc ClassOf): linear
// (matmul.yaml) matmul, softmax (activation.yaml) pointwise, sum
// (reduction.yaml) reduction; Report::ops is sorted by name.
TEST_F(RooflineTest, OpClassesFollowTheRuleFiles) {
  int x = b_.Input();
  int w = b_.Param("fc.weight", {64, 32});
  int y =
      b_.One("aten::linear", {x, w, b_.None()}, {"input", "weight", "bias"});
  int s = b_.One("aten::softmax", {y, b_.Int(-1), b_.None()},
                 {"self", "dim", "dtype"});
  b_.Output(b_.One("aten::sum", {s}, {"self"}));
  Report r = Run("8,32", StepMode::kInfer);
  Result<TimeReport> t = Time(r);
  ASSERT_TRUE(t.ok());
  ASSERT_EQ(t->op_classes.size(), r.ops.size());
  std::map<std::string, OpClass> by_op;
  for (size_t i = 0; i < r.ops.size(); ++i)
    by_op[r.ops[i].op] = t->op_classes[i];
  EXPECT_EQ(by_op.at("aten::linear"), OpClass::kMatmul);
  EXPECT_EQ(by_op.at("aten::softmax"), OpClass::kPointwise);
  EXPECT_EQ(by_op.at("aten::sum"), OpClass::kReduction);
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
  Result<TimeReport> t = Time(r);
  ASSERT_TRUE(t.ok());
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
  EXPECT_DOUBLE_EQ(t->class_forward_roofline_seconds[kMm], mm);
  EXPECT_DOUBLE_EQ(t->class_backward_roofline_seconds[kMm], mm);
  EXPECT_DOUBLE_EQ(t->class_roofline_seconds[kOptim], opt);
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
  // neither dx nor the relu's backward runs); optimizer 8 (AdamW, the
  // default, on one tensor, torch 2.x's adam.py: param.mul_,
  // exp_avg.lerp_(), exp_avg_sq.mul_().addcmul_(), sqrt, / bc2_sqrt,
  // .add_(eps), addcdiv_).
  Report r = ReluThenLinearStep();
  Result<TimeReport> base = Time(r);
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->overhead_seconds, 0);    // Not modelled unless given.
  EXPECT_EQ(base->class_kernels[kPw], 1);  // The relu's forward.
  EXPECT_EQ(base->class_kernels[kMm], 2);  // The linear's forward and backward.
  EXPECT_EQ(base->class_kernels[kOptim], 8);  // fc.weight.
  EXPECT_EQ(base->class_forward_kernels[kMm], 1);
  EXPECT_EQ(base->class_backward_kernels[kMm], 1);
  EXPECT_EQ(base->class_backward_kernels[kPw], 0);
  gpu_.kernel_overhead = 5e-6;
  Result<TimeReport> t = Time(r);
  ASSERT_TRUE(t.ok());
  // Eleven kernels, 5 us each, on top of the roofline; per phase: forward 2,
  // backward 1, optimizer 8.
  EXPECT_DOUBLE_EQ(t->overhead_seconds, 11 * 5e-6);
  EXPECT_DOUBLE_EQ(t->kernel_overhead, 5e-6);
  EXPECT_NEAR(t->forward_seconds, base->forward_seconds + 2 * 5e-6, 1e-15);
  EXPECT_NEAR(t->backward_seconds, base->backward_seconds + 5e-6, 1e-15);
  EXPECT_NEAR(t->optimizer_seconds, base->optimizer_seconds + 8 * 5e-6, 1e-15);
  EXPECT_NEAR(t->step_seconds, base->step_seconds + 11 * 5e-6, 1e-15);
  // The roofline seconds a calibration fits against do not include it.
  EXPECT_EQ(t->class_roofline_seconds, base->class_roofline_seconds);
}

// The same step with the host's launch costs: each phase takes the larger of
// its device seconds (the nodes' sum, unchanged) and its host seconds
// (kernels x cost, and per tensor in the optimizer).
TEST_F(RooflineTest, PhasesTakeTheLargerOfDeviceAndHost) {
  Report r = ReluThenLinearStep();
  Result<TimeReport> base = Time(r);
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->forward_host_seconds, 0);  // Not modelled unless given.
  EXPECT_EQ(base->forward_seconds, base->forward_device_seconds);
  // Host costs that bound the forward (2 kernels x 1 s) and the optimizer
  // (8 kernels x 1 ms + 1 tensor x 1 s), then one that does not bound the
  // backward (1 kernel x 1 us against the dW GEMM's 2*256*1024*4096 FLOPs,
  // 110 us at the A100's fp32 rate).
  gpu_.host.forward_kernel = 1;
  gpu_.host.optimizer_kernel = 1e-3;
  gpu_.host.optimizer_tensor = 1;
  Result<TimeReport> t = Time(r);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->optimizer_tensors, 1);
  EXPECT_DOUBLE_EQ(t->forward_host_seconds, 2);
  EXPECT_DOUBLE_EQ(t->forward_seconds, 2);
  EXPECT_DOUBLE_EQ(t->forward_device_seconds, base->forward_seconds);
  EXPECT_DOUBLE_EQ(t->optimizer_host_seconds, 8e-3 + 1);
  EXPECT_DOUBLE_EQ(t->optimizer_seconds, 8e-3 + 1);
  gpu_.host.backward_kernel = 1e-6;
  t = Time(r);
  EXPECT_NEAR(t->backward_device_seconds, 2.0 * 256 * 1024 * 4096 / 19.5e12,
              1e-9);
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->backward_host_seconds, 1e-6);
  EXPECT_GT(t->backward_device_seconds, 1e-6);
  EXPECT_DOUBLE_EQ(t->backward_seconds, base->backward_seconds);
  EXPECT_DOUBLE_EQ(t->step_seconds, t->forward_seconds + t->backward_seconds +
                                        t->optimizer_seconds);
  // Node and module times stay the device's.
  EXPECT_EQ(t->node_forward_seconds, base->node_forward_seconds);
}

// A linear's backward launches one GEMM per operand that needs a gradient
// and a reduction for a bias that needs one (derivatives.yaml: addmm's mat1:
// grad.mm(mat2.t()), mat2: mat1.t().mm(grad), self: grad summed to [OUT]).
// Read per node from the backward seconds with a 1 s overhead per kernel.
TEST_F(RooflineTest, LinearBackwardKernelsFollowTheGradients) {
  // fc1 (bias; x needs no gradient): dW1 + db1 = 2. fc2 (no bias; its input
  // needs one): dh + dW2 = 2.
  TwoLinears(/*fc1_bias=*/true, /*fc2_bias=*/false);
  const std::vector<double> seconds = LinearBackwardSeconds();
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_NEAR(seconds[0], 2, 1e-6);
  EXPECT_NEAR(seconds[1], 2, 1e-6);
  EXPECT_EQ(time_.class_backward_kernels[kMm], 4);
}

TEST_F(RooflineTest, LinearWithBiasAndInputGradient) {
  // fc1 (no bias; x needs no gradient): dW1 = 1. fc2 (bias; its input needs
  // one): dh + dW2 + db2 = 3.
  TwoLinears(/*fc1_bias=*/false, /*fc2_bias=*/true);
  const std::vector<double> seconds = LinearBackwardSeconds();
  ASSERT_EQ(seconds.size(), 2u);
  EXPECT_NEAR(seconds[0], 1, 1e-6);
  EXPECT_NEAR(seconds[1], 3, 1e-6);
}

// The optimizer's kernels for three trainable tensors (fc1.weight, fc1.bias,
// fc2.weight): Adam's single-tensor loop 3 x 8 = 24; its foreach step one
// launch per multi-tensor op (all three fit one), 8.
// torch 2.x: exp_avg.lerp_ for mul_ and add_: 3 x 7 = 21; foreach 7 ops.
TEST_F(RooflineTest, AdamKernelsSingleTensorAndForeach) {
  TwoLinears(/*fc1_bias=*/true, /*fc2_bias=*/false);
  for (const char* version : {"1.13", "2"}) {
    const bool v2 = std::string(version) == "2";
    for (bool foreach : {false, true}) {
      AnalysisOptions opts;
      opts.training.mode = StepMode::kTrain;
      opts.training.optimizer = OptimizerKind::kAdam;
      opts.training.foreach = foreach;
      opts.training.torch_version = version;
      Result<TimeReport> t = Time(Run("8,32", std::move(opts)));
      ASSERT_TRUE(t.ok());
      EXPECT_EQ(t->class_kernels[kOptim],
                foreach ? (v2 ? 7 : 8) : (v2 ? 21 : 24))
          << version << " " << foreach;
    }
  }
}

TEST_F(RooflineTest, AShardedRankStepsItsFlatPartition) {
  // 64 * 32 + 64 + 16 * 64 = 3136 elements in 3 tensors. ZeRO-2 over N = 4:
  // one rank's Adam steps one flat partition of 3136 / 4 = 784 elements,
  // so a quarter of the roofline and one tensor's kernels (torch 2's
  // single-tensor step: 7).
  TwoLinears(/*fc1_bias=*/true, /*fc2_bias=*/false);
  AnalysisOptions opts;
  opts.training.mode = StepMode::kTrain;
  opts.training.optimizer = OptimizerKind::kAdam;
  Result<TimeReport> whole = Time(Run("8,32", opts));
  opts.training.sharding.strategy = ShardStrategy::kZero2;
  opts.training.sharding.world = 4;
  Result<TimeReport> rank = Time(Run("8,32", opts));
  ASSERT_TRUE(whole.ok() && rank.ok());
  EXPECT_EQ(whole->optimizer_tensors, 3);
  EXPECT_EQ(rank->optimizer_tensors, 1);
  EXPECT_EQ(rank->class_kernels[kOptim], 7);
  EXPECT_NEAR(rank->class_roofline_seconds[kOptim],
              whole->class_roofline_seconds[kOptim] / 4,
              1e-3 * whole->class_roofline_seconds[kOptim]);
  EXPECT_DOUBLE_EQ(rank->forward_seconds, whole->forward_seconds);
}

TEST_F(RooflineTest, CollectivesBeyondTheBackwardAddToTheStep) {
  // DDP over 4 ranks all-reduces the 3136 float32 gradients, 12544 bytes, in
  // one bucket: 2 (4 - 1) / 4 of them through each link, 18816 bytes. At 1
  // kB/s that is 18.816 s (NCCL's Simple: + 8.4 + 6 steps x 3.4 us), far
  // beyond the backward it overlaps: the rest is exposed. At 10 PB/s it is
  // LL's latency, 6.6 + 6 x 0.6 us, and its bytes at LL's cap on an Ampere,
  // 87.7 GB/s (NCCL's llMaxBws), and hides in the backward (its kernels take
  // 1 ms each here).
  TwoLinears(/*fc1_bias=*/true, /*fc2_bias=*/false);
  AnalysisOptions opts;
  opts.training.mode = StepMode::kTrain;
  opts.training.optimizer = OptimizerKind::kSgd;
  opts.training.sharding.strategy = ShardStrategy::kDdp;
  opts.training.sharding.world = 4;
  const Report r = Run("8,32", opts);
  EXPECT_EQ(r.training.sharding.all_reduce_calls, 1);
  gpu_.kernel_overhead = 1e-3;
  gpu_.interconnect.link = 1e3;
  Result<TimeReport> slow = Time(r);
  gpu_.interconnect.link = 1e16;
  Result<TimeReport> fast = Time(r);
  ASSERT_TRUE(slow.ok() && fast.ok());
  const double slow_comm = 18.816 + 28.8e-6;
  EXPECT_DOUBLE_EQ(slow->communication_seconds, slow_comm);
  EXPECT_DOUBLE_EQ(slow->exposed_communication_seconds,
                   slow_comm - slow->backward_seconds);
  EXPECT_DOUBLE_EQ(slow->step_seconds,
                   slow->forward_seconds + slow_comm + slow->optimizer_seconds);
  EXPECT_DOUBLE_EQ(fast->communication_seconds, 10.2e-6 + 18816 / 87.7e9);
  EXPECT_GT(fast->backward_seconds, fast->communication_seconds);
  EXPECT_EQ(fast->exposed_communication_seconds, 0);
  EXPECT_DOUBLE_EQ(
      fast->step_seconds,
      fast->forward_seconds + fast->backward_seconds + fast->optimizer_seconds);
  EXPECT_EQ(fast->communication_untimed, "");
}

TEST_F(RooflineTest, UnboundSymbolIsAnError) {
  Relu();
  Report r = Run("B,1024", StepMode::kInfer);
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("'B'"), std::string::npos)
      << t.status().message();
  t = Time(r, {{"B", 2}});
  ASSERT_TRUE(t.ok());
  EXPECT_DOUBLE_EQ(t->node_forward_seconds[0], 2 * (2 * 1024 * 4) / kBandwidth);
}

// SumForwardSeconds against the plain sum of EstimateTime at every value:
// costs that change regime (compute- to memory-bound), kink (a window's min),
// grow quadratically, start idle, or do not depend on the symbol at all.
TEST_F(RooflineTest, SumForwardSecondsIsTheSumOfEveryForward) {
  int v = b_.Input();
  for (int i = 0; i < 6; ++i) v = b_.One("aten::relu", {v}, {"self"});
  b_.Output(v);
  Report r = Run("B,1024", StepMode::kInfer);
  ASSERT_EQ(r.nodes.size(), 6u);
  const sym::Expr x = ctx_.Symbol("x"), b = ctx_.Symbol("B");
  // Memory-bound up to x = 150, compute-bound after: a float32 matmul's
  // 13e9 x FLOPs / 19.5 TFLOP/s = 0.1 s = 50 x 2 x 2.039e9 bytes / 2039 GB/s
  // at x = 150.
  r.nodes[0].flops = x * sym::Expr(13'000'000'000);
  r.nodes[0].bytes = sym::Expr(2'039'000'000) * sym::Expr(50) * b;
  r.nodes[0].op_class = OpClass::kMatmul;
  // A sliding window: bytes grow with x up to 37, then stay.
  r.nodes[1].bytes = sym::Min(x, sym::Expr(37)) * sym::Expr(1'000'000);
  r.nodes[1].flops = sym::Expr(0);
  // Quadratic.
  r.nodes[2].bytes = x * x * sym::Expr(4096) + b;
  // Idle at x = 1: no kernel there.
  r.nodes[3].bytes = (x - sym::Expr(1)) * sym::Expr(8192);
  r.nodes[3].flops = sym::Expr(0);
  // Independent of x; and one node that never runs.
  r.nodes[4].bytes = sym::Expr(1 << 20);
  r.nodes[5].bytes = sym::Expr(0);
  r.nodes[5].flops = sym::Expr(0);
  GpuSpec gpu = gpu_;
  gpu.kernel_overhead = 5e-6;
  gpu.efficiency[kMm] = 0.7;
  gpu.efficiency[kPw] = 0.8;
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  auto expect_sums = [&](const Ranges& ranges) {
    for (const auto& [first, last] : ranges) {
      double want = 0;
      for (int64_t k = first; k <= last; ++k) {
        Result<TimeReport> t =
            EstimateTime(b_.graph(), r, gpu, {{"B", 2}, {"x", k}});
        ASSERT_TRUE(t.ok()) << t.status().message();
        want += t->forward_seconds;
      }
      Result<double> got =
          SumForwardSeconds(b_.graph(), r, gpu, {{"B", 2}}, "x", first, last);
      ASSERT_TRUE(got.ok()) << got.status().message();
      EXPECT_NEAR(*got, want, 1e-9 * want) << first << ".." << last;
    }
  };
  expect_sums({{1, 1}, {1, 3}, {1, 300}, {2, 299}, {40, 41}, {36, 38}, {5, 4}});
  // With the host at 40 ms per kernel, 5 kernels (from x = 2: the idle node
  // runs) take 0.2 s a forward: the host's below x ~ 210, where node 0's
  // 13e9 x FLOPs / 19.5 TFLOP/s / 0.7 reach it, the device's above.
  gpu.host.forward_kernel = 0.04;
  expect_sums({{2, 2}, {2, 299}, {40, 41}, {250, 300}, {209, 212}, {5, 4}});
  // An unbound symbol is EstimateTime's error.
  Result<double> unbound = SumForwardSeconds(b_.graph(), r, gpu, {}, "x", 1, 9);
  ASSERT_FALSE(unbound.ok());
  EXPECT_NE(unbound.status().message().find("'B'"), std::string::npos)
      << unbound.status().message();
}

// Without derived bytes every node would be timed on its FLOPs alone: an
// error instead.
TEST_F(RooflineTest, ReportWithoutMovedBytesIsAnError) {
  Relu();
  AnalysisOptions opts;
  opts.training.mode = StepMode::kInfer;
  Report r = AnalyzeBuiltGraph(opts, "8,1024");
  EXPECT_FALSE(r.moved_bytes);
  Result<TimeReport> t = EstimateTime(b_.graph(), r, gpu_, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("without a GPU"), std::string::npos)
      << t.status().message();
  EXPECT_FALSE(SumForwardSeconds(b_.graph(), r, gpu_, {}, "x", 1, 2).ok());
  EXPECT_TRUE(Run("8,1024", StepMode::kInfer).moved_bytes);
}

TEST(RooflineSecondsTest, TheLargerOfComputeAndMemory) {
  EXPECT_DOUBLE_EQ(RooflineSeconds(100, 10, 10, 10),
                   10);  // 100 / 10 vs 10 / 10.
  EXPECT_DOUBLE_EQ(RooflineSeconds(10, 100, 10, 10), 10);
  EXPECT_DOUBLE_EQ(RooflineSeconds(0, 0, 10, 10), 0);
}

}  // namespace
}  // namespace torchcost
