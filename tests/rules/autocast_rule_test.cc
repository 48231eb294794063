// Tests of the `autocast:` rule property: its forms, its errors, and the
// policies of a few shipped rules (CUDA's from PyTorch's Autocast Op
// Reference, CPU's as tools/autocast_probe.py measures torch 1.13).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "rules/op_rule.h"
#include "rules/rule_parser.h"
#include "torchcost/rules.h"

namespace torchcost::rules {
namespace {

using ::testing::HasSubstr;

Result<RuleFile> Parse(const std::string& rules) {
  return ParseRuleFile("version: 1\nrules:\n" + rules, "t.yaml");
}

TEST(AutocastRuleTest, AbsentMeansNone) {
  auto f = Parse(
      "  - op: t::relu\n    schema: \"relu(Tensor self) -> Tensor\"\n    "
      "outputs: {out: self}\n");
  ASSERT_TRUE(f.ok()) << f.status().message();
  const AutocastSpec& a = f->rules[0]->variants[0].autocast;
  EXPECT_EQ(a.cuda, AutocastPolicy::kNone);
  EXPECT_EQ(a.cpu, AutocastPolicy::kNone);
}

TEST(AutocastRuleTest, ScalarAppliesToBothDevices) {
  auto f = Parse(
      "  - op: t::mm\n    schema: \"mm(Tensor self, Tensor mat2) -> Tensor\"\n "
      "   autocast: lower\n"
      "    outputs: {out: self}\n");
  ASSERT_TRUE(f.ok()) << f.status().message();
  const AutocastSpec& a = f->rules[0]->variants[0].autocast;
  EXPECT_EQ(a.cuda, AutocastPolicy::kLower);
  EXPECT_EQ(a.cpu, AutocastPolicy::kLower);
}

TEST(AutocastRuleTest, MapGivesEachDeviceAndOps) {
  auto f = Parse(
      "  - op: [t::sinh, t::sin]\n    schema: \"sinh(Tensor self) -> Tensor\"\n"
      "    autocast: {cuda: fp32, only: [t::sinh]}\n    outputs: {out: "
      "self}\n");
  ASSERT_TRUE(f.ok()) << f.status().message();
  const AutocastSpec& a = f->rules[0]->variants[0].autocast;
  EXPECT_EQ(a.cuda, AutocastPolicy::kFp32);
  EXPECT_EQ(a.cpu, AutocastPolicy::kNone);  // Left out: none.
  EXPECT_THAT(a.only, ::testing::ElementsAre("t::sinh"));
}

TEST(AutocastRuleTest, ACaseOverridesTheRule) {
  auto f = Parse(
      "  - op: t::conv\n    schema: \"conv(Tensor input, bool transposed) -> "
      "Tensor\"\n"
      "    autocast: lower\n    outputs: {out: input}\n    cases:\n"
      "      - when: not transposed\n      - when: transposed\n        "
      "autocast: {cuda: lower, cpu: fp32}\n");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->rules[0]->variants.size(), 2u);
  EXPECT_EQ(f->rules[0]->variants[0].autocast.cpu, AutocastPolicy::kLower);
  EXPECT_EQ(f->rules[0]->variants[1].autocast.cpu, AutocastPolicy::kFp32);
  EXPECT_EQ(f->rules[0]->variants[1].autocast.cuda, AutocastPolicy::kLower);
}

TEST(AutocastRuleTest, ErrorsNameTheProblem) {
  const std::string head =
      "  - op: t::a\n    schema: \"a(Tensor self) -> Tensor\"\n    outputs: "
      "{out: self}\n";
  auto bad_policy = Parse(head + "    autocast: half\n");
  ASSERT_FALSE(bad_policy.ok());
  EXPECT_THAT(bad_policy.status().message(),
              HasSubstr("t.yaml:6:15: unknown autocast policy 'half'"));
  auto bad_key = Parse(head + "    autocast: {gpu: lower}\n");
  ASSERT_FALSE(bad_key.ok());
  EXPECT_THAT(bad_key.status().message(),
              HasSubstr("unknown key 'gpu' in 'autocast' (cuda, cpu, only)"));
  auto bad_only = Parse(head + "    autocast: {cuda: fp32, only: [t::b]}\n");
  ASSERT_FALSE(bad_only.ok());
  EXPECT_THAT(
      bad_only.status().message(),
      HasSubstr("'autocast.only' names 't::b', which is not an op of rule"));
}

// A shipped rule's policy on one device.
AutocastPolicy Shipped(const char* op, bool cpu, int variant = 0) {
  static const RuleSet* rules =
      new RuleSet(std::move(RuleSet::Builtin()).value());
  const OpRule* r = rules->Find(op);
  EXPECT_NE(r, nullptr) << op;
  if (r == nullptr) return AutocastPolicy::kNone;
  const AutocastSpec& a = r->variants.at(variant).autocast;
  return cpu ? a.cpu : a.cuda;
}

TEST(AutocastRuleTest, ShippedPolicies) {
  // CUDA: "CUDA Ops that can autocast to float16 / float32 / promote".
  EXPECT_EQ(Shipped("aten::linear", false), AutocastPolicy::kLower);
  EXPECT_EQ(Shipped("aten::softmax", false), AutocastPolicy::kFp32);
  EXPECT_EQ(Shipped("aten::layer_norm", false), AutocastPolicy::kFp32);
  EXPECT_EQ(Shipped("aten::addcmul", false), AutocastPolicy::kPromote);
  EXPECT_EQ(Shipped("aten::relu", false), AutocastPolicy::kNone);
  // CPU, torch 1.13 (measured): softmax and layer_norm run in their inputs'
  // dtype; cat promotes.
  EXPECT_EQ(Shipped("aten::linear", true), AutocastPolicy::kLower);
  EXPECT_EQ(Shipped("aten::softmax", true), AutocastPolicy::kNone);
  EXPECT_EQ(Shipped("aten::layer_norm", true), AutocastPolicy::kNone);
  EXPECT_EQ(Shipped("aten::cat", true), AutocastPolicy::kPromote);
  EXPECT_EQ(Shipped("aten::cross_entropy_loss", true), AutocastPolicy::kFp32);
  // _convolution: conv2d's policy; its transposed case conv_transpose2d's
  // (float32 on CPU).
  EXPECT_EQ(Shipped("aten::_convolution", true, 0), AutocastPolicy::kLower);
  EXPECT_EQ(Shipped("aten::_convolution", true, 1), AutocastPolicy::kFp32);
  EXPECT_EQ(Shipped("aten::_convolution", false, 1), AutocastPolicy::kLower);
}

}  // namespace
}  // namespace torchcost::rules
