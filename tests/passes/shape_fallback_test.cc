// Tests of the shape fallback for ops without rules: the frontend's inference
// (here a fake that computes a known function of its input's example shape)
// run at the symbols' examples and written back in the symbols.
#include "passes/shape_fallback.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "passes/shape_prop.h"
#include "testing/graph_builder.h"
#include "torchcost/analysis.h"

namespace torchcost {
namespace {

using testing::GraphBuilder;
using ::testing::HasSubstr;
using Shape = std::vector<int64_t>;

// A graph x -> t::unknown -> y whose inference computes `f` of x's example
// shape; `f` returns false to make the run fail.
struct OneUnknown {
  GraphBuilder b;
  int x, y;
  explicit OneUnknown(std::function<bool(const Shape&, Shape*)> f) {
    x = b.Input();
    y = b.One("t::unknown", {x}, {"self"});
    b.Output(y);
    b.graph().nodes.back().origin = 0;
    const int in = x;
    b.graph().infer_shapes =
        [f, in](int origin,
                const std::function<ir::ExampleValue(int)>& example_of,
                std::vector<ir::ExampleValue>* outs, std::string* why) {
          const ir::ExampleValue ex = example_of(in);
          if (origin != 0 || ex.kind != ir::ValueKind::kTensor) return false;
          ir::ExampleValue out;
          out.kind = ir::ValueKind::kTensor;
          out.dtype = ex.dtype;
          if (!f(ex.shape, &out.shape)) {
            *why = "the fake refuses";
            return false;
          }
          outs->assign(1, out);
          return true;
        };
  }
};

class ShapeFallbackTest : public ::testing::Test {
 protected:
  // Runs the fallback for the unknown node with x of shape `spec`; returns the
  // output shape's text, or "fails: why".
  std::string Infer(OneUnknown& net, const char* spec, sym::Bindings examples) {
    std::vector<rules::RValue> values(net.b.graph().values.size());
    InputSpec in = *ParseInputSpec(ctx_, spec);
    rules::TensorType t;
    t.shape = in.shape;
    t.dtype = in.dtype;
    values[net.x] = rules::RValue::Tensor(t);
    passes::InferredShapes r =
        passes::InferFallbackShapes(net.b.graph(), 0, values, examples, ctx_);
    fitted_ = r.fitted;
    if (!r.ok) return "fails: " + r.why;
    return rules::ShapeToString(r.outputs[0].t.shape);
  }

  sym::Context ctx_;
  std::string fitted_;
};

TEST_F(ShapeFallbackTest, ConcreteShapesAreTakenAsInferred) {
  OneUnknown net([](const Shape& s, Shape* out) {
    *out = {s[0], 64, s[2], s[3] - 1};  // diff along the last dim.
    return true;
  });
  EXPECT_EQ(Infer(net, "2,3,12,12", {}), "[2, 64, 12, 11]");
  EXPECT_EQ(fitted_, "");
}

TEST_F(ShapeFallbackTest, LinearDimsAreWrittenInTheSymbol) {
  OneUnknown net([](const Shape& s, Shape* out) {
    *out = {s[0], 3 * s[1] + 1, 7};
    return true;
  });
  EXPECT_EQ(Infer(net, "B,S", {{"B", 8}, {"S", 5}}), "[B, 3*S + 1, 7]");
  EXPECT_THAT(fitted_, HasSubstr("B = 8, 16 and 24"));
}

TEST_F(ShapeFallbackTest, HalvedDimIsAFloorDiv) {
  OneUnknown net([](const Shape& s, Shape* out) {
    *out = {s[0] / 2};
    return true;
  });
  EXPECT_EQ(Infer(net, "B", {{"B", 8}}), "[floordiv(B, 2)]");
}

TEST_F(ShapeFallbackTest, FlattenedDimsAreAProduct) {
  OneUnknown net([](const Shape& s, Shape* out) {
    *out = {s[0] * s[1] * 4};
    return true;
  });
  EXPECT_EQ(Infer(net, "B,S", {{"B", 8}, {"S", 8}}), "[4*B*S]");
}

TEST_F(ShapeFallbackTest, NonlinearDimFailsTheCheckAtThreeTimes) {
  OneUnknown net([](const Shape& s, Shape* out) {
    // B^2: 64, 256 fit 24*B - 128, which gives 448, not 576, at 24.
    *out = {s[0] * s[0]};
    return true;
  });
  EXPECT_THAT(Infer(net, "B", {{"B", 8}}),
              HasSubstr("does not follow the symbols linearly"));
}

TEST_F(ShapeFallbackTest,
       WithoutAPerturbedRunDimsEqualToTheExampleAreTheSymbol) {
  OneUnknown net([](const Shape& s, Shape* out) {
    // Only the example works (a divisibility check, say).
    if (s[0] != 8) return false;
    *out = {s[0], 3};
    return true;
  });
  EXPECT_EQ(Infer(net, "B", {{"B", 8}}), "[B, 3]");
}

TEST_F(ShapeFallbackTest, FailuresAndMissingInferenceExplainThemselves) {
  OneUnknown net([](const Shape&, Shape*) { return false; });
  EXPECT_EQ(Infer(net, "2", {}), "fails: the fake refuses");
  net.b.graph().nodes.back().origin = -1;
  EXPECT_EQ(Infer(net, "2", {}), "fails: the node was added by a rewrite");
  net.b.graph().infer_shapes = nullptr;
  EXPECT_EQ(Infer(net, "2", {}),
            "fails: the model's frontend has no shape inference");
}

TEST_F(ShapeFallbackTest, ExamplesEvaluateSymbols) {
  rules::TensorType t;
  t.shape = {ctx_.Symbol("B"), sym::Expr(3)};
  t.dtype = DType::kBFloat16;
  ir::ExampleValue e = passes::ToExample(rules::RValue::Tensor(t), {{"B", 4}});
  EXPECT_EQ(e.kind, ir::ValueKind::kTensor);
  EXPECT_EQ(e.shape, (Shape{4, 3}));
  EXPECT_EQ(e.dtype, DType::kBFloat16);
  EXPECT_EQ(
      passes::ToExample(rules::RValue::Int(ctx_.Symbol("B") * 2), {{"B", 4}}).i,
      8);
  EXPECT_EQ(passes::ToExample(rules::RValue::IntList({ctx_.Symbol("B"), 1}),
                              {{"B", 4}})
                .ints,
            (Shape{4, 1}));
  // An unbound symbol makes the example unknown.
  EXPECT_EQ(passes::ToExample(rules::RValue::Tensor(t), {}).kind,
            ir::ValueKind::kOther);
}

// Shape propagation uses the inference for an op without a rule, says so, and
// keeps the batch symbolic through the fit (the traced example of B is 2).
TEST_F(ShapeFallbackTest, ShapePropUsesTheInferenceAndStatesTheFit) {
  OneUnknown net([](const Shape& s, Shape* out) {
    *out = {s[0], s[1] - 1};
    return true;
  });
  net.b.graph().values[net.x].has_traced_shape = true;
  net.b.graph().values[net.x].traced_shape = {2, 12};
  RuleSet rules;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "B,12"));
  passes::ShapeFacts facts;
  Report report;
  ASSERT_TRUE(
      passes::PropagateShapes(net.b.graph(), rules, ctx_, opts, &facts, &report)
          .ok());
  EXPECT_EQ(rules::ShapeToString(facts.values[net.y].t.shape), "[B, 11]");
  EXPECT_TRUE(facts.nodes[0].no_rule);
  EXPECT_TRUE(report.nodes[0].cost_unknown);
  ASSERT_EQ(report.diagnostics.size(), 1u);
  EXPECT_THAT(report.diagnostics[0].message,
              HasSubstr("no rule for operator t::unknown; outputs take the "
                        "shapes LibTorch infers: [B, 11]"));
  ASSERT_EQ(report.assumptions.size(), 1u);
  EXPECT_THAT(report.assumptions[0], HasSubstr("B = 2, 4 and 6"));
}

// Without an inference, a JSON graph's traced output shape is used, with dims
// equal to a symbol's traced example taken as the symbol (an assumption).
TEST_F(ShapeFallbackTest, TracedShapesMapBackToTheSymbols) {
  OneUnknown net([](const Shape&, Shape*) { return false; });
  net.b.graph().infer_shapes = nullptr;
  ir::Graph& g = net.b.graph();
  g.values[net.x].has_traced_shape = true;
  g.values[net.x].traced_shape = {2, 64};
  g.values[net.y].has_traced_shape = true;
  g.values[net.y].traced_shape = {2, 64, 384};
  RuleSet rules;
  AnalysisOptions opts;
  opts.inputs.push_back(*ParseInputSpec(ctx_, "B,S"));
  passes::ShapeFacts facts;
  Report report;
  ASSERT_TRUE(
      passes::PropagateShapes(g, rules, ctx_, opts, &facts, &report).ok());
  EXPECT_EQ(rules::ShapeToString(facts.values[net.y].t.shape), "[B, S, 384]");
  ASSERT_EQ(report.assumptions.size(), 1u);
  EXPECT_THAT(
      report.assumptions[0],
      HasSubstr(
          "dims equal to a symbol's traced example are taken as the symbol"));
}

}  // namespace
}  // namespace torchcost
