// Tests of UseGraph: an ir::Graph's uses seen through Boost.Graph's concepts
// and free functions, vertex for vertex and edge for edge.
#include "memory/use_graph.h"

#include <gtest/gtest.h>

#include <boost/graph/graph_concepts.hpp>
#include <utility>
#include <vector>

#include "testing/graph_builder.h"

namespace torchcost::memory {
namespace {

BOOST_CONCEPT_ASSERT((boost::IncidenceGraphConcept<UseGraph>));
BOOST_CONCEPT_ASSERT((boost::VertexListGraphConcept<UseGraph>));

// Lists vertex v's out-edges as (source, target) pairs through Boost's
// interface.
std::vector<std::pair<size_t, size_t>> OutEdges(size_t v, const UseGraph& g) {
  std::vector<std::pair<size_t, size_t>> out;
  for (auto [e, end] = out_edges(v, g); e != end; ++e)
    out.emplace_back(source(*e, g), target(*e, g));
  return out;
}

TEST(UseGraphTest, NodesReadTheirInputsInOrderValuesReadNothing) {
  testing::GraphBuilder b;
  const int x = b.Input();
  const int w = b.Param("w", {4, 4});
  const int h = b.One("t::mm", {x, w}, {"self", "mat2"});
  // Reads h twice: two parallel edges.
  b.Output(b.One("t::add", {h, h}, {"self", "other"}));
  const ir::Graph& g = b.graph();
  const UseGraph uses{&g};
  const size_t nv = g.values.size();
  ASSERT_EQ(g.nodes.size(), 2u);

  EXPECT_EQ(num_vertices(uses), nv + 2);
  size_t counted = 0;
  for (auto [v, end] = vertices(uses); v != end; ++v) ++counted;
  EXPECT_EQ(counted, nv + 2);

  const size_t mm = uses.NodeVertex(0), add = uses.NodeVertex(1);
  EXPECT_EQ(mm, nv);
  EXPECT_TRUE(uses.IsNode(add));
  EXPECT_FALSE(uses.IsNode(static_cast<size_t>(h)));
  using Edges = std::vector<std::pair<size_t, size_t>>;
  EXPECT_EQ(OutEdges(mm, uses), (Edges{{mm, static_cast<size_t>(x)},
                                       {mm, static_cast<size_t>(w)}}));
  EXPECT_EQ(OutEdges(add, uses), (Edges{{add, static_cast<size_t>(h)},
                                        {add, static_cast<size_t>(h)}}));
  EXPECT_EQ(out_degree(add, uses), 2u);
  for (size_t v = 0; v < nv; ++v) {
    EXPECT_TRUE(OutEdges(v, uses).empty()) << "value " << v;
    EXPECT_EQ(out_degree(v, uses), 0u);
  }
}

}  // namespace
}  // namespace torchcost::memory
