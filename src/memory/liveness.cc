#include "memory/liveness.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "memory/scope_intervals.h"
#include "memory/use_graph.h"

namespace torchcost::memory {
namespace {

// Returns true for the containers that have no forward (ModuleList,
// ModuleDict): walked, never called.
// NB: a string view, compared by length first (not std::string::compare).
bool IsUncalledContainer(std::string_view type) {
  return type == "ModuleList" || type == "ModuleDict" ||
         type == "ParameterList" || type == "ParameterDict";
}

}  // namespace

CallEndTable CallEnds(const ir::Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  CallEndTable t;
  t.offsets.assign(n + 1, 0);
  // NB: runs of nodes in one module are common; the depth is walked once per
  // run.
  size_t depth = 0;
  for (int ni = 0; ni < n; ++ni) {
    if (ni == 0 || g.nodes[ni].scope != g.nodes[ni - 1].scope) {
      depth = 0;
      for (int sc = g.nodes[ni].scope; sc > 0; sc = g.scopes[sc].parent)
        ++depth;
    }
    t.offsets[ni + 1] = t.offsets[ni] + depth;
  }
  t.ends.resize(t.offsets[n]);
  // The enclosing modules of node ni and of node ni + 1, innermost first;
  // reused.
  std::vector<int> chain, next;
  for (int ni = n - 1; ni >= 0; --ni) {
    if (ni + 1 < n && g.nodes[ni].scope == g.nodes[ni + 1].scope) {
      // The same modules as node ni + 1: every call goes on to its ends (and
      // `next` stays its chain).
      std::copy(t.Of(ni + 1), t.Of(ni + 1) + t.Depth(ni),
                t.ends.data() + t.offsets[ni]);
      continue;
    }
    chain.clear();
    for (int sc = g.nodes[ni].scope; sc > 0; sc = g.scopes[sc].parent)
      chain.push_back(sc);
    // The modules both nodes are in are the chains' common outer part: chain[k]
    // is next[k + shift] (same depth), and the call goes on to node ni + 1's
    // end.
    const int d = static_cast<int>(chain.size()),
              shift = static_cast<int>(next.size()) - d;
    int* ends = t.ends.data() + t.offsets[ni];
    int k = d - 1;
    for (; k >= 0 && k + shift >= 0 && next[k + shift] == chain[k]; --k)
      ends[k] = t.Of(ni + 1)[k + shift];
    for (; k >= 0; --k) ends[k] = ni;  // The call ends here.
    std::swap(chain, next);
  }
  return t;
}

std::vector<ir::SmallInts> ComputeLastUses(const ir::Graph& g,
                                           StorageTable* table) {
  const size_t nv = g.values.size();
  // Each use of a value by a node, a value's last use the largest over them,
  // walked over UseGraph's out-edges (Boost.Graph's functions, found by
  // argument-dependent lookup): the input lists in place, no edge copy.
  const UseGraph uses{&g};
  std::vector<int> last(nv, -1);
  const CallEndTable call_end = CallEnds(g);
  const ScopeIntervals tree(g);
  std::vector<char> uncalled(g.scopes.size());
  for (size_t s = 0; s < g.scopes.size(); ++s)
    uncalled[s] = IsUncalledContainer(g.scopes[s].type);
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    const int user = static_cast<int>(ni);
    const int* ends = call_end.Of(user);
    for (auto [e, e_end] = out_edges(uses.NodeVertex(ni), uses); e != e_end;
         ++e) {
      const int v = static_cast<int>(target(*e, uses));
      // No storage.
      if (table->storage_of[v] < 0 && table->list_storages[v].empty()) continue;
      const int producer = g.values[v].producer;
      const int home = producer >= 0 ? g.nodes[producer].scope : 0;
      int end = user;
      int depth = 0;
      for (int sc = g.nodes[ni].scope; sc > 0;
           sc = g.scopes[sc].parent, ++depth) {
        if (producer >= 0 && tree.InSubtree(home, sc)) break;
        if (uncalled[sc]) continue;
        end = std::max(end, ends[depth]);
      }
      last[v] = std::max(last[v], end);
    }
  }
  // Each value's storages (StorageTable::Of) read up to its last use.
  // NB: a value no node reads is skipped: its -1 would leave every last use
  // (-1 or a node) as it is.
  auto read_until = [table](int s, int end) {
    int& last_use = (*table)[s].last_use;
    last_use = std::max(last_use, end);
  };
  for (size_t v = 0; v < nv; ++v) {
    const int end = last[v];
    if (end < 0) continue;
    if (table->storage_of[v] >= 0) read_until(table->storage_of[v], end);
    for (int s : table->list_storages[v]) read_until(s, end);
  }
  std::vector<ir::SmallInts> release_at(g.nodes.size());
  for (int s = 0; s < table->size(); ++s) {
    const int last = (*table)[s].last_use;
    if (last >= 0 && last < static_cast<int>(g.nodes.size()))
      release_at[last].push_back(s);
  }
  return release_at;
}

}  // namespace torchcost::memory
