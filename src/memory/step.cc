#include "memory/step.h"

#include <algorithm>
#include <vector>

#include "memory/backward.h"
#include "memory/checkpoint_replay.h"
#include "memory/liveness.h"
#include "memory/op_names.h"
#include "memory/optimizer_replay.h"
#include "memory/saved.h"
#include "memory/state.h"
#include "memory/storages.h"

namespace torchcost::memory {
namespace {

// What exists before the step: parameters, buffers, inputs and, in steady
// state, the optimizer's states.
void Setup(StepState* st) {
  for (int s : st->storages.setup) st->Alloc(s);
  if (st->options.mode == StepMode::kTrain) {
    if (st->timeline.recording()) {
      // The allocator model sees each state tensor on its own; they stay to
      // the step's end, so the list is never freed.
      std::vector<int64_t> pieces;
      OptimizerStateBytes(st, &pieces);
      st->timeline.AddList(MemCategory::kOpt, pieces);
    } else {
      st->timeline.Add(MemCategory::kOpt, sym::Expr(OptimizerStateBytes(st)));
    }
  }
  st->Point(StepPhase::kSetup, -1);
}

// The parameters' gradients, when they exist before the forward
// (StepState::GradsPresent).
void PreallocateGrads(StepState* st) {
  for (size_t i = 0; i < st->g.params.size(); ++i) {
    if (!st->grads.param_trainable[i]) continue;
    const auto& p = st->g.params[i];
    int s =
        st->storages.Add(sym::Expr(ir::Numel(p.shape) * ElementSize(p.dtype)),
                         MemCategory::kGrad);
    st->storages[s].pinned = true;
    st->Alloc(s);
  }
  st->Point(StepPhase::kSetup, -1);
}

// The forward in graph order: each node's outputs, temporaries and workspace
// are allocated (a point), then what it was the last to need is released (a
// point).
void Forward(StepState* st) {
  const StorageTable& table = st->storages;
  for (size_t ni = 0; ni < st->g.nodes.size(); ++ni) {
    const int n = static_cast<int>(ni);
    const sym::Expr* workspace = st->Workspace(ni, /*backward=*/false);
    if (table.node_new[ni].empty() && table.node_temps[ni].empty() &&
        !workspace && st->release_at[ni].empty())
      continue;
    for (int s : table.node_new[ni]) st->Alloc(s);
    for (int s : table.node_temps[ni]) st->Alloc(s);
    const int ws =
        workspace ? st->storages.Add(*workspace, MemCategory::kTemp) : -1;
    if (ws >= 0) st->Alloc(ws);
    st->Point(StepPhase::kForward, n);
    if (ws >= 0) st->Free(ws);
    for (int s : table.node_temps[ni]) st->Release(s, n);
    for (int s : table.node_new[ni]) st->Release(s, n);
    for (int s : st->release_at[ni]) st->Release(s, n);
    st->Point(StepPhase::kForward, n);
  }
}

// Generation: the KV cache's storages count as BUFFER; the cache handed in
// is released after its last use (DynamicCache replaces its tensors).
void MarkCache(StepState* st) {
  const TrainingOptions& o = st->options;
  std::vector<int> ss, ss_all;
  auto mark = [&](const std::vector<int>& values, int from, bool release) {
    for (size_t i = from < 0 ? values.size() : static_cast<size_t>(from);
         i < values.size(); ++i) {
      ss.clear();
      st->storages.Of(values[i], &ss);
      ss_all.insert(ss_all.end(), ss.begin(), ss.end());
      for (int s : ss) {
        st->storages[s].category = MemCategory::kBuffer;
        if (release) st->storages[s].pinned = false;
      }
    }
  };
  mark(st->g.inputs, o.cache_inputs_from, /*release=*/true);
  st->report->training.cache_input_storages = ss_all;
  ss_all.clear();
  mark(st->g.outputs, o.cache_outputs_from, /*release=*/false);
  st->report->training.cache_output_storages = ss_all;
}

// NB: a value from outside a module is held until the module's call returns
// (its caller's frame has it; ComputeLastUses); the cache's old tensors are
// held by the cache alone, which replaces them at their last use (the cat).
void ReleaseCacheAtLastUse(StepState* st) {
  const int from = st->options.cache_inputs_from;
  if (from < 0) return;
  const ir::Graph& g = st->g;
  std::vector<int> last(g.values.size(), -1);
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    for (int in : g.nodes[ni].inputs) last[in] = static_cast<int>(ni);
  }
  // NB: torch.cat([past, new]) reads the past through its list: the past lives
  // until the list's last user (the cat, whose output it is copied into), not
  // until the list is built. Reverse order carries the use through nested
  // lists.
  for (size_t ni = g.nodes.size(); ni-- > 0;) {
    const ir::Node& n = g.nodes[ni];
    if ((n.op != op::kListConstruct && n.op != op::kTupleConstruct) ||
        n.outputs.empty())
      continue;
    for (int in : n.inputs) last[in] = std::max(last[in], last[n.outputs[0]]);
  }
  std::vector<int> ss, left;  // The nodes that release fewer storages.
  for (size_t i = from; i < g.inputs.size(); ++i) {
    ss.clear();
    st->storages.Of(g.inputs[i], &ss);
    const int user = last[g.inputs[i]];
    for (int s : ss) {
      Storage& storage = st->storages[s];
      if (user < 0 || storage.last_use < 0 || storage.last_use == user)
        continue;
      left.push_back(storage.last_use);
      storage.last_use = user;
      st->release_at[user].push_back(s);
    }
  }
  // NB: a node's list keeps the storages whose last use it still is, in
  // order, each list filtered once (the cache's storages often share one
  // last use: removing them one by one was quadratic).
  std::sort(left.begin(), left.end());
  left.erase(std::unique(left.begin(), left.end()), left.end());
  std::vector<int> kept;
  for (int n : left) {
    ir::SmallInts& list = st->release_at[n];
    kept.clear();
    for (int s : list) {
      if (st->storages[s].last_use == n) kept.push_back(s);
    }
    list.clear();
    for (int s : kept) list.push_back(s);
  }
}

}  // namespace

void SimulateStep(const ir::Graph& graph, const passes::ShapeFacts& shapes,
                  const passes::AutogradFacts& grads,
                  const TrainingOptions& options, Report* report) {
  StepState st(graph, shapes, grads, options, report);
  report->training.cuda_allocator = options.cuda_allocator;
  report->training.allocations.clear();
  if (options.cuda_allocator)
    st.timeline.RecordAllocations(&report->training.allocations);
  // NB: at most two points per node in the forward and two in the backward,
  // two more per recomputed node, a few per parameter in the optimizer: the
  // timeline is reserved once rather than grown by doubling (a 1M-node step
  // has 3M points; pages reserved and never written take no memory).
  size_t recomputed = 0;
  for (const CheckpointSegment& seg : report->training.checkpoint_segments)
    recomputed += seg.last - seg.first + 1;
  report->training.timeline.reserve(4 * graph.nodes.size() + 2 * recomputed +
                                    8 * graph.params.size() + 64);
  AssignStorages(graph, shapes, &st.storages);
  MarkCache(&st);
  FindBackwardNodes(&st);
  PlanCheckpoints(&st);
  MarkSaved(&st);
  st.release_at = ComputeLastUses(graph, &st.storages);
  ReleaseCacheAtLastUse(&st);
  Setup(&st);
  if (st.GradsPresent()) PreallocateGrads(&st);
  Forward(&st);
  if (report->training.checkpoint_segments.empty()) {
    // NB: without recomputation only the forward reads these per-node lists;
    // freed here, they are not part of the peak, which the backward's
    // timeline reaches (64 MB for a 1M-node chain).
    std::vector<ir::SmallInts>().swap(st.release_at);
    std::vector<ir::SmallInts>().swap(st.forward_saved);
    std::vector<ir::SmallInts>().swap(st.storages.node_new);
    std::vector<ir::SmallInts>().swap(st.storages.node_temps);
  }
  if (options.mode == StepMode::kTrain) {
    RunBackward(&st);
    RunOptimizer(&st);
  }
}

}  // namespace torchcost::memory
