// The training parts of the text report: the step line, the backward and
// activation columns of the module tree, FLOPs per step and the memory block.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "report/tiny_net.h"
#include "testing/text_lines.h"
#include "testing/timeline.h"
#include "torchcost/report.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using testing::Lines;
using testing::LineStarting;
using ::testing::Not;
using testing::TinyNet;
using testing::Words;
namespace t = testing;

// Returns the rows of the memory table: the lines between its second and third
// dashed rules.
std::vector<std::string> MemoryRows(const std::string& text) {
  std::vector<std::string> all = Lines(text), rows;
  size_t i = 0;
  while (i < all.size() && all[i].rfind("Memory (", 0) != 0) ++i;
  int rules = 0;
  for (++i; i < all.size() && rules < 3; ++i) {
    if (all[i].rfind("---", 0) == 0) {
      ++rules;
    } else if (rules == 2) {
      rows.push_back(all[i]);
    }
  }
  return rows;
}

// Returns the module tree's column header line.
std::string TreeHeader(const std::string& text) {
  return LineStarting(text, "Module  ");
}

class TrainingTextTest : public ::testing::Test {
 protected:
  std::string Render(sym::Bindings b = {}) {
    TextOptions options;
    options.bindings = std::move(b);
    return RenderText(net_.graph, net_.report, options);
  }
  TinyNet net_;
};

TEST_F(TrainingTextTest, StepLineNamesModeOptimizerAndFrozenParams) {
  // features.2 (20 params) is frozen: 1510 - 20 = 1490 get a gradient.
  const std::string step = LineStarting(Render(), "Step:");
  EXPECT_THAT(step, HasSubstr("train with adam"));
  // 100 x 1490 / 1510 = 98.68%: peft's trainable%.
  EXPECT_THAT(step, HasSubstr("1.49 K (1490) trainable params (98.7%)"));
  EXPECT_THAT(step, HasSubstr(std::to_string(t::kConv2Params) + " frozen"));

  net_.report.training.mode = StepMode::kInfer;
  const std::string infer = LineStarting(Render(), "Step:");
  EXPECT_THAT(infer, HasSubstr("infer"));
  EXPECT_THAT(infer, Not(HasSubstr("adam")));
}

TEST_F(TrainingTextTest, TrainTreeShowsBackwardFlopsAndActivations) {
  const std::string text = Render({{"B", 8}});
  const std::string header = TreeHeader(text);
  EXPECT_THAT(header, HasSubstr("Fwd FLOPs"));
  EXPECT_THAT(header, HasSubstr("Bwd FLOPs"));
  EXPECT_THAT(header, HasSubstr("Act"));
  // conv0: 8 * (2*1296 + 144) = 21888 backward FLOPs; it saves nothing (its
  // input needs no gradient and is no activation).
  const std::string conv0 = LineStarting(text, "    (0): Conv2d(");
  EXPECT_THAT(conv0, HasSubstr("21.89 K, "));
  EXPECT_THAT(conv0, HasSubstr(" 0 B, "));
  // relu saves its output: 8 * 144 * 4 = 4608 bytes = 4.50 KiB.
  EXPECT_THAT(LineStarting(text, "    (1): ReLU("), HasSubstr("4.50 KiB, "));
  // The root: 8 * 9802 = 78416 backward FLOPs; 8 * (576 + 576) = 9216 bytes.
  const std::string root = LineStarting(text, "TinyNet(");
  EXPECT_THAT(root, HasSubstr("78.42 K, "));
  EXPECT_THAT(root, HasSubstr("9.00 KiB, "));
}

TEST_F(TrainingTextTest, UnboundTrainTreeKeepsExactExpressions) {
  const std::string relu = LineStarting(Render(), "    (1): ReLU(");
  EXPECT_THAT(relu, HasSubstr((t::kReluBwdFlops * net_.B).ToString() + ", "));
  EXPECT_THAT(relu, HasSubstr((t::kReluActBytes * net_.B).ToString() + ", "));
}

TEST_F(TrainingTextTest, InferTreeHasNoBackwardOrActivationColumns) {
  net_.report.training.mode = StepMode::kInfer;
  const std::string text = Render({{"B", 8}});
  const std::string header = TreeHeader(text);
  ASSERT_FALSE(header.empty()) << text;
  EXPECT_THAT(header, Not(HasSubstr("Bwd")));
  EXPECT_THAT(header, Not(HasSubstr("Act")));
  EXPECT_THAT(LineStarting(text, "Module tree"), Not(HasSubstr("Act")));
  // relu's line would carry 4.50 KiB of activations in training.
  EXPECT_THAT(LineStarting(text, "    (1): ReLU("), Not(HasSubstr("KiB")));
}

TEST_F(TrainingTextTest, FlopsPerStep) {
  const std::string text = Render({{"B", 8}});
  // Forward 8 * 6768 = 54144; backward 8 * 9802 = 78416; adam 1490 * 12 =
  // 17880; the step is their sum, 150440.
  EXPECT_THAT(LineStarting(text, "  Forward:"),
              HasSubstr("54.14 KFLOPs (54144)"));
  EXPECT_THAT(LineStarting(text, "  Backward:"),
              HasSubstr("78.42 KFLOPs (78416)"));
  EXPECT_THAT(LineStarting(text, "  Optimizer:"),
              HasSubstr("17.88 KFLOPs (17880)"));
  EXPECT_THAT(LineStarting(text, "  Step:"),
              HasSubstr("150.44 KFLOPs (150440)"));

  net_.report.training.mode = StepMode::kInfer;
  const std::string infer = Render({{"B", 8}});
  EXPECT_THAT(infer, HasSubstr("FLOPs per step (infer"));
  EXPECT_EQ(LineStarting(infer, "  Backward:"), "");
  EXPECT_EQ(LineStarting(infer, "  Optimizer:"), "");
}

TEST_F(TrainingTextTest, MemoryRowsSumToThePeak) {
  const std::string text = Render({{"B", 8}});
  const std::vector<std::string> rows = MemoryRows(text);
  ASSERT_EQ(rows.size(), 8u) << text;
  const std::vector<std::string> names = {"param", "buffer", "grad", "act",
                                          "temp",  "opt",    "oth",  "total"};
  // Each row: name, at-peak human (number and unit), bytes, max human, bytes.
  int64_t sum = 0, total = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const std::vector<std::string> w = Words(rows[r]);
    ASSERT_EQ(w.size(), 7u) << rows[r];
    EXPECT_EQ(w[0], names[r]);
    (r + 1 < rows.size() ? sum : total) += std::stoll(w[3]);
  }
  // At B = 8 the peak is point 6, the classifier's backward:
  // param 6040 + grad 5800 + act 1192*8 + temp 616*8 + opt 11920 + oth 256*8.
  const int64_t peak = 6040 + 5800 + 1192 * 8 + 616 * 8 + 11920 + 256 * 8;
  EXPECT_EQ(sum, peak);
  EXPECT_EQ(total, peak);
  EXPECT_THAT(LineStarting(text, "Peak:"),
              HasSubstr("Peak: 39.33 KiB (40272), during backward at node "
                        "%logits (aten::linear, module classifier)"));
  // Own maxima: act's is point 5/6 (1192*8 = 9536), temp's is adam's 12000
  // (over 1152*8 = 9216).
  EXPECT_EQ(Words(rows[3])[6], "9536");
  EXPECT_EQ(Words(rows[4])[6], "12000");
  // Saved: 8 * (576 + 576) = 9216 bytes.
  EXPECT_THAT(LineStarting(text, "Saved by autograd"),
              HasSubstr("9.00 KiB (9216)"));
}

// A caller that has evaluated the peak hands it over: the text and JSON
// reports show that one rather than evaluate their own.
TEST_F(TrainingTextTest, GivenPeakIsTheOneShown) {
  const sym::Bindings b = {{"B", 8}};
  PeakInfo given = EvaluatePeak(net_.report.training, b);
  ASSERT_TRUE(given.error.empty());
  const std::string evaluated = Render(b);
  TextOptions options;
  options.bindings = b;
  options.peak = &given;
  EXPECT_EQ(RenderText(net_.graph, net_.report, options), evaluated);
  EXPECT_EQ(RenderJson(net_.graph, net_.report, b, &given),
            RenderJson(net_.graph, net_.report, b));
  given.error = "a given error";  // Evaluating again could not produce it.
  EXPECT_THAT(RenderText(net_.graph, net_.report, options),
              HasSubstr("  a given error\n"));
  EXPECT_THAT(RenderJson(net_.graph, net_.report, b, &given),
              HasSubstr("\"error\": \"a given error\""));
}

TEST_F(TrainingTextTest, SmallBatchPeaksInTheOptimizer) {
  // B = 1: point 9, 6040 + 5960 + 12000 + 11920 + 256 = 36176, beats point 6
  // (23760 + 2064 = 25824).
  const std::string text = Render({{"B", 1}});
  EXPECT_THAT(LineStarting(text, "Peak:"),
              HasSubstr("(36176), during the optimizer step"));
}

TEST_F(TrainingTextTest, UndecidedPeakPrintsTheMaxAndAsksForSet) {
  const std::string text = Render();
  const std::string peak = LineStarting(text, "Peak:");
  EXPECT_THAT(peak, HasSubstr("max("));
  EXPECT_THAT(peak, HasSubstr((2064 * net_.B + 23760).ToString()));
  EXPECT_THAT(peak, HasSubstr((256 * net_.B + 35920).ToString()));
  EXPECT_THAT(text, HasSubstr("depends on B: use StepConfig.bindings"));
  // No breakdown at an undecided moment: the table shows the maxima only.
  EXPECT_THAT(text, Not(HasSubstr("At peak")));
  EXPECT_EQ(MemoryRows(text).size(), 8u);
}

TEST_F(TrainingTextTest, PeakOfManyMomentsIsShortenedInTextAndWholeInJson) {
  // 100 moments k*B + (100 - k)*1000, all in act: each pair crosses at B =
  // 1000, so none is <= another and each is the peak for some B.
  TimelinePoints& tl = net_.report.training.timeline;
  tl.clear();
  for (int k = 0; k < 100; ++k) {
    TimelinePoint p;
    p.phase = StepPhase::kBackward;
    p.live[testing::kAct] = k * net_.B + (100 - k) * 1000;
    p.total = p.live[testing::kAct];
    tl.push_back(p);
  }
  EXPECT_EQ(EvaluatePeak(net_.report.training, {}).candidates.size(), 100u);
  const std::string text = Render();
  const std::string peak = LineStarting(text, "Peak:");
  EXPECT_EQ(peak.rfind("Peak: max(", 0), 0u) << peak;
  EXPECT_THAT(peak, HasSubstr(" more)"));
  EXPECT_LE(peak.size(), std::string("Peak: ").size() + 160);
  EXPECT_THAT(text, HasSubstr("The largest of 100 moments of the step"));
  // The act row's Max cell is shortened the same way, and the table says so.
  const std::vector<std::string> rows = MemoryRows(text);
  ASSERT_EQ(rows.size(), 8u) << text;
  EXPECT_THAT(rows[3], HasSubstr(" more)"));
  EXPECT_LE(rows[3].size(), 80u) << rows[3];
  EXPECT_THAT(text, HasSubstr("NB: long symbolic maxima are shortened"));
  // The JSON report keeps every moment in its peak: a max of 100 is 99 nested
  // max.
  const std::string json = RenderJson(net_.graph, net_.report, {});
  const size_t at = json.find("\"peak\": {");
  ASSERT_NE(at, std::string::npos);
  const std::string expr = json.substr(at, json.find('}', at) - at);
  size_t nested = 0;
  for (size_t i = expr.find("max("); i != std::string::npos;
       i = expr.find("max(", i + 1))
    ++nested;
  EXPECT_EQ(nested, 99u) << expr;
}

TEST_F(TrainingTextTest, InferenceSavesNothing) {
  net_.report.training.mode = StepMode::kInfer;
  EXPECT_THAT(LineStarting(Render({{"B", 8}}), "Saved by autograd"),
              HasSubstr("none"));
}

}  // namespace
}  // namespace torchcost
