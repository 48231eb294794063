// Graphs of the toy ops (toy_rules.h) that several tests analyse: a chain of
// t::lin layers and the two-layer MLP with a ReLU between its layers.
#ifndef TORCHCOST_TESTS_TESTING_TOY_GRAPHS_H_
#define TORCHCOST_TESTS_TESTING_TOY_GRAPHS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "testing/graph_builder.h"

namespace torchcost::testing {

// Builds x -> t::lin -> ... -> out into `b`: layer i has weight
// [dims[i+1], dims[i]] ("paths[i].weight") in module paths[i], a Linear.
inline void LinearChain(GraphBuilder& b, const std::vector<int64_t>& dims,
                        const std::vector<std::string>& paths) {
  int x = b.Input();
  std::vector<int> w;
  for (size_t i = 0; i + 1 < dims.size(); ++i)
    w.push_back(b.Param(paths[i] + ".weight", {dims[i + 1], dims[i]}));
  for (size_t i = 0; i < w.size(); ++i) {
    b.Scope(paths[i], "Linear");
    x = b.One("t::lin", {x, w[i]}, {"input", "weight"});
  }
  b.Output(x);
}

// Builds x [M, 8] -> l1 (W1 [4, 8]: 128 bytes) -> act (t::relu) -> l2 (W2 [2,
// 4]: 32 bytes) -> out [M, 2] into `b`; scopes in creation order: root, l1,
// act, l2.
inline void ToyMlp(GraphBuilder& b) {
  int x = b.Input();
  int w1 = b.Param("l1.weight", {4, 8});
  int w2 = b.Param("l2.weight", {2, 4});
  b.Scope("l1", "Linear");
  int h = b.One("t::lin", {x, w1}, {"input", "weight"});
  b.Scope("act", "ReLU");
  int r = b.One("t::relu", {h}, {"self"});
  b.Scope("l2", "Linear");
  b.Output(b.One("t::lin", {r, w2}, {"input", "weight"}));
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_TOY_GRAPHS_H_
