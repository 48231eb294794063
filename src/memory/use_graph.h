// The uses of an ir::Graph as a Boost.Graph, read in place: vertices are the
// graph's values then its nodes, and a node's out-edges are the values it
// reads.
#ifndef TORCHCOST_SRC_MEMORY_USE_GRAPH_H_
#define TORCHCOST_SRC_MEMORY_USE_GRAPH_H_

#include <boost/graph/graph_traits.hpp>
#include <boost/iterator/counting_iterator.hpp>
#include <cstddef>
#include <iterator>
#include <utility>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::memory {

// A view of `graph` that models Boost.Graph's IncidenceGraph and
// VertexListGraph. Vertex v < values.size() is value v; vertex values.size() +
// n is node n. NB: the edges run against the data, from a node to each value it
// reads (one edge per input, repeats kept), so that a node's out-edges are its
// input list as the graph stores it: no edge list or CSR copy (a 1M-node graph
// has 2M vertices and 1M uses). A value has no out-edges.
struct UseGraph {
  const ir::Graph* graph;

  // Returns node n's vertex.
  size_t NodeVertex(size_t n) const { return graph->values.size() + n; }
  // Returns true if vertex v is a node.
  bool IsNode(size_t v) const { return v >= graph->values.size(); }
};

// One use: node `source` (a vertex) reads value `value` as one of its inputs.
struct Use {
  size_t source = 0;
  int value = 0;
  friend bool operator==(const Use& a, const Use& b) {
    return a.source == b.source && a.value == b.value;
  }
  friend bool operator!=(const Use& a, const Use& b) { return !(a == b); }
};

// Iterates a node's uses over its input list.
class UseIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = Use;
  using difference_type = std::ptrdiff_t;
  using pointer = const Use*;
  using reference = Use;

  UseIterator() = default;
  UseIterator(size_t source, const int* input)
      : source_(source), input_(input) {}
  Use operator*() const { return Use{source_, *input_}; }
  UseIterator& operator++() {
    ++input_;
    return *this;
  }
  UseIterator operator++(int) {
    UseIterator before = *this;
    ++input_;
    return before;
  }
  friend bool operator==(const UseIterator& a, const UseIterator& b) {
    return a.input_ == b.input_;
  }
  friend bool operator!=(const UseIterator& a, const UseIterator& b) {
    return a.input_ != b.input_;
  }

 private:
  size_t source_ = 0;
  const int* input_ = nullptr;
};

// Boost.Graph's free functions for UseGraph, found by argument-dependent
// lookup.
inline std::pair<boost::counting_iterator<size_t>,
                 boost::counting_iterator<size_t>>
vertices(const UseGraph& g) {
  return {boost::counting_iterator<size_t>(0),
          boost::counting_iterator<size_t>(g.graph->values.size() +
                                           g.graph->nodes.size())};
}
inline size_t num_vertices(const UseGraph& g) {
  return g.graph->values.size() + g.graph->nodes.size();
}
inline std::pair<UseIterator, UseIterator> out_edges(size_t v,
                                                     const UseGraph& g) {
  if (!g.IsNode(v)) return {UseIterator(v, nullptr), UseIterator(v, nullptr)};
  const ir::ValueIds& in = g.graph->nodes[v - g.graph->values.size()].inputs;
  return {UseIterator(v, in.data()), UseIterator(v, in.data() + in.size())};
}
inline size_t out_degree(size_t v, const UseGraph& g) {
  return g.IsNode(v) ? g.graph->nodes[v - g.graph->values.size()].inputs.size()
                     : 0;
}
inline size_t source(const Use& e, const UseGraph&) { return e.source; }
inline size_t target(const Use& e, const UseGraph&) {
  return static_cast<size_t>(e.value);
}

}  // namespace torchcost::memory

namespace boost {

template <>
struct graph_traits<torchcost::memory::UseGraph> {
  struct traversal_category : incidence_graph_tag, vertex_list_graph_tag {};
  using vertex_descriptor = size_t;
  using edge_descriptor = torchcost::memory::Use;
  using directed_category = directed_tag;
  using edge_parallel_category = allow_parallel_edge_tag;
  using out_edge_iterator = torchcost::memory::UseIterator;
  using degree_size_type = size_t;
  using vertex_iterator = counting_iterator<size_t>;
  using vertices_size_type = size_t;
  static vertex_descriptor null_vertex() { return static_cast<size_t>(-1); }
};

}  // namespace boost

#endif  // TORCHCOST_SRC_MEMORY_USE_GRAPH_H_
