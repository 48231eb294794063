#include "memory/backward.h"

#include <optional>
#include <vector>

#include "memory/checkpoint_replay.h"
#include "memory/op_names.h"
#include "memory/optimizer_replay.h"
#include "training/grad_scaler.h"

namespace torchcost::memory {
namespace {

using rules::RValue;

// A gradient slot of a value: the storage holding it.
void SetGrad(int v, int s, StepState* st) {
  st->bwd.grad_of[v] = s;
  ++st->storages[s].grad_refs;
}

void DropGrad(int v, int now, StepState* st) {
  int s = st->bwd.grad_of[v];
  if (s < 0) return;
  st->bwd.grad_of[v] = -1;
  if (--st->storages[s].grad_refs == 0 &&
      st->storages[s].category != MemCategory::kGrad)
    st->Release(s, now);
}

// Gradients of unpacked elements go back to the list they came from.
void PassGradsThroughPlumbing(const ir::Node& node, StepState* st) {
  if (node.op == op::kListUnpack || node.op == op::kTupleUnpack) {
    auto& lg = st->bwd.list_grads[node.inputs[0]];
    for (int o : node.outputs) {
      if (st->bwd.grad_of[o] >= 0) {
        lg.push_back(st->bwd.grad_of[o]);
        st->bwd.grad_of[o] = -1;  // The reference moves to the list.
      }
    }
  }
}

sym::Expr GradBytes(int v, StepState* st) {
  const RValue& rv = st->shapes.values[v];
  if (rv.kind == RValue::Kind::kTensor) return st->bytes.Of(rv.t);
  return sym::Expr(0);
}

// Returns the bytes a matmul node `ni`'s backward copies of its output's
// gradient, or nullopt: a gradient held in fewer bytes than its tensor's is
// a broadcast view (sum()'s or mean()'s backward: an expand of a scalar),
// and at::mm copies a stride-0 operand to a contiguous one before the GEMM
// (at::native addmm_impl_cpu_ and the CUDA path's prepare_matrix_for_cublas),
// one GEMM at a time: a transient of the output's size.
std::optional<sym::Expr> BroadcastGradCopy(int ni, StepState* state) {
  StepState& st = *state;
  const ir::Node& node = st.g.nodes[ni];
  if (node.op != op::kLinear && node.op != op::kMatmul && node.op != op::kMm &&
      node.op != op::kAddmm && node.op != op::kBmm && node.op != op::kBaddbmm) {
    return std::nullopt;
  }
  for (int o : node.outputs) {
    const int g = st.bwd.grad_of[o];
    if (g < 0) continue;
    const sym::Expr full = GradBytes(o, state);
    const std::optional<int64_t> held = st.storages[g].bytes.AsConstant();
    const std::optional<int64_t> want = full.AsConstant();
    if (held && (!want || *held < *want)) return full;
  }
  return std::nullopt;
}

// The storage the rule's `grad_into` writes value `e`'s gradient into at
// node `node`, or -1.
int GradIntoStorage(const rules::Variant* v, const ir::Node& node, int e,
                    const StepState& st) {
  if (v == nullptr) return -1;
  const int n = static_cast<int>(node.inputs.size());
  for (const auto& [input, into] : v->grad_into) {
    if (input < n && into < n && node.inputs[input] == e &&
        node.inputs[into] >= 0)
      return st.storages.storage_of[node.inputs[into]];
  }
  return -1;
}

// Allocates the gradients node `ni`'s backward produces.
void ComputeInputGrads(int ni, StepState* state) {
  StepState& st = *state;
  BackwardState& b = st.bwd;
  const auto& na = st.grads.nodes[ni];
  const auto& nf = st.shapes.nodes[ni];
  const rules::Variant* v =
      nf.ok && nf.rule != nullptr ? nf.applied->variant : nullptr;
  const ir::Node& node = st.g.nodes[ni];
  const int end = static_cast<int>(st.g.nodes.size());
  // The output gradient a view's input gradient is a view of.
  int view_grad = -1;
  if (v != nullptr && v->alias_output >= 0 && !v->inplace) {
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      if (o < v->output_slots.size() && v->output_slots[o] == v->alias_output)
        view_grad = b.grad_of[node.outputs[o]];
    }
  }
  const bool view_backward = view_grad >= 0 && na.bwd_flops == sym::Expr(0);
  for (int e : na.grad_inputs) {
    const bool final_param = st.g.values[e].role == ir::ValueRole::kParam &&
                             --b.grad_contributions[e] == 0;
    // With the gradient already allocated, the final one is added into it in
    // place (transient).
    const bool is_param = final_param && !st.GradsPresent();
    const bool into_existing = final_param && st.GradsPresent();
    if (b.grad_of[e] >= 0) {
      // NB: the engine joins two gradients of one tensor out of place
      // (InputBuffer: old + new), then frees both: the new gradient and the
      // sum are allocated while the old one is alive.
      const MemCategory c = is_param ? MemCategory::kGrad : MemCategory::kTemp;
      int fresh = st.storages.Add(GradBytes(e, state), MemCategory::kTemp);
      int sum = st.storages.Add(GradBytes(e, state), c);
      st.storages[sum].last_use = end;
      st.Alloc(fresh);
      st.Alloc(sum);
      b.transient.push_back(fresh);
      int old_grad = b.grad_of[e];
      b.grad_of[e] = -1;
      if (--st.storages[old_grad].grad_refs == 0) b.joined.push_back(old_grad);
      if (into_existing) {
        b.transient.push_back(sum);
      } else {
        SetGrad(e, sum, state);
      }
      if (is_param && st.PerLayer()) st.opt.accumulated.push_back({e, sum});
      continue;
    }
    if (view_backward && !is_param) {
      SetGrad(e, view_grad, state);
      continue;
    }
    // NB: written into a tensor the node saved (Megatron's vocab-parallel
    // cross entropy returns its softmax, updated in place, as the gradient).
    if (const int into = GradIntoStorage(v, node, e, st);
        into >= 0 && !is_param && !into_existing) {
      SetGrad(e, into, state);
      continue;
    }
    int s = st.storages.Add(GradBytes(e, state),
                            is_param ? MemCategory::kGrad : MemCategory::kTemp);
    st.storages[s].last_use = end;
    st.Alloc(s);
    if (into_existing) {
      b.transient.push_back(s);
    } else {
      SetGrad(e, s, state);
    }
    if (is_param && st.PerLayer()) st.opt.accumulated.push_back({e, s});
  }
}

}  // namespace

void FindBackwardNodes(StepState* state) {
  StepState& st = *state;
  const ir::Graph& g = st.g;
  StorageTable& storages = st.storages;
  st.runs_backward.assign(g.nodes.size(), false);
  if (st.options.mode != StepMode::kTrain || g.outputs.empty()) return;
  std::vector<bool> needed(g.values.size(), false);
  std::vector<bool> read_later(storages.size(), false);
  std::vector<int> of;
  auto need = [&](int v) {
    needed[v] = true;
    of.clear();
    storages.Of(v, &of);
    for (int s : of) read_later[s] = true;
  };
  if (st.grads.requires_grad[g.outputs[0]]) need(g.outputs[0]);
  for (int ni = static_cast<int>(g.nodes.size()) - 1; ni >= 0; --ni) {
    const ir::Node& node = g.nodes[ni];
    bool any = false;
    for (int o : node.outputs) any = any || needed[o];
    if (!any && st.WritesInPlace(ni)) {
      for (int o : node.outputs) {
        if (storages.storage_of[o] >= 0 && read_later[storages.storage_of[o]] &&
            st.grads.requires_grad[o])
          any = true;
      }
    }
    if (!any) continue;
    const auto& na = st.grads.nodes[ni];
    if (na.has_grad_fn) {
      st.runs_backward[ni] = true;
      for (int e : na.grad_inputs) need(e);
    } else {
      for (int in : node.inputs) {
        if (st.grads.requires_grad[in]) need(in);
      }
    }
  }
  // Only the first output is kept by the step; with an appended loss, the
  // second (the model's output, which the caller holds) too.
  const LossSpec& loss = st.options.loss;
  const size_t kept = loss.kind != LossSpec::Kind::kSum &&
                              loss.kind != LossSpec::Kind::kNone &&
                              loss.chunks <= 1
                          ? 2
                          : 1;
  for (size_t i = kept; i < g.outputs.size(); ++i) {
    std::vector<int> ss;
    storages.Of(g.outputs[i], &ss);
    for (int s : ss) {
      if (storages[s].category == MemCategory::kOther && !storages.IsSetup(s)) {
        storages[s].pinned = false;
        storages[s].category = MemCategory::kTemp;
      }
    }
  }
  std::vector<int> ss;
  for (size_t i = 0; i < kept && i < g.outputs.size(); ++i)
    storages.Of(g.outputs[i], &ss);
  for (int s : ss) {
    storages[s].pinned = true;
    if (storages[s].category == MemCategory::kTemp)
      storages[s].category = MemCategory::kOther;
  }
}

void RunBackward(StepState* state) {
  StepState& st = *state;
  const ir::Graph& g = st.g;
  BackwardState& b = st.bwd;
  const int end = static_cast<int>(g.nodes.size());
  b.grad_of.assign(g.values.size(), -1);
  // NB: a parameter used twice (tied weights) gets its gradients joined in
  // the engine's input buffer before AccumulateGrad: only the final sum is
  // the parameter's .grad (GRAD); the partial ones are TEMP.
  b.grad_contributions.assign(g.values.size(), 0);
  for (size_t ni = 0; ni < g.nodes.size(); ++ni) {
    if (!st.runs_backward[ni]) continue;
    for (int e : st.grads.nodes[ni].grad_inputs) ++b.grad_contributions[e];
  }
  b.list_grads.clear();
  b.list_grads.resize(g.values.size());
  if (g.outputs.empty()) return;
  const int out0 = g.outputs[0];
  const RValue& rv = st.shapes.values[out0];
  const bool unknown_tensor = rv.kind == RValue::Kind::kUnknown &&
                              g.values[out0].kind == ir::ValueKind::kTensor;
  if ((rv.kind != RValue::Kind::kTensor && !unknown_tensor) ||
      !st.grads.requires_grad[out0])
    return;
  // loss = out.sum(): a 0-dim result (kept by the caller), and its gradient of
  // ones, which SumBackward expands to out's shape without copying. Any
  // other loss is the first output itself (0-dim): only its gradient is new.
  const int64_t elem =
      ElementSize(rv.t.dtype == DType::kUnknown ? DType::kFloat32 : rv.t.dtype);
  if (st.options.loss.kind == LossSpec::Kind::kSum) {
    int loss = st.storages.Add(sym::Expr(elem), MemCategory::kOther);
    st.storages[loss].pinned = true;
    st.Alloc(loss);
  }
  if (st.options.grad_scaler)
    ReplayScaler(training::ScaledLossBackward(), StepPhase::kBackward, state);
  // NB: the root gradient lives until backward returns:
  // torch.autograd.backward's frame holds it (torch/autograd/__init__.py,
  // v1.13.0: grad_tensors_ = _make_grads(...)), so it is pinned here and freed
  // after the last node.
  int ones = st.storages.Add(sym::Expr(elem), MemCategory::kTemp);
  st.storages[ones].last_use = end;
  st.storages[ones].pinned = true;
  st.Alloc(ones);
  if (st.options.grad_scaler)
    ReplayScaler(training::ScaledLossGradDone(), StepPhase::kBackward, state);
  SetGrad(out0, ones, state);
  st.Point(StepPhase::kBackward, -1);

  for (int ni = end - 1; ni >= 0; --ni) {
    if (ni + 1 < end && st.ckpt.starting_at[ni + 1] >= 0)
      FinishSegment(st.ckpt.starting_at[ni + 1], state);
    if (st.ckpt.ending_at[ni] >= 0) ReplaySegment(st.ckpt.ending_at[ni], state);
    const auto& na = st.grads.nodes[ni];
    const ir::Node& node = g.nodes[ni];
    if (!na.has_grad_fn) {
      PassGradsThroughPlumbing(node, state);
      continue;
    }
    if (!st.runs_backward[ni]) continue;
    const std::optional<sym::Expr> copy = BroadcastGradCopy(ni, state);
    ComputeInputGrads(ni, state);
    if (const sym::Expr* workspace = st.Workspace(ni, /*backward=*/true)) {
      b.transient.push_back(st.storages.Add(*workspace, MemCategory::kTemp));
      st.Alloc(b.transient.back());
    }
    if (copy) {
      b.transient.push_back(st.storages.Add(*copy, MemCategory::kTemp));
      st.Alloc(b.transient.back());
    }
    st.Point(StepPhase::kBackward, ni);
    for (int s : b.transient) st.Free(s);
    b.transient.clear();
    for (int s : b.joined) st.Free(s);
    b.joined.clear();
    for (int o : node.outputs) {
      DropGrad(o, end, state);
      for (int s : b.list_grads[o]) {
        if (--st.storages[s].grad_refs == 0) st.Release(s, end);
      }
      b.list_grads[o].clear();
    }
    for (int s : st.saved_storages[ni]) {
      --st.storages[s].saved_by;
      st.Release(s, end);
    }
    st.Point(StepPhase::kBackward, ni);
    if (!st.opt.accumulated.empty()) StepAccumulated(state);
  }
  if (end > 0 && st.ckpt.starting_at[0] >= 0)
    FinishSegment(st.ckpt.starting_at[0], state);
  st.storages[ones].pinned = false;
  st.Release(ones, end);
  st.Point(StepPhase::kBackward, -1);
}

}  // namespace torchcost::memory
