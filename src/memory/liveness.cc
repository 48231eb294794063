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

CallEndTable CallEnds(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  CallEndTable t;
  t.offsets.assign(n + 1, 0);
  for (int ni = 0; ni < n; ++ni) {
    size_t depth = 0;
    for (int sc = g.nodes[ni].scope; sc > 0; sc = g.scopes[sc].parent) ++depth;
    t.offsets[ni + 1] = t.offsets[ni] + depth;
  }
  t.ends.resize(t.offsets[n]);
  // The enclosing modules of node ni and of node ni + 1, innermost first; reused.
  std::vector<int> chain, next;
  for (int ni = n - 1; ni >= 0; --ni) {
    chain.clear();
    for (int sc = g.nodes[ni].scope; sc > 0; sc = g.scopes[sc].parent) chain.push_back(sc);
    // The modules both nodes are in are the chains' common outer part: chain[k]
    // is next[k + shift] (same depth), and the call goes on to node ni + 1's end.
    const int d = static_cast<int>(chain.size()), shift = static_cast<int>(next.size()) - d;
    int* ends = t.ends.data() + t.offsets[ni];
    int k = d - 1;
    for (; k >= 0 && k + shift >= 0 && next[k + shift] == chain[k]; --k) ends[k] = t.Of(ni + 1)[k + shift];
    for (; k >= 0; --k) ends[k] = ni;  // The call ends here.
    std::swap(chain, next);
  }
  return t;
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
  const CallEndTable call_end = CallEnds(g);
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
      const int* ends = call_end.Of(user);
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
