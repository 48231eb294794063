#include "memory/optimizer_replay.h"

#include <algorithm>
#include <map>

#include "training/galore_model.h"
#include "training/grad_scaler.h"
#include "training/optimizer_model.h"

namespace torchcost::memory {

using training::Event;
namespace {

using training::GaloreStateBytes;
using training::PagedStateBytes;
using training::SharedStateBytes;
using training::StateBytes;
using training::StateDtype;

void SetUpdateTemp(int64_t bytes, StepState* st) {
  if (bytes == st->opt.update_temp) return;
  st->timeline.Add(MemCategory::kTemp, sym::Expr(bytes - st->opt.update_temp));
  st->opt.update_temp = bytes;
}

// Appends the state tensors of one parameter whose states take `bytes`:
// state_tensors_per_element param-sized tensors and the scalar state (Adam's
// `step`) where the optimizer's states are those; else one piece.
void StatePieces(const StepState* st, const ir::TensorEntry& p, int64_t bytes,
                 std::vector<int64_t>* pieces) {
  const TrainingOptions& o = st->options;
  const training::OptimizerModel m = training::ModelOf(o.optimizer);
  const int64_t tensor = ir::Numel(p.shape) *
                         ElementSize(StateDtype(p.dtype, o.state_dtype, false));
  if (st->Galore() ||
      m.state_tensors_per_element * tensor + m.state_scalar_bytes != bytes) {
    pieces->push_back(bytes);
    return;
  }
  for (int64_t k = 0; k < m.state_tensors_per_element; ++k)
    pieces->push_back(tensor);
  if (m.state_scalar_bytes > 0) pieces->push_back(m.state_scalar_bytes);
}

void FreeSlots(StepState* st) {
  st->opt.slot_bytes.fill(0);
  SetUpdateTemp(0, st);
}

// The foreach step (optimizer_model.h's ForeachMoments): at each moment its
// whole-list temporaries, each list one tensor per trainable parameter (as
// _foreach_sqrt allocates them), lists added or freed to the moment's count.
void ForeachOptimizer(StepState* st) {
  std::vector<int64_t> list;
  int64_t total = 0;
  for (size_t i = 0; i < st->g.params.size(); ++i) {
    if (!st->grads.param_trainable[i]) continue;
    list.push_back(ir::Numel(st->g.params[i].shape) *
                   ElementSize(st->g.params[i].dtype));
    total += list.back();
  }
  std::vector<int> lists;  // Their handles.
  for (int64_t bytes : training::ForeachMoments(st->options.optimizer, total,
                                                st->options.torch_version)
                           .value_or(std::vector<int64_t>{})) {
    // NB: every moment is a whole number of lists (k * total).
    const size_t k = total > 0 ? static_cast<size_t>(bytes / total) : 0;
    while (lists.size() < k)
      lists.push_back(st->timeline.AddList(MemCategory::kTemp, list));
    for (; lists.size() > k; lists.pop_back())
      st->timeline.FreeList(lists.back(), MemCategory::kTemp, list);
    st->Point(StepPhase::kOptimizer, -1);
  }
  for (; !lists.empty(); lists.pop_back())
    st->timeline.FreeList(lists.back(), MemCategory::kTemp, list);
  st->Point(StepPhase::kOptimizer, -1);
}

// GaLore's AdamW, one loop over the parameters (nothing to do per layer: it ran
// in backward).
void GaloreOptimizer(StepState* st) {
  if (!st->PerLayer()) {
    for (size_t i = 0; i < st->g.params.size(); ++i) {
      if (st->grads.param_trainable[i])
        ReplayUpdate(i, StepPhase::kOptimizer, st);
    }
    FreeSlots(st);
  }
  st->Point(StepPhase::kOptimizer, -1);
}

}  // namespace

int64_t OptimizerStateBytes(StepState* state, std::vector<int64_t>* pieces) {
  StepState& st = *state;
  const TrainingOptions& o = st.options;
  std::vector<std::vector<int64_t>> trainable;
  int64_t opt = 0;
  st.tr.paged_opt_bytes = 0;
  for (size_t i = 0; i < st.g.params.size(); ++i) {
    if (!st.grads.param_trainable[i]) continue;
    const auto& p = st.g.params[i];
    if (o.paged) {
      const PagedStateBytes b = training::PagedStatesOf(o.optimizer, p.shape);
      opt += b.device;
      if (pieces) pieces->push_back(b.device);
      st.tr.paged_opt_bytes += b.host;
      trainable.push_back(p.shape);
      continue;
    }
    const int64_t bytes =
        st.Galore() ? GaloreStateBytes(p.shape, p.dtype,
                                       st.tr.galore_targets[i], *o.galore)
                    : StateBytes(o.optimizer, p.shape,
                                 StateDtype(p.dtype, o.state_dtype, false));
    opt += bytes;
    if (pieces) StatePieces(&st, p, bytes, pieces);
    trainable.push_back(p.shape);
  }
  if (!st.Galore()) {
    const int64_t shared = SharedStateBytes(o.optimizer, trainable);
    opt += shared;
    if (pieces) pieces->push_back(shared);
  }
  if (st.Galore() && o.galore->eight_bit) {
    // GaLoreAdamW8bit: the code books, shared by the 8-bit states of the
    // projected gradients.
    std::vector<std::vector<int64_t>> states;
    for (size_t i = 0; i < st.g.params.size(); ++i) {
      if (!st.grads.param_trainable[i]) continue;
      const auto& shape = st.g.params[i].shape;
      states.push_back(
          st.tr.galore_targets[i] && shape.size() == 2
              ? std::vector<int64_t>{training::ShapeOf(shape[0], shape[1],
                                                       o.galore->rank)
                                         .projected}
              : shape);
    }
    const int64_t books = SharedStateBytes(OptimizerKind::kAdam8bit, states);
    opt += books;
    if (pieces) pieces->push_back(books);
  }
  if (o.grad_scaler) {
    opt += training::kScalerStateBytes;
    if (pieces) pieces->push_back(training::kScalerStateBytes);
  }
  return opt;
}

void ReplayScaler(const std::vector<Event>& events, StepPhase phase,
                  StepState* state) {
  std::vector<int>& scaler = state->opt.scaler;
  for (const Event& e : events) {
    if (e.kind == Event::Kind::kAlloc) {
      if (e.tensor >= static_cast<int>(scaler.size()))
        scaler.resize(e.tensor + 1, -1);
      scaler[e.tensor] = state->storages.Add(sym::Expr(e.bytes), e.category);
      state->Alloc(scaler[e.tensor]);
    } else if (e.kind == Event::Kind::kFree) {
      state->Free(scaler[e.tensor]);
    } else {
      state->Point(phase, -1);
    }
  }
}

void ReplayUpdate(size_t param, StepPhase phase, StepState* state) {
  StepState& st = *state;
  const auto& p = st.g.params[param];
  const std::vector<Event> events =
      training::GaloreUpdate(p.shape, p.dtype, st.tr.galore_targets[param],
                             *st.options.galore, st.options.galore->svd_step);
  std::map<int, int64_t> bytes;
  int64_t live = 0, most = -1;
  for (int64_t b : st.opt.slot_bytes) live += b;
  for (const Event& e : events) {
    if (e.kind == Event::Kind::kAlloc) {
      bytes[e.tensor] = e.bytes;
      live += e.bytes;
    } else if (e.kind == Event::Kind::kFree) {
      live -= bytes[e.tensor];
    } else if (e.kind == Event::Kind::kBind) {
      live -= st.opt.slot_bytes[e.slot];
      st.opt.slot_bytes[e.slot] = e.tensor >= 0 ? bytes[e.tensor] : 0;
    } else {
      most = std::max(most, live);
    }
  }
  if (most >= 0) {
    SetUpdateTemp(most, state);
    st.Point(phase, -1);
  }
  SetUpdateTemp(live, state);
}

void StepAccumulated(StepState* state) {
  StepState& st = *state;
  OptimizerState& o = st.opt;
  if (o.param_of_value.empty()) {
    for (size_t i = 0; i < st.g.params.size(); ++i) {
      if (st.g.params[i].value >= 0 && st.grads.param_trainable[i])
        o.param_of_value[st.g.params[i].value] = i;
    }
  }
  for (const auto& [value, grad] : o.accumulated) {
    if (auto it = o.param_of_value.find(value); it != o.param_of_value.end()) {
      ReplayUpdate(it->second, StepPhase::kBackward, state);
      FreeSlots(state);
    }
    st.bwd.grad_of[value] = -1;
    st.storages[grad].grad_refs = 0;
    // NB: no point: the next one records the drop, and it cannot be a peak.
    st.Free(grad);
  }
  o.accumulated.clear();
}

void RunOptimizer(StepState* state) {
  StepState& st = *state;
  const TrainingOptions& o = st.options;
  if (o.grad_scaler) {
    // The backward's last act.
    ReplayScaler(training::ScaledBackwardEnd(), StepPhase::kBackward, state);
    ReplayScaler(training::Unscale(), StepPhase::kOptimizer, state);
  }
  if (o.foreach) {
    ForeachOptimizer(state);
    if (o.grad_scaler)
      ReplayScaler(training::Update(), StepPhase::kOptimizer, state);
    return;
  }
  if (st.Galore()) {
    GaloreOptimizer(state);
    if (o.grad_scaler)
      ReplayScaler(training::Update(), StepPhase::kOptimizer, state);
    return;
  }
  int prev = -1;  // The previous parameter's carried temporaries.
  // bitsandbytes' paged optimizers step in one fused in-place kernel per
  // tensor, torch's fused step in in-place multi-tensor kernels: no
  // temporaries.
  for (size_t i = 0; i < st.g.params.size() && !o.paged && !o.fused; ++i) {
    if (!st.grads.param_trainable[i]) continue;
    const auto& p = st.g.params[i];
    // NB: with a state dtype the temporaries (Adam's sqrt and denom) are
    // computed from the states, so they are in the states' dtype.
    const training::UpdateTransients t = training::TransientsOf(
        o.optimizer, p.shape, StateDtype(p.dtype, o.state_dtype, false));
    if (t.moments.empty() && t.carried == 0) continue;
    for (size_t k = 0; k < t.moments.size(); ++k) {
      const int s =
          st.storages.Add(sym::Expr(t.moments[k]), MemCategory::kTemp);
      st.Alloc(s);
      st.Point(StepPhase::kOptimizer, -1);
      st.Free(s);
      // The previous parameter's carried tensor dies when its name is rebound.
      if (prev >= 0) st.Free(prev);
      prev = -1;
    }
    if (prev >= 0) st.Free(prev);
    prev = -1;
    if (t.carried > 0) {
      prev = st.storages.Add(sym::Expr(t.carried), MemCategory::kTemp);
      st.Alloc(prev);
    }
  }
  if (prev >= 0) st.Free(prev);
  st.Point(StepPhase::kOptimizer, -1);
  if (o.grad_scaler)
    ReplayScaler(training::Update(), StepPhase::kOptimizer, state);
}

}  // namespace torchcost::memory
