// What rules say autograd saves, as PyTorch 1.13 does on CPU (measured with
// torch.autograd.graph.saved_tensors_hooks; tools/saved_probe.py,
// tests/python/test_saved.py): in-place ops that copy their input, dropout's
// device-dependent mask, adaptive average pooling.
#include <gtest/gtest.h>

#include <string>

#include "testing/op_runner.h"
#include "torchcost/sym.h"

namespace torchcost {
namespace {

using testing::OpArg;
using testing::OpResult;
using testing::OpRunner;
using testing::OpSaved;

// Returns the saved entries' names joined: "self_copy(new, 96)" or "out(in0,
// 96)".
std::string Describe(const OpResult& r) {
  std::string s;
  for (const OpSaved& o : r.saved) {
    if (!s.empty()) s += " ";
    s += o.what + "(" +
         (o.input < 0 ? std::string("new") : "in" + std::to_string(o.input)) +
         ", " + o.bytes.ToString() + ")";
  }
  return s;
}

OpRunner TrainingRunner(const char* device) {
  OpRunner r;
  r.set_device(device);
  r.set_inputs_require_grad(true);
  return r;
}

// In-place activations: those whose backward reads the input save a copy of the
// original (a new storage); those reading the result save the overwritten
// tensor.
TEST(SavedRuleTest, InPlaceActivations) {
  OpRunner r = TrainingRunner("cpu");
  struct Case {
    const char* op;
    const char* saved;
  };
  const Case cases[] = {
      // HardtanhBackward0._saved_self is a new storage (mobilenet_v2's
      // ReLU6(inplace=True)).
      {"aten::hardtanh_", "self_copy(new, 96)"},
      {"aten::relu6_", "self_copy(new, 96)"},
      {"aten::hardswish_", "self_copy(new, 96)"},
      {"aten::hardsigmoid_", "self_copy(new, 96)"},
      {"aten::silu_", "self_copy(new, 96)"},
      {"aten::gelu_", "self_copy(new, 96)"},
      // ReluBackward0 / SigmoidBackward0 / TanhBackward0 / LeakyReluBackward1 /
      // EluBackward1: the result.
      {"aten::relu_", "out(in0, 96)"},
      {"aten::sigmoid_", "out(in0, 96)"},
      {"aten::tanh_", "out(in0, 96)"},
      {"aten::leaky_relu_", "out(in0, 96)"},
      {"aten::elu_", "out(in0, 96)"},
      // Out of place: hardtanh reads its input, relu its result (a new
      // storage).
      {"aten::hardtanh", "self(in0, 96)"},
      {"aten::relu", "out(new, 96)"},
  };
  for (const Case& c : cases) {
    OpResult res = r.Run(c.op, {{"self", OpArg::Tensor("2,3,4")}});
    ASSERT_TRUE(res.errors.empty()) << c.op << ": " << res.errors[0];
    EXPECT_EQ(Describe(res), c.saved) << c.op;
    EXPECT_EQ(res.saved_bytes, sym::Expr(96)) << c.op;
  }
}

// Nothing requires a gradient: nothing is saved (and no copy is counted).
TEST(SavedRuleTest, NoGradNoSaved) {
  OpRunner r;
  r.set_device("cpu");
  OpResult res = r.Run("aten::hardtanh_", {{"self", OpArg::Tensor("2,3,4")}});
  ASSERT_TRUE(res.errors.empty()) << res.errors[0];
  EXPECT_TRUE(res.saved.empty()) << Describe(res);
  EXPECT_EQ(res.saved_bytes, sym::Expr(0));
}

// CPU dropout is input * noise with a float noise of the input's dtype
// (MulBackward0._saved_other); CUDA's fused native_dropout saves a bool mask.
TEST(SavedRuleTest, DropoutMaskDependsOnDevice) {
  for (const char* device : {"cpu", "cuda"}) {
    OpRunner r = TrainingRunner(device);
    const bool cpu = std::string(device) == "cpu";
    OpResult d = r.Run("aten::dropout", {{"input", OpArg::Tensor("8,1024")},
                                         {"p", OpArg::Float(0.5)},
                                         {"train", OpArg::Bool(true)}});
    ASSERT_TRUE(d.errors.empty()) << d.errors[0];
    EXPECT_EQ(Describe(d), cpu ? "mask(new, 32768)" : "mask(new, 8192)")
        << device;
    EXPECT_EQ(d.flops, sym::Expr((cpu ? 3 : 2) * 8 * 1024)) << device;
    EXPECT_EQ(d.bwd_flops, sym::Expr(8 * 1024)) << device;
    // Half precision: the CPU noise is half too.
    OpResult h = r.Run("aten::dropout",
                       {{"input", OpArg::Tensor("8,1024", DType::kFloat16)},
                        {"p", OpArg::Float(0.1)},
                        {"train", OpArg::Bool(true)}});
    ASSERT_TRUE(h.errors.empty()) << h.errors[0];
    EXPECT_EQ(Describe(h), cpu ? "mask(new, 16384)" : "mask(new, 8192)")
        << device;
    // In place: the same mask, self is not copied (the noise needs no
    // gradient).
    OpResult ip = r.Run("aten::dropout_", {{"self", OpArg::Tensor("8,1024")},
                                           {"p", OpArg::Float(0.5)},
                                           {"train", OpArg::Bool(true)}});
    ASSERT_TRUE(ip.errors.empty()) << ip.errors[0];
    EXPECT_EQ(Describe(ip), cpu ? "mask(new, 32768)" : "mask(new, 8192)")
        << device;
    // NB: train=False as traced in eval mode still trains in a training step
    // (AnalysisOptions::training): the same mask.
    OpResult e = r.Run("aten::dropout", {{"input", OpArg::Tensor("8,1024")},
                                         {"p", OpArg::Float(0.5)},
                                         {"train", OpArg::Bool(false)}});
    ASSERT_TRUE(e.errors.empty()) << e.errors[0];
    EXPECT_EQ(Describe(e), Describe(d)) << device;
    // feature_dropout never takes the fused kernel: [N, C, 1, 1] of the input's
    // dtype on both.
    OpResult f =
        r.Run("aten::feature_dropout", {{"input", OpArg::Tensor("2,3,8,8")},
                                        {"p", OpArg::Float(0.5)},
                                        {"train", OpArg::Bool(true)}});
    ASSERT_TRUE(f.errors.empty()) << f.errors[0];
    EXPECT_EQ(Describe(f), "mask(new, 24)") << device;
  }
}

// _adaptive_avg_pool2d_backward(grad, self) and, for a 1x1 output, mean's
// backward both keep self (alexnet's 6x6 avgpool; resnet's 1x1).
TEST(SavedRuleTest, AdaptiveAvgPoolSavesSelf) {
  OpRunner r = TrainingRunner("cpu");
  for (int64_t out : {1, 6}) {
    OpResult res = r.Run("aten::adaptive_avg_pool2d",
                         {{"self", OpArg::Tensor("1,256,13,13")},
                          {"output_size", OpArg::Ints({out, out})}});
    ASSERT_TRUE(res.errors.empty()) << res.errors[0];
    EXPECT_EQ(Describe(res), "self(in0, 173056)") << out;
  }
  OpResult d3 = r.Run("aten::adaptive_avg_pool3d",
                      {{"self", OpArg::Tensor("1,2,4,4,4")},
                       {"output_size", OpArg::Ints({1, 1, 1})}});
  ASSERT_TRUE(d3.errors.empty()) << d3.errors[0];
  EXPECT_EQ(Describe(d3), "self(in0, 512)");
}

// mul_ with both operands requiring gradients copies self (grad of other reads
// the original self); div_ too; with only self requiring one, nothing is
// copied.
TEST(SavedRuleTest, InPlaceArithmetic) {
  OpRunner r = TrainingRunner("cpu");
  OpResult m = r.Run("aten::mul_", {{"self", OpArg::Tensor("2,3")},
                                    {"other", OpArg::Tensor("2,3")}});
  ASSERT_TRUE(m.errors.empty()) << m.errors[0];
  EXPECT_EQ(Describe(m), "other(in1, 24) self_copy(new, 24)");
  OpResult mi =
      r.Run("aten::mul_", {{"self", OpArg::Tensor("2,3")},
                           {"other", OpArg::Tensor("2,3", DType::kInt64)}});
  ASSERT_TRUE(mi.errors.empty()) << mi.errors[0];
  EXPECT_EQ(Describe(mi), "other(in1, 48)");
  OpResult d = r.Run("aten::div_", {{"self", OpArg::Tensor("2,3")},
                                    {"other", OpArg::Tensor("2,3")}});
  ASSERT_TRUE(d.errors.empty()) << d.errors[0];
  EXPECT_EQ(Describe(d), "other(in1, 24) self_copy(new, 24)");
  for (const char* op : {"aten::clamp_min_", "aten::clamp_max_"}) {
    OpResult c =
        r.Run(op, {{"self", OpArg::Tensor("2,3")}, {"min", OpArg::Float(0)}});
    ASSERT_TRUE(c.errors.empty()) << op << ": " << c.errors[0];
    EXPECT_EQ(Describe(c), "self_copy(new, 24)") << op;
  }
  // Unary: exp_ / sqrt_ read the result (no copy), log_ / sin_ the original
  // input (a copy).
  for (const char* op : {"aten::exp_", "aten::sqrt_", "aten::rsqrt_"}) {
    OpResult u = r.Run(op, {{"self", OpArg::Tensor("2,3")}});
    ASSERT_TRUE(u.errors.empty()) << op << ": " << u.errors[0];
    EXPECT_EQ(Describe(u), "out(in0, 24)") << op;
  }
  for (const char* op : {"aten::log_", "aten::sin_", "aten::erf_"}) {
    OpResult u = r.Run(op, {{"self", OpArg::Tensor("2,3")}});
    ASSERT_TRUE(u.errors.empty()) << op << ": " << u.errors[0];
    EXPECT_EQ(Describe(u), "self_copy(new, 24)") << op;
  }
}

}  // namespace
}  // namespace torchcost
