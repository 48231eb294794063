// A gtest fixture for analyses of graphs built on the toy rules: a graph
// builder, the rules (toy_rules.h) and a symbol context, and the analysis of
// the built graph with one input spec.
#ifndef TORCHCOST_TESTS_TESTING_TOY_GRAPH_TEST_H_
#define TORCHCOST_TESTS_TESTING_TOY_GRAPH_TEST_H_

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "testing/analyze_graph.h"
#include "testing/graph_builder.h"
#include "testing/toy_rules.h"
#include "torchcost/analysis.h"
#include "torchcost/rules.h"

namespace torchcost::testing {

class ToyGraphTest : public ::testing::Test {
 protected:
  // Loads the toy rules; a subclass that builds its graph here calls this
  // first.
  void SetUp() override {
    ASSERT_TRUE(rules_.AddText(kToyRules, "t.yaml").ok());
  }

  // Analyses the built graph under `opts` with `input` ("5,8") added; a failed
  // analysis fails the test.
  Report AnalyzeBuiltGraph(AnalysisOptions opts, const std::string& input) {
    return AnalyzeGraph(b_.graph(), rules_, ctx_, std::move(opts), input);
  }
  // As AnalyzeBuiltGraph, returning a failure rather than failing the test.
  Result<Report> TryAnalyzeBuiltGraph(AnalysisOptions opts,
                                      const std::string& input) {
    return TryAnalyzeGraph(b_.graph(), rules_, ctx_, std::move(opts), input);
  }

  GraphBuilder b_;
  RuleSet rules_;
  sym::Context ctx_;
};

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TOY_GRAPH_TEST_H_
