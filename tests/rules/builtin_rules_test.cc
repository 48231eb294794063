// Tests of the shipped rule files as a whole: they load, and they cover every
// operator the target models trace to.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "rules/builtin.h"
#include "torchcost/rules.h"

namespace torchcost {
namespace {

TEST(BuiltinRulesTest, LoadWithoutError) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_GT(rules->size(), 100u);
  // NB: Builtin compiles each rule on first use; this compiles them all.
  Status all = rules->CompileAll();
  EXPECT_TRUE(all.ok()) << all.message();
}

// The ops of torch.jit.trace (eval mode) of LeNet5, alexnet, vgg16,
// resnet18/50, mobilenet_v2, mobilenet_v3_large, efficientnet_b0,
// squeezenet1_0, googlenet, regnet_y_400mf and vit_b_16, as {op, overload}
// (from .ops_seen.txt), less the ops the engine handles natively
// (prim::ListConstruct, prim::ListUnpack, prim::TupleConstruct,
// prim::NumToTensor, aten::Int, aten::size).
struct SeenOp {
  const char* op;
  const char* overload;
};
constexpr SeenOp kSeenOps[] = {
    {"aten::_convolution", ""}, {"aten::adaptive_avg_pool2d", ""},
    {"aten::add", "Tensor"},    {"aten::add_", "Tensor"},
    {"aten::avg_pool2d", ""},   {"aten::batch_norm", ""},
    {"aten::bmm", ""},          {"aten::cat", ""},
    {"aten::chunk", ""},        {"aten::contiguous", ""},
    {"aten::div", "Tensor"},    {"aten::div", "Tensor_mode"},
    {"aten::dropout", ""},      {"aten::dropout_", ""},
    {"aten::expand", ""},       {"aten::flatten", "using_ints"},
    {"aten::floor_divide", ""}, {"aten::gelu", ""},
    {"aten::hardsigmoid", ""},  {"aten::hardswish_", ""},
    {"aten::hardtanh_", ""},    {"aten::layer_norm", ""},
    {"aten::linear", ""},       {"aten::max_pool2d", ""},
    {"aten::mul", "Tensor"},    {"aten::permute", ""},
    {"aten::relu", ""},         {"aten::relu_", ""},
    {"aten::reshape", ""},      {"aten::select", "int"},
    {"aten::sigmoid", ""},      {"aten::silu_", ""},
    {"aten::slice", "Tensor"},  {"aten::softmax", "int"},
    {"aten::tanh", ""},         {"aten::transpose", "int"},
    {"aten::view", ""},
};

TEST(BuiltinRulesTest, EveryTracedOpHasARule) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  for (const SeenOp& s : kSeenOps) {
    EXPECT_NE(rules->Find(s.op, s.overload), nullptr)
        << s.op << "." << s.overload;
  }
  EXPECT_TRUE(rules->IsIgnored("prim::GetAttr"));
  EXPECT_TRUE(rules->IsIgnored("prim::Constant"));
}

// Families the brief names beyond the traced models: a rule must exist.
TEST(BuiltinRulesTest, FamiliesCovered) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  const char* kOps[] = {"aten::conv1d",
                        "aten::conv2d",
                        "aten::conv3d",
                        "aten::convolution",
                        "aten::conv_transpose2d",
                        "aten::matmul",
                        "aten::mm",
                        "aten::addmm",
                        "aten::baddbmm",
                        "aten::sub",
                        "aten::neg",
                        "aten::pow",
                        "aten::sqrt",
                        "aten::rsqrt",
                        "aten::exp",
                        "aten::log",
                        "aten::clamp",
                        "aten::where",
                        "aten::relu6",
                        "aten::hardtanh",
                        "aten::hardswish",
                        "aten::hardsigmoid_",
                        "aten::sigmoid_",
                        "aten::tanh_",
                        "aten::silu",
                        "aten::leaky_relu",
                        "aten::elu",
                        "aten::log_softmax",
                        "aten::group_norm",
                        "aten::instance_norm",
                        "aten::max_pool1d",
                        "aten::max_pool3d",
                        "aten::avg_pool1d",
                        "aten::avg_pool3d",
                        "aten::adaptive_avg_pool1d",
                        "aten::adaptive_avg_pool3d",
                        "aten::adaptive_max_pool2d",
                        "aten::sum",
                        "aten::mean",
                        "aten::amax",
                        "aten::unflatten",
                        "aten::t",
                        "aten::squeeze",
                        "aten::unsqueeze",
                        "aten::narrow",
                        "aten::split",
                        "aten::stack",
                        "aten::unbind",
                        "aten::clone",
                        "aten::detach",
                        "aten::to",
                        "aten::type_as",
                        "aten::feature_dropout",
                        "aten::alpha_dropout",
                        "aten::embedding"};
  for (const char* op : kOps) EXPECT_NE(rules->Find(op), nullptr) << op;
  EXPECT_NE(rules->Find("aten::max", "dim"), nullptr);
  EXPECT_NE(rules->Find("aten::add", "Scalar"), nullptr);
  EXPECT_NE(rules->Find("aten::mul", "Scalar"), nullptr);
}

TEST(BuiltinRulesTest, ImplNamesSortedAndFindable) {
  std::vector<std::string> names = rules::ImplNames();
  ASSERT_FALSE(names.empty());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const std::string& n : names)
    EXPECT_NE(rules::FindImpl(n), nullptr) << n;
  EXPECT_EQ(rules::FindImpl("no_such_impl"), nullptr);
}

}  // namespace
}  // namespace torchcost
