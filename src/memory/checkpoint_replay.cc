#include "memory/checkpoint_replay.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace torchcost::memory {

void PlanCheckpoints(StepState* state) {
  StepState& st = *state;
  CheckpointState& ck = st.ckpt;
  const int n = static_cast<int>(st.g.nodes.size());
  ck.of.assign(n, -1);
  ck.starting_at.assign(n, -1);
  ck.ending_at.assign(n, -1);
  ck.inputs.assign(st.tr.checkpoint_segments.size(), {});
  st.tr.flops_recompute = sym::Expr(0);
  for (size_t i = 0; i < st.tr.checkpoint_segments.size(); ++i) {
    CheckpointSegment& seg = st.tr.checkpoint_segments[i];
    seg.recomputed = false;
    for (int ni = seg.first; ni <= seg.last; ++ni)
      seg.recomputed = seg.recomputed || st.runs_backward[ni];
    if (!seg.recomputed) continue;
    ck.starting_at[seg.first] = static_cast<int>(i);
    ck.ending_at[seg.last] = static_cast<int>(i);
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      ck.of[ni] = static_cast<int>(i);
      st.tr.flops_recompute += st.report->nodes[ni].flops;
    }
  }
}

void SaveCheckpointInputs(int i, std::vector<bool>* unique, StepState* state) {
  StepState& st = *state;
  const CheckpointSegment& seg = st.tr.checkpoint_segments[i];
  std::set<int> inside;
  for (int ni = seg.first; ni <= seg.last; ++ni) {
    inside.insert(st.storages.node_new[ni].begin(),
                  st.storages.node_new[ni].end());
    inside.insert(st.storages.node_temps[ni].begin(),
                  st.storages.node_temps[ni].end());
  }
  std::vector<int> ss;
  for (int ni = seg.first; ni <= seg.last; ++ni) {
    for (int v : st.g.nodes[ni].inputs) {
      ss.clear();
      st.storages.Of(v, &ss);
      for (int s : ss) {
        Storage& storage = st.storages[s];
        if (inside.count(s) || storage.category == MemCategory::kParam ||
            storage.category == MemCategory::kBuffer)
          continue;
        auto& inputs = st.ckpt.inputs[i];
        if (std::find(inputs.begin(), inputs.end(), s) != inputs.end())
          continue;
        inputs.push_back(s);
        ++storage.saved_by;
        if (storage.category == MemCategory::kTemp)
          storage.category = MemCategory::kAct;
        st.forward_saved[ni].push_back(s);
        SavedTensorInfo info;
        info.node = ni;
        info.what = "checkpoint input";
        info.bytes = storage.bytes;
        info.storage = s;
        if (s >= static_cast<int>(unique->size())) unique->resize(s + 1, false);
        info.counted = !(*unique)[s];
        (*unique)[s] = true;
        st.tr.saved.push_back(std::move(info));
      }
    }
  }
}

void ReplaySegment(int i, StepState* state) {
  StepState& st = *state;
  StorageTable& storages = st.storages;
  const CheckpointSegment& seg = st.tr.checkpoint_segments[i];
  std::map<int, int> replay;  // Forward storage -> its recomputed copy.
  st.ckpt.held.clear();
  for (int ni = seg.first; ni <= seg.last; ++ni) {
    for (const auto* list :
         {&storages.node_new[ni], &storages.node_temps[ni]}) {
      for (int s : *list) {
        if (replay.count(s)) continue;
        const int last = storages[s].last_use;
        const bool escapes = storages[s].pinned || last > seg.last;
        const int r = storages.Add(storages[s].bytes, MemCategory::kTemp);
        storages[r].last_use = escapes ? -1 : last;
        storages[r].pinned = escapes;
        if (escapes) st.ckpt.held.push_back(r);
        replay[s] = r;
      }
    }
  }
  auto copy_of = [&](int s) {
    auto it = replay.find(s);
    return it == replay.end() ? s : it->second;
  };
  for (int ni = seg.first; ni <= seg.last; ++ni) {
    if (!st.runs_backward[ni]) continue;
    for (int& s : st.saved_storages[ni]) {
      s = copy_of(s);
      ++storages[s].saved_by;
    }
  }
  st.ckpt.held_grads.clear();
  for (int ni = seg.first; ni <= seg.last; ++ni) {
    for (int o : st.g.nodes[ni].outputs) {
      if (st.bwd.grad_of[o] < 0) continue;
      ++storages[st.bwd.grad_of[o]].grad_refs;
      st.ckpt.held_grads.push_back(st.bwd.grad_of[o]);
    }
  }
  for (int ni = seg.first; ni <= seg.last; ++ni) {
    const sym::Expr* workspace = st.Workspace(ni, /*backward=*/false);
    if (storages.node_new[ni].empty() && storages.node_temps[ni].empty() &&
        !workspace && st.release_at[ni].empty())
      continue;
    for (int s : storages.node_new[ni]) st.Alloc(copy_of(s));
    for (int s : storages.node_temps[ni]) st.Alloc(copy_of(s));
    const int ws =
        workspace ? storages.Add(*workspace, MemCategory::kTemp) : -1;
    if (ws >= 0) st.Alloc(ws);
    st.Point(StepPhase::kBackward, ni);
    if (ws >= 0) st.Free(ws);
    for (int s : storages.node_temps[ni]) st.Release(copy_of(s), ni);
    for (int s : storages.node_new[ni]) st.Release(copy_of(s), ni);
    for (int s : st.release_at[ni]) {
      if (replay.count(s)) st.Release(replay[s], ni);
    }
    st.Point(StepPhase::kBackward, ni);
  }
}

void FinishSegment(int i, StepState* state) {
  StepState& st = *state;
  const int end = static_cast<int>(st.g.nodes.size());
  for (int r : st.ckpt.held) {
    st.storages[r].pinned = false;
    st.Release(r, end);
  }
  st.ckpt.held.clear();
  for (int s : st.ckpt.held_grads) {
    if (--st.storages[s].grad_refs == 0 &&
        st.storages[s].category != MemCategory::kGrad)
      st.Release(s, end);
  }
  st.ckpt.held_grads.clear();
  for (int s : st.ckpt.inputs[i]) {
    --st.storages[s].saved_by;
    st.Release(s, end);
  }
  st.Point(StepPhase::kBackward, st.tr.checkpoint_segments[i].first);
}

}  // namespace torchcost::memory
