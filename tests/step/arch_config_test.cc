// Tests of AnalyzeArchConfig (src/step/arch_config.cc): the closed forms at
// two points against direct analyses of the models with those numbers in the
// config, the llama params formula derived by hand, and the errors.
#include "torchcost/arch_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "testing/built_models.h"
#include "testing/eval_or_fail.h"
#include "torchcost/families.h"

namespace torchcost {
namespace {

using testing::EvalOrFail;

using testing::BuiltinRules;
using ::testing::HasSubstr;

// 2 layers, H heads of 64, no grouping, intermediate 256, vocabulary 128.
constexpr const char* kLlamaPerH =
    "layers=2,hidden=H*64,heads=H,kv_heads=H,intermediate=256,vocab=128";

StepConfig WithSymbols(std::vector<std::string> symbols) {
  StepConfig c;
  c.loss = "";  // The model's own.
  c.arch_symbols = std::move(symbols);
  return c;
}

TEST(ArchConfigTest, LlamaParamsAreTheFormulaDerivedByHand) {
  Result<ArchConfigAnalysis> a = AnalyzeArchConfig(
      "llama", kLlamaPerH, BuiltinRules(), WithSymbols({"H=1:16"}));
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->costs.degrees, std::vector<int>({2}));
  for (int64_t h : {1, 2, 7, 16}) {
    const int64_t d = 64 * h;  // hidden
    // Per layer: q, k, v, o are d x d (kv_heads = heads), gate, up, down are
    // d x 256, two RMSNorm weights of d; then the embedding and the untied
    // head (128 x d each) and the final norm (d).
    const int64_t want =
        2 * (4 * d * d + 3 * d * 256 + 2 * d) + 2 * 128 * d + d;
    EXPECT_EQ(EvalOrFail(a->costs.costs.params, {{"H", h}}), want) << "H=" << h;
    EXPECT_EQ(EvalOrFail(a->costs.costs.trainable_params, {{"H", h}}), want)
        << "H=" << h;
  }
}

// The direct analysis of the llama with `config` (no symbol), trained as
// AnalyzeArchConfig trains it (the model's loss, AdamW).
StepAnalysis Direct(const std::string& config, const sym::Bindings& inputs) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel("llama", config);
  EXPECT_TRUE(m.ok()) << m.status().message();
  StepConfig step = StepConfigFor(*m);
  for (const auto& [name, value] : inputs)
    step.bindings.emplace_back(name, value);
  Result<StepAnalysis> s = AnalyzeStep(m->graph, BuiltinRules(), step);
  EXPECT_TRUE(s.ok()) << s.status().message();
  return std::move(s).value();
}

TEST(ArchConfigTest, ClosedFormsEqualDirectAnalysesAtTwoPoints) {
  StepConfig config = WithSymbols({"H=1:16"});
  Result<ArchConfigAnalysis> a =
      AnalyzeArchConfig("llama", kLlamaPerH, BuiltinRules(), config);
  ASSERT_TRUE(a.ok()) << a.status().message();
  for (const auto& [h, b, s] :
       {std::tuple<int64_t, int64_t, int64_t>{3, 2, 16}, {11, 1, 40}}) {
    const std::string concrete = "layers=2,hidden=" + std::to_string(64 * h) +
                                 ",heads=" + std::to_string(h) +
                                 ",kv_heads=" + std::to_string(h) +
                                 ",intermediate=256,vocab=128";
    const sym::Bindings inputs = {{"B", b}, {"S", s}};
    StepAnalysis d = Direct(concrete, inputs);
    sym::Bindings all = inputs;
    all["H"] = h;
    const SymbolicCosts& c = a->costs.costs;
    EXPECT_EQ(EvalOrFail(c.params, all), d.report.params);
    EXPECT_EQ(EvalOrFail(c.trainable_params, all), d.report.trainable_params);
    EXPECT_EQ(EvalOrFail(c.flops_forward, all),
              EvalOrFail(d.report.training.flops_forward, inputs));
    EXPECT_EQ(EvalOrFail(c.flops_backward, all),
              EvalOrFail(d.report.training.flops_backward, inputs));
    int64_t peak = 0;
    for (const sym::Expr& e : c.peak_candidates)
      peak = std::max(peak, EvalOrFail(e, all));
    const PeakInfo direct =
        EvaluatePeak(d.report.training, inputs, /*category_max=*/false);
    EXPECT_EQ(peak, EvalOrFail(direct.peak, inputs)) << "H=" << h;
  }
}

TEST(ArchConfigTest, BindingsEvaluateTheReports) {
  StepConfig config = WithSymbols({"H=1:16"});
  config.bindings = {{"H", 2}, {"B", 1}, {"S", 8}};
  Result<ArchConfigAnalysis> a =
      AnalyzeArchConfig("llama", kLlamaPerH, BuiltinRules(), config);
  ASSERT_TRUE(a.ok()) << a.status().message();
  // H = 2: d = 128: 2 * (4 * 128^2 + 3 * 128 * 256 + 256) + 2 * 128 * 128 + 128
  // = 361,088.
  EXPECT_THAT(RenderArchConfigText(*a), HasSubstr("= 361088\n"));
  EXPECT_THAT(RenderArchConfigText(*a),
              HasSubstr("Not available with architecture symbols"));
  const std::string json = RenderArchConfigJson(*a);
  EXPECT_THAT(json, HasSubstr("\"value\": 361088"));
  EXPECT_THAT(json, HasSubstr("\"not_available\""));
}

TEST(ArchConfigTest, Errors) {
  struct Case {
    std::string config;
    StepConfig step;
    std::string want;
  };
  auto with = [](std::vector<std::string> symbols, auto edit) {
    StepConfig c = WithSymbols(std::move(symbols));
    edit(c);
    return c;
  };
  const Case cases[] = {
      // hidden = H with 4 heads: the first sample, H = 1, does not divide.
      {"layers=2,hidden=H,heads=4,intermediate=256,vocab=128",
       WithSymbols({"H=1:64"}),
       "StepConfig.arch_symbols H=1:64:1: the sample H=1"},
      {kLlamaPerH, WithSymbols({"H=16:1"}),
       "StepConfig.arch_symbols 'H=16:1': needs 1 <= LO <= HI"},
      {kLlamaPerH, WithSymbols({"H=1:2"}), "fewer than 3 samples"},
      {kLlamaPerH, WithSymbols({"H=1:x"}), "'x' is not an integer"},
      {kLlamaPerH, WithSymbols({"S=1:16"}), "S is an input symbol"},
      {kLlamaPerH, WithSymbols({"H=1:16", "H=1:8"}), "'H' is given twice"},
      {"layers=2", WithSymbols({"H=1:16"}),
       "no value of the config 'layers=2' names them"},
      {kLlamaPerH, with({"H=1:16"}, [](StepConfig& c) { c.autocast = "bf16"; }),
       "do not go with StepConfig.autocast"},
      {kLlamaPerH, with({"H=1:16"}, [](StepConfig& c) { c.mode = "generate"; }),
       "StepConfig.mode generate"},
      {kLlamaPerH,
       with({"H=1:16:3"},
            [](StepConfig& c) {
              c.bindings = {{"H", 5}};
            }),
       "StepConfig.bindings H=5: off the samples of H=1:16:3"},
      {kLlamaPerH,
       with({"H=1:16"},
            [](StepConfig& c) {
              c.bindings = {{"Q", 5}};
            }),
       "unknown symbol 'Q'; symbols: H, B, S"},
  };
  for (const Case& c : cases) {
    Result<ArchConfigAnalysis> a =
        AnalyzeArchConfig("llama", c.config, BuiltinRules(), c.step);
    ASSERT_FALSE(a.ok()) << c.want;
    EXPECT_THAT(a.status().message(), HasSubstr(c.want));
    EXPECT_EQ(a.status().message().find('\n'), std::string::npos)
        << a.status().message();
  }
}

TEST(ArchConfigTest, AnalyzeStepDeclinesArchSymbols) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel(
      "llama",
      "layers=1,hidden=64,heads=1,kv_heads=1,intermediate=64,vocab=64");
  ASSERT_TRUE(m.ok()) << m.status().message();
  StepConfig c = StepConfigFor(*m);
  c.arch_symbols = {"H=1:4"};
  c.inputs.clear();
  Result<StepAnalysis> s = AnalyzeStep(m->graph, BuiltinRules(), c);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("AnalyzeArchConfig"));
}

TEST(ArchConfigTest, NamesArchSymbolMatchesWholeIdentifiers) {
  const StepConfig c = WithSymbols({"H=1:4"});
  EXPECT_TRUE(NamesArchSymbol("hidden=H*64,heads=H", c));
  EXPECT_FALSE(NamesArchSymbol("hidden=64,attn=HF", c));
  EXPECT_FALSE(NamesArchSymbol("H=4", c));
}

}  // namespace
}  // namespace torchcost
