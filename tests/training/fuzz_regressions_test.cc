// Inputs fuzz/cli_spec_fuzz.cc found that hung the training options' parsers
// and matchers; each must now end quickly in a value or a one-line error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "torchcost/training.h"
#include "training/checkpoint.h"

namespace torchcost::training {
namespace {

TEST(TrainingFuzzRegressionTest, CheckpointPatternWithNestedStarsEndsQuickly) {
  // "h" and 30 stars: std::regex's backtracking matcher took minutes per
  // module path; user patterns now match breadth-first (passes/user_regex.h).
  ir::Graph g;
  for (int i = 0; i < 4; ++i) {
    const std::string path = "transformer.h." + std::to_string(i) + ".attn";
    const int scope = g.GetOrAddScope(path, "Attention");
    ir::Node n;
    n.op = "aten::relu";
    n.scope = scope;
    g.nodes.push_back(n);
  }
  TrainingOptions options;
  options.checkpoint = "h" + std::string(30, '*') +
                       "[0Se,\xcd\xca"
                       "3C,32:flo\"tt5ctypeIcE/9]+";
  const auto start = std::chrono::steady_clock::now();
  Result<std::vector<CheckpointSegment>> r = FindCheckpointSegments(g, options);
  EXPECT_LT(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count(),
      2.0);
  if (!r.ok()) EXPECT_EQ(r.status().message().find('\n'), std::string::npos);
  options.checkpoint = std::string(600, 'h');
  Result<std::vector<CheckpointSegment>> too_long =
      FindCheckpointSegments(g, options);
  ASSERT_FALSE(too_long.ok());
  EXPECT_THAT(
      too_long.status().message(),
      ::testing::HasSubstr(
          "not a valid regular expression (longer than 512 characters)"));
}

}  // namespace
}  // namespace torchcost::training
