// Tests of the generation report (src/report/generation.cc): the text section
// and JSON object carry the analysis's numbers (the KV cache derived here), and
// each sweep row equals evaluating the one analysis at that point.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "testing/built_models.h"
#include "torchcost/generation_report.h"
#include "torchcost/gpu.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

using testing::BuiltinRules;
using ::testing::HasSubstr;

// 2 layers, hidden 64, 4 heads of 16, 2 KV heads, eager attention, float32.
constexpr const char* kTinyLlama =
    "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256,attn="
    "eager,make_vocab_size_divisible_by=1";
// 2 (keys, values) x 2 layers x 2 KV heads x head_dim 16 x 4 bytes.
constexpr int64_t kPerToken = 2 * 2 * 2 * 16 * 4;

GenerationAnalysis Tiny(std::vector<std::pair<std::string, int64_t>> bindings) {
  StepConfig c;
  c.mode = "generate";
  c.bindings = std::move(bindings);
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

TEST(GenerationReportTest, TextNamesTheCacheAndBothPeaks) {
  GenerationAnalysis g = Tiny({{"B", 2}, {"S", 100}, {"T", 20}});
  const std::string text = RenderGenerationText(g, g.decode.bindings);
  // 120 tokens (S + T) x 2 sequences.
  EXPECT_THAT(
      text,
      HasSubstr("KV cache at the end (120 tokens, float32): 120.00 KiB (" +
                std::to_string(kPerToken * 120 * 2) + ")"));
  EXPECT_THAT(text, HasSubstr("Peak   prefill"));
  EXPECT_THAT(text, HasSubstr("decode (last step)"));
  EXPECT_THAT(text, HasSubstr("kv_cache"));
}

// One rank of tp=2 on a GPU whose link the table lacks (MI250X): the
// collectives are not timed, and the times say they are lower bounds.
TEST(GenerationReportTest, UntimedCollectivesMakeTheTimesBounds) {
  StepConfig c;
  c.mode = "generate";
  c.gpu = "MI250X";
  c.bindings = {{"B", 2}, {"S", 16}, {"T", 4}};
  Result<GenerationAnalysis> g = AnalyzeGeneration(
      "llama", std::string(kTinyLlama) + ",tp=2", BuiltinRules(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_THAT(g->time.communication_untimed,
              HasSubstr("link bandwidth is unknown"));
  EXPECT_THAT(RenderGenerationText(*g, g->decode.bindings),
              HasSubstr("NB: lower bounds (tokens/s upper bounds): collectives "
                        "not timed: the GPU's link bandwidth is unknown"));
  auto j = nlohmann::json::parse(
      "{\"g\": " + RenderGenerationJson(*g, g->decode.bindings) + "}");
  EXPECT_THAT(j["g"]["time"]["communication_untimed"].get<std::string>(),
              HasSubstr("link"));
  // tp=1: nothing to time, nothing said.
  c.gpu = "MI250X";
  Result<GenerationAnalysis> one =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->time.communication_untimed, "");
}

TEST(GenerationReportTest, TextOpensWithTheModelAndItsParameters) {
  // Per layer q 64x64, k and v 32x64, o 64x64, gate and up 128x64, down 64x128
  // (36,864 Linear weights) and two norms of 64; embed and lm_head 256x64 and
  // the final norm 64, float32.
  const int64_t linears = 2 * 36864;
  const int64_t params = linears + 2 * 2 * 64 + 2 * 256 * 64 + 64;
  GenerationAnalysis g = Tiny({{"B", 1}, {"S", 8}, {"T", 4}});
  g.prefill.report.model = "tiny";
  EXPECT_THAT(RenderGenerationText(g, g.decode.bindings),
              ::testing::StartsWith("Model:  tiny\nParams: 106.82 K (" +
                                    std::to_string(params) + "), 417.25 KiB (" +
                                    std::to_string(4 * params) +
                                    ")\nGeneration (greedy"));
  // int8 weights: the Linear weights but lm_head's count as out x in, stored
  // in a byte each.
  StepConfig c;
  c.mode = "generate";
  c.weight_quant = "int8";
  c.bindings = {{"B", 1}, {"S", 8}, {"T", 4}};
  Result<GenerationAnalysis> q =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_THAT(RenderGenerationText(*q, q->decode.bindings),
              HasSubstr("Params: 106.82 K (" + std::to_string(params) + "), "));
  EXPECT_THAT(RenderGenerationText(*q, q->decode.bindings),
              HasSubstr("; 73.73 K (" + std::to_string(linears) +
                        ") of them stored quantized\n"));
}

TEST(GenerationReportTest, JsonEvaluatesUnderTheBindings) {
  GenerationAnalysis g = Tiny({{"B", 2}, {"S", 100}, {"T", 20}});
  const nlohmann::json j =
      nlohmann::json::parse(RenderGenerationJson(g, g.decode.bindings, 0));
  EXPECT_EQ(j["kv_cache_bytes"]["value"].get<int64_t>(), kPerToken * 120 * 2);
  EXPECT_EQ(j["kv_cache_tokens"]["expr"], "S + T");
  EXPECT_EQ(j["kv_bytes_per_token"].get<int64_t>(), kPerToken);
  EXPECT_EQ(j["cache_dtype"], "float32");
  const GenerationPeak d = PhasePeak(g.decode, g.decode.bindings);
  EXPECT_EQ(j["decode"]["peak_bytes"]["value"].get<int64_t>(),
            *sym::Evaluate(d.peak, g.decode.bindings));
  // The breakdown sums to the peak.
  int64_t sum = 0;
  for (const char* k : {"param", "buffer", "act", "temp", "oth", "kv_cache"}) {
    sum += j["prefill"]["at_peak"][k]["value"].get<int64_t>();
  }
  EXPECT_EQ(sum, j["prefill"]["peak_bytes"]["value"].get<int64_t>());
  // Symbolic: the expressions stand, the values are null.
  GenerationAnalysis s = Tiny({});
  const nlohmann::json js =
      nlohmann::json::parse(RenderGenerationJson(s, {}, 0));
  EXPECT_TRUE(js["kv_cache_bytes"]["value"].is_null());
  EXPECT_EQ(js["kv_cache_bytes"]["expr"],
            std::to_string(kPerToken) + "*B*S + " + std::to_string(kPerToken) +
                "*B*T");
}

TEST(GenerationReportTest, TheAllocatorOverTheWholeGeneration) {
  // The tiny model's blocks are all small-pool requests, split to their
  // rounded size, so the replay's allocated bytes at any moment are the live
  // tensors' rounded sizes: its peak is the largest of the prefill's and of
  // every decode step's own replay (T = j + 1 for step j). On the H100's 80
  // GiB (less the default context) nothing is released.
  StepConfig c;
  c.mode = "generate";
  c.allocator = "cuda";
  c.gpu = "h100";
  c.bindings = {{"B", 2}, {"S", 100}, {"T", 20}};
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  int64_t most =
      EvaluateAllocator(g->prefill.report.training, g->prefill.bindings)
          .allocated_peak;
  for (int64_t t = 2; t <= 20; ++t) {
    const AllocatorPeak step = EvaluateAllocator(
        g->decode.report.training, {{"B", 2}, {"S", 100}, {"T", t}});
    ASSERT_TRUE(step.error.empty()) << step.error;
    most = std::max(most, step.allocated_peak);
  }
  const nlohmann::json j = nlohmann::json::parse(
      RenderGenerationJson(*g, g->decode.bindings, 0))["allocator"]["generate"];
  EXPECT_EQ(j["allocated_peak"].get<int64_t>(), most);
  EXPECT_EQ(j["device"], "H100-SXM");
  // The default context (src/memory/cuda_context.cc): outside the allocator
  // 787,283,968 bytes + cuBLAS's workspaces' segments 69,206,016.
  const int64_t context = 787283968 + 69206016;
  EXPECT_EQ(j["memory_limit"].get<int64_t>(),
            80 * (int64_t{1} << 30) - context);
  EXPECT_EQ(j["releases"].get<int64_t>(), 0);
  EXPECT_TRUE(j["out_of_memory_step"].is_null());
  EXPECT_EQ(j["device_peak"].get<int64_t>(),
            j["reserved_peak"].get<int64_t>() + context);
  const std::string text = RenderGenerationText(*g, g->decode.bindings);
  EXPECT_THAT(text, HasSubstr("whole generate()"));
  EXPECT_THAT(text, HasSubstr("fits H100-SXM"));
}

TEST(GenerationReportTest, ADeviceWithoutAMemorySizeSetsNoLimit) {
  // A calibration file measured on a CUDA device the GPU table does not name:
  // its own peaks, no memory size. The whole generation is replayed without a
  // limit, and the report says no device bounds it.
  const std::string path = ::testing::TempDir() + "/custom_gpu.json";
  {
    std::ofstream f(path);
    f << R"({"roofline": {"device": "cuda", "name": "custom",
              "bandwidth_gbs": 1000, "tflops": {"fp32": 10}},
             "fit": {"efficiency": {}}})";
  }
  StepConfig c;
  c.mode = "generate";
  c.allocator = "cuda";
  c.gpu_file = path;
  c.bindings = {{"B", 2}, {"S", 100}, {"T", 20}};
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  std::remove(path.c_str());
  ASSERT_TRUE(g.ok()) << g.status().message();
  const nlohmann::json j = nlohmann::json::parse(
      RenderGenerationJson(*g, g->decode.bindings, 0))["allocator"]["generate"];
  EXPECT_TRUE(j["device"].is_null());
  EXPECT_TRUE(j["memory_limit"].is_null());
  EXPECT_TRUE(j["out_of_memory_step"].is_null());
  EXPECT_GT(j["reserved_peak"].get<int64_t>(), 0);
  EXPECT_THAT(RenderGenerationText(*g, g->decode.bindings),
              HasSubstr("NB: no device limit"));
}

// StepConfig::budget_bytes reaches both phases' reports; the text and the
// JSON answer it over the whole generation: the larger phase's peak, compared
// here by hand.
TEST(GenerationReportTest, BudgetIsAnsweredOverBothPhases) {
  StepConfig c;
  c.mode = "generate";
  c.bindings = {{"B", 2}, {"S", 100}, {"T", 20}};
  c.budget_bytes = int64_t{1} << 20;
  Result<GenerationAnalysis> g =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->prefill.report.budget_bytes, c.budget_bytes);
  EXPECT_EQ(g->decode.report.budget_bytes, c.budget_bytes);
  const sym::Bindings& at = g->decode.bindings;
  const int64_t larger =
      std::max(*sym::Evaluate(PhasePeak(g->prefill, at).peak, at),
               *sym::Evaluate(PhasePeak(g->decode, at).peak, at));
  const nlohmann::json j =
      nlohmann::json::parse(RenderGenerationJson(*g, at))["budget"];
  EXPECT_EQ(j["needed_bytes"].get<int64_t>(), larger);
  EXPECT_EQ(j["fits"].get<bool>(), larger <= c.budget_bytes);
  EXPECT_EQ(j["at"]["B"], 2);
  EXPECT_THAT(RenderGenerationText(*g, at),
              HasSubstr("Budget 1.00 MiB: " +
                        std::string(larger <= c.budget_bytes ? "fits"
                                                             : "does NOT fit") +
                        " at B=2"));
  // T searched: the largest T whose larger phase fits, checked against the
  // phases' peaks at it and one more.
  c.budget_symbol = "T";
  c.budget_bytes = int64_t{4} << 20;
  c.bindings = {{"B", 2}, {"S", 100}};
  Result<GenerationAnalysis> t =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  ASSERT_TRUE(t.ok()) << t.status().message();
  const nlohmann::json jt = nlohmann::json::parse(
      RenderGenerationJson(*t, t->decode.bindings))["budget"];
  ASSERT_EQ(jt["largest"]["symbol"], "T");
  const int64_t largest = jt["largest"]["value"].get<int64_t>();
  ASSERT_GT(largest, 1);
  auto larger_at = [&](int64_t tokens) {
    const sym::Bindings b = {{"B", 2}, {"S", 100}, {"T", tokens}};
    return std::max(*sym::Evaluate(PhasePeak(t->prefill, b).peak, b),
                    *sym::Evaluate(PhasePeak(t->decode, b).peak, b));
  };
  EXPECT_LE(larger_at(largest), c.budget_bytes);
  EXPECT_GT(larger_at(largest + 1), c.budget_bytes);
  c.budget_symbol.clear();
  c.budget_bytes = 0;
  Result<GenerationAnalysis> none =
      AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
  EXPECT_TRUE(nlohmann::json::parse(RenderGenerationJson(*none, at))["budget"]
                  .is_null());
}

TEST(GenerationReportTest, SweepOverContextFromOneAnalysis) {
  GenerationAnalysis g = Tiny({});
  Result<SweepSpec> s = ParseSweep("S=1024:131072:x2");
  ASSERT_TRUE(s.ok());
  const int64_t budget = int64_t{256} << 20;
  g.prefill.report.budget_bytes = budget;  // As StepConfig::budget_bytes.
  Result<std::string> out =
      RenderGenerationSweep(g, {*s}, {{"B", 4}, {"T", 256}}, /*json=*/true);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const nlohmann::json j = nlohmann::json::parse(*out);
  ASSERT_EQ(j["rows"].size(), 8u);  // 1k, 2k, ..., 128k
  for (const auto& row : j["rows"]) {
    const int64_t S = row["S"].get<int64_t>();
    const sym::Bindings at = {{"B", 4}, {"S", S}, {"T", 256}};
    EXPECT_EQ(row["kv_cache_bytes"].get<int64_t>(), kPerToken * (S + 256) * 4);
    const int64_t p = *sym::Evaluate(PhasePeak(g.prefill, at).peak, at);
    const int64_t d = *sym::Evaluate(PhasePeak(g.decode, at).peak, at);
    EXPECT_EQ(row["prefill_peak_bytes"].get<int64_t>(), p);
    EXPECT_EQ(row["decode_peak_bytes"].get<int64_t>(), d);
    EXPECT_EQ(row["fits"].get<bool>(), std::max(p, d) <= budget) << "S=" << S;
  }
  // The same rows as one analysis per point with its values given (the first
  // and the last point: the check of "a sweep from one analysis").
  for (size_t i : {size_t{0}, size_t{7}}) {
    const nlohmann::json& row = j["rows"][i];
    const int64_t S = row["S"].get<int64_t>();
    GenerationAnalysis one = Tiny({{"B", 4}, {"S", S}, {"T", 256}});
    const sym::Bindings at = one.decode.bindings;
    EXPECT_EQ(row["prefill_peak_bytes"].get<int64_t>(),
              *sym::Evaluate(PhasePeak(one.prefill, at).peak, at))
        << S;
    EXPECT_EQ(row["decode_peak_bytes"].get<int64_t>(),
              *sym::Evaluate(PhasePeak(one.decode, at).peak, at))
        << S;
    EXPECT_EQ(row["kv_cache_bytes"].get<int64_t>(),
              *sym::Evaluate(one.kv_cache_bytes, at))
        << S;
  }
  // Eager attention's S x S scores (4 x 4 heads x S x S x 4 bytes: 64 MiB at
  // 1k) outgrow 256 MiB at long prompts: the first point fits, the last does
  // not.
  EXPECT_TRUE(j["rows"][0]["fits"].get<bool>());
  EXPECT_FALSE(j["rows"][7]["fits"].get<bool>());
  // A symbol left unbound is named.
  Result<std::string> unbound =
      RenderGenerationSweep(g, {*s}, {{"B", 4}}, false);
  EXPECT_THAT(unbound.status().message(), HasSubstr("must all be bound"));
}

// With a GPU each point is timed; each equals a generation analysed with that
// point's values bound and timed by AnalyzeGeneration itself.
TEST(GenerationReportTest, SweepTimesEachPoint) {
  auto analyse = [](std::vector<std::pair<std::string, int64_t>> bindings,
                    bool evaluate) {
    StepConfig c;
    c.mode = "generate";
    c.gpu = "A100-80GB-SXM";
    c.evaluate_time = evaluate;
    c.bindings = std::move(bindings);
    Result<GenerationAnalysis> g =
        AnalyzeGeneration("llama", kTinyLlama, BuiltinRules(), c);
    EXPECT_TRUE(g.ok()) << g.status().message();
    return std::move(g).value();
  };
  const GenerationAnalysis g = analyse({{"T", 8}}, false);
  const TimedOn on{*FindGpu("A100-80GB-SXM"), "roofline on A100-80GB-SXM"};
  Result<std::string> out = RenderGenerationSweep(
      g, {*ParseSweep("B=1,4"), *ParseSweep("S=16,64")}, {{"T", 8}},
      /*json=*/true, &on);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const nlohmann::json j = nlohmann::json::parse(*out);
  EXPECT_EQ(j["time_source"], "predicted: roofline on A100-80GB-SXM");
  ASSERT_EQ(j["rows"].size(), 4u);
  for (const auto& row : j["rows"]) {
    const int64_t b = row["B"].get<int64_t>(), s = row["S"].get<int64_t>();
    const GenerationAnalysis one =
        analyse({{"B", b}, {"S", s}, {"T", 8}}, true);
    ASSERT_TRUE(one.time.present);
    EXPECT_DOUBLE_EQ(row["time"]["prefill_seconds"].get<double>(),
                     one.time.prefill_seconds)
        << b << " " << s;
    EXPECT_DOUBLE_EQ(row["time"]["decode_step_seconds"].get<double>(),
                     one.time.last_step_seconds);
    EXPECT_NEAR(row["time"]["tokens_per_second"].get<double>(),
                one.time.tokens_per_second, 1e-9 * one.time.tokens_per_second);
  }
  Result<std::string> text = RenderGenerationSweep(
      g, {*ParseSweep("B=1,4")}, {{"S", 16}, {"T", 8}}, false, &on);
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_THAT(*text, HasSubstr("to 1st token, decode step, tokens/s "
                               "(predicted: roofline on A100-80GB-SXM)"));
  // Analysed without a GPU: no moved bytes to time.
  EXPECT_THAT(RenderGenerationSweep(Tiny({}), {*ParseSweep("B=1,4")},
                                    {{"S", 16}, {"T", 8}}, false, &on)
                  .status()
                  .message(),
              HasSubstr("without a GPU"));
}

}  // namespace
}  // namespace torchcost
