// Tests of sweeps: parsing the ranges, and that each point equals evaluating
// the analysis at that binding (the peak and its breakdown included).
#include "report/sweep.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "testing/builtin_rules.h"
#include "tiny_net.h"
#include "torchcost/families.h"
#include "torchcost/gpu.h"
#include "torchcost/step.h"

namespace torchcost {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TinyNet;

TEST(ParseSweepTest, Ranges) {
  auto a = ParseSweep("S=512:8192:x2");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->symbol, "S");
  EXPECT_THAT(a->values, ElementsAre(512, 1024, 2048, 4096, 8192));
  auto b = ParseSweep("B=1:10:+3");
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(b->values, ElementsAre(1, 4, 7, 10));
  auto c = ParseSweep("B=2:7:2");
  ASSERT_TRUE(c.ok());
  EXPECT_THAT(c->values, ElementsAre(2, 4, 6));
  auto d = ParseSweep("B=1,3,8");
  ASSERT_TRUE(d.ok());
  EXPECT_THAT(d->values, ElementsAre(1, 3, 8));
}

TEST(ParseSweepTest, RangesNearInt64StopWithoutOverflow) {
  // 2^62 * 2 overflows int64: the range ends at its last representable point.
  auto a = ParseSweep("B=4611686018427387904:9223372036854775807:x2");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_THAT(a->values, ElementsAre(int64_t{1} << 62));
  auto b = ParseSweep("B=9223372036854775806:9223372036854775807:+5");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_THAT(b->values, ElementsAre(9223372036854775806));
}

TEST(ParseSweepTest, Errors) {
  EXPECT_THAT(ParseSweep("S").status().message(),
              HasSubstr("expected SYM=START:STOP:STEP"));
  EXPECT_THAT(ParseSweep("S=8:4:x2").status().message(),
              HasSubstr("STOP is below START"));
  EXPECT_THAT(ParseSweep("S=1:8:x1").status().message(),
              HasSubstr("a factor must be >= 2"));
  EXPECT_THAT(ParseSweep("S=a:8:2").status().message(),
              HasSubstr("'a' is not a positive integer"));
  EXPECT_THAT(ParseSweep("S=1,0").status().message(),
              HasSubstr("'0' is not a positive integer"));
}

TEST(EvaluateSweepTest, EachPointEqualsTheBoundAnalysis) {
  TinyNet net;
  auto rows = report::EvaluateSweep(net.graph, net.report,
                                    {*ParseSweep("B=1:16:x2")}, {}, nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 5u);
  for (const auto& row : *rows) {
    const PeakInfo p = EvaluatePeak(net.report.training, row.bindings);
    ASSERT_TRUE(p.decided);
    EXPECT_EQ(row.peak, *p.peak.AsConstant()) << "B=" << row.bindings.at("B");
    EXPECT_EQ(row.peak_point, p.point);
    __int128 sum = 0;
    for (int c = 0; c < kNumMemCategories; ++c) {
      EXPECT_EQ(row.at_peak[c], *p.at_peak[c].AsConstant());
      sum += row.at_peak[c];
    }
    EXPECT_EQ(sum, row.peak);
    EXPECT_EQ(row.flops_step,
              *sym::Evaluate128(net.report.training.flops_step, row.bindings));
  }
}

// With a budget each point says whether its peak fits (the peak compared by
// hand here); text and JSON both carry it.
TEST(EvaluateSweepTest, EachPointSaysWhetherItFitsTheBudget) {
  TinyNet net;
  const sym::Bindings b4 = {{"B", 4}};
  const int64_t peak4 =
      *EvaluatePeak(net.report.training, b4).peak.AsConstant();
  net.report.budget_bytes = peak4;  // B = 4 fits exactly; B = 8 does not.
  auto rows = report::EvaluateSweep(net.graph, net.report,
                                    {*ParseSweep("B=1:16:x2")}, {}, nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  for (const auto& row : *rows) {
    ASSERT_TRUE(row.fits.has_value());
    EXPECT_EQ(*row.fits, row.peak <= peak4) << "B=" << row.bindings.at("B");
    EXPECT_EQ(row.device_peak, -1);  // No allocator model.
  }
  EXPECT_TRUE(*(*rows)[2].fits);
  EXPECT_FALSE(*(*rows)[3].fits);
  Result<std::string> text = RenderSweepText(
      net.graph, net.report, {*ParseSweep("B=4,8")}, {}, nullptr);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("Fits "));
  EXPECT_THAT(*text, HasSubstr("NO"));
  Result<std::string> json = RenderSweepJson(
      net.graph, net.report, {*ParseSweep("B=4,8")}, {}, nullptr);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"budget_bytes\": " + std::to_string(peak4)));
  EXPECT_THAT(*json, HasSubstr("\"fits\": true"));
  EXPECT_THAT(*json, HasSubstr("\"fits\": false"));
}

// A swept symbol also bound in the base (a --set of it) takes each point's
// value, in the peak as in the FLOPs.
TEST(EvaluateSweepTest, SweptSymbolOverridesItsBaseBinding) {
  TinyNet net;
  auto rows = report::EvaluateSweep(
      net.graph, net.report, {*ParseSweep("B=1,64")}, {{"B", 2}}, nullptr);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  for (const auto& row : *rows) {
    const PeakInfo p = EvaluatePeak(net.report.training, row.bindings);
    EXPECT_EQ(row.peak, *p.peak.AsConstant()) << "B=" << row.bindings.at("B");
  }
  EXPECT_LT((*rows)[0].peak, (*rows)[1].peak);
}

TEST(EvaluateSweepTest, UnboundSymbolIsAnError) {
  TinyNet net;
  auto rows = report::EvaluateSweep(net.graph, net.report, {}, {}, nullptr);
  ASSERT_FALSE(rows.ok());
  EXPECT_THAT(rows.status().message(), HasSubstr("unbound symbol 'B'"));
}

// With a GPU each point is timed; each equals the step analysed with that
// point's batch bound and timed by AnalyzeStep itself.
TEST(EvaluateSweepTest, TimesEachPointAsTheBoundAnalysis) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "gpt2", "layers=2,hidden=64,heads=4,vocab=256,context=64");
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto analyse = [&](std::vector<std::pair<std::string, int64_t>> bindings,
                     bool evaluate) {
    StepConfig c = StepConfigFor(*m);
    c.gpu = "H100-SXM";
    c.evaluate_time = evaluate;
    c.bindings = std::move(bindings);
    Result<StepAnalysis> a = AnalyzeStep(m->graph, testing::BuiltinRules(), c);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return std::move(a).value();
  };
  const StepAnalysis step = analyse({{"S", 32}}, false);
  EXPECT_FALSE(step.report.time.present);
  const TimedOn on{*FindGpu("H100-SXM"), "roofline on H100-SXM"};
  auto rows = report::EvaluateSweep(
      step.graph, step.report, {*ParseSweep("B=1:8:x2")}, {{"S", 32}}, &on);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 4u);
  for (const auto& row : *rows) {
    const int64_t b = row.bindings.at("B");
    const StepAnalysis one = analyse({{"B", b}, {"S", 32}}, true);
    const TimeReport& want = one.report.time;
    ASSERT_TRUE(want.present);
    EXPECT_DOUBLE_EQ(row.step_rate.step_seconds, want.step_seconds)
        << "B=" << b;
    EXPECT_DOUBLE_EQ(row.step_rate.items_per_second, want.items_per_second);
    EXPECT_DOUBLE_EQ(row.step_rate.mfu, want.mfu);
    EXPECT_EQ(row.step_rate.items_unit, "tokens");
  }
  Result<std::string> text = RenderSweepText(
      step.graph, step.report, {*ParseSweep("B=1,2")}, {{"S", 32}}, &on);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("time predicted: roofline on H100-SXM"));
  EXPECT_THAT(*text, HasSubstr("Tokens/s"));
  Result<std::string> json = RenderSweepJson(
      step.graph, step.report, {*ParseSweep("B=1,2")}, {{"S", 32}}, &on);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"step_seconds\""));
}

// DDP over two nodes without the network's bandwidth: the all-reduce is not
// timed, so every point's step time is a lower bound, marked as such.
TEST(EvaluateSweepTest, UntimedCollectivesMarkEveryPoint) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "gpt2", "layers=1,hidden=32,heads=2,vocab=64,context=16");
  ASSERT_TRUE(m.ok()) << m.status().message();
  StepConfig c = StepConfigFor(*m);
  c.gpu = "H100-SXM";
  c.shard = "ddp";
  c.world = 16;
  c.bindings = {{"S", 16}};
  c.evaluate_time = false;
  Result<StepAnalysis> step = AnalyzeStep(m->graph, testing::BuiltinRules(), c);
  ASSERT_TRUE(step.ok()) << step.status().message();
  Result<std::optional<TimedOn>> on = StepTiming(c);
  ASSERT_TRUE(on.ok() && on->has_value());
  auto rows = report::EvaluateSweep(step->graph, step->report,
                                    {*ParseSweep("B=1,2")}, {{"S", 16}}, &**on);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  for (const auto& row : *rows)
    EXPECT_THAT(row.step_rate.communication_untimed,
                HasSubstr("the network's bandwidth is not given"));
  Result<std::string> text = RenderSweepText(
      step->graph, step->report, {*ParseSweep("B=1,2")}, {{"S", 16}}, &**on);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr(">= "));
  EXPECT_THAT(*text, HasSubstr("collectives left out of every point"));
  Result<std::string> json = RenderSweepJson(
      step->graph, step->report, {*ParseSweep("B=1,2")}, {{"S", 16}}, &**on);
  ASSERT_TRUE(json.ok());
  auto j = nlohmann::json::parse(*json);
  EXPECT_THAT(
      j["points"][1]["time"]["communication_untimed"].get<std::string>(),
      HasSubstr("network"));
}

}  // namespace
}  // namespace torchcost
