#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "report/tiny_net.h"
#include "testing/text_lines.h"
#include "torchcost/report.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using testing::Lines;
using testing::LineWith;
using ::testing::Not;
using testing::TinyNet;
namespace t = testing;

// Returns the module tree's lines, after its title and column header, up to the
// blank line.
std::vector<std::string> TreeLines(const std::string& text) {
  std::vector<std::string> all = Lines(text), tree;
  size_t i = 0;
  while (i < all.size() && all[i].rfind("Module tree", 0) != 0) ++i;
  for (i += 2; i < all.size() && !all[i].empty(); ++i) tree.push_back(all[i]);
  return tree;
}

class TextReportTest : public ::testing::Test {
 protected:
  std::string Render(int depth = -1, sym::Bindings b = {}, int top_k = 3,
                     int top_depth = -1) {
    TextOptions options;
    options.depth = depth;
    options.top_k = top_k;
    options.top_depth = top_depth;
    options.bindings = std::move(b);
    return RenderText(net_.graph, net_.report, options);
  }
  std::string B(int64_t coefficient) {
    return (coefficient * net_.B).ToString();
  }
  TinyNet net_;
};

TEST_F(TextReportTest, HeaderNamesModelInputsAndSymbols) {
  const std::string text = Render();
  EXPECT_THAT(LineWith(text, "Model:"), HasSubstr("tiny.pt"));
  EXPECT_THAT(LineWith(text, "Input 0:"),
              HasSubstr("[" + B(1) + ", 1, 8, 8] float32"));
  EXPECT_THAT(LineWith(text, "Symbols:"), HasSubstr("B (unbound)"));
  EXPECT_THAT(LineWith(Render(-1, {{"B", 8}}), "Symbols:"), HasSubstr("B = 8"));
}

TEST_F(TextReportTest, TreeShowsEveryModuleByDefault) {
  const std::vector<std::string> tree = TreeLines(Render());
  ASSERT_EQ(tree.size(), net_.graph.scopes.size());
  EXPECT_EQ(tree[0].rfind("TinyNet(", 0), 0u);
  EXPECT_EQ(tree[1].rfind("  (features): Sequential(", 0), 0u);
  EXPECT_EQ(tree[2].rfind("    (0): Conv2d(", 0), 0u);
  EXPECT_EQ(tree[3].rfind("    (1): ReLU(", 0), 0u);
  EXPECT_EQ(tree[4].rfind("    (2): Conv2d(", 0), 0u);
  EXPECT_EQ(tree[5].rfind("  (flatten): Flatten(", 0),
            0u);  // Zero cost, still shown.
  EXPECT_EQ(tree[6].rfind("  (classifier): Linear(", 0), 0u);
  for (const std::string& line : tree) EXPECT_EQ(line.back(), ')') << line;
}

TEST_F(TextReportTest, DepthLimitsTheTree) {
  const std::vector<std::string> depth1 = TreeLines(Render(/*depth=*/1));
  ASSERT_EQ(depth1.size(), 4u);  // Root, features, flatten, classifier.
  for (const std::string& line : depth1)
    EXPECT_THAT(line, Not(HasSubstr("Conv2d(")));
  EXPECT_EQ(TreeLines(Render(/*depth=*/0)).size(), 1u);
  EXPECT_EQ(TreeLines(Render(/*depth=*/2)).size(), net_.graph.scopes.size());
}

TEST_F(TextReportTest, UnboundPercentagesOfProportionalCostsAreShown) {
  // Inference shows the MACs share too.
  net_.report.training.mode = StepMode::kInfer;
  const std::string conv = TreeLines(Render())[2];
  // Params are constants: 40 / 1510 = 2.649% -> "2.65%".
  EXPECT_THAT(conv, HasSubstr("40, "));
  EXPECT_THAT(conv, HasSubstr("2.65%"));
  EXPECT_THAT(conv, HasSubstr(B(t::kConv0Macs)));
  // Costs proportional to B: the share does not depend on B (1296 / 3312
  // = 39.13%).
  EXPECT_THAT(conv, HasSubstr("39.13%"));
  EXPECT_THAT(conv, HasSubstr("[" + B(1) + ", 4, 6, 6])"));
  // A zero cost is 0% whatever the total.
  EXPECT_THAT(TreeLines(Render())[5], HasSubstr("0.00%"));
}

TEST_F(TextReportTest, BoundPercentagesAreComputed) {
  net_.report.training.mode = StepMode::kInfer;
  const std::string conv = TreeLines(Render(-1, {{"B", 8}}))[2];
  // FLOPs: 2*1296 / 6768 = 38.297% -> "38.30%"; MACs: 1296 / 3312 = 39.130% ->
  // "39.13%".
  EXPECT_THAT(conv, HasSubstr("38.30%"));
  EXPECT_THAT(conv, HasSubstr("39.13%"));
  EXPECT_THAT(conv, HasSubstr("10.37 K, "));  // 8 * 1296 = 10368.
  EXPECT_THAT(conv, HasSubstr("20.74 K, "));  // 2 * 10368 = 20736.
  EXPECT_THAT(conv, HasSubstr("[8, 4, 6, 6])"));
}

TEST_F(TextReportTest, TreeColumnsAreAligned) {
  for (const sym::Bindings& b : {sym::Bindings{}, sym::Bindings{{"B", 8}}}) {
    const std::vector<std::string> tree = TreeLines(Render(-1, b));
    // The params percentage is the first '%' of each line and is right-aligned.
    const size_t column = tree[0].find('%');
    for (const std::string& line : tree)
      EXPECT_EQ(line.find('%'), column) << line;
  }
}

// Inference fits in 100 columns; a training step's two extra tree columns in
// 110.
TEST_F(TextReportTest, FitsIn100ColumnsOr110InTraining) {
  for (StepMode mode : {StepMode::kInfer, StepMode::kTrain}) {
    net_.report.training.mode = mode;
    const size_t limit = mode == StepMode::kInfer ? 100 : 110;
    for (const std::string& line : Lines(Render(-1, {{"B", 8}}))) {
      EXPECT_LE(line.size(), limit) << line;
    }
  }
}

TEST_F(TextReportTest, LongPrefixStandsOnItsOwnLine) {
  net_.graph.scopes[1].name = "a_rather_long_feature_extractor";
  const std::string text = Render(-1, {{"B", 8}});
  const std::vector<std::string> lines = Lines(text);
  size_t i = 0;
  while (i < lines.size() &&
         lines[i] != "  (a_rather_long_feature_extractor): Sequential(") {
    ++i;
  }
  ASSERT_LT(i + 1, lines.size()) << text;
  // The values follow on the next line, in the same columns as the others.
  const std::string values = lines[i + 1];
  EXPECT_EQ(values.find_first_not_of(' '), values.find("60,")) << values;
  EXPECT_EQ(values.find('%'), LineWith(text, "(0): Conv2d(").find('%'));
  for (const std::string& line : lines) EXPECT_LE(line.size(), 110u) << line;
}

TEST_F(TextReportTest, TopModulesAggregateByTypeAtTheDeepestDepth) {
  // Depth 2: Conv2d = features.0 + features.2: 2*(1296 + 576) = 3744 FLOPs per
  // sample.
  const std::string text = Render();
  EXPECT_THAT(text,
              HasSubstr("Top 3 modules by FLOPs at depth 2: {'Conv2d': '" +
                        B(3744) + "', 'ReLU': '" + B(t::kReluFlops) + "'}"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "Top 3 modules by params at depth 2: {'Conv2d': '60', 'ReLU': '0'}"));
  EXPECT_THAT(
      Render(-1, {{"B", 1}}),
      HasSubstr("at depth 2: {'Conv2d': '3.74 KFLOPs', 'ReLU': '144 FLOPs'}"));
}

TEST_F(TextReportTest, TopModulesAtAChosenDepthKeepK) {
  // Depth 1: Sequential = 3744 + 144 = 3888 FLOPs per sample > Linear 2880 >
  // Flatten 0.
  const std::string text = Render(-1, {{"B", 1}}, /*top_k=*/2, /*top_depth=*/1);
  EXPECT_THAT(
      text,
      HasSubstr(
          "Top 2 modules by FLOPs at depth 1: {'Sequential': '3.89 KFLOPs', "
          "'Linear': '2.88 KFLOPs'}"));
  EXPECT_THAT(
      text,
      HasSubstr("Top 2 modules by params at depth 1: {'Linear': '1.45 K', "
                "'Sequential': '60'}"));
  EXPECT_THAT(Render(-1, {}, /*top_k=*/0), Not(HasSubstr("Top ")));
}

TEST_F(TextReportTest, OpTableSortedByFlops) {
  const std::string text = Render();
  const size_t conv = text.find("aten::_convolution"),
               linear = text.find("aten::linear"),
               relu = text.find("aten::relu"),
               flatten = text.find("aten::flatten");
  ASSERT_NE(flatten, std::string::npos);
  EXPECT_LT(conv, linear);
  EXPECT_LT(linear, relu);
  EXPECT_LT(relu, flatten);
  // Bound: 2*1872 / 6768 = 55.319% of FLOPs.
  EXPECT_THAT(LineWith(Render(-1, {{"B", 1}}), "aten::_convolution"),
              HasSubstr("55.32%"));
}

TEST_F(TextReportTest, TotalsAndConvention) {
  const std::string text = Render(-1, {{"B", 1000}});
  EXPECT_THAT(LineWith(text, "  Params:"), HasSubstr("1.51 K (1510)"));
  EXPECT_THAT(LineWith(text, "  Trainable params:"),
              HasSubstr("1.49 K (1490)"));  // 1510 - 20.
  EXPECT_THAT(LineWith(text, "  FLOPs:"),
              HasSubstr("6.77 MFLOPs (6768000)"));  // 1000 * 6768.
  EXPECT_THAT(LineWith(Render(), "  MACs:"), HasSubstr(B(t::kMacs)));
  EXPECT_THAT(text, HasSubstr("NB: 1 multiply-add = 2 FLOPs"));
  // No quantized weight, no mixture of experts: neither line.
  EXPECT_EQ(text.find("  Quantized:"), std::string::npos);
  EXPECT_EQ(text.find("  Active params:"), std::string::npos);
  // With 1024 of the 1510 stored quantized and 500 unrouted: the lines say
  // so in the generation header's words.
  net_.report.quantized_params = 1024;
  net_.report.inactive_params = 500;
  const std::string quantized = Render(-1, {{"B", 1000}});
  EXPECT_THAT(LineWith(quantized, "  Quantized:"),
              HasSubstr("1.02 K (1024) of them stored quantized (each "
                        "counted as out x in"));
  EXPECT_THAT(LineWith(quantized, "  Active params:"),
              HasSubstr("1.01 K (1010) per token"));
}

TEST_F(TextReportTest, IssuesListed) {
  const std::string text = Render();
  EXPECT_THAT(LineWith(text, "Ops without rules:"),
              HasSubstr("aten::mystery x2"));
  EXPECT_THAT(text, HasSubstr("  - H >= 3"));
  EXPECT_THAT(text, HasSubstr("  warning: tiny.pt: node %7"));

  net_.report.unknown_ops.clear();
  net_.report.assumptions.clear();
  net_.report.diagnostics.clear();
  const std::string clean = Render();
  EXPECT_THAT(clean, HasSubstr("Ops without rules: none"));
  EXPECT_THAT(clean, HasSubstr("Assumptions: none"));
  EXPECT_THAT(clean, HasSubstr("Diagnostics: none"));
}

TEST_F(TextReportTest, EmptyGraphRenders) {
  ir::Graph graph;
  Report report;
  const std::string text = RenderText(graph, report, TextOptions{});
  EXPECT_THAT(text, HasSubstr("(no modules)"));
  EXPECT_THAT(text, HasSubstr("Inputs:"));
}

TEST_F(TextReportTest, MalformedHierarchyDoesNotLoop) {
  net_.graph.scopes[2].children = {0, 1, 99, -5};  // A cycle and bad indices.
  EXPECT_EQ(TreeLines(Render()).size(), net_.graph.scopes.size());
}

}  // namespace
}  // namespace torchcost
