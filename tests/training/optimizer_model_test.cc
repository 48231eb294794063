// Tests of the optimizer models: state bytes per parameter shape (Adagrad,
// RMSprop, Lion, Adafactor's factored second moments, 8-bit Adam's block-wise
// quantized states), FLOPs, and the step's transient tensors on a two-layer
// MLP, and the CUDA kernels a step launches (single-tensor loop and foreach),
// every expected number derived by hand from the update rules.
#include "training/optimizer_model.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/timeline.h"
#include "testing/toy_graph_test.h"
#include "testing/toy_graphs.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::CategoryMax;
using testing::OptimizerTempOverBackward;
using training::SharedStateBytes;
using training::StateBytes;
using training::TransientsOf;

TEST(OptimizerNamesTest, EveryKindRoundTrips) {
  for (const char* name :
       {"sgd", "sgd_momentum", "sgd_nesterov", "adam", "adamw", "adagrad",
        "rmsprop", "lion", "adafactor", "adam8bit"}) {
    auto kind = ParseOptimizer(name);
    ASSERT_TRUE(kind.ok()) << name;
    EXPECT_EQ(OptimizerName(*kind), name);
  }
  EXPECT_FALSE(ParseOptimizer("adamax").ok());
}

TEST(OptimizerStateTest, ElementwiseOptimizers) {
  const std::vector<int64_t> shape = {4, 8};  // 32 float32 elements: 128 bytes.
  // Adagrad: `sum` (full_like p) + `step`, a float32 0-dim tensor.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdagrad, shape, DType::kFloat32),
            128 + 4);
  // RMSprop: `square_avg`; torch 1.13's `step` is a Python int.
  EXPECT_EQ(StateBytes(OptimizerKind::kRmsprop, shape, DType::kFloat32), 128);
  // Lion: exp_avg only.
  EXPECT_EQ(StateBytes(OptimizerKind::kLion, shape, DType::kFloat32), 128);
  // Adam, unchanged: exp_avg + exp_avg_sq + float32 step.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdam, shape, DType::kFloat32),
            2 * 128 + 4);
  EXPECT_EQ(StateBytes(OptimizerKind::kAdagrad, shape, DType::kBFloat16),
            64 + 4);
}

TEST(OptimizerStateTest, AdafactorFactorsTheLastTwoDims) {
  // [4, 8]: row statistics of 4 and column statistics of 8 floats, instead of
  // 32, plus the 0-dim float32 RMS; `step` is a Python int.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdafactor, {4, 8}, DType::kFloat32),
            (4 + 8) * 4 + 4);
  // [2, 3, 4]: rows shape[:-1] = [2, 3] (6), columns shape[:-2] + shape[-1:] =
  // [2, 4] (8).
  EXPECT_EQ(StateBytes(OptimizerKind::kAdafactor, {2, 3, 4}, DType::kFloat32),
            (6 + 8) * 4 + 4);
  // 1-D: the full second moment.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdafactor, {7}, DType::kFloat32),
            7 * 4 + 4);
  // bfloat16 weights: the gradient is upcast before the states are made
  // (.to(grad)): float32.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdafactor, {4, 8}, DType::kBFloat16),
            (4 + 8) * 4 + 4);
  EXPECT_EQ(SharedStateBytes(OptimizerKind::kAdafactor, {{4, 8}}), 0);
  // Adafactor(beta1): exp_avg = zeros_like(grad) besides (float32 for a bf16
  // grad, upcast).
  EXPECT_EQ(StateBytes(OptimizerKind::kAdafactorBeta1, {4, 8}, DType::kFloat32),
            (4 + 8) * 4 + 4 + 32 * 4);
  EXPECT_EQ(
      StateBytes(OptimizerKind::kAdafactorBeta1, {4, 8}, DType::kBFloat16),
      (4 + 8) * 4 + 4 + 32 * 4);
  EXPECT_EQ(StateBytes(OptimizerKind::kAdafactorBeta1, {7}, DType::kFloat32),
            7 * 4 + 4 + 7 * 4);
}

TEST(OptimizerStateTest, Adam8bitQuantizesBlockwise) {
  // 5000 elements: two uint8 states (5000 bytes each) and per state
  // ceil(5000 / 2048) = 3 float32 absmax values; `step` is a Python int.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdam8bit, {5000}, DType::kFloat32),
            2 * 5000 + 2 * 3 * 4);
  // Exactly 2 blocks at 4096; the dtype of the parameter does not matter.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdam8bit, {64, 64}, DType::kBFloat16),
            2 * 4096 + 2 * 2 * 4);
  // Below min_8bit_size (4096) the states stay float32: 2 * 4 bytes per
  // element.
  EXPECT_EQ(StateBytes(OptimizerKind::kAdam8bit, {4095}, DType::kFloat32),
            2 * 4095 * 4);
  // The two 256-entry float32 code books, once, if any tensor is quantized.
  EXPECT_EQ(
      SharedStateBytes(OptimizerKind::kAdam8bit, {{5000}, {64, 64}, {10}}),
      2 * 256 * 4);
  EXPECT_EQ(SharedStateBytes(OptimizerKind::kAdam8bit, {{10}}), 0);
}

TEST(OptimizerTransientsTest, PerParameterMoments) {
  // Adagrad's std and RMSprop's avg: one param-sized tensor, still bound after.
  auto t = TransientsOf(OptimizerKind::kAdagrad, {4, 8}, DType::kFloat32);
  EXPECT_EQ(t.moments, std::vector<int64_t>({128}));
  EXPECT_EQ(t.carried, 128);
  t = TransientsOf(OptimizerKind::kRmsprop, {4, 8}, DType::kFloat32);
  EXPECT_EQ(t.moments, std::vector<int64_t>({128}));
  EXPECT_EQ(t.carried, 128);
  // Lion: clone + out-of-place add together; nothing outlives update_fn.
  t = TransientsOf(OptimizerKind::kLion, {4, 8}, DType::kFloat32);
  EXPECT_EQ(t.moments, std::vector<int64_t>({256}));
  EXPECT_EQ(t.carried, 0);
  // Adafactor [4, 8]: grad**2 and its sum (2 * 128); then the old update,
  // r_factor (4), c_factor (8) and their product: 2 * 128 + 12 * 4.
  t = TransientsOf(OptimizerKind::kAdafactor, {4, 8}, DType::kFloat32);
  EXPECT_EQ(t.moments, std::vector<int64_t>({256, 256 + 48}));
  EXPECT_EQ(t.carried, 128);
  // bfloat16 [4, 8]: float32 copies of grad and p (2 * 32 * 4) besides.
  t = TransientsOf(OptimizerKind::kAdafactor, {4, 8}, DType::kBFloat16);
  EXPECT_EQ(t.moments, std::vector<int64_t>({256 + 256, 256 + 48 + 256}));
  // Adafactor(beta1): the same moments; `update = exp_avg` rebinds the name to
  // the state, so nothing is carried.
  t = TransientsOf(OptimizerKind::kAdafactorBeta1, {4, 8}, DType::kFloat32);
  EXPECT_EQ(t.moments, std::vector<int64_t>({256, 256 + 48}));
  EXPECT_EQ(t.carried, 0);
  // 8-bit Adam: one fused in-place kernel per tensor.
  t = TransientsOf(OptimizerKind::kAdam8bit, {5000}, DType::kFloat32);
  EXPECT_TRUE(t.moments.empty());
  EXPECT_EQ(t.carried, 0);
}

// x [5, 8] -> lin1 (W1 [4, 8]: 128 bytes) -> relu -> lin2 (W2 [2, 4]: 32
// bytes).
class OptimizerStepTest : public testing::ToyGraphTest {
 protected:
  void SetUp() override {
    ToyGraphTest::SetUp();
    testing::ToyMlp(b_);
  }
  Report Run(OptimizerKind kind) {
    AnalysisOptions opts;
    opts.training.optimizer = kind;
    return AnalyzeBuiltGraph(opts, "5,8");
  }
};

TEST_F(OptimizerStepTest, Adagrad) {
  Report r = Run(OptimizerKind::kAdagrad);
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), (128 + 4) + (32 + 4));
  // W1's std (128), then W2's std (32) while W1's is still bound: 160.
  EXPECT_EQ(OptimizerTempOverBackward(r), 128 + 32);
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 7 * 40);
}

TEST_F(OptimizerStepTest, Rmsprop) {
  Report r = Run(OptimizerKind::kRmsprop);
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), 128 + 32);
  EXPECT_EQ(OptimizerTempOverBackward(r), 128 + 32);
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 8 * 40);
}

TEST_F(OptimizerStepTest, Lion) {
  Report r = Run(OptimizerKind::kLion);
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), 128 + 32);
  // W1: clone + sum (256); W2's 64 comes after W1's are gone.
  EXPECT_EQ(OptimizerTempOverBackward(r), 256);
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 10 * 40);
}

TEST_F(OptimizerStepTest, Adafactor) {
  Report r = Run(OptimizerKind::kAdafactor);
  // W1 [4, 8]: (4 + 8) floats + RMS; W2 [2, 4]: (2 + 4) floats + RMS.
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), (12 * 4 + 4) + (6 * 4 + 4));
  // W1: old update, factors and product: 2 * 128 + 12 * 4 = 304; W2 at most
  // 128 (W1's update) + 2 * 32 = 192.
  EXPECT_EQ(OptimizerTempOverBackward(r), 304);
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 14 * 40);
}

TEST_F(OptimizerStepTest, AdafactorWithBeta1) {
  Report r = Run(OptimizerKind::kAdafactorBeta1);
  // Adafactor's states plus exp_avg: W1 32 floats, W2 8 floats.
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt),
            (12 * 4 + 4 + 32 * 4) + (6 * 4 + 4 + 8 * 4));
  // W1's 304 as without beta1; W2: grad**2 and its sum, 2 * 32, nothing of W1's
  // carried.
  EXPECT_EQ(OptimizerTempOverBackward(r), 304);
  // exp_avg.mul_(b1).add_(update, alpha=1-b1): 3 more per element.
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 17 * 40);
}

TEST_F(OptimizerStepTest, Adam8bitSmallTensorsStayFloat32) {
  Report r = Run(OptimizerKind::kAdam8bit);
  // Both tensors are under 4096 elements: two float32 states each, no code
  // books.
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), 2 * (128 + 32));
  EXPECT_EQ(OptimizerTempOverBackward(r), 0);
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 18 * 40);
}

TEST_F(OptimizerStepTest, SgdNesterov) {
  Report r = Run(OptimizerKind::kSgdNesterov);
  // momentum_buffer per parameter, as plain momentum.
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), 128 + 32);
  // d_p.add(buf, alpha=momentum): W1's 128; W1's d_p is rebound to W2's
  // gradient before W2's 32 is made.
  EXPECT_EQ(OptimizerTempOverBackward(r), 128);
  // buf.mul_().add_() 2, d_p.add(buf, alpha) 2, p.add_(d_p, alpha) 2.
  EXPECT_EQ(*r.training.flops_optimizer.AsConstant(), 6 * 40);
}

TEST_F(OptimizerStepTest, ForeachTemporariesSpanEveryParameter) {
  // P = 128 + 32 bytes of trainable parameters.
  EXPECT_EQ(training::ForeachMoments(OptimizerKind::kAdamW, 160, "1.13"),
            std::vector<int64_t>({2 * 160}));
  EXPECT_EQ(training::ForeachMoments(OptimizerKind::kAdagrad, 160, "1.13"),
            std::vector<int64_t>({2 * 160, 3 * 160}));
  // torch 2.x (adagrad.py _multi_tensor_adagrad): std = _foreach_sqrt (P) and
  // _foreach_add_(std, eps) in place; numerator = _foreach_mul beside it (2P).
  EXPECT_EQ(training::ForeachMoments(OptimizerKind::kAdagrad, 160, "2"),
            std::vector<int64_t>({160, 2 * 160}));
  EXPECT_EQ(training::ForeachMoments(OptimizerKind::kRmsprop, 160, "1.13"),
            std::vector<int64_t>({160}));
  EXPECT_EQ(training::ForeachMoments(OptimizerKind::kSgdNesterov, 160, "1.13"),
            std::vector<int64_t>({}));
  EXPECT_FALSE(
      training::ForeachMoments(OptimizerKind::kLion, 160, "1.13").has_value());
  // torch 2.x (adam.py, 2.11): _foreach_add_(exp_avg_sq_sqrt, eps) in place,
  // so the sqrt list alone.
  EXPECT_EQ(training::ForeachMoments(OptimizerKind::kAdam, 160, "2"),
            std::vector<int64_t>({160}));
  EXPECT_FALSE(HasForeach(OptimizerKind::kAdafactor));
  // torch 1.13: Adam's sqrt list and denom over both weights at once:
  // 2 * 160, not W1's 256; torch 2.x: the sqrt list alone, 160.
  for (const char* version : {"1.13", "2"}) {
    AnalysisOptions opts;
    opts.training.optimizer = OptimizerKind::kAdam;
    opts.training.foreach = true;
    opts.training.torch_version = version;
    opts.inputs.push_back(*ParseInputSpec(ctx_, "5,8"));
    auto r = Analyze(b_.graph(), rules_, ctx_, opts);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(OptimizerTempOverBackward(*r),
              std::string(version) == "2" ? 160 : 2 * 160)
        << version;
  }
}

TEST_F(OptimizerStepTest, AdamUnchanged) {
  Report r = Run(OptimizerKind::kAdam);
  EXPECT_EQ(CategoryMax(r, MemCategory::kOpt), 2 * (128 + 32) + 2 * 4);
  // W1: sqrt + quotient (256); W2: W1's denom + 2 * 32 = 192.
  EXPECT_EQ(OptimizerTempOverBackward(r), 256);
}

// multi_tensor_apply's launches (MultiTensorApply.cuh, torch 1.13): the
// tensor limit by depth and the 320-chunk limit, with a tensor split across
// launches carried over.
TEST(OptimizerKernelsTest, MultiTensorLaunchesFollowTheLimits) {
  using training::MultiTensorLaunches;
  // 110 one-chunk tensors fill one depth-1 launch; 111 need a second.
  EXPECT_EQ(MultiTensorLaunches(std::vector<int64_t>(110, 1), 1, false), 1);
  EXPECT_EQ(MultiTensorLaunches(std::vector<int64_t>(111, 1), 1, false), 2);
  // With a scalar list the depth-1 limit is 96; depth 3's is 48.
  EXPECT_EQ(MultiTensorLaunches(std::vector<int64_t>(96, 1), 1, true), 1);
  EXPECT_EQ(MultiTensorLaunches(std::vector<int64_t>(97, 1), 1, true), 2);
  EXPECT_EQ(MultiTensorLaunches(std::vector<int64_t>(49, 1), 3, false), 2);
  // 320 chunks of 65536 elements are one launch; one element more is a 321st
  // chunk and a second launch.
  EXPECT_EQ(MultiTensorLaunches({320 * 65536}, 2, false), 1);
  EXPECT_EQ(MultiTensorLaunches({320 * 65536 + 1}, 2, false), 2);
  // 641 chunks: 320 + 320 + 1.
  EXPECT_EQ(MultiTensorLaunches({640 * 65536 + 1}, 2, false), 3);
}

// Three trainable tensors, Adam and AdamW, single-tensor loop against the
// foreach step (torch 1.13 torch/optim/adam.py, adamw.py).
TEST(OptimizerKernelsTest, AdamSingleTensorAgainstForeach) {
  using training::OptimizerKernels;
  // 25,000,000 elements: ceil(25e6 / 65536) = 382 chunks (381 * 65536 =
  // 24,969,216); then 1000 and 10 elements, one chunk each.
  const std::vector<int64_t> numels = {25000000, 1000, 10};
  // _single_tensor_adam per tensor: exp_avg.mul_, .add_, exp_avg_sq.mul_,
  // .addcmul_, sqrt, / bc2_sqrt, .add_(eps), param.addcdiv_ = 8 (step_t += 1
  // is on the CPU tensor torch.tensor(0.)): 3 x 8 = 24. AdamW's param.mul_(1 -
  // lr * wd): 3 x 9 = 27. (torch 1.13's profiler on CPU lists these per
  // tensor: mul_ 2, add_ 2 besides the step's, addcmul_, sqrt, div,
  // addcdiv_.)
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdam, false, numels, "1.13"), 24);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdamW, false, numels, "1.13"), 27);
  // _multi_tensor_adam: 8 multi-tensor ops (mul_, add_, mul_, addcmul_, sqrt,
  // div_, add, addcdiv_); each launches at the 320th chunk of the big tensor
  // and again at the last tensor (62 + 1 + 1 chunks): 8 x 2 = 16. AdamW's
  // _foreach_mul_(params) first: 9 x 2 = 18.
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdam, true, numels, "1.13"), 16);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdamW, true, numels, "1.13"), 18);
  // Three small tensors: one launch per op, 8.
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdam, true, {10, 20, 30}, "1.13"),
            8);
  // torch 2.x (adam.py, 2.11): exp_avg.lerp_(grad) instead of mul_ and add_:
  // 7 per tensor, 3 x 7 = 21; AdamW 3 x 8 = 24. Foreach: lerp_, mul_,
  // addcmul_, sqrt, div_, add_, addcdiv_ = 7 ops x 2 launches = 14; AdamW 16.
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdam, false, numels, "2"), 21);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdamW, false, numels, "2"), 24);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdam, true, numels, "2"), 14);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdamW, true, numels, "2"), 16);
}

// The fused step (torch/optim/adam.py _fused_adam, sgd.py _fused_sgd,
// adagrad.py _fused_adagrad): one multi-tensor op over params, grads and the
// states, so the launches of one op of that depth.
TEST(OptimizerKernelsTest, FusedIsOneMultiTensorOp) {
  using training::FusedOptimizerKernels;
  const std::vector<int64_t> numels = {25000000, 1000, 10};
  // Depth 4: the 320th chunk of the big tensor and the last tensor: 2.
  EXPECT_EQ(FusedOptimizerKernels(OptimizerKind::kAdamW, numels), 2);
  // 37 one-chunk tensors pass depth 4's limit of 36 tensors: 2 launches;
  // SGD's depth 2 (limit 64) takes them in one, momentum's depth 3 (48) too.
  const std::vector<int64_t> many(37, 10);
  EXPECT_EQ(FusedOptimizerKernels(OptimizerKind::kAdam, many), 2);
  EXPECT_EQ(FusedOptimizerKernels(OptimizerKind::kSgd, many), 1);
  EXPECT_EQ(FusedOptimizerKernels(OptimizerKind::kSgdMomentum, many), 1);
  EXPECT_EQ(FusedOptimizerKernels(OptimizerKind::kAdagrad, many), 1);
  EXPECT_TRUE(HasFused(OptimizerKind::kAdagrad));
  EXPECT_FALSE(HasFused(OptimizerKind::kLion));
  EXPECT_FALSE(HasFused(OptimizerKind::kAdam8bit));
}

// SGD (sgd.py): plain 1 per tensor (param.add_), momentum 3 (buf.mul_,
// .add_, param.add_), nesterov 4 (+ d_p.add(buf)); foreach: 1, 3, 4 ops.
TEST(OptimizerKernelsTest, SgdAdagradRmsprop) {
  using training::OptimizerKernels;
  const std::vector<int64_t> two = {100, 200};
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kSgd, false, two, "1.13"), 2);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kSgdMomentum, false, two, "1.13"),
            6);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kSgdNesterov, false, two, "1.13"),
            8);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kSgd, true, two, "1.13"), 1);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kSgdMomentum, true, two, "1.13"),
            3);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kSgdNesterov, true, two, "1.13"),
            4);
  // Adagrad: addcmul_, sqrt, add_, addcdiv_ = 4 per tensor; foreach 6 ops.
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdagrad, false, two, "1.13"), 8);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdagrad, true, two, "1.13"), 6);
  // torch 2.x: the same 4 per tensor; foreach addcmul_, sqrt, add_(eps) in
  // place, mul by the minus_clr list, addcdiv_: 5 ops.
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdagrad, false, two, "2"), 8);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kAdagrad, true, two, "2"), 5);
  // RMSprop: mul_, addcmul_, sqrt, add_, addcdiv_ = 5; foreach 5 ops.
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kRmsprop, false, two, "1.13"), 10);
  EXPECT_EQ(OptimizerKernels(OptimizerKind::kRmsprop, true, two, "1.13"), 5);
}

}  // namespace
}  // namespace torchcost
