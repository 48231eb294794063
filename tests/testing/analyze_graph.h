// Analysing a test's hand-built graph with one input spec: the call most
// analysis tests repeat, with a failed analysis failing the test.
#ifndef TORCHCOST_TESTS_TESTING_ANALYZE_GRAPH_H_
#define TORCHCOST_TESTS_TESTING_ANALYZE_GRAPH_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "torchcost/analysis.h"
#include "torchcost/rules.h"

namespace torchcost::testing {

// Analyses `g` under `rules` and `opts`, with `input` ("5,8", "1,64:bf16")
// appended to opts.inputs; returns the result, failed or not.
inline Result<Report> TryAnalyzeGraph(const ir::Graph& g, const RuleSet& rules,
                                      sym::Context& ctx, AnalysisOptions opts,
                                      const std::string& input) {
  opts.inputs.push_back(*ParseInputSpec(ctx, input));
  return Analyze(g, rules, ctx, opts);
}

// As TryAnalyzeGraph; a failed analysis fails the test and gives an empty
// Report.
inline Report AnalyzeGraph(const ir::Graph& g, const RuleSet& rules,
                           sym::Context& ctx, AnalysisOptions opts,
                           const std::string& input) {
  Result<Report> r = TryAnalyzeGraph(g, rules, ctx, std::move(opts), input);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : Report();
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_ANALYZE_GRAPH_H_
