// Graphs of aten::linear layers (built-in rules) that the PEFT and step tests
// rewrite and analyse.
#ifndef TORCHCOST_TESTS_TESTING_LINEAR_GRAPHS_H_
#define TORCHCOST_TESTS_TESTING_LINEAR_GRAPHS_H_

#include "testing/graph_builder.h"
#include "torchcost/graph.h"

namespace torchcost::testing {

// Returns x [M, 16] -> q_proj (Linear 16 -> 12, bias).
inline ir::Graph OneLinear() {
  GraphBuilder b;
  int x = b.Input();
  int wq = b.Param("q_proj.weight", {12, 16});
  int bq = b.Param("q_proj.bias", {12});
  b.Scope("q_proj", "Linear");
  b.Output(b.One("aten::linear", {x, wq, bq}, {"input", "weight", "bias"}));
  return b.graph();
}

// Returns x [M, 16] -> q_proj (Linear 16 -> 12, bias) -> o_proj (Linear 12 ->
// 16, bias).
inline ir::Graph TwoLinears() {
  GraphBuilder b;
  int x = b.Input();
  int wq = b.Param("q_proj.weight", {12, 16});
  int bq = b.Param("q_proj.bias", {12});
  int wo = b.Param("o_proj.weight", {16, 12});
  int bo = b.Param("o_proj.bias", {16});
  b.Scope("q_proj", "Linear");
  int h = b.One("aten::linear", {x, wq, bq}, {"input", "weight", "bias"});
  b.Scope("o_proj", "Linear");
  b.Output(b.One("aten::linear", {h, wo, bo}, {"input", "weight", "bias"}));
  return b.graph();
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_LINEAR_GRAPHS_H_
