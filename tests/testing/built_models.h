// What the builder tests share: the built-in rules, and the analysis of a
// built model's training step (Adam) with its declared, symbolic inputs.
#ifndef TORCHCOST_TESTS_TESTING_BUILT_MODELS_H_
#define TORCHCOST_TESTS_TESTING_BUILT_MODELS_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "testing/builtin_rules.h"
#include "torchcost/analysis.h"
#include "torchcost/builder.h"
#include "torchcost/rules.h"

namespace torchcost::testing {

// Analyses the training step (Adam) of `m` with its declared inputs, on the
// given SDPA backend (with each node's moved bytes and kernel class if
// `moved_bytes`); a failed analysis fails the test.
inline Report AnalyzeBuilt(const builder::BuiltModel& m, sym::Context& ctx,
                           const std::string& backend = "auto",
                           bool moved_bytes = false) {
  AnalysisOptions options;
  options.training.optimizer = OptimizerKind::kAdam;
  options.attention_backend = backend;
  options.moved_bytes = moved_bytes;
  for (const builder::InputDecl& in : m.inputs)
    options.inputs.push_back({builder::ResolveShape(m, in, ctx), in.dtype});
  Result<Report> r = Analyze(m.graph, BuiltinRules(), ctx, options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r).value();
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_BUILT_MODELS_H_
