// GraphBuilder: tables, scopes, named arguments, symbolic sizes.
#include <gtest/gtest.h>

#include "torchcost/analysis.h"
#include "torchcost/builder.h"
#include "torchcost/rules.h"

namespace torchcost::build {
namespace {

TEST(GraphBuilderTest, ScopesParamsAndAliases) {
  GraphBuilder b("Net");
  Ref x = b.Input("x", {"B", 8});
  Ref w;
  {
    ScopeGuard s(b, "fc", "Linear");
    w = b.Param(b.Qualify("weight"), {4, 8});
    EXPECT_EQ(b.path(), "fc");
  }
  b.Alias(w, "head.weight");
  Ref y;
  {
    ScopeGuard s(b, "fc", "Linear");
    y = b.Linear(x, w);
  }
  b.Output(y);
  BuiltModel m = b.Finish();
  ASSERT_EQ(m.graph.scopes.size(), 2u);
  EXPECT_EQ(m.graph.scopes[1].path, "fc");
  EXPECT_EQ(m.graph.scopes[1].type, "Linear");
  ASSERT_EQ(m.graph.params.size(), 1u);
  EXPECT_EQ(m.graph.params[0].name, "fc.weight");
  EXPECT_EQ(m.graph.params[0].aliases, std::vector<std::string>{"head.weight"});
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  const ir::Node& n = m.graph.nodes[0];
  EXPECT_EQ(n.op, "aten::linear");
  EXPECT_EQ(n.input_names, (std::vector<std::string>{"input", "weight", "bias"}));
  EXPECT_EQ(n.scope, 1);
  EXPECT_EQ(m.graph.values[n.inputs[2]].kind, ir::ValueKind::kNone);
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_TRUE(m.inputs[0].shape[0].is_symbol());
}

TEST(GraphBuilderTest, SymbolicSizesFlowThroughListConstruct) {
  // x [B, S, 12] -> view(B, S, 3, 4): the view's size list holds aten::size values.
  GraphBuilder b("Net");
  Ref x = b.Input("x", {"B", "S", 12});
  Ref y = b.View(x, b.IntList({b.Size(x, 0), b.Size(x, 1), 3, 4}));
  b.Output(y);
  BuiltModel m = b.Finish();
  sym::Context ctx;
  AnalysisOptions options;
  options.inputs.push_back({ResolveShape(m, m.inputs[0], ctx), DType::kFloat32});
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  Result<Report> r = Analyze(m.graph, *rules, ctx, options);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const ValueInfo& out = r->values[y.id];
  ASSERT_TRUE(out.known);
  ASSERT_EQ(out.shape.size(), 4u);
  EXPECT_EQ(out.shape[0].ToString(), "B");
  EXPECT_EQ(out.shape[1].ToString(), "S");
  EXPECT_EQ(out.shape[3], sym::Expr(4));
}

TEST(GraphBuilderTest, SymbolBoundsBecomeRanges) {
  GraphBuilder b("Net");
  b.Input("idx", {"B", "S"}, DType::kInt64);
  b.BoundSymbol("S", 1024);
  BuiltModel m = b.Finish();
  sym::Context ctx;
  std::vector<sym::Expr> shape = ResolveShape(m, m.inputs[0], ctx);
  EXPECT_EQ(ctx.SymbolRange(shape[1]).hi, 1024);
  EXPECT_EQ(ctx.SymbolRange(shape[0]).hi, sym::kPosInf);
}

}  // namespace
}  // namespace torchcost::build
