// A test helper: a graph run through shape propagation and autograd, and a
// StepState over it, so that each phase of the simulation can be run alone.
#ifndef TORCHCOST_TESTS_MEMORY_PREPARED_STEP_H_
#define TORCHCOST_TESTS_MEMORY_PREPARED_STEP_H_

#include <gtest/gtest.h>

#include <optional>
#include <utility>

#include "memory/state.h"
#include "passes/autograd.h"
#include "passes/shape_prop.h"
#include "testing/graph_builder.h"
#include "testing/one_kv_head.h"
#include "testing/toy_rules.h"
#include "torchcost/analysis.h"

namespace torchcost::testing {

class PreparedStep {
 public:
  // Uses the toy rules (testing/toy_rules.h), or the built-in ones.
  explicit PreparedStep(bool builtin_rules = false) {
    if (builtin_rules) {
      Result<RuleSet> r = RuleSet::Builtin();
      EXPECT_TRUE(r.ok());
      rules_ = std::move(*r);
    } else {
      EXPECT_TRUE(rules_.AddText(kToyRules, "t.yaml").ok());
    }
  }
  // Adds rules (YAML text) beside the toy or built-in ones.
  void AddRules(const char* yaml) {
    EXPECT_TRUE(rules_.AddText(yaml, "extra.yaml").ok());
  }
  GraphBuilder& builder() { return b_; }
  sym::Context& ctx() { return ctx_; }

  // Propagates shapes from `input` (an --input spec) and runs autograd; returns
  // the state.
  memory::StepState& Prepare(const char* input, const TrainingOptions& t = {}) {
    opts_ = AnalysisOptions();
    opts_.training = t;
    opts_.inputs.push_back(*ParseInputSpec(ctx_, input));
    report_ = Report();
    shapes_ = passes::ShapeFacts();
    grads_ = passes::AutogradFacts();
    EXPECT_TRUE(passes::PropagateShapes(b_.graph(), rules_, ctx_, opts_,
                                        &shapes_, &report_)
                    .ok());
    EXPECT_TRUE(
        passes::RunAutograd(b_.graph(), shapes_, opts_.training, &grads_).ok());
    state_.reset();
    state_.emplace(b_.graph(), shapes_, grads_, opts_.training, &report_);
    return *state_;
  }
  Report& report() { return report_; }

 private:
  GraphBuilder b_;
  RuleSet rules_;
  sym::Context ctx_;
  AnalysisOptions opts_;
  Report report_;
  passes::ShapeFacts shapes_;
  passes::AutogradFacts grads_;
  std::optional<memory::StepState> state_;
};

// x [M, 8] -> l1 (W1 [4, 8]) -> act (relu) -> l2 (W2 [2, 4]) -> out [M, 2],
// with the toy rules. Storages in order: W1 (0), W2 (1), x (2), h = l1's output
// (3), relu's output (4), out (5).
inline void BuildMlp(GraphBuilder* b) {
  int x = b->Input();
  int w1 = b->Param("l1.weight", {4, 8});
  int w2 = b->Param("l2.weight", {2, 4});
  b->Scope("l1", "Linear");
  int h = b->One("t::lin", {x, w1}, {"input", "weight"});
  b->Scope("act", "ReLU");
  int r = b->One("t::relu", {h}, {"self"});
  b->Scope("l2", "Linear");
  b->Output(b->One("t::lin", {r, w2}, {"input", "weight"}));
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_MEMORY_PREPARED_STEP_H_
