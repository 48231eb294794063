// Tests of the train gaps an eval-mode trace leaves: StochasticDepth modules
// and attention dropout whose probability is unknown.
#include "import/eval_mode_gaps.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace torchcost::import {
namespace {

using ::testing::HasSubstr;

TEST(EvalModeGapsTest, StochasticDepthIsAGapUnlessItsPIsZero) {
  ir::Graph g;
  g.GetOrAddScope("", "Net");
  g.GetOrAddScope("unknown_p", "StochasticDepth");
  g.GetOrAddScope("zero_p", "StochasticDepth");
  g.GetOrAddScope("half_p", "StochasticDepth");
  // Traced in train mode: its nodes are in the trace.
  g.GetOrAddScope("trained", "StochasticDepth");
  g.GetOrAddScope("other", "Dropout");
  const std::map<std::string, double> p = {
      {"zero_p", 0.0}, {"half_p", 0.5}, {"trained", 0.5}};
  ModuleFacts facts;
  facts.traced_in_eval = [](const std::string& path) {
    return path != "trained";
  };
  facts.number = [&p](const std::string& path,
                      const std::string& name) -> std::optional<double> {
    auto it = p.find(path);
    if (name != "p" || it == p.end()) return std::nullopt;
    return it->second;
  };
  NoteStochasticDepth(facts, &g);
  ASSERT_EQ(g.train_gaps.size(), 2u);
  EXPECT_THAT(
      g.train_gaps[0],
      HasSubstr("StochasticDepth 'unknown_p': not in an eval-mode trace"));
  EXPECT_THAT(
      g.train_gaps[1],
      HasSubstr("StochasticDepth 'half_p' (p=0.5): not in an eval-mode trace"));
}

TEST(EvalModeGapsTest, UnknownAttentionDropoutNamesTheModuleAndTheRecorder) {
  ir::Graph g;
  NoteUnknownAttentionDropout("enc.layers.0.self_attn", &g);
  ASSERT_EQ(g.train_gaps.size(), 1u);
  EXPECT_THAT(g.train_gaps[0],
              HasSubstr("MultiheadAttention 'enc.layers.0.self_attn'"));
  EXPECT_THAT(g.train_gaps[0], HasSubstr("tools/export/module_attrs.py"));
}

}  // namespace
}  // namespace torchcost::import
