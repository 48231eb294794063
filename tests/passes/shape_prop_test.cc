// Tests of shape propagation's native ops: size queries, NumToTensor/Int,
// list plumbing, integer arithmetic, and 0-dim integer tensors carrying values,
// so traced shape arithmetic (`x.view(x.size(0), -1)`) stays symbolic.
#include "passes/shape_prop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/graph_builder.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;
using ::testing::HasSubstr;

constexpr const char* kRules = R"yaml(
version: 1
rules:
  - op: t::mk                         # a tensor of the given shape
    schema: "mk(int[] size) -> Tensor"
    outputs:
      out: size
  - op: aten::floor_divide
    schema: "floor_divide(Tensor self, Tensor other) -> Tensor"
    outputs:
      out: broadcast(self, other)
  - op: aten::neg
    schema: "neg(Tensor self) -> Tensor"
    outputs:
      out: self
)yaml";

class ShapePropTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(rules_.AddText(kRules, "t.yaml").ok()); }

  // Propagates shapes over the built graph with input x of shape `spec`,
  // writing facts_ and report_ afresh.
  Status Propagate(const char* spec) {
    AnalysisOptions opts;
    opts.inputs.push_back(*ParseInputSpec(ctx_, spec));
    facts_ = passes::ShapeFacts();
    report_ = Report();
    return passes::PropagateShapes(b_.graph(), rules_, ctx_, opts, &facts_,
                                   &report_);
  }

  // Runs the propagation with input x of shape `spec`; returns the shape text
  // of `v`.
  std::string ShapeOf(int v, const char* spec = "B,S,8") {
    Status s = Propagate(spec);
    EXPECT_TRUE(s.ok()) << s.message();
    for (const auto& d : report_.diagnostics) ADD_FAILURE() << d.message;
    return Shape(v);
  }
  // The shape text of `v` after the last propagation.
  std::string Shape(int v) const {
    const auto& val = facts_.values[v];
    if (val.kind != rules::RValue::Kind::kTensor) return "not a tensor";
    return rules::ShapeToString(val.t.shape);
  }

  // Adds aten::size(x, dim), an int.
  int Size(int x, int64_t dim) {
    return b_.One("aten::size.int", {x, b_.Int(dim)}, {"self", "dim"},
                  ir::ValueKind::kInt);
  }
  // Adds t::mk of the list of int values `dims`: a tensor of that shape.
  int Mk(std::vector<int> dims) {
    const int l = b_.One("prim::ListConstruct", std::move(dims), {},
                         ir::ValueKind::kList);
    return b_.One("t::mk", {l}, {"size"});
  }
  // Adds an input x (to be given as [B, S]) and the vectors [S] and [B] of its
  // sizes; returns those two.
  std::pair<int, int> SAndBVectors() {
    const int x = b_.Input();
    return {Mk({Size(x, 1)}), Mk({Size(x, 0)})};
  }

  GraphBuilder b_;
  RuleSet rules_;
  sym::Context ctx_;
  passes::ShapeFacts facts_;
  Report report_;
};

TEST_F(ShapePropTest, ViewOfSizeZeroKeepsTheBatchSymbolic) {
  int x = b_.Input();
  int s0 = Size(x, 0);
  int t = b_.One("prim::NumToTensor", {s0}, {});
  int i = b_.One("aten::Int.Tensor", {t}, {}, ir::ValueKind::kInt);
  int y = Mk({i, b_.Int(5)});
  EXPECT_EQ(ShapeOf(y), "[B, 5]");
}

TEST_F(ShapePropTest, IntegerArithmetic) {
  int x = b_.Input();
  // S
  int s1 = Size(x, -2);
  // 6*S
  int m = b_.One("aten::mul.int", {s1, b_.Int(6)}, {}, ir::ValueKind::kInt);
  // 2*S
  int d = b_.One("aten::floordiv.int", {m, b_.Int(3)}, {}, ir::ValueKind::kInt);
  // 2*S + 1
  int a = b_.One("aten::add.int", {d, b_.Int(1)}, {}, ir::ValueKind::kInt);
  int y = Mk({a});
  EXPECT_EQ(ShapeOf(y), "[" + (ctx_.Symbol("S") * 2 + 1).ToString() + "]");
}

TEST_F(ShapePropTest, ZeroDimIntegerTensorsCarryTheirValue) {
  int x = b_.Input();
  int s2 = Size(x, 1);
  int t = b_.One("prim::NumToTensor", {s2}, {});
  int two = b_.One("prim::NumToTensor", {b_.Int(2)}, {});
  int q = b_.One("aten::floor_divide", {t, two}, {"self", "other"});
  int i = b_.One("aten::Int.Tensor", {q}, {}, ir::ValueKind::kInt);
  int y = Mk({i});
  EXPECT_EQ(ShapeOf(y),
            "[" + sym::FloorDiv(ctx_.Symbol("S"), 2).ToString() + "]");
}

TEST_F(ShapePropTest, NegatedLengthsCarryTheirValue) {
  // -(-S): aten::neg of a 0-dim integer tensor carries -S (T5's
  // position_bias[:, :, -seq_length:, :]).
  int x = b_.Input();
  int s2 = Size(x, 1);
  int t = b_.One("prim::NumToTensor", {s2}, {});
  int n = b_.One("aten::neg", {b_.One("aten::neg", {t}, {"self"})}, {"self"});
  int i = b_.One("aten::Int.Tensor", {n}, {}, ir::ValueKind::kInt);
  int y = Mk({i});
  EXPECT_EQ(ShapeOf(y), "[S]");
}

TEST_F(ShapePropTest, UnpackAFullSize) {
  int x = b_.Input();
  int sz = b_.One("aten::size", {x}, {"self"}, ir::ValueKind::kList);
  auto parts = b_.Node("prim::ListUnpack", {sz}, {}, 3, ir::ValueKind::kInt);
  int y = Mk({parts[2], parts[0]});
  EXPECT_EQ(ShapeOf(y), "[8, B]");
}

TEST_F(ShapePropTest, OutOfRangeSizeIsAnErrorNamingTheNode) {
  int x = b_.Input();
  Size(x, 7);
  ASSERT_TRUE(Propagate("B,3").ok());
  ASSERT_EQ(report_.diagnostics.size(), 1u);
  EXPECT_THAT(report_.diagnostics[0].message,
              HasSubstr("test.pt: node %v2 (aten::size, module Net): dim 7 out "
                        "of range for a tensor of rank 2"));
}

// A rule compiled on first use that does not compile: an error naming the
// node, the rule file's line and column, and the rule; the analysis goes on.
TEST_F(ShapePropTest, LazyRuleThatDoesNotCompileIsAnErrorNamingFileAndRule) {
  ASSERT_TRUE(rules_
                  .AddTextLazy("version: 1\n"
                               "rules:\n"
                               "  - op: t::bad\n"
                               "    schema: \"bad(Tensor self) -> Tensor\"\n"
                               "    outputs:\n"
                               "      out: self\n"
                               "    flops: 2*nosuch\n",
                               "bad.yaml")
                  .ok());
  int x = b_.Input();
  b_.One("t::bad", {x}, {"self"});
  int z = Mk({b_.Int(4)});
  ASSERT_TRUE(Propagate("B,3").ok());
  ASSERT_EQ(report_.diagnostics.size(), 1u);
  EXPECT_THAT(report_.diagnostics[0].message,
              HasSubstr("(t::bad, module Net): bad.yaml:7:"));
  EXPECT_THAT(report_.diagnostics[0].message, HasSubstr("nosuch"));
  EXPECT_THAT(report_.diagnostics[0].message, HasSubstr("(rule t::bad)"));
  // It has a rule; the rule is wrong.
  EXPECT_TRUE(report_.unknown_ops.empty());
  // The nodes after it go on.
  EXPECT_EQ(Shape(z), "[4]");
}

// Nodes applying one rule to equal arguments share one application (a decoder's
// repeated layers); each keeps its own outputs, costs and assumptions, and
// arguments that differ in any part (a dim, a constant) are applied apart.
TEST_F(ShapePropTest, RepeatedApplicationsKeepEachNodesResults) {
  ASSERT_TRUE(
      rules_
          .AddText(
              "version: 1\n"
              "rules:\n"
              "  - op: t::outer\n"
              "    schema: \"outer(Tensor a, Tensor b, int k) -> Tensor\"\n"
              "    match:\n"
              "      a: [M]\n"
              "      b: [N]\n"
              "    require:\n"
              "      - M == N\n"
              "    outputs:\n"
              "      out: [M, N]\n"
              "    flops:\n"
              "      fwd: k*M*N\n",
              "outer.yaml")
          .ok());
  const auto [vs, vb] = SAndBVectors();
  const int y1 = b_.One("t::outer", {vs, vb, b_.Int(2)}, {"a", "b", "k"});
  // Equal arguments.
  const int y2 = b_.One("t::outer", {vs, vb, b_.Int(2)}, {"a", "b", "k"});
  // Another constant.
  const int y3 = b_.One("t::outer", {vs, vb, b_.Int(3)}, {"a", "b", "k"});
  // Another dim.
  const int y4 = b_.One("t::outer", {vs, vs, b_.Int(2)}, {"a", "b", "k"});
  ASSERT_TRUE(Propagate("B,S").ok());
  const sym::Expr S = ctx_.Symbol("S"), B = ctx_.Symbol("B");
  EXPECT_EQ(Shape(y1), "[S, B]");
  EXPECT_EQ(Shape(y2), "[S, B]");
  EXPECT_EQ(Shape(y3), "[S, B]");
  EXPECT_EQ(Shape(y4), "[S, S]");
  const auto& g = b_.graph();
  auto flops_of = [&](int v) {
    return report_.nodes[g.values[v].producer].flops;
  };
  EXPECT_EQ(flops_of(y1), sym::Expr(2) * S * B);
  EXPECT_EQ(flops_of(y2), sym::Expr(2) * S * B);
  EXPECT_EQ(flops_of(y3), sym::Expr(3) * S * B);
  EXPECT_EQ(flops_of(y4), sym::Expr(2) * S * S);
  // S == B cannot be proved: one assumption per node that needs it, naming that
  // node.
  ASSERT_EQ(report_.assumptions.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const int y = std::vector<int>{y1, y2, y3}[i];
    EXPECT_THAT(report_.assumptions[i],
                HasSubstr(g.nodes[g.values[y].producer].debug_name))
        << i;
  }
  // One result held for y1 and y2, apart from y3's and y4's; the outputs are in
  // the values only.
  auto applied_of = [&](int v) {
    return facts_.nodes[g.values[v].producer].applied;
  };
  EXPECT_EQ(applied_of(y1), applied_of(y2));
  EXPECT_NE(applied_of(y1), applied_of(y3));
  EXPECT_NE(applied_of(y1), applied_of(y4));
  EXPECT_NE(applied_of(y3), applied_of(y4));
  EXPECT_TRUE(applied_of(y1)->outputs.empty());
}

// The memo keeps apart nodes whose arguments differ only in a dtype or in the
// value a 0-dim integer tensor carries, also when their inputs are themselves
// outputs copied from the memo; equal arguments share one result.
TEST_F(ShapePropTest, MemoKeepsDtypesAndCarriedValuesApart) {
  const int x = b_.Input("x"), w = b_.Input("w");
  auto neg = [&](int v) { return b_.One("aten::neg", {v}, {"self"}); };
  // Same shapes, dtypes float32 and bfloat16, two negations deep.
  const int a1 = neg(x), a2 = neg(w);
  const int b1 = neg(a1), b2 = neg(a2), c1 = neg(b1);
  // 0-dim int64 tensors carrying S and B: equal types, different values.
  auto carried = [&](int dim) {
    const int size = b_.One("aten::size.int", {x, b_.Int(dim)}, {"self", "dim"},
                            ir::ValueKind::kInt);
    return b_.One("prim::NumToTensor", {size}, {});
  };
  auto as_shape = [&](int t) {
    const int i = b_.One("aten::Int.Tensor", {t}, {}, ir::ValueKind::kInt);
    return b_.One(
        "t::mk", {b_.One("prim::ListConstruct", {i}, {}, ir::ValueKind::kList)},
        {"size"});
  };
  // -(-S) and -(-B).
  const int ys = as_shape(neg(neg(carried(1))));
  const int yb = as_shape(neg(neg(carried(0))));
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "B,S:float32"));
  opts.inputs.push_back(*ParseInputSpec(ctx_, "B,S:bfloat16"));
  passes::ShapeFacts facts;
  Report report;
  ASSERT_TRUE(
      passes::PropagateShapes(b_.graph(), rules_, ctx_, opts, &facts, &report)
          .ok());
  for (const auto& d : report.diagnostics) ADD_FAILURE() << d.message;
  for (int v : {a1, b1, c1})
    EXPECT_EQ(facts.values[v].t.dtype, DType::kFloat32);
  for (int v : {a2, b2}) EXPECT_EQ(facts.values[v].t.dtype, DType::kBFloat16);
  EXPECT_EQ(rules::ShapeToString(facts.values[b2].t.shape), "[B, S]");
  EXPECT_EQ(rules::ShapeToString(facts.values[ys].t.shape), "[S]");
  EXPECT_EQ(rules::ShapeToString(facts.values[yb].t.shape), "[B]");
  const auto& g = b_.graph();
  auto applied_of = [&](int v) {
    return facts.nodes[g.values[v].producer].applied;
  };
  EXPECT_NE(applied_of(b1), applied_of(b2));
  // b1 and c1 negate equal float32 [B, S] tensors, both outputs of the memo.
  EXPECT_EQ(applied_of(b1), applied_of(c1));
}

// Nodes of one op bind their inputs by the names each node gives, whatever
// the names the op's earlier nodes gave; a name the schema lacks is an error
// even after the op bound others.
TEST_F(ShapePropTest, EachNodeBindsByItsOwnInputNames) {
  ASSERT_TRUE(
      rules_
          .AddText("version: 1\n"
                   "rules:\n"
                   "  - op: t::pair\n"
                   "    schema: \"pair(Tensor a, Tensor b) -> Tensor\"\n"
                   "    match:\n"
                   "      a: [M]\n"
                   "      b: [N]\n"
                   "    outputs:\n"
                   "      out: [M, N]\n",
                   "pair.yaml")
          .ok());
  const auto [vs, vb] = SAndBVectors();
  // a = [S], b = [B] gives [S, B]; the names swapped, a = [B], b = [S].
  const int y1 = b_.One("t::pair", {vs, vb}, {"a", "b"});
  const int y2 = b_.One("t::pair", {vs, vb}, {"b", "a"});
  const int y3 = b_.One("t::pair", {vs, vb}, {"a", "b"});
  EXPECT_EQ(ShapeOf(y1, "B,S"), "[S, B]");
  EXPECT_EQ(ShapeOf(y2, "B,S"), "[B, S]");
  EXPECT_EQ(ShapeOf(y3, "B,S"), "[S, B]");
  b_.One("t::pair", {vs, vb}, {"a", "c"});
  ASSERT_TRUE(Propagate("B,S").ok());
  ASSERT_EQ(report_.diagnostics.size(), 1u);
  EXPECT_THAT(report_.diagnostics[0].message,
              HasSubstr("input 'c' is not an argument of the rule's schema "
                        "'pair'"));
}

// A node with fewer input names than inputs is an error; names past the
// inputs bind nothing, and a later node with the same names and more inputs
// binds all of its own (not the earlier node's binding).
TEST_F(ShapePropTest, InputNamesAndInputsOfDifferentCounts) {
  ASSERT_TRUE(
      rules_
          .AddText("version: 1\n"
                   "rules:\n"
                   "  - op: t::pair\n"
                   "    schema: \"pair(Tensor a, Tensor b=None) -> Tensor\"\n"
                   "    match:\n"
                   "      a: [M]\n"
                   "    outputs:\n"
                   "      out: [M]\n",
                   "pair.yaml")
          .ok());
  const auto [vs, vb] = SAndBVectors();
  const int y1 = b_.One("t::pair", {vs}, {"a", "b"});
  const int y2 = b_.One("t::pair", {vb, vs}, {"a", "b"});
  EXPECT_EQ(ShapeOf(y1, "B,S"), "[S]");
  EXPECT_EQ(ShapeOf(y2, "B,S"), "[B]");
  b_.One("t::pair", {vs, vb}, {"a"});
  ASSERT_TRUE(Propagate("B,S").ok());
  ASSERT_EQ(report_.diagnostics.size(), 1u);
  EXPECT_THAT(report_.diagnostics[0].message,
              HasSubstr("node has 2 inputs but 1 input names"));
}

// ExtendShapes over appended nodes equals one propagation of the grown graph:
// the same values and costs, ops without rules counted together, the
// unread-backend warning once and last.
TEST(ExtendShapesTest, EqualsOnePropagationOfTheGrownGraph) {
  RuleSet rules;
  ASSERT_TRUE(rules.AddText(kRules, "t.yaml").ok());
  GraphBuilder b;
  const int x = b.Input();
  const int y = b.One("t::unknown", {x}, {"self"});
  b.Output(y);
  ir::Graph prefix = b.graph();
  const int target = b.Input("target");
  const int z = b.One("t::unknown", {y}, {"self"});
  b.Output(b.One("aten::floor_divide", {z, target}, {"self", "other"}));
  const ir::Graph grown = b.graph();

  sym::Context ctx;
  AnalysisOptions options;
  options.attention_backend = "flash";  // Read by no node: one warning.
  options.inputs.push_back(*ParseInputSpec(ctx, "B,8"));
  passes::ShapeFacts facts;
  Report extended;
  ASSERT_TRUE(
      passes::PropagateShapes(prefix, rules, ctx, options, &facts, &extended)
          .ok());
  options.inputs.push_back(*ParseInputSpec(ctx, "B,8"));
  ASSERT_TRUE(
      passes::ExtendShapes(grown, rules, ctx, options, &facts, &extended).ok());
  passes::ShapeFacts once_facts;
  Report once;
  ASSERT_TRUE(
      passes::PropagateShapes(grown, rules, ctx, options, &once_facts, &once)
          .ok());

  ASSERT_EQ(extended.values.size(), once.values.size());
  for (size_t i = 0; i < once.values.size(); ++i) {
    EXPECT_EQ(extended.values[i].known, once.values[i].known) << i;
    EXPECT_EQ(rules::ShapeToString(extended.values[i].shape),
              rules::ShapeToString(once.values[i].shape))
        << i;
  }
  ASSERT_EQ(extended.nodes.size(), 3u);
  EXPECT_TRUE(extended.nodes[2].has_rule);
  ASSERT_EQ(extended.unknown_ops.size(), 1u);
  EXPECT_EQ(extended.unknown_ops[0].op, "t::unknown");
  EXPECT_EQ(extended.unknown_ops[0].count, 2);
  ASSERT_EQ(extended.diagnostics.size(), once.diagnostics.size());
  for (size_t i = 0; i < once.diagnostics.size(); ++i) {
    EXPECT_EQ(extended.diagnostics[i].message, once.diagnostics[i].message)
        << i;
  }
  EXPECT_THAT(extended.diagnostics.back().message,
              HasSubstr("attention backend 'flash' applies to no node"));
}

// Runs of nodes hinted as repeats (ir::RepeatSpan) take their source run's
// facts when what they read from outside is equal, and are propagated node by
// node otherwise; either way every fact is the one a propagation without the
// hints finds.
TEST_F(ShapePropTest,
       RepeatedRunsCopyTheirSourcesFactsWhereTheyReadEqualValues) {
  // A run: neg(mk([size(in, 1), size(in, 0)])), five nodes and seven values
  // (two constants): [B, S] -> [S, B].
  auto run = [&](int in) {
    return b_.One("aten::neg", {Mk({Size(in, 1), Size(in, 0)})}, {"self"});
  };
  const int x = b_.Input();
  const int r0 = run(x), r1 = run(r0), r2 = run(r1), r3 = run(r2);
  // Run 1 reads [S, B] where run 0 read x, [B, S] of float32: not copied.
  // Run 3 reads [S, B] as run 1 did (mk's dtype unknown both): copied.
  b_.graph().repeats = {{0, 5, 5, 1, 7, 7}, {5, 15, 5, 8, 7, 14}};
  ASSERT_TRUE(Propagate("B,S").ok());
  EXPECT_EQ(Shape(r0), "[S, B]");
  EXPECT_EQ(Shape(r1), "[B, S]");
  EXPECT_EQ(Shape(r2), "[S, B]");
  EXPECT_EQ(Shape(r3), "[B, S]");
  EXPECT_EQ(facts_.copied_nodes, 5);
  // The copied neg binds its own run's mk.
  const ir::Graph& g = b_.graph();
  EXPECT_EQ(g.nodes[19].op, "aten::neg");
  ASSERT_EQ(facts_.nodes[19].arg_values.size(), 1u);
  EXPECT_EQ(facts_.nodes[19].arg_values[0], r3 - 1);
  const passes::ShapeFacts hinted = std::move(facts_);
  const Report hinted_report = report_;
  b_.graph().repeats.clear();
  ASSERT_TRUE(Propagate("B,S").ok());
  EXPECT_EQ(facts_.copied_nodes, 0);
  for (size_t v = 0; v < g.values.size(); ++v) {
    EXPECT_EQ(hinted.values[v].kind, facts_.values[v].kind) << v;
    EXPECT_EQ(hinted.values[v].t.shape, facts_.values[v].t.shape) << v;
    EXPECT_EQ(hinted.values[v].t.dtype, facts_.values[v].t.dtype) << v;
    EXPECT_EQ(hinted.values[v].i, facts_.values[v].i) << v;
    EXPECT_EQ(hinted_report.values[v].shape, report_.values[v].shape) << v;
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    EXPECT_EQ(hinted.nodes[n].ok, facts_.nodes[n].ok) << n;
    EXPECT_EQ(hinted.nodes[n].rule, facts_.nodes[n].rule) << n;
    EXPECT_EQ(hinted.nodes[n].arg_values, facts_.nodes[n].arg_values) << n;
    EXPECT_EQ(hinted_report.nodes[n].flops, report_.nodes[n].flops) << n;
    EXPECT_EQ(hinted_report.nodes[n].has_rule, report_.nodes[n].has_rule) << n;
  }
}

// A run whose source minted a symbol (aten::Int of a tensor) or made an
// assumption is propagated node by node: each node its own symbol, each its
// own assumption naming it. aten::Int of a carried size mints nothing.
TEST_F(ShapePropTest, RunsThatMintSymbolsOrAssumeAreNotCopied) {
  const int in = b_.Input();
  // mk([int(NumToTensor(size(x, 0)))]): [B], five nodes and six values.
  auto carried = [&] {
    const int t = b_.One("prim::NumToTensor", {Size(in, 0)}, {});
    return Mk({b_.One("aten::Int.Tensor", {t}, {}, ir::ValueKind::kInt)});
  };
  const int c0 = carried(), c1 = carried();
  b_.graph().repeats = {{0, 5, 5, 1, 6, 6}};
  ASSERT_TRUE(Propagate("B,S").ok());
  EXPECT_EQ(facts_.copied_nodes, 5);
  EXPECT_EQ(Shape(c0), "[B]");
  EXPECT_EQ(Shape(c1), "[B]");

  b_ = GraphBuilder();
  const int x = b_.Input();
  // mk([int(neg(x))]): an unknowable length, a fresh symbol per node.
  auto minted = [&] {
    const int i =
        b_.One("aten::Int.Tensor", {b_.One("aten::neg", {x}, {"self"})}, {},
               ir::ValueKind::kInt);
    return Mk({i});
  };
  const int m0 = minted(), m1 = minted();
  b_.graph().repeats = {{0, 4, 4, 1, 4, 4}};
  ASSERT_TRUE(Propagate("B,S").ok());
  EXPECT_EQ(facts_.copied_nodes, 0);
  EXPECT_NE(Shape(m0), Shape(m1));

  ASSERT_TRUE(rules_
                  .AddText("version: 1\n"
                           "rules:\n"
                           "  - op: t::square\n"
                           "    schema: \"square(Tensor a) -> Tensor\"\n"
                           "    match:\n"
                           "      a: [M, N]\n"
                           "    require:\n"
                           "      - M == N\n"
                           "    outputs:\n"
                           "      out: [M, N]\n",
                           "square.yaml")
                  .ok());
  b_ = GraphBuilder();
  const int y = b_.Input();
  const int s0 = b_.One("t::square", {y}, {"a"});
  const int s1 = b_.One("t::square", {y}, {"a"});
  b_.graph().repeats = {{0, 1, 1, 1, 1, 1}};
  ASSERT_TRUE(Propagate("B,S").ok());
  EXPECT_EQ(facts_.copied_nodes, 0);
  ASSERT_EQ(report_.assumptions.size(), 2u);
  const ir::Graph& g = b_.graph();
  EXPECT_THAT(report_.assumptions[0],
              HasSubstr(g.nodes[g.values[s0].producer].debug_name));
  EXPECT_THAT(report_.assumptions[1],
              HasSubstr(g.nodes[g.values[s1].producer].debug_name));
}

}  // namespace
}  // namespace torchcost
