// Tests of the reports of a config with architecture symbols
// (src/report/arch_config.cc), on closed forms written here.
#include "torchcost/arch_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace torchcost {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// params 2*H^2 + 3*H; the peak the larger of 8*B*S and 100*H.
ArchConfigAnalysis Sample(sym::Bindings bindings) {
  ArchConfigAnalysis a;
  a.model = "llama";
  a.model_config = "hidden=H*64";
  a.context = std::make_unique<sym::Context>();
  sym::Context& ctx = *a.context;
  const sym::Expr h = ctx.Symbol("H", sym::Interval{1, 16});
  const sym::Expr b = ctx.Symbol("B", sym::Interval{1, sym::kPosInf});
  const sym::Expr s = ctx.Symbol("S", sym::Interval{1, sym::kPosInf});
  a.symbols = {{"H", 1, 16, 1}};
  a.costs.symbols = {"H", "B", "S"};
  a.costs.degrees = {2};
  a.costs.analyses = 6;
  a.costs.costs.params = sym::Expr(2) * h * h + sym::Expr(3) * h;
  a.costs.costs.trainable_params = a.costs.costs.params;
  a.costs.costs.flops_forward = sym::Expr(6) * b * s * h;
  a.costs.costs.flops_backward = sym::Expr(12) * b * s * h;
  a.costs.costs.peak_candidates = {sym::Expr(8) * b * s, sym::Expr(100) * h};
  a.bindings = std::move(bindings);
  return a;
}

TEST(ArchConfigReportTest, TextGivesClosedFormsAndValuesWhereBound) {
  const std::string unbound = RenderArchConfigText(Sample({}));
  EXPECT_THAT(
      unbound,
      HasSubstr("H = 1..16 step 1 (degree 2); closed forms from 6 analyses"));
  EXPECT_THAT(unbound, HasSubstr("Peak memory (bytes): max("));
  EXPECT_THAT(unbound, HasSubstr("Not available with architecture symbols: the "
                                 "per-module tree and the memory "
                                 "timeline"));
  EXPECT_THAT(unbound, Not(HasSubstr(" = 0")));
  // H = 4: params 2*16 + 12 = 44; B*S = 2*8: peak max(128, 400) = 400; FLOPs
  // forward 6*2*8*4 = 384.
  const std::string bound =
      RenderArchConfigText(Sample({{"H", 4}, {"B", 2}, {"S", 8}}));
  EXPECT_THAT(bound, HasSubstr("= 44\n"));
  EXPECT_THAT(bound, HasSubstr("= 384\n"));
  EXPECT_THAT(
      bound,
      HasSubstr("Peak memory (bytes): 400 (the largest of 2 closed forms)"));
}

TEST(ArchConfigReportTest, JsonShape) {
  nlohmann::json j =
      nlohmann::json::parse(RenderArchConfigJson(Sample({{"H", 4}})));
  EXPECT_EQ(j["arch_symbols"][0]["name"], "H");
  EXPECT_EQ(j["arch_symbols"][0]["degree"], 2);
  EXPECT_EQ(j["symbols"], nlohmann::json({"H", "B", "S"}));
  EXPECT_EQ(j["bindings"]["H"], 4);
  EXPECT_EQ(j["totals"]["params"]["value"], 44);
  // B and S unbound.
  EXPECT_TRUE(j["totals"]["flops_forward"]["value"].is_null());
  EXPECT_EQ(j["totals"]["peak_bytes"]["candidates"].size(), 2u);
  EXPECT_TRUE(j["totals"]["peak_bytes"]["value"].is_null());
  EXPECT_EQ(j["not_available"], nlohmann::json({"modules", "timeline"}));
}

}  // namespace
}  // namespace torchcost
