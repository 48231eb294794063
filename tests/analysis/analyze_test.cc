// Tests of the forward analysis: aggregation per module and per op, module
// outputs, parameters (tied ones once), input specs, strict mode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/analyze_graph.h"
#include "testing/graph_builder.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using testing::GraphBuilder;
using ::testing::HasSubstr;

// A linear rule written here, so these tests do not depend on the shipped
// rules.
constexpr const char* kRules = R"yaml(
version: 1
rules:
  - op: t::lin
    schema: "lin(Tensor input, Tensor weight) -> Tensor"
    match:
      input: ["*B", IN]
      weight: [OUT, IN]
    outputs:
      out: ["*B", OUT]
    macs: prod(B)*IN*OUT                      # one FMA per (row, in, out)
    flops: 2*prod(B)*IN*OUT                   # 2 FLOPs per FMA
    transcendentals: prod(B)*OUT              # pretend: one exp per output
ignored: [t::free]
)yaml";

RuleSet Rules() {
  RuleSet r;
  Status s = r.AddText(kRules, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.message();
  return r;
}

// Net: a (Linear 8->4) then b (Linear 4->2), each weight owned by its module.
struct TwoLayer {
  GraphBuilder b;
  int x, h, y;
  TwoLayer() {
    x = b.Input();
    int wa = b.Param("a.weight", {4, 8});
    int wb = b.Param("b.weight", {2, 4}, /*requires_grad=*/false);
    b.Scope("a", "Linear");
    h = b.One("t::lin", {x, wa}, {"input", "weight"});
    b.Scope("b", "Linear");
    y = b.One("t::lin", {h, wb}, {"input", "weight"});
    b.Output(y);
  }
};

TEST(AnalyzeTest, TotalsPerModuleAndOp) {
  TwoLayer net;
  RuleSet rules = Rules();
  sym::Context ctx;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "B,8"));
  auto r = Analyze(net.b.graph(), rules, ctx, opts);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const sym::Expr B = ctx.Symbol("B");
  EXPECT_EQ(r->macs, B * (8 * 4) + B * (4 * 2));
  EXPECT_EQ(r->flops, B * (2 * 8 * 4) + B * (2 * 4 * 2));
  EXPECT_EQ(r->transcendentals, B * 4 + B * 2);
  EXPECT_EQ(r->params, 4 * 8 + 2 * 4);
  EXPECT_EQ(r->trainable_params, 4 * 8);
  EXPECT_EQ(r->param_bytes, (4 * 8 + 2 * 4) * 4);
  const auto& g = net.b.graph();
  int a = 1, b = 2;
  ASSERT_EQ(g.scopes[a].path, "a");
  EXPECT_EQ(r->modules[a].macs, B * 32);
  EXPECT_EQ(r->modules[b].macs, B * 8);
  EXPECT_EQ(r->modules[0].macs, r->macs);
  EXPECT_EQ(r->modules[a].params, 32);
  EXPECT_EQ(r->modules[b].trainable_params, 0);
  ASSERT_EQ(r->ops.size(), 1u);
  EXPECT_EQ(r->ops[0].op, "t::lin");
  EXPECT_EQ(r->ops[0].count, 2);
  EXPECT_THAT(r->symbols, ElementsAre("B"));
  ASSERT_EQ(r->modules[a].output_shapes.size(), 1u);
  EXPECT_THAT(r->modules[a].output_shapes[0], ElementsAre(B, sym::Expr(4)));
  ASSERT_EQ(r->modules[0].output_shapes.size(), 1u);
  EXPECT_THAT(r->modules[0].output_shapes[0], ElementsAre(B, sym::Expr(2)));
}

TEST(AnalyzeTest, ReusedModuleReportsItsLastCall) {
  GraphBuilder b;
  int x = b.Input();
  int w1 = b.Param("l.weight", {8, 8});
  int w2 = b.Param("m.weight", {3, 8});
  b.Scope("l", "Linear");
  int h1 = b.One("t::lin", {x, w1}, {"input", "weight"});
  b.Scope("m", "Linear");
  int h2 = b.One("t::lin", {h1, w2}, {"input", "weight"});
  (void)h2;
  b.Scope("l", "Linear");
  int h3 = b.One("t::lin", {h1, w1}, {"input", "weight"});
  b.Output(h3);
  RuleSet rules = Rules();
  sym::Context ctx;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "5,8"));
  auto r = Analyze(b.graph(), rules, ctx, opts);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->modules[1].output_shapes.size(), 1u);
  EXPECT_THAT(r->modules[1].output_shapes[0],
              ElementsAre(sym::Expr(5), sym::Expr(8)));
  EXPECT_EQ(r->modules[1].macs, sym::Expr(2 * 5 * 8 * 8));  // Two calls of l.
}

TEST(AnalyzeTest, TiedParameterCountsOnce) {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("embed.weight", {10, 4});
  b.graph().params[0].aliases.push_back("head.weight");
  b.graph().GetOrAddScope("embed", "Embedding");
  b.Scope("head", "Linear");
  b.Output(b.One("t::lin", {x, w}, {"input", "weight"}));
  RuleSet rules = Rules();
  sym::Context ctx;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "2,4"));
  auto r = Analyze(b.graph(), rules, ctx, opts);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->params, 40);
  EXPECT_EQ(r->modules[0].params, 40);  // Root holds both names: once.
  for (size_t s = 1; s < b.graph().scopes.size(); ++s)
    EXPECT_EQ(r->modules[s].params, 40);
}

TEST(AnalyzeTest, RoutedExpertsLeaveTheirUnroutedShareInactive) {
  // moe.gate [4, 8] (the router, always active) and moe.experts.0..3, each a
  // weight [8, 8]; expert 0 also holds an adapter [2, 8]. Each token runs
  // top_k = 1 of the 4 experts, each as often as the others (balanced
  // routing): it leaves 3/4 of the list's 4 * 64 + 16 parameters unused on
  // average. dense.0, outside the list, adds nothing inactive.
  GraphBuilder b;
  int x = b.Input();
  int router = b.Param("moe.gate.weight", {4, 8});
  for (int e = 0; e < 4; ++e) {
    const std::string expert = "moe.experts." + std::to_string(e);
    b.Param(expert + ".weight", {8, 8});
    b.graph().GetOrAddScope(expert, "Expert");
  }
  b.Param("moe.experts.0.lora_A.weight", {2, 8});
  b.graph().GetOrAddScope("moe.experts.0.lora_A", "Linear");
  b.Param("dense.0.weight", {8, 8});
  b.graph().GetOrAddScope("dense.0", "Linear");
  const int experts = b.graph().GetOrAddScope("moe.experts", "ModuleList");
  b.graph().scopes[experts].routed_top_k = 1;
  b.Scope("moe.gate", "Linear");
  b.Output(b.One("t::lin", {x, router}, {"input", "weight"}));
  const RuleSet rules = Rules();
  sym::Context ctx;
  const Report one = testing::AnalyzeGraph(b.graph(), rules, ctx, {}, "2,8");
  EXPECT_EQ(one.params, 32 + 4 * 64 + 16 + 64);
  EXPECT_EQ(one.inactive_params, (4 * 64 + 16) * 3 / 4);

  // Two routed of the 4: half of them.
  b.graph().scopes[experts].routed_top_k = 2;
  sym::Context ctx2;
  const Report two = testing::AnalyzeGraph(b.graph(), rules, ctx2, {}, "2,8");
  EXPECT_EQ(two.inactive_params, (4 * 64 + 16) / 2);
}

TEST(AnalyzeTest, UnknownOpsAreCountedAndDownstreamIsSkipped) {
  GraphBuilder b;
  int x = b.Input();
  int w = b.Param("w", {4, 4});
  int u1 = b.One("my::op", {x}, {});
  int u2 = b.One("my::op", {u1}, {});
  int f = b.One("t::free", {u2}, {});
  b.Output(b.One("t::lin", {f, w}, {"input", "weight"}));
  RuleSet rules = Rules();
  sym::Context ctx;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "2,4"));
  auto r = Analyze(b.graph(), rules, ctx, opts);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->unknown_ops.size(), 1u);
  EXPECT_EQ(r->unknown_ops[0].op, "my::op");
  EXPECT_EQ(r->unknown_ops[0].count, 2);
  int errors = 0;
  for (const auto& d : r->diagnostics)
    errors += d.severity == Diagnostic::Severity::kError;
  EXPECT_EQ(errors, 0);
  ASSERT_FALSE(r->diagnostics.empty());
  EXPECT_THAT(r->diagnostics[0].message,
              HasSubstr("test.pt: node %v2 (my::op, module Net): no rule for "
                        "operator my::op; its outputs are unknown"));
  opts.strict = true;
  auto strict = Analyze(b.graph(), rules, ctx, opts);
  ASSERT_FALSE(strict.ok());
  EXPECT_THAT(strict.status().message(),
              HasSubstr("1 operators without rules: my::op (x2)"));
}

TEST(AnalyzeTest, WrongNumberOfInputsIsAnError) {
  TwoLayer net;
  RuleSet rules = Rules();
  sym::Context ctx;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx, "2,8"));
  opts.inputs.push_back(*ParseInputSpec(ctx, "2,8"));
  auto r = Analyze(net.b.graph(), rules, ctx, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(
      r.status().message(),
      HasSubstr(
          "the model takes 1 tensor input but 2 StepConfig.inputs were given"));
}

TEST(AnalyzeTest, WrongRankIsAnErrorDiagnostic) {
  TwoLayer net;
  RuleSet rules = Rules();
  sym::Context ctx;
  AnalysisOptions opts;
  // IN would be 3, weight says 8.
  opts.inputs.push_back(*ParseInputSpec(ctx, "2,8,3"));
  auto r = Analyze(net.b.graph(), rules, ctx, opts);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(r->diagnostics.empty());
  EXPECT_EQ(r->diagnostics[0].severity, Diagnostic::Severity::kError);
  EXPECT_THAT(r->diagnostics[0].message,
              HasSubstr("argument 'weight' dim 1 must equal IN; got 8 vs 3"));
}

struct SpecCase {
  const char* text;
  const char* error;  // nullptr if valid
  size_t rank;
  DType dtype;
};

class InputSpecTest : public ::testing::TestWithParam<SpecCase> {};

TEST_P(InputSpecTest, Parses) {
  sym::Context ctx;
  auto s = ParseInputSpec(ctx, GetParam().text);
  if (GetParam().error) {
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.status().message(), HasSubstr(GetParam().error));
    return;
  }
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->shape.size(), GetParam().rank);
  EXPECT_EQ(s->dtype, GetParam().dtype);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InputSpecTest,
    ::testing::Values(
        SpecCase{"B,3,224,224", nullptr, 4, DType::kFloat32},
        SpecCase{"1, 3, 8", nullptr, 3, DType::kFloat32},
        SpecCase{"B,S:int64", nullptr, 2, DType::kInt64},
        SpecCase{"B,S:bf16", nullptr, 2, DType::kBFloat16},
        SpecCase{"B,x?,3",
                 "dim 'x?' is neither a positive integer, a symbol name nor a "
                 "non-negative expression",
                 0, DType::kUnknown},
        SpecCase{"B,H,S+T-2,8", nullptr, 4, DType::kFloat32},
        SpecCase{"B,min(S+T-2, 4095),8", nullptr, 3, DType::kFloat32},
        SpecCase{"B,S-5,3", "dim 'S-5' is neither", 0, DType::kUnknown},
        SpecCase{"B,0,3", "dim '0' must be a positive integer", 0,
                 DType::kUnknown},
        SpecCase{"B,,3", "empty dim", 0, DType::kUnknown},
        SpecCase{"B:float99", "float99", 0, DType::kUnknown},
        SpecCase{"", "no dims", 0, DType::kUnknown}));

}  // namespace
}  // namespace torchcost
