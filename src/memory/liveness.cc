#include "memory/liveness.h"

#include <boost/graph/compressed_sparse_row_graph.hpp>

#include <algorithm>
#include <string>
#include <utility>

namespace torchcost::memory {
namespace {

// The bipartite dataflow graph: vertices 0..V-1 are values, V..V+N-1 nodes;
// an edge value -> node is a use, node -> value a definition. NB: compressed
// (CSR): built in one pass from the edge list, two arrays rather than one
// vector per vertex (a 1M-node graph has 2M vertices).
using Dataflow = boost::compressed_sparse_row_graph<boost::directedS>;

// Returns the call end recorded for `scope` in a node's list (its chain starts at `node_scope`).
int EndOf(const ir::Graph& g, const std::vector<int>& ends, int node_scope, int scope) {
  int k = 0;
  for (int sc = node_scope; sc > 0 && sc != scope; sc = g.scopes[sc].parent) ++k;
  return ends[k];
}

// Returns true for the containers that have no forward (ModuleList, ModuleDict): walked, never called.
bool IsUncalledContainer(const std::string& type) {
  return type == "ModuleList" || type == "ModuleDict" || type == "ParameterList" || type == "ParameterDict";
}

}  // namespace

bool InSubtree(const ir::Graph& g, int scope, int root) {
  for (int s = scope; s >= 0; s = g.scopes[s].parent) {
    if (s == root) return true;
  }
  return false;
}

std::vector<std::vector<int>> CallEnds(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<std::vector<int>> ends(n);
  std::vector<int> chain;
  for (int ni = n - 1; ni >= 0; --ni) {
    chain.clear();
    for (int sc = g.nodes[ni].scope; sc > 0; sc = g.scopes[sc].parent) chain.push_back(sc);
    ends[ni].resize(chain.size());
    for (size_t k = 0; k < chain.size(); ++k) {
      const bool next_in = ni + 1 < n && InSubtree(g, g.nodes[ni + 1].scope, chain[k]);
      ends[ni][k] = next_in ? EndOf(g, ends[ni + 1], g.nodes[ni + 1].scope, chain[k]) : ni;
    }
  }
  return ends;
}

std::vector<ir::SmallInts> ComputeLastUses(const ir::Graph& g, StorageTable* table) {
  const size_t nv = g.values.size();
  std::vector<std::pair<size_t, size_t>> edges;
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    for (int in : g.nodes[ni].inputs) edges.emplace_back(in, nv + ni);
    for (int out : g.nodes[ni].outputs) edges.emplace_back(nv + ni, out);
  }
  const Dataflow df(boost::edges_are_unsorted_multi_pass, edges.begin(), edges.end(), nv + g.nodes.size());
  edges = {};
  const std::vector<std::vector<int>> call_end = CallEnds(g);
  std::vector<int> ss;
  for (size_t v = 0; v < nv; ++v) {
    ss.clear();
    table->Of(static_cast<int>(v), &ss);
    if (ss.empty()) continue;
    const int producer = g.values[v].producer;
    const int home = producer >= 0 ? g.nodes[producer].scope : 0;
    int last = -1;
    for (auto [e, end] = boost::out_edges(v, df); e != end; ++e) {
      const int user = static_cast<int>(boost::target(*e, df) - nv);
      last = std::max(last, user);
      const auto& ends = call_end[user];
      int depth = 0;
      for (int sc = g.nodes[user].scope; sc > 0; sc = g.scopes[sc].parent, ++depth) {
        if (producer >= 0 && InSubtree(g, home, sc)) break;
        if (IsUncalledContainer(g.scopes[sc].type)) continue;
        last = std::max(last, ends[depth]);
      }
    }
    for (int s : ss) (*table)[s].last_use = std::max((*table)[s].last_use, last);
  }
  std::vector<ir::SmallInts> release_at(g.nodes.size());
  for (int s = 0; s < table->size(); ++s) {
    const int last = (*table)[s].last_use;
    if (last >= 0 && last < static_cast<int>(g.nodes.size())) release_at[last].push_back(s);
  }
  return release_at;
}

}  // namespace torchcost::memory
