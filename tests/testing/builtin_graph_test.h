// A gtest fixture for analyses of graphs built on the built-in rules: a graph
// builder, the built-in rules (loaded once per binary) and a symbol context,
// and the analysis of the built graph with one input spec.
#ifndef TORCHCOST_TESTS_TESTING_BUILTIN_GRAPH_TEST_H_
#define TORCHCOST_TESTS_TESTING_BUILTIN_GRAPH_TEST_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "testing/analyze_graph.h"
#include "testing/builtin_rules.h"
#include "testing/graph_builder.h"
#include "torchcost/analysis.h"
#include "torchcost/rules.h"

namespace torchcost::testing {

class BuiltinGraphTest : public ::testing::Test {
 protected:
  // Analyses the built graph under `opts` with `input` ("5,8") added; a failed
  // analysis fails the test.
  Report AnalyzeBuiltGraph(AnalysisOptions opts, const std::string& input) {
    return AnalyzeGraph(b_.graph(), rules_, ctx_, std::move(opts), input);
  }

  GraphBuilder b_;
  const RuleSet& rules_ = BuiltinRules();
  sym::Context ctx_;
};

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_BUILTIN_GRAPH_TEST_H_
