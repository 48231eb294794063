// GraphBuilder: tables, scopes, named arguments, symbolic sizes.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "passes/repeat_span.h"
#include "passes/shape_prop.h"
#include "rules/rule_expr.h"
#include "torchcost/analysis.h"
#include "torchcost/builder.h"
#include "torchcost/families.h"
#include "torchcost/rules.h"

namespace torchcost::builder {
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
  EXPECT_EQ(n.input_names,
            (std::vector<std::string>{"input", "weight", "bias"}));
  EXPECT_EQ(n.scope, 1);
  EXPECT_EQ(m.graph.values[n.inputs[2]].kind, ir::ValueKind::kNone);
  ASSERT_EQ(m.inputs.size(), 1u);
  EXPECT_TRUE(m.inputs[0].shape[0].is_symbol());
}

TEST(GraphBuilderTest, SymbolicSizesFlowThroughListConstruct) {
  // x [B, S, 12] -> view(B, S, 3, 4): the view's size list holds aten::size
  // values.
  GraphBuilder b("Net");
  Ref x = b.Input("x", {"B", "S", 12});
  Ref y = b.View(x, b.IntList({b.Size(x, 0), b.Size(x, 1), 3, 4}));
  b.Output(y);
  BuiltModel m = b.Finish();
  sym::Context ctx;
  AnalysisOptions options;
  options.inputs.push_back(
      {ResolveShape(m, m.inputs[0], ctx), DType::kFloat32});
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

// A block as a decoder layer is: modules entered (one of them new), constants,
// a shape list, a multi-output and a no-output node, reading its input `x`,
// its weight `w` and a value made before it (`shared`); [B, 8] -> [B, 8].
Ref TestBlock(GraphBuilder& b, Ref x, Ref w, Ref shared) {
  Ref y;
  {
    ScopeGuard s(b, "fc", "Linear");
    y = b.Linear(x, w);
  }
  ScopeGuard s(b, "act", "ReLU");
  std::vector<Ref> halves = b.Chunk(b.Relu(b.Add(y, shared)), 2, -1);
  b.Op("aten::_assert_async", "", {{"self", halves[0]}}, 0);
  return b.View(b.Mul(halves[0], halves[1]), b.IntList({b.Size(x, 0), 8}));
}

// Builds `layers` blocks into "layers.i" (copies of the first when `replay`).
ir::Graph Layers(int layers, bool replay) {
  GraphBuilder b("Net");
  Ref x = b.Input("x", {"B", 8});
  std::vector<Ref> weights;
  for (int i = 0; i < layers; ++i) {
    ScopeGuard s(b, "layers", "ModuleList");
    ScopeGuard l(b, std::to_string(i), "Block");
    ScopeGuard fc(b, "fc", "Linear");
    weights.push_back(b.Param(b.Qualify("weight"), {16, 8}));
  }
  Ref shared = b.ScalarTensor(0.5);
  {
    ScopeGuard list(b, "layers", "ModuleList");
    GraphBuilder::Recording first;
    Ref first_in, first_out;
    for (int i = 0; i < layers; ++i) {
      ScopeGuard l(b, std::to_string(i), "Block");
      if (!replay || i == 0) {
        if (replay) b.StartRecording();
        first_in = x;
        x = TestBlock(b, x, weights[i], shared);
        first_out = x;
        if (replay) first = b.StopRecording();
        continue;
      }
      const std::vector<int> ids = b.Replay(
          first, {{first_in.id, x.id}, {weights[0].id, weights[i].id}});
      x = Ref{ids.at(first_out.id - first.first_value)};
    }
  }
  return b.Finish().graph;
}

TEST(GraphBuilderTest, ReplayBuildsWhatTheBlockWould) {
  // Three layers built one by one, and the first built then copied twice:
  // every value, node and module the same.
  const ir::Graph built = Layers(3, false), copied = Layers(3, true);
  ASSERT_EQ(built.values.size(), copied.values.size());
  for (size_t v = 0; v < built.values.size(); ++v) {
    const ir::Value &a = built.values[v], &c = copied.values[v];
    SCOPED_TRACE("value " + std::to_string(v) + " " + a.name);
    EXPECT_EQ(a.name, c.name);
    EXPECT_EQ(a.kind, c.kind);
    EXPECT_EQ(a.elem_kind, c.elem_kind);
    EXPECT_EQ(a.role, c.role);
    EXPECT_EQ(a.has_constant, c.has_constant);
    EXPECT_EQ(a.constant, c.constant);
    EXPECT_EQ(a.has_traced_shape, c.has_traced_shape);
    EXPECT_EQ(a.dtype, c.dtype);
    EXPECT_EQ(a.producer, c.producer);
  }
  ASSERT_EQ(built.nodes.size(), copied.nodes.size());
  for (size_t n = 0; n < built.nodes.size(); ++n) {
    const ir::Node &a = built.nodes[n], &c = copied.nodes[n];
    SCOPED_TRACE("node " + std::to_string(n) + " " + a.op);
    EXPECT_EQ(a.op, c.op);
    EXPECT_EQ(a.inputs, c.inputs);
    EXPECT_EQ(a.input_names, c.input_names);
    EXPECT_EQ(a.outputs, c.outputs);
    EXPECT_EQ(a.debug_name, c.debug_name);
    EXPECT_EQ(a.scope, c.scope);
  }
  ASSERT_EQ(built.scopes.size(), copied.scopes.size());
  for (size_t s = 0; s < built.scopes.size(); ++s) {
    EXPECT_EQ(built.scopes[s].path, copied.scopes[s].path);
    EXPECT_EQ(built.scopes[s].type, copied.scopes[s].type);
    EXPECT_EQ(built.scopes[s].parent, copied.scopes[s].parent);
    EXPECT_EQ(built.scopes[s].children, copied.scopes[s].children);
  }
  // Entered by the copies too.
  EXPECT_EQ(built.scopes.back().path, "layers.2.act");
  // Layer 2's linear reads layer 1's output and its own weight.
  const ir::Node& fc2 = copied.nodes[2 * (copied.nodes.size() / 3)];
  EXPECT_EQ(fc2.op, "aten::linear");
  EXPECT_EQ(copied.values[fc2.inputs[1]].name, "layers.2.fc.weight");
}

TEST(GraphBuilderTest, ReplayHintsEachCopyAsARepeatOfTheFirstLayer) {
  const ir::Graph built = Layers(3, false), copied = Layers(3, true);
  EXPECT_TRUE(built.repeats.empty());
  ASSERT_EQ(copied.repeats.size(), 2u);
  const int layer = static_cast<int>(copied.repeats[0].nodes);
  for (int i = 0; i < 2; ++i) {
    const ir::RepeatSpan& s = copied.repeats[i];
    EXPECT_EQ(s.source_node, copied.repeats[0].source_node);
    EXPECT_EQ(s.node, s.source_node + (i + 1) * layer);
    EXPECT_EQ(s.nodes, layer);
    // The copy's nodes, read as a repeat of the first layer's.
    std::vector<std::pair<int, int>> outside;
    EXPECT_TRUE(passes::RepeatsSource(copied, s, &outside)) << i;
  }
  // Shape propagation copies the two later layers' facts and finds what it
  // finds for the graph built layer by layer.
  sym::Context ctx;
  AnalysisOptions options;
  options.inputs.push_back(*ParseInputSpec(ctx, "B,8"));
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  passes::ShapeFacts facts, built_facts;
  Report report, built_report;
  ASSERT_TRUE(
      passes::PropagateShapes(copied, *rules, ctx, options, &facts, &report)
          .ok());
  ASSERT_TRUE(passes::PropagateShapes(built, *rules, ctx, options, &built_facts,
                                      &built_report)
                  .ok());
  EXPECT_EQ(facts.copied_nodes, 2 * layer);
  EXPECT_EQ(built_facts.copied_nodes, 0);
  ASSERT_EQ(report.values.size(), built_report.values.size());
  for (size_t v = 0; v < report.values.size(); ++v) {
    EXPECT_EQ(report.values[v].known, built_report.values[v].known) << v;
    EXPECT_EQ(report.values[v].shape, built_report.values[v].shape) << v;
    EXPECT_EQ(report.values[v].dtype, built_report.values[v].dtype) << v;
  }
  for (size_t n = 0; n < report.nodes.size(); ++n) {
    EXPECT_EQ(report.nodes[n].flops, built_report.nodes[n].flops) << n;
    EXPECT_EQ(facts.nodes[n].arg_values, built_facts.nodes[n].arg_values) << n;
  }
}

// Everything shape propagation finds for `g` (B symbolic), as text: each
// value's fact, each node's outcome and cost, the diagnostics and assumptions.
// Sets `copied` to the nodes whose facts were copied from a run they repeat.
// NB: a context of its own, so fresh symbols are named alike in two runs.
std::vector<std::string> PropagationText(const ir::Graph& g,
                                         const RuleSet& rules,
                                         int64_t* copied) {
  sym::Context ctx;
  AnalysisOptions options;
  options.inputs.push_back(*ParseInputSpec(ctx, "B,8"));
  passes::ShapeFacts facts;
  Report report;
  std::vector<std::string> text;
  const Status s =
      passes::PropagateShapes(g, rules, ctx, options, &facts, &report);
  text.push_back(s.message());
  for (const rules::RValue& v : facts.values) {
    text.push_back(rules::DescribeValue(v) + " " +
                   std::to_string(static_cast<int>(v.t.dtype)) +
                   (v.t.has_scalar ? " = " + v.t.scalar.ToString() : ""));
  }
  for (size_t n = 0; n < facts.nodes.size(); ++n) {
    const passes::NodeFacts& f = facts.nodes[n];
    std::string line = std::to_string(f.ok) + std::to_string(f.no_rule) +
                       (f.rule != nullptr ? " rule" : " -") + " flops " +
                       report.nodes[n].flops.ToString() +
                       (report.nodes[n].cost_unknown ? " unknown" : "");
    for (int a : f.arg_values) line += " " + std::to_string(a);
    text.push_back(line);
  }
  for (const Diagnostic& d : report.diagnostics) text.push_back(d.message);
  for (const std::string& a : report.assumptions) text.push_back(a);
  *copied = facts.copied_nodes;
  return text;
}

// Edits that break Replay's hints (an input rewired, an op swapped, a constant
// changed, in a copy or in the layer copied) leave propagation's results as a
// propagation without the hints finds them: a hint that no longer holds is
// not used.
TEST(GraphBuilderTest, HintsBrokenByEditsChangeNoResult) {
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  std::mt19937 rng(20261127);
  // Trials whose edit left both hints used, one, or none.
  int used[3] = {0, 0, 0};
  for (int trial = 0; trial < 150; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    ir::Graph g = Layers(3, true);
    ASSERT_EQ(g.repeats.size(), 2u);
    const int num_nodes = static_cast<int>(g.nodes.size());
    auto pick = [&](int lo, int hi) {
      return std::uniform_int_distribution<int>(lo, hi - 1)(rng);
    };
    ir::Node& n = g.nodes[pick(0, num_nodes)];
    switch (trial % 3) {
      case 0:  // An input read from another value made before the node.
        if (!n.inputs.empty() && !n.outputs.empty() && n.outputs[0] > 0) {
          n.inputs[pick(0, static_cast<int>(n.inputs.size()))] =
              pick(0, n.outputs[0]);
        }
        break;
      case 1:  // Another node's op.
        n.op = g.nodes[pick(0, num_nodes)].op;
        break;
      case 2:  // An int constant the node reads, one more.
        for (int v : n.inputs) {
          if (int64_t* c = std::get_if<int64_t>(&g.values[v].constant)) {
            ++*c;
            break;
          }
        }
        break;
    }
    const int64_t layer = g.repeats[0].nodes;
    int64_t copied = 0, none = 0;
    const std::vector<std::string> hinted = PropagationText(g, *rules, &copied);
    g.repeats.clear();
    const std::vector<std::string> plain = PropagationText(g, *rules, &none);
    ASSERT_EQ(hinted.size(), plain.size());
    for (size_t i = 0; i < hinted.size(); ++i)
      ASSERT_EQ(hinted[i], plain[i]) << i;
    ASSERT_EQ(copied % layer, 0);
    ASSERT_LE(copied, 2 * layer);
    ++used[copied / layer];
  }
  // Both ways were taken: edits that broke a hint and edits that did not.
  EXPECT_GT(used[0] + used[1], 0);
  EXPECT_GT(used[2], 0);
}

// A decoder's layers 1..N-1 are copies of layer 0 (BuildLlama replays it), and
// shape propagation copies every one of them: nothing in a layer keeps its
// run from being copied (a fallback, an assumption, a fresh symbol).
TEST(GraphBuilderTest, PropagationCopiesEveryReplayedDecoderLayer) {
  struct Variant {
    const char* name;
    LlamaConfig config;
  };
  LlamaConfig tiny;
  tiny.layers = 4;
  tiny.hidden = 64;
  tiny.heads = 4;
  tiny.kv_heads = 2;
  tiny.intermediate = 128;
  tiny.vocab = 128;
  tiny.dtype = DType::kBFloat16;
  std::vector<Variant> variants(5, Variant{"", tiny});
  variants[0].name = "training, sdpa";
  variants[1].name = "prefill";
  variants[1].config.phase = "prefill";
  variants[2].name = "decode";
  variants[2].config.phase = "decode";
  variants[3].name = "eager, sliding window";
  variants[3].config.attn = "eager";
  variants[3].config.window = 16;
  variants[4].name = "mixture of experts";
  variants[4].config.experts = 4;
  variants[4].config.top_k = 2;
  variants[4].config.classes = "Mixtral";
  Result<RuleSet> rules = RuleSet::Builtin();
  ASSERT_TRUE(rules.ok());
  for (const Variant& v : variants) {
    SCOPED_TRACE(v.name);
    Result<BuiltModel> m = BuildLlama(v.config);
    ASSERT_TRUE(m.ok()) << m.status().message();
    sym::Context ctx;
    AnalysisOptions options;
    for (const InputDecl& in : m->inputs)
      options.inputs.push_back({ResolveShape(*m, in, ctx), in.dtype});
    passes::ShapeFacts facts;
    Report report;
    ASSERT_TRUE(
        passes::PropagateShapes(m->graph, *rules, ctx, options, &facts, &report)
            .ok());
    EXPECT_TRUE(report.diagnostics.empty());
    ASSERT_EQ(m->graph.repeats.size(), 3u);
    int64_t hinted = 0;
    for (const ir::RepeatSpan& s : m->graph.repeats) hinted += s.nodes;
    EXPECT_GT(hinted, 0);
    EXPECT_EQ(facts.copied_nodes, hinted);
  }
}

TEST(GraphBuilderTest, RecordingRefusesTablesAndOutputs) {
  GraphBuilder b("Net");
  Ref x = b.Input("x", {2});
  b.StartRecording();
  EXPECT_THROW(b.Param("w", {2}), std::logic_error);
  EXPECT_THROW(b.Input("y", {2}), std::logic_error);
  EXPECT_THROW(b.Output(x), std::logic_error);
  b.StopRecording();
}

}  // namespace
}  // namespace torchcost::builder
