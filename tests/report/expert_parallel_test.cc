// Tests of the expert-parallel block of the text and JSON reports: the
// all-to-all payloads of a tiny MoE built with ep > 1, derived from the
// routing.
#include "report/expert_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "testing/built_models.h"
#include "torchcost/families.h"
#include "torchcost/report.h"

namespace torchcost {
namespace {

using ::testing::HasSubstr;

// Two layers, hidden 64, 8 experts, top 2, fp32.
const std::string kTinyMoe =
    "layers=2,hidden=64,heads=4,kv_heads=4,intermediate=32,vocab=100,experts=8,"
    "top_k=2";

TEST(ExpertParallelTest, PayloadsAreTheRoutedRows) {
  Result<builder::BuiltModel> m =
      builder::BuildNamedModel("llama", kTinyMoe + ",ep=4");
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = testing::AnalyzeBuilt(*m, ctx);
  const report::AllToAll a = report::CollectAllToAll(m->graph, r);
  EXPECT_EQ(a.world, 4);
  EXPECT_EQ(a.layers, 2);
  // B*S = 3*16 = 48 tokens: a rank sends 8 experts x (48*2 // 8) = 96 = 48*2
  // rows of 64 fp32: tokens * top_k * hidden * 4 bytes per direction.
  const sym::Bindings at = {{"B", 3}, {"S", 16}};
  const int64_t per_call = 48 * 2 * 64 * 4;
  auto value = [&](const sym::Expr& e) { return sym::Evaluate(e, at).value(); };
  EXPECT_EQ(value(a.dispatch), per_call);
  EXPECT_EQ(value(a.combine), per_call);
  // Forward: a dispatch and a combine per layer; the backward sends each
  // gradient back.
  EXPECT_EQ(value(a.forward), 2 * 2 * per_call);
  EXPECT_EQ(value(a.backward), 2 * 2 * per_call);

  const std::string text = report::RenderExpertParallel(a, at);
  EXPECT_THAT(text, HasSubstr("Expert parallelism: ep=4, 2 MoE layers"));
  EXPECT_THAT(
      text, HasSubstr("dispatch 24.00 KiB (24576), combine 24.00 KiB (24576)"));
  const auto j = nlohmann::json::parse(RenderJson(m->graph, r, at));
  EXPECT_EQ(j["expert_parallel"]["ep"], 4);
  EXPECT_EQ(
      j["expert_parallel"]["all_to_all"]["dispatch_bytes_per_layer"]["value"],
      per_call);
  EXPECT_EQ(
      j["expert_parallel"]["all_to_all"]["backward_bytes_per_step"]["value"],
      4 * per_call);
}

TEST(ExpertParallelTest, AbsentWithoutExpertParallelism) {
  Result<builder::BuiltModel> m = builder::BuildNamedModel("llama", kTinyMoe);
  ASSERT_TRUE(m.ok()) << m.status().message();
  sym::Context ctx;
  const Report r = testing::AnalyzeBuilt(*m, ctx);
  const report::AllToAll a = report::CollectAllToAll(m->graph, r);
  EXPECT_EQ(a.world, 0);
  EXPECT_EQ(report::RenderExpertParallel(a, {}), "");
  EXPECT_FALSE(
      nlohmann::json::parse(RenderJson(m->graph, r, {{"B", 1}, {"S", 4}}))
          .contains("expert_parallel"));
}

}  // namespace
}  // namespace torchcost
