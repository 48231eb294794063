// The comparison's text and JSON renderings of timed rows: the time columns,
// the line naming where the time comes from, and the rows' "time" objects.
// (Untimed renderings: compare_test.cc.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "torchcost/compare.h"
#include "torchcost/gpu.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

CompareOptions Timed(bool generation) {
  CompareOptions o;
  o.generation = generation;
  o.bindings = {{"B", 8}, {"S", 1024}};
  o.time = TimedOn{*FindGpu("H100-SXM"), "roofline on H100-SXM"};
  return o;
}

TEST(CompareRenderTest, TrainingRowsShowStepTimeThroughputAndMfu) {
  CompareRow full;
  full.label = "full";
  full.step_rate = {1.39, 5887.4, "tokens", 0.82};
  CompareRow failed;
  failed.label = "dora:r=8";
  failed.error = "no Linear layer matches";
  const std::vector<CompareRow> rows = {full, failed};
  const CompareOptions o = Timed(false);
  const std::string text = RenderCompareText("m", rows, o, "train");
  EXPECT_THAT(text, HasSubstr("Step time"));
  EXPECT_THAT(text, HasSubstr("Tokens/s"));
  EXPECT_THAT(text, HasSubstr("1.39 s"));
  EXPECT_THAT(text, HasSubstr("5887"));
  EXPECT_THAT(text, HasSubstr("82.0%"));
  EXPECT_THAT(text, HasSubstr("Time (predicted: roofline on H100-SXM)"));
  auto j = nlohmann::json::parse(RenderCompareJson("m", rows, o, "train"));
  EXPECT_EQ(j["time_source"], "predicted: roofline on H100-SXM");
  EXPECT_DOUBLE_EQ(j["rows"][0]["time"]["step_seconds"].get<double>(), 1.39);
  EXPECT_DOUBLE_EQ(j["rows"][0]["time"]["items_per_second"].get<double>(),
                   5887.4);
  EXPECT_EQ(j["rows"][0]["time"]["unit"], "tokens");
  EXPECT_DOUBLE_EQ(j["rows"][0]["time"]["mfu"].get<double>(), 0.82);
  EXPECT_FALSE(j["rows"][1].contains("time"));
  // Untimed rows: no columns, no line, no key.
  CompareOptions plain;
  CompareRow untimed = full;
  untimed.step_rate = StepRate();
  const std::string text2 = RenderCompareText("m", {untimed}, plain, "train");
  EXPECT_THAT(text2, Not(HasSubstr("Step time")));
  EXPECT_THAT(text2, Not(HasSubstr("Time (")));
  auto j2 = nlohmann::json::parse(RenderCompareJson("m", {untimed}, plain, ""));
  EXPECT_FALSE(j2.contains("time_source"));
  EXPECT_FALSE(j2["rows"][0].contains("time"));
}

TEST(CompareRenderTest, UntimedCollectivesMarkTheRowsBounds) {
  CompareRow fsdp;
  fsdp.label = "fsdp";
  fsdp.step_rate = {0.2, 1000, "tokens", 0.5,
                    "the network's bandwidth is not given"};
  CompareRow single = fsdp;
  single.label = "single";
  single.step_rate.communication_untimed.clear();
  CompareRow zero3 = fsdp;
  zero3.label = "zero3";
  const CompareOptions o = Timed(false);
  const std::string text =
      RenderCompareText("m", {single, fsdp, zero3}, o, "train");
  EXPECT_THAT(text, HasSubstr(">= 200 ms"));
  EXPECT_THAT(text, HasSubstr("<= 50.0%"));
  // One note for the rows untimed for one reason.
  EXPECT_THAT(text, HasSubstr("collectives left out of fsdp, zero3: the "
                              "network's bandwidth is not given\n"));
  EXPECT_THAT(text, Not(HasSubstr("out of single")));
  auto j =
      nlohmann::json::parse(RenderCompareJson("m", {single, fsdp}, o, "train"));
  EXPECT_TRUE(j["rows"][0]["time"]["communication_untimed"].is_null());
  EXPECT_EQ(j["rows"][1]["time"]["communication_untimed"],
            "the network's bandwidth is not given");
}

// A generation row "int4": 6.6 ms to the first token, 18.5 ms a decode step,
// 423.1 tokens/s.
CompareRow Int4GenerationRow() {
  CompareRow r;
  r.label = "int4";
  r.generation = true;
  r.prefill_seconds = 0.0066;
  r.decode_step_seconds = 0.0185;
  r.tokens_per_second = 423.1;
  return r;
}

TEST(CompareRenderTest, UntimedCollectivesMarkAGenerationRowsBounds) {
  CompareRow r = Int4GenerationRow();
  r.step_rate.communication_untimed = "the GPU's link bandwidth is unknown";
  const CompareOptions o = Timed(true);
  const std::string text = RenderCompareText("llama", {r}, o, "generate");
  EXPECT_THAT(text, HasSubstr(">= 6.6 ms"));
  EXPECT_THAT(text, HasSubstr(">= 18.5 ms"));
  EXPECT_THAT(text, HasSubstr("<= 423.1"));
  EXPECT_THAT(text, HasSubstr("collectives left out of int4: the GPU's link"));
  auto j = nlohmann::json::parse(RenderCompareJson("llama", {r}, o, ""));
  EXPECT_EQ(j["rows"][0]["time"]["communication_untimed"],
            "the GPU's link bandwidth is unknown");
}

TEST(CompareRenderTest, GenerationRowsShowFirstTokenDecodeStepAndTokens) {
  CompareRow r = Int4GenerationRow();
  CompareOptions o = Timed(true);
  o.time->source = "calibrated (h100-fit.json)";
  const std::string text = RenderCompareText("llama", {r}, o, "generate");
  EXPECT_THAT(text, HasSubstr("To 1st token"));
  EXPECT_THAT(text, HasSubstr("Decode step"));
  EXPECT_THAT(text, HasSubstr("6.6 ms"));
  EXPECT_THAT(text, HasSubstr("18.5 ms"));
  EXPECT_THAT(text, HasSubstr("423.1"));
  // A calibration names itself, without "predicted".
  EXPECT_THAT(text, HasSubstr("Time (calibrated (h100-fit.json))"));
  auto j = nlohmann::json::parse(RenderCompareJson("llama", {r}, o, ""));
  EXPECT_EQ(j["time_source"], "calibrated (h100-fit.json)");
  EXPECT_DOUBLE_EQ(j["rows"][0]["time"]["prefill_seconds"].get<double>(),
                   0.0066);
  EXPECT_DOUBLE_EQ(j["rows"][0]["time"]["decode_step_seconds"].get<double>(),
                   0.0185);
  EXPECT_DOUBLE_EQ(j["rows"][0]["time"]["tokens_per_second"].get<double>(),
                   423.1);
}

}  // namespace
}  // namespace torchcost
