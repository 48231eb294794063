#include "memory/saved.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "memory/checkpoint_replay.h"
#include "memory/grouped_sums.h"

namespace torchcost::memory {

void MarkSaved(StepState* state) {
  StepState& st = *state;
  StorageTable& storages = st.storages;
  // NB: cleared, then default-constructed (no copy of an empty list per slot).
  st.saved_storages.clear();
  st.saved_storages.resize(st.g.nodes.size());
  st.tr.saved.clear();
  // NB: reserved once: a 1M-node step saves about 1M tensors.
  st.tr.saved.reserve(st.grads.saved.size());
  // Storages counted in saved_bytes.
  std::vector<bool> unique(storages.size(), false);
  st.forward_saved.clear();
  st.forward_saved.resize(st.g.nodes.size());
  for (size_t ni = 0; ni < st.g.nodes.size(); ++ni) {
    if (st.ckpt.starting_at[ni] >= 0)
      SaveCheckpointInputs(st.ckpt.starting_at[ni], &unique, state);
    const auto& na = st.grads.nodes[ni];
    if (!na.has_grad_fn) continue;
    // A node whose backward never runs dies with the dropped outputs after the
    // forward.
    if (st.options.mode == StepMode::kTrain && !st.runs_backward[ni]) continue;
    // What it saves is unknown.
    if (na.unknown_backward) st.tr.act_lower_bound = true;
    auto& mine = st.saved_storages[ni];
    const rules::Variant* v = st.shapes.nodes[ni].applied->variant;
    for (const auto& ref : st.grads.Saved(ni)) {
      int s = ref.value >= 0 ? storages.storage_of[ref.value]
                             : storages.node_temps[ni][ref.temporary];
      // bmm saves a batched matmul's copy of the argument where it makes one.
      if (ref.value >= 0 && !storages.fold_copies.empty()) {
        const int copy = storages.FoldCopyOf(static_cast<int>(ni), ref.value);
        if (copy >= 0) s = copy;
      }
      // NB: a saved tensor without a storage of its own is a traced constant
      // or traced size arithmetic: in eager, a Python number that PyTorch wraps
      // into a fresh 0-dim tensor at every call, which autograd saves (vit's
      // `q / 8.0`: DivBackward0._saved_other, 8 bytes of float64; measured).
      // One new storage per saving node, allocated when the node runs. NB: on
      // CUDA that tensor is the host's (a wrapped number stays on the CPU):
      // no device memory (an H200, torch 2.11: one 8-byte float64 per
      // attention layer not among saved_tensors_hooks' device storages).
      if (s < 0 && ref.value >= 0 && st.shapes.device == "cpu" &&
          st.shapes.values[ref.value].kind == rules::RValue::Kind::kTensor) {
        s = storages.Add(st.bytes.Of(st.shapes.values[ref.value].t),
                         MemCategory::kTemp);
        storages.node_temps[ni].push_back(s);
      }
      if (s < 0 || std::find(mine.begin(), mine.end(), s) != mine.end())
        continue;
      if (s >= static_cast<int>(unique.size())) unique.resize(s + 1, false);
      mine.push_back(s);
      // NB: a checkpointed node runs under no_grad: it saves only when
      // recomputed (ReplaySegment).
      if (st.ckpt.of[ni] >= 0) continue;
      st.forward_saved[ni].push_back(s);
      Storage& storage = storages[s];
      ++storage.saved_by;
      if (storage.category == MemCategory::kTemp)
        storage.category = MemCategory::kAct;
      SavedTensorInfo info;
      info.node = static_cast<int>(ni);
      info.what = v && ref.slot >= 0 ? v->slot_names[ref.slot] : "?";
      info.bytes = storage.bytes;
      info.storage = s;
      info.counted = storage.category != MemCategory::kParam &&
                     storage.category != MemCategory::kBuffer && !unique[s];
      if (info.counted) unique[s] = true;
      st.tr.saved.push_back(std::move(info));
    }
  }
  GroupedSums saved;
  for (size_t s = 0; s < unique.size(); ++s) {
    if (unique[s]) saved.Add(0, storages[static_cast<int>(s)].bytes);
  }
  std::vector<sym::Expr> saved_bytes(1, sym::Expr(0));
  saved.AddTo(&saved_bytes);
  st.tr.saved_bytes = saved_bytes[0];
  AttributeActivations(state);
}

void AttributeActivations(StepState* state) {
  StepState& st = *state;
  st.tr.module_act_bytes.assign(st.g.scopes.size(), sym::Expr(0));
  // Each (module, storage) pair is counted once. NB: linear, with no set of
  // pairs (1M saved tensors): the nodes saving each storage are grouped by a
  // counting sort, and a module is marked with the storage last credited to
  // it; a walk up the modules stops at a marked one, whose enclosing modules
  // are marked too. Sums of expressions are canonical, so the order of the
  // additions does not change them: each module's distinct sizes are added
  // once, times their count (GroupedSums).
  auto counted = [&](int s) {
    const MemCategory c = st.storages[s].category;
    return c != MemCategory::kParam && c != MemCategory::kBuffer;
  };
  // Storage s's nodes: [start[s], start[s + 1]).
  std::vector<int> start(st.storages.size() + 1, 0);
  for (size_t ni = 0; ni < st.g.nodes.size(); ++ni) {
    for (int s : st.forward_saved[ni]) {
      if (counted(s)) ++start[s + 1];
    }
  }
  for (size_t s = 0; s + 1 < start.size(); ++s) start[s + 1] += start[s];
  std::vector<int> saving(start.back());
  std::vector<int> next(start.begin(), start.end() - 1);
  for (size_t ni = 0; ni < st.g.nodes.size(); ++ni) {
    for (int s : st.forward_saved[ni]) {
      if (counted(s)) saving[next[s]++] = static_cast<int>(ni);
    }
  }
  std::vector<int> mark(st.g.scopes.size(), -1);
  GroupedSums acts;
  for (int s = 0; s + 1 < static_cast<int>(start.size()); ++s) {
    for (int k = start[s]; k < start[s + 1]; ++k) {
      for (int sc = st.g.nodes[saving[k]].scope; sc >= 0 && mark[sc] != s;
           sc = st.g.scopes[sc].parent) {
        mark[sc] = s;
        acts.Add(sc, st.storages[s].bytes);
      }
    }
  }
  acts.AddTo(&st.tr.module_act_bytes);
}

}  // namespace torchcost::memory
