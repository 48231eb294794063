#include "analysis/step_memory.h"

#include <boost/graph/adjacency_list.hpp>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "training/galore_model.h"
#include "training/grad_scaler.h"
#include "training/optimizer_model.h"
#include "rules/op_rule.h"

namespace torchcost::analysis {
namespace {

using passes::AutogradFacts;
using passes::ShapeFacts;
using rules::RValue;

// The bipartite dataflow graph: vertices 0..V-1 are values, V..V+N-1 nodes;
// an edge value -> node is a use, node -> value a definition.
using Dataflow = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;

// One allocation: a tensor's storage, shared by its views.
struct Storage {
  sym::Expr bytes;
  MemCategory category = MemCategory::kTemp;
  bool live = false;
  bool pinned = false;    // Held by the caller for the whole step (params, buffers, inputs, outputs).
  int last_use = -1;      // Last forward node that reads it.
  int saved_by = 0;       // Backward nodes that still hold it.
  int grad_refs = 0;      // Gradient slots that point at it.
};

bool IsOne(const sym::Expr& e) { return e.IsConstant() && *e.AsConstant() == 1; }

// NB: views alias their input, but a reshape (or flatten) of a broadcast, an
// expand that grew a size-1 dim, copies when it merges that stride-0 dim with
// another (PyTorch's reshape cannot view it): Hugging Face's repeat_kv,
// x[:, :, None].expand(b, kv, rep, s, hd).reshape(b, kv * rep, s, hd).
bool ReshapeCopiesBroadcast(const ir::Graph& g, const ShapeFacts& shapes, const ir::Node& node) {
  if ((node.op != "aten::reshape" && node.op != "aten::flatten") || node.inputs.empty() || node.outputs.empty())
    return false;
  const int in = node.inputs[0];
  const int p = g.values[in].producer;
  if (p < 0 || g.nodes[p].op != "aten::expand" || g.nodes[p].inputs.empty()) return false;
  const auto& src = shapes.values[g.nodes[p].inputs[0]].t.shape;
  const auto& mid = shapes.values[in].t.shape;
  const auto& out = shapes.values[node.outputs[0]].t.shape;
  if (src.size() > mid.size()) return false;
  const size_t lead = mid.size() - src.size();
  bool broadcast = false;
  for (size_t i = 0; i < mid.size(); ++i) {
    if ((i < lead || IsOne(src[i - lead])) && !IsOne(mid[i])) broadcast = true;
  }
  if (!broadcast) return false;
  // A view only if the reshape keeps every dim that is not 1 as it is.
  auto squeezed = [](const std::vector<sym::Expr>& shape) {
    std::vector<sym::Expr> r;
    for (const auto& d : shape) {
      if (!IsOne(d)) r.push_back(d);
    }
    return r;
  };
  return !(squeezed(mid) == squeezed(out));
}

sym::Expr BytesOf(const rules::TensorType& t) {
  sym::Expr n(1);
  for (const auto& d : t.shape) n = n * d;
  const int64_t size = t.dtype == DType::kUnknown ? 4 : ElementSize(t.dtype);
  return n * size;
}

class Simulator {
 public:
  Simulator(const ir::Graph& g, const ShapeFacts& shapes, const AutogradFacts& grads, const TrainingOptions& options,
            Report* report)
      : g_(g), shapes_(shapes), grads_(grads), options_(options), report_(report), tr_(report->training) {}

  void Run() {
    tr_.timeline.clear();
    AssignStorages();
    FindBackwardNodes();
    PlanCheckpoints();
    MarkSaved();
    ComputeLastUses();
    Setup();
    if (GradsPresent()) PreallocateGrads();
    Forward();
    if (options_.mode == StepMode::kTrain) {
      Backward();
      Optimizer();
    }
  }

 private:
  // --- Storage assignment -------------------------------------------------
  int NewStorage(sym::Expr bytes, MemCategory c) {
    Storage s;
    s.bytes = std::move(bytes);
    s.category = c;
    storages_.push_back(std::move(s));
    return static_cast<int>(storages_.size()) - 1;
  }

  // Returns the storages a value stands for (one for a tensor, one per element for a list).
  void StoragesOf(int v, std::vector<int>* out) const {
    if (storage_of_[v] >= 0) out->push_back(storage_of_[v]);
    for (int s : list_storages_[v]) out->push_back(s);
  }

  void AssignStorages() {
    storage_of_.assign(g_.values.size(), -1);
    list_storages_.assign(g_.values.size(), {});
    node_new_.assign(g_.nodes.size(), {});
    node_temps_.assign(g_.nodes.size(), {});
    for (const auto& table : {&g_.params, &g_.buffers}) {
      const bool is_param = table == &g_.params;
      for (const auto& e : *table) {
        int s = NewStorage(sym::Expr(ir::Numel(e.shape) * ElementSize(e.dtype)),
                           is_param ? MemCategory::kParam : MemCategory::kBuffer);
        storages_[s].pinned = true;
        setup_.push_back(s);
        if (e.value >= 0) storage_of_[e.value] = s;
      }
    }
    for (int v : g_.inputs) {
      const RValue& rv = shapes_.values[v];
      if (rv.kind != RValue::Kind::kTensor) continue;
      int s = NewStorage(BytesOf(rv.t), MemCategory::kOther);
      storages_[s].pinned = true;
      setup_.push_back(s);
      storage_of_[v] = s;
    }
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      const ir::Node& node = g_.nodes[ni];
      const auto& nf = shapes_.nodes[ni];
      if (nf.no_rule) {
        // NB: an op without a rule is taken to allocate each tensor output (no aliasing).
        for (int out : node.outputs) {
          const RValue& rv = shapes_.values[out];
          if (rv.kind != RValue::Kind::kTensor || rv.t.has_scalar) continue;
          storage_of_[out] = NewStorage(BytesOf(rv.t), MemCategory::kTemp);
          node_new_[ni].push_back(storage_of_[out]);
        }
        continue;
      }
      if (nf.rule == nullptr || !nf.ok) {
        AssignPlumbing(node);
        continue;
      }
      const rules::Variant& v = *nf.applied.variant;
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        const int out = node.outputs[o];
        const RValue& rv = shapes_.values[out];
        int alias_of = -1;
        if (v.alias_output >= 0 && o < v.output_slots.size() && v.output_slots[o] == v.alias_output &&
            !ReshapeCopiesBroadcast(g_, shapes_, node)) {
          alias_of = nf.arg_values[v.alias_arg];
        }
        if (rv.kind == RValue::Kind::kTensor) {
          if (alias_of >= 0 && storage_of_[alias_of] >= 0) {
            storage_of_[out] = storage_of_[alias_of];
          } else if (!rv.t.has_scalar) {
            storage_of_[out] = NewStorage(BytesOf(rv.t), MemCategory::kTemp);
            node_new_[ni].push_back(storage_of_[out]);
          }
        } else if (rv.kind == RValue::Kind::kTensorList) {
          for (const auto& t : rv.tensors) {
            if (alias_of >= 0 && storage_of_[alias_of] >= 0) {
              list_storages_[out].push_back(storage_of_[alias_of]);
            } else {
              int s = NewStorage(BytesOf(t), MemCategory::kTemp);
              list_storages_[out].push_back(s);
              node_new_[ni].push_back(s);
            }
          }
        }
      }
      for (const auto& t : nf.applied.temporaries) {
        int s = NewStorage(BytesOf(t), MemCategory::kTemp);
        node_temps_[ni].push_back(s);
      }
    }
    for (int v : g_.outputs) {
      std::vector<int> ss;
      StoragesOf(v, &ss);
      for (int s : ss) {
        if (storages_[s].category == MemCategory::kTemp) storages_[s].category = MemCategory::kOther;
        storages_[s].pinned = true;
      }
    }
  }

  // Lists and tuples hold their elements' storages; unpacking hands them back.
  void AssignPlumbing(const ir::Node& node) {
    const std::string& op = node.op;
    if (op == "prim::ListConstruct" || op == "prim::TupleConstruct") {
      for (int in : node.inputs) StoragesOf(in, &list_storages_[node.outputs[0]]);
    } else if (op == "prim::ListUnpack" || op == "prim::TupleUnpack") {
      const auto& elems = list_storages_[node.inputs[0]];
      if (elems.size() == node.outputs.size()) {
        for (size_t i = 0; i < elems.size(); ++i) storage_of_[node.outputs[i]] = elems[i];
      }
    }
  }

  // The nodes whose backward runs: those on a differentiable path to the
  // first output (the loss is its sum). NB: other outputs are dropped by the
  // step, and with them the graph that only they reach (LeNet5's probs).
  void FindBackwardNodes() {
    runs_backward_.assign(g_.nodes.size(), false);
    if (options_.mode != StepMode::kTrain || g_.outputs.empty()) return;
    std::vector<bool> needed(g_.values.size(), false);
    // NB: an in-place write into a storage (`attn[:, :, 1:, 1:] += rel_pos`:
    // add_ and copy_ on views of attn) changes what every later reader of that
    // storage sees, so it is needed when a needed value read after it lives
    // there (PyTorch's CopySlices routes the base's gradient into the write).
    std::vector<bool> read_later(storages_.size(), false);
    std::vector<int> of;
    auto need = [&](int v) {
      needed[v] = true;
      of.clear();
      StoragesOf(v, &of);
      for (int s : of) read_later[s] = true;
    };
    if (grads_.requires_grad[g_.outputs[0]]) need(g_.outputs[0]);
    for (int ni = static_cast<int>(g_.nodes.size()) - 1; ni >= 0; --ni) {
      const ir::Node& node = g_.nodes[ni];
      bool any = false;
      for (int o : node.outputs) any = any || needed[o];
      if (!any && WritesInPlace(ni)) {
        for (int o : node.outputs) {
          if (storage_of_[o] >= 0 && read_later[storage_of_[o]] && grads_.requires_grad[o]) any = true;
        }
      }
      if (!any) continue;
      const auto& na = grads_.nodes[ni];
      if (na.has_grad_fn) {
        runs_backward_[ni] = true;
        for (int e : na.grad_inputs) need(e);
      } else {
        for (int in : node.inputs) {
          if (grads_.requires_grad[in]) need(in);
        }
      }
    }
    // Only the first output is kept by the step; with an appended loss, the
    // second (the model's output, which the caller holds) too.
    const size_t kept = options_.loss.kind != LossSpec::Kind::kSum && options_.loss.kind != LossSpec::Kind::kNone &&
                                options_.loss.chunks <= 1
                            ? 2
                            : 1;
    for (size_t i = kept; i < g_.outputs.size(); ++i) {
      std::vector<int> ss;
      StoragesOf(g_.outputs[i], &ss);
      for (int s : ss) {
        if (storages_[s].category == MemCategory::kOther && !IsSetupStorage(s)) {
          storages_[s].pinned = false;
          storages_[s].category = MemCategory::kTemp;
        }
      }
    }
    std::vector<int> ss;
    for (size_t i = 0; i < kept && i < g_.outputs.size(); ++i) StoragesOf(g_.outputs[i], &ss);
    for (int s : ss) {
      storages_[s].pinned = true;
      if (storages_[s].category == MemCategory::kTemp) storages_[s].category = MemCategory::kOther;
    }
  }

  // True if node `ni`'s rule writes into an argument (add_, copy_, index_put_).
  bool WritesInPlace(int ni) const {
    const auto& nf = shapes_.nodes[ni];
    return nf.ok && nf.rule != nullptr && nf.applied.variant != nullptr && nf.applied.variant->inplace;
  }

  bool IsSetupStorage(int s) const { return std::find(setup_.begin(), setup_.end(), s) != setup_.end(); }

  // Categories: a forward tensor some backward keeps is ACT; the rest is TEMP.
  void MarkSaved() {
    saved_storages_.assign(g_.nodes.size(), {});
    tr_.saved.clear();
    std::set<int> unique;
    forward_saved_.assign(g_.nodes.size(), {});
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      if (ckpt_starting_at_[ni] >= 0) SaveCheckpointInputs(ckpt_starting_at_[ni], &unique);
      const auto& na = grads_.nodes[ni];
      if (!na.has_grad_fn) continue;
      // A node whose backward never runs dies with the dropped outputs after the forward.
      if (options_.mode == StepMode::kTrain && !runs_backward_[ni]) continue;
      if (na.unknown_backward) tr_.act_lower_bound = true;  // What it saves is unknown.
      auto& mine = saved_storages_[ni];
      const rules::Variant* v = shapes_.nodes[ni].applied.variant;
      for (const auto& ref : na.saved) {
        int s = ref.value >= 0 ? storage_of_[ref.value] : node_temps_[ni][ref.temporary];
        // NB: a saved tensor without a storage of its own is a traced constant
        // or traced size arithmetic: in eager, a Python number that PyTorch wraps
        // into a fresh 0-dim tensor at every call, which autograd saves (vit's
        // `q / 8.0`: DivBackward0._saved_other, 8 bytes of float64; measured).
        // One new storage per saving node, allocated when the node runs.
        if (s < 0 && ref.value >= 0 && shapes_.values[ref.value].kind == RValue::Kind::kTensor) {
          s = NewStorage(BytesOf(shapes_.values[ref.value].t), MemCategory::kTemp);
          node_temps_[ni].push_back(s);
        }
        if (s < 0 || std::find(mine.begin(), mine.end(), s) != mine.end()) continue;
        mine.push_back(s);
        // NB: a checkpointed node runs under no_grad: it saves only when recomputed (ReplaySegment).
        if (ckpt_of_[ni] >= 0) continue;
        forward_saved_[ni].push_back(s);
        Storage& st = storages_[s];
        ++st.saved_by;
        if (st.category == MemCategory::kTemp) st.category = MemCategory::kAct;
        SavedTensorInfo info;
        info.node = static_cast<int>(ni);
        info.what = v && ref.slot >= 0 ? v->slot_names[ref.slot] : "?";
        info.bytes = st.bytes;
        info.storage = s;
        info.counted = st.category != MemCategory::kParam && st.category != MemCategory::kBuffer &&
                       unique.insert(s).second;
        tr_.saved.push_back(std::move(info));
      }
    }
    tr_.saved_bytes = sym::Expr(0);
    for (int s : unique) tr_.saved_bytes += storages_[s].bytes;
    AttributeActivations();
  }

  // Saved bytes per module: each storage once per module whose nodes save it.
  void AttributeActivations() {
    tr_.module_act_bytes.assign(g_.scopes.size(), sym::Expr(0));
    std::set<std::pair<int, int>> seen;
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      for (int s : forward_saved_[ni]) {
        const MemCategory c = storages_[s].category;
        if (c == MemCategory::kParam || c == MemCategory::kBuffer) continue;
        for (int sc = g_.nodes[ni].scope; sc >= 0; sc = g_.scopes[sc].parent) {
          if (seen.insert({sc, s}).second) tr_.module_act_bytes[sc] += storages_[s].bytes;
        }
      }
    }
  }

  // Last forward use of each storage, read off the dataflow graph.
  void ComputeLastUses() {
    const size_t nv = g_.values.size();
    Dataflow df(nv + g_.nodes.size());
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      for (int in : g_.nodes[ni].inputs) boost::add_edge(in, nv + ni, df);
      for (int out : g_.nodes[ni].outputs) boost::add_edge(nv + ni, out, df);
    }
    const std::vector<std::vector<int>> call_end = CallEnds();
    std::vector<int> ss;
    for (size_t v = 0; v < nv; ++v) {
      ss.clear();
      StoragesOf(static_cast<int>(v), &ss);
      if (ss.empty()) continue;
      const int producer = g_.values[v].producer;
      const int home = producer >= 0 ? g_.nodes[producer].scope : 0;
      int last = -1;
      for (auto [e, end] = boost::out_edges(v, df); e != end; ++e) {
        const int user = static_cast<int>(boost::target(*e, df) - nv);
        last = std::max(last, user);
        // NB: eager PyTorch frees a tensor when Python drops it, not at its
        // last use: a module's argument is held by the caller until the call
        // returns (`x = self.block(x)`), so it lives to the end of every
        // module call that reads it from outside.
        const auto& ends = call_end[user];
        int depth = 0;
        for (int sc = g_.nodes[user].scope; sc > 0; sc = g_.scopes[sc].parent, ++depth) {
          if (producer >= 0 && InSubtree(home, sc)) break;
          last = std::max(last, ends[depth]);
        }
      }
      for (int s : ss) storages_[s].last_use = std::max(storages_[s].last_use, last);
    }
    release_at_.assign(g_.nodes.size(), {});
    for (size_t s = 0; s < storages_.size(); ++s) {
      const int last = storages_[s].last_use;
      if (last >= 0 && last < static_cast<int>(g_.nodes.size())) release_at_[last].push_back(static_cast<int>(s));
    }
  }

  bool InSubtree(int scope, int root) const {
    for (int s = scope; s >= 0; s = g_.scopes[s].parent) {
      if (s == root) return true;
    }
    return false;
  }

  // For each node and each of its enclosing modules (innermost first, root
  // excluded), the last node of the module call it belongs to; a call is a
  // maximal run of consecutive nodes in the module's subtree.
  std::vector<std::vector<int>> CallEnds() const {
    const int n = static_cast<int>(g_.nodes.size());
    std::vector<std::vector<int>> ends(n);
    std::vector<int> chain;
    for (int ni = n - 1; ni >= 0; --ni) {
      chain.clear();
      for (int sc = g_.nodes[ni].scope; sc > 0; sc = g_.scopes[sc].parent) chain.push_back(sc);
      ends[ni].resize(chain.size());
      for (size_t k = 0; k < chain.size(); ++k) {
        const bool next_in = ni + 1 < n && InSubtree(g_.nodes[ni + 1].scope, chain[k]);
        ends[ni][k] = next_in ? EndOf(ends[ni + 1], g_.nodes[ni + 1].scope, chain[k]) : ni;
      }
    }
    return ends;
  }

  // Returns the call end recorded for `scope` in a node's list (its chain starts at `node_scope`).
  int EndOf(const std::vector<int>& ends, int node_scope, int scope) const {
    int k = 0;
    for (int sc = node_scope; sc > 0 && sc != scope; sc = g_.scopes[sc].parent) ++k;
    return ends[k];
  }

  // --- Events -------------------------------------------------------------
  void Alloc(int s) {
    Storage& st = storages_[s];
    if (st.live) return;
    st.live = true;
    live_[static_cast<int>(st.category)] += st.bytes;
    live_total_ += st.bytes;
  }
  void Free(int s) {
    Storage& st = storages_[s];
    if (!st.live) return;
    st.live = false;
    live_[static_cast<int>(st.category)] -= st.bytes;
    live_total_ -= st.bytes;
  }
  // Records the live bytes now; NB: the total is kept up to date by Alloc and
  // Free, so a point costs no symbolic arithmetic.
  void Point(StepPhase phase, int node) {
    if (!tr_.timeline.empty() && tr_.timeline.back().total == live_total_ && tr_.timeline.back().live == live_) {
      return;  // Nothing changed since the last point.
    }
    TimelinePoint p;
    p.phase = phase;
    p.node = node;
    p.live = live_;
    p.total = live_total_;
    tr_.timeline.push_back(std::move(p));
  }
  // Frees `s` if nothing holds it any more.
  void Release(int s, int now) {
    const Storage& st = storages_[s];
    if (!st.pinned && st.saved_by == 0 && st.grad_refs == 0 && st.last_use <= now) Free(s);
  }

  void Setup() {
    for (auto& b : live_) b = sym::Expr(0);
    live_total_ = sym::Expr(0);
    for (int s : setup_) Alloc(s);
    // Steady state: the optimizer's states exist before the step.
    if (options_.mode == StepMode::kTrain) {
      std::vector<std::vector<int64_t>> trainable;
      int64_t opt = 0;
      tr_.paged_opt_bytes = 0;
      for (size_t i = 0; i < g_.params.size(); ++i) {
        if (!grads_.param_trainable[i]) continue;
        const auto& p = g_.params[i];
        if (options_.paged) {
          // NB: paged states are on the host (worst case): outside the timeline.
          const PagedStateBytes b = PagedStatesOf(options_.optimizer, p.shape);
          opt += b.device;
          tr_.paged_opt_bytes += b.host;
          trainable.push_back(p.shape);
          continue;
        }
        opt += Galore() ? GaloreStateBytes(p.shape, p.dtype, tr_.galore_targets[i], *options_.galore)
                        : StateBytes(options_.optimizer, p.shape, StateDtype(p.dtype, options_.state_dtype, false));
        trainable.push_back(p.shape);
      }
      if (!Galore()) opt += SharedStateBytes(options_.optimizer, trainable);
      if (Galore() && options_.galore->eight_bit) {
        // GaLoreAdamW8bit: the code books, shared by the 8-bit states of the projected gradients.
        std::vector<std::vector<int64_t>> states;
        for (size_t i = 0; i < g_.params.size(); ++i) {
          if (!grads_.param_trainable[i]) continue;
          const auto& shape = g_.params[i].shape;
          states.push_back(tr_.galore_targets[i] && shape.size() == 2
                               ? std::vector<int64_t>{ShapeOf(shape[0], shape[1], options_.galore->rank).projected}
                               : shape);
        }
        opt += SharedStateBytes(OptimizerKind::kAdam8bit, states);
      }
      if (options_.grad_scaler) opt += kScalerStateBytes;
      live_[static_cast<int>(MemCategory::kOpt)] += sym::Expr(opt);
      live_total_ += sym::Expr(opt);
    }
    Point(StepPhase::kSetup, -1);
  }

  // NB: with zero_grad(set_to_none=False), or from the second micro-batch of a
  // gradient accumulation on, the parameters' gradients exist before the
  // forward and backward adds into them in place; the step modelled is then
  // such a micro-batch (it peaks at least as high as the first).
  bool GradsPresent() const {
    return options_.mode == StepMode::kTrain && (!options_.set_to_none || options_.accumulate > 1);
  }

  void PreallocateGrads() {
    for (size_t i = 0; i < g_.params.size(); ++i) {
      if (!grads_.param_trainable[i]) continue;
      const auto& p = g_.params[i];
      int s = NewStorage(sym::Expr(ir::Numel(p.shape) * ElementSize(p.dtype)), MemCategory::kGrad);
      storages_[s].pinned = true;
      Alloc(s);
    }
    Point(StepPhase::kSetup, -1);
  }

  void Forward() {
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      const int n = static_cast<int>(ni);
      const sym::Expr* workspace = Workspace(ni, /*backward=*/false);
      if (node_new_[ni].empty() && node_temps_[ni].empty() && !workspace && !FreesSomething(n)) continue;
      for (int s : node_new_[ni]) Alloc(s);
      for (int s : node_temps_[ni]) Alloc(s);
      const int ws = workspace ? NewStorage(*workspace, MemCategory::kTemp) : -1;
      if (ws >= 0) Alloc(ws);
      Point(StepPhase::kForward, n);
      if (ws >= 0) Free(ws);
      for (int s : node_temps_[ni]) Release(s, n);
      for (int s : node_new_[ni]) Release(s, n);
      for (int s : release_at_[ni]) Release(s, n);
      Point(StepPhase::kForward, n);
    }
  }

  // Returns the node's workspace bytes (kernel scratch, layout copies) if any.
  const sym::Expr* Workspace(size_t ni, bool backward) const {
    const auto& nf = shapes_.nodes[ni];
    if (nf.rule == nullptr || !nf.ok) return nullptr;
    const sym::Expr& w = backward ? grads_.nodes[ni].bwd_workspace : nf.applied.workspace_fwd;
    return w == sym::Expr(0) ? nullptr : &w;
  }

  bool FreesSomething(int n) const { return !release_at_[n].empty(); }

  // A gradient slot of a value: the storage holding it.
  void SetGrad(int v, int s) {
    grad_of_[v] = s;
    ++storages_[s].grad_refs;
  }
  void DropGrad(int v, int now) {
    int s = grad_of_[v];
    if (s < 0) return;
    grad_of_[v] = -1;
    if (--storages_[s].grad_refs == 0 && storages_[s].category != MemCategory::kGrad) Release(s, now);
  }

  void Backward() {
    const int end = static_cast<int>(g_.nodes.size());
    grad_of_.assign(g_.values.size(), -1);
    // NB: a parameter used twice (tied weights) gets its gradients joined in
    // the engine's input buffer before AccumulateGrad: only the final sum is
    // the parameter's .grad (GRAD); the partial ones are TEMP.
    grad_contributions_.assign(g_.values.size(), 0);
    for (size_t ni = 0; ni < g_.nodes.size(); ++ni) {
      if (!runs_backward_[ni]) continue;
      for (int e : grads_.nodes[ni].grad_inputs) ++grad_contributions_[e];
    }
    list_grads_.assign(g_.values.size(), {});
    if (g_.outputs.empty()) return;
    const int out0 = g_.outputs[0];
    const RValue& rv = shapes_.values[out0];
    // NB: an output of unknown shape (after an op without a rule) still runs
    // backward, so that the parameters get their gradients.
    const bool unknown_tensor = rv.kind == RValue::Kind::kUnknown && g_.values[out0].kind == ir::ValueKind::kTensor;
    if ((rv.kind != RValue::Kind::kTensor && !unknown_tensor) || !grads_.requires_grad[out0]) return;
    // loss = out.sum(): a 0-dim result (kept by the caller), and its gradient of
    // ones, which SumBackward expands to out's shape without copying. Any
    // other loss is the first output itself (0-dim): only its gradient is new.
    const int64_t elem = ElementSize(rv.t.dtype == DType::kUnknown ? DType::kFloat32 : rv.t.dtype);
    if (options_.loss.kind == LossSpec::Kind::kSum) {
      int loss = NewStorage(sym::Expr(elem), MemCategory::kOther);
      storages_[loss].pinned = true;
      Alloc(loss);
    }
    if (options_.grad_scaler) Replay(ScaledLossBackward(), StepPhase::kBackward);
    int ones = NewStorage(sym::Expr(elem), MemCategory::kTemp);
    storages_[ones].last_use = end;
    Alloc(ones);
    if (options_.grad_scaler) Replay(ScaledLossGradDone(), StepPhase::kBackward);
    SetGrad(out0, ones);
    Point(StepPhase::kBackward, -1);

    for (int ni = end - 1; ni >= 0; --ni) {
      if (ni + 1 < end && ckpt_starting_at_[ni + 1] >= 0) FinishSegment(ckpt_starting_at_[ni + 1]);
      if (ckpt_ending_at_[ni] >= 0) ReplaySegment(ckpt_ending_at_[ni]);
      const auto& na = grads_.nodes[ni];
      const ir::Node& node = g_.nodes[ni];
      if (!na.has_grad_fn) {
        PassGradsThroughPlumbing(node);
        continue;
      }
      if (!runs_backward_[ni]) continue;
      ComputeInputGrads(ni);
      if (const sym::Expr* workspace = Workspace(ni, /*backward=*/true)) {
        transient_.push_back(NewStorage(*workspace, MemCategory::kTemp));
        Alloc(transient_.back());
      }
      Point(StepPhase::kBackward, ni);
      for (int s : transient_) Free(s);
      transient_.clear();
      for (int s : joined_) Free(s);
      joined_.clear();
      for (int o : node.outputs) {
        DropGrad(o, end);
        for (int s : list_grads_[o]) {
          if (--storages_[s].grad_refs == 0) Release(s, end);
        }
        list_grads_[o].clear();
      }
      for (int s : saved_storages_[ni]) {
        --storages_[s].saved_by;
        Release(s, end);
      }
      Point(StepPhase::kBackward, ni);
      if (!accumulated_.empty()) StepAccumulated();
    }
    if (end > 0 && ckpt_starting_at_[0] >= 0) FinishSegment(ckpt_starting_at_[0]);
  }

  // --- Checkpointing (torch.utils.checkpoint, use_reentrant=True) ----------
  // Marks the segments some gradient flows through and sums their forward
  // FLOPs, which backward runs again.
  void PlanCheckpoints() {
    const int n = static_cast<int>(g_.nodes.size());
    ckpt_of_.assign(n, -1);
    ckpt_starting_at_.assign(n, -1);
    ckpt_ending_at_.assign(n, -1);
    ckpt_inputs_.assign(tr_.checkpoint_segments.size(), {});
    tr_.flops_recompute = sym::Expr(0);
    for (size_t i = 0; i < tr_.checkpoint_segments.size(); ++i) {
      CheckpointSegment& seg = tr_.checkpoint_segments[i];
      seg.recomputed = false;
      for (int ni = seg.first; ni <= seg.last; ++ni) seg.recomputed = seg.recomputed || runs_backward_[ni];
      if (!seg.recomputed) continue;  // NB: in inference too: nothing runs backward.
      ckpt_starting_at_[seg.first] = static_cast<int>(i);
      ckpt_ending_at_[seg.last] = static_cast<int>(i);
      for (int ni = seg.first; ni <= seg.last; ++ni) {
        ckpt_of_[ni] = static_cast<int>(i);
        tr_.flops_recompute += report_->nodes[ni].flops;
      }
    }
  }

  // CheckpointFunction saves the segment's tensor arguments: every storage its
  // nodes read that was made outside it, parameters and buffers aside.
  void SaveCheckpointInputs(int i, std::set<int>* unique) {
    const CheckpointSegment& seg = tr_.checkpoint_segments[i];
    std::set<int> inside;
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      inside.insert(node_new_[ni].begin(), node_new_[ni].end());
      inside.insert(node_temps_[ni].begin(), node_temps_[ni].end());
    }
    std::vector<int> ss;
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      for (int v : g_.nodes[ni].inputs) {
        ss.clear();
        StoragesOf(v, &ss);
        for (int s : ss) {
          Storage& st = storages_[s];
          if (inside.count(s) || st.category == MemCategory::kParam || st.category == MemCategory::kBuffer) continue;
          auto& inputs = ckpt_inputs_[i];
          if (std::find(inputs.begin(), inputs.end(), s) != inputs.end()) continue;
          inputs.push_back(s);
          ++st.saved_by;
          if (st.category == MemCategory::kTemp) st.category = MemCategory::kAct;
          forward_saved_[ni].push_back(s);
          SavedTensorInfo info;
          info.node = ni;
          info.what = "checkpoint input";
          info.bytes = st.bytes;
          info.storage = s;
          info.counted = unique->insert(s).second;
          tr_.saved.push_back(std::move(info));
        }
      }
    }
  }

  // Backward reached the segment: its forward runs again with grad enabled,
  // into fresh storages (TEMP, as MemTracker counts tensors made in backward);
  // its nodes save as usual, and the outputs, and the gradients that came for
  // them, stay until the segment's backward is done (FinishSegment).
  void ReplaySegment(int i) {
    const CheckpointSegment& seg = tr_.checkpoint_segments[i];
    std::map<int, int> replay;  // Forward storage -> its recomputed copy.
    held_.clear();
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      for (const auto* list : {&node_new_[ni], &node_temps_[ni]}) {
        for (int s : *list) {
          if (replay.count(s)) continue;
          const int last = storages_[s].last_use;
          const bool escapes = storages_[s].pinned || last > seg.last;
          const int r = NewStorage(storages_[s].bytes, MemCategory::kTemp);
          storages_[r].last_use = escapes ? -1 : last;
          storages_[r].pinned = escapes;
          if (escapes) held_.push_back(r);
          replay[s] = r;
        }
      }
    }
    auto copy_of = [&](int s) {
      auto it = replay.find(s);
      return it == replay.end() ? s : it->second;
    };
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      if (!runs_backward_[ni]) continue;
      for (int& s : saved_storages_[ni]) {
        s = copy_of(s);
        ++storages_[s].saved_by;
      }
    }
    held_grads_.clear();
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      for (int o : g_.nodes[ni].outputs) {
        if (grad_of_[o] < 0) continue;
        ++storages_[grad_of_[o]].grad_refs;
        held_grads_.push_back(grad_of_[o]);
      }
    }
    for (int ni = seg.first; ni <= seg.last; ++ni) {
      const sym::Expr* workspace = Workspace(ni, /*backward=*/false);
      if (node_new_[ni].empty() && node_temps_[ni].empty() && !workspace && !FreesSomething(ni)) continue;
      for (int s : node_new_[ni]) Alloc(copy_of(s));
      for (int s : node_temps_[ni]) Alloc(copy_of(s));
      const int ws = workspace ? NewStorage(*workspace, MemCategory::kTemp) : -1;
      if (ws >= 0) Alloc(ws);
      Point(StepPhase::kBackward, ni);
      if (ws >= 0) Free(ws);
      for (int s : node_temps_[ni]) Release(copy_of(s), ni);
      for (int s : node_new_[ni]) Release(copy_of(s), ni);
      for (int s : release_at_[ni]) {
        if (replay.count(s)) Release(replay[s], ni);
      }
      Point(StepPhase::kBackward, ni);
    }
  }

  // The segment's backward is done: CheckpointFunction returns, dropping the
  // recomputed outputs, the output gradients, and its saved inputs.
  void FinishSegment(int i) {
    const int end = static_cast<int>(g_.nodes.size());
    for (int r : held_) {
      storages_[r].pinned = false;
      Release(r, end);
    }
    held_.clear();
    for (int s : held_grads_) {
      if (--storages_[s].grad_refs == 0 && storages_[s].category != MemCategory::kGrad) Release(s, end);
    }
    held_grads_.clear();
    for (int s : ckpt_inputs_[i]) {
      --storages_[s].saved_by;
      Release(s, end);
    }
    Point(StepPhase::kBackward, tr_.checkpoint_segments[i].first);
  }

  // Gradients of unpacked elements go back to the list they came from.
  void PassGradsThroughPlumbing(const ir::Node& node) {
    if (node.op == "prim::ListUnpack" || node.op == "prim::TupleUnpack") {
      auto& lg = list_grads_[node.inputs[0]];
      for (int o : node.outputs) {
        if (grad_of_[o] >= 0) {
          lg.push_back(grad_of_[o]);
          grad_of_[o] = -1;  // The reference moves to the list.
        }
      }
    }
  }

  void ComputeInputGrads(int ni) {
    const auto& na = grads_.nodes[ni];
    const auto& nf = shapes_.nodes[ni];
    const rules::Variant* v = nf.ok && nf.rule != nullptr ? nf.applied.variant : nullptr;
    const ir::Node& node = g_.nodes[ni];
    // The output gradient a view's input gradient is a view of.
    int view_grad = -1;
    if (v != nullptr && v->alias_output >= 0 && !v->inplace) {
      for (size_t o = 0; o < node.outputs.size(); ++o) {
        if (o < v->output_slots.size() && v->output_slots[o] == v->alias_output) view_grad = grad_of_[node.outputs[o]];
      }
    }
    const bool view_backward = view_grad >= 0 && na.bwd_flops == sym::Expr(0);
    for (int e : na.grad_inputs) {
      const bool final_param = g_.values[e].role == ir::ValueRole::kParam && --grad_contributions_[e] == 0;
      // With the gradient already allocated, the final one is added into it in place (transient).
      const bool is_param = final_param && !GradsPresent();
      const bool into_existing = final_param && GradsPresent();
      if (grad_of_[e] >= 0) {
        // NB: the engine joins two gradients of one tensor out of place
        // (InputBuffer: old + new), then frees both: the new gradient and the
        // sum are allocated while the old one is alive.
        const MemCategory c = is_param ? MemCategory::kGrad : MemCategory::kTemp;
        int fresh = NewStorage(GradBytes(e), MemCategory::kTemp);
        int sum = NewStorage(GradBytes(e), c);
        storages_[sum].last_use = static_cast<int>(g_.nodes.size());
        Alloc(fresh);
        Alloc(sum);
        transient_.push_back(fresh);
        int old_grad = grad_of_[e];
        grad_of_[e] = -1;
        if (--storages_[old_grad].grad_refs == 0) joined_.push_back(old_grad);
        if (into_existing) {
          transient_.push_back(sum);
        } else {
          SetGrad(e, sum);
        }
        if (is_param && PerLayer()) accumulated_.push_back({e, sum});
        continue;
      }
      if (view_backward && !is_param) {
        SetGrad(e, view_grad);
        continue;
      }
      int s = NewStorage(GradBytes(e), is_param ? MemCategory::kGrad : MemCategory::kTemp);
      storages_[s].last_use = static_cast<int>(g_.nodes.size());
      Alloc(s);
      if (into_existing) {
        transient_.push_back(s);
      } else {
        SetGrad(e, s);
      }
      if (is_param && PerLayer()) accumulated_.push_back({e, s});
    }
  }

  sym::Expr GradBytes(int v) const {
    const RValue& rv = shapes_.values[v];
    if (rv.kind == RValue::Kind::kTensor) return BytesOf(rv.t);
    return sym::Expr(0);
  }

  // Replays a GradScaler sequence (analysis/grad_scaler.h).
  void Replay(const std::vector<ScalerEvent>& events, StepPhase phase) {
    for (const ScalerEvent& e : events) {
      if (e.kind == ScalerEvent::Kind::kAlloc) {
        if (e.tensor >= static_cast<int>(scaler_.size())) scaler_.resize(e.tensor + 1, -1);
        scaler_[e.tensor] = NewStorage(sym::Expr(e.bytes), e.category);
        Alloc(scaler_[e.tensor]);
      } else if (e.kind == ScalerEvent::Kind::kFree) {
        Free(scaler_[e.tensor]);
      } else {
        Point(phase, -1);
      }
    }
  }

  bool Galore() const { return options_.galore.has_value() && tr_.galore_targets.size() == g_.params.size(); }
  bool PerLayer() const { return Galore() && options_.galore->per_layer; }

  // Replays one parameter's update (analysis/galore_model.h); the slots, the
  // loop's local names, persist from one parameter to the next. NB: every
  // temporary is a constant and nothing else changes meanwhile, so the update
  // is kept as one TEMP amount (update_temp_) set at its largest moment, the
  // only one that can be the peak, and then to what the slots still hold:
  // two symbolic additions per parameter, not one per tensor.
  void ReplayUpdate(size_t param, StepPhase phase) {
    const auto& p = g_.params[param];
    const std::vector<UpdateEvent> events =
        GaloreUpdate(p.shape, p.dtype, tr_.galore_targets[param], *options_.galore, options_.galore->svd_step);
    std::map<int, int64_t> bytes;
    int64_t live = 0, most = -1;
    for (int64_t b : slot_bytes_) live += b;
    for (const UpdateEvent& e : events) {
      if (e.kind == UpdateEvent::Kind::kAlloc) {
        bytes[e.tensor] = e.bytes;
        live += e.bytes;
      } else if (e.kind == UpdateEvent::Kind::kFree) {
        live -= bytes[e.tensor];
      } else if (e.kind == UpdateEvent::Kind::kBind) {
        live -= slot_bytes_[e.slot];
        slot_bytes_[e.slot] = e.tensor >= 0 ? bytes[e.tensor] : 0;
      } else {
        most = std::max(most, live);
      }
    }
    if (most >= 0) {
      SetUpdateTemp(most);
      Point(phase, -1);
    }
    SetUpdateTemp(live);
  }
  void SetUpdateTemp(int64_t bytes) {
    if (bytes == update_temp_) return;
    const sym::Expr delta(bytes - update_temp_);
    live_[static_cast<int>(MemCategory::kTemp)] += delta;
    live_total_ += delta;
    update_temp_ = bytes;
  }
  void FreeSlots() {
    slot_bytes_.fill(0);
    SetUpdateTemp(0);
  }

  // The per-layer weight update: each parameter whose gradient was just
  // accumulated is stepped by its own optimizer (so step() returns and drops
  // its locals), then its gradient is freed (p.grad = None; the engine's
  // reference to it goes when the hook returns).
  void StepAccumulated() {
    if (param_of_value_.empty()) {
      for (size_t i = 0; i < g_.params.size(); ++i) {
        if (g_.params[i].value >= 0 && grads_.param_trainable[i]) param_of_value_[g_.params[i].value] = i;
      }
    }
    for (const auto& [value, grad] : accumulated_) {
      if (auto it = param_of_value_.find(value); it != param_of_value_.end()) {
        ReplayUpdate(it->second, StepPhase::kBackward);
        FreeSlots();
      }
      grad_of_[value] = -1;
      storages_[grad].grad_refs = 0;
      Free(grad);  // NB: no point: the next one records the drop, and it cannot be a peak.
    }
    accumulated_.clear();
  }

  // The foreach step: each whole-list temporary at once (optimizer_model.h's ForeachMoments).
  void ForeachOptimizer() {
    int64_t total = 0;
    for (size_t i = 0; i < g_.params.size(); ++i) {
      if (grads_.param_trainable[i]) total += ir::Numel(g_.params[i].shape) * ElementSize(g_.params[i].dtype);
    }
    for (int64_t bytes : ForeachMoments(options_.optimizer, total).value_or(std::vector<int64_t>{})) {
      SetUpdateTemp(bytes);
      Point(StepPhase::kOptimizer, -1);
    }
    SetUpdateTemp(0);
    Point(StepPhase::kOptimizer, -1);
  }

  // GaLore's AdamW, one loop over the parameters (nothing to do per layer: it ran in backward).
  void GaloreOptimizer() {
    if (!PerLayer()) {
      for (size_t i = 0; i < g_.params.size(); ++i) {
        if (grads_.param_trainable[i]) ReplayUpdate(i, StepPhase::kOptimizer);
      }
      FreeSlots();
    }
    Point(StepPhase::kOptimizer, -1);
  }

  // The single-tensor loop, parameter by parameter (optimizer_model.h's
  // UpdateTransients): e.g. Adam computes denom = (exp_avg_sq.sqrt() / c).add_(eps),
  // sqrt and quotient both alive, then the sqrt dies; the previous parameter's
  // denom dies only when the name is rebound after that, and the last one when
  // step() returns.
  void Optimizer() {
    if (options_.grad_scaler) {
      Replay(ScaledBackwardEnd(), StepPhase::kBackward);  // The backward's last act.
      Replay(Unscale(), StepPhase::kOptimizer);
    }
    if (options_.foreach) {
      ForeachOptimizer();
      if (options_.grad_scaler) Replay(Update(), StepPhase::kOptimizer);
      return;
    }
    if (Galore()) {
      GaloreOptimizer();
      if (options_.grad_scaler) Replay(Update(), StepPhase::kOptimizer);
      return;
    }
    int prev = -1;  // The previous parameter's carried temporaries.
    // bitsandbytes' paged optimizers step in one fused in-place kernel per tensor: no temporaries.
    for (size_t i = 0; i < g_.params.size() && !options_.paged; ++i) {
      if (!grads_.param_trainable[i]) continue;
      const auto& p = g_.params[i];
      // NB: with a state dtype the temporaries (Adam's sqrt and denom) are
      // computed from the states, so they are in the states' dtype.
      const UpdateTransients t = TransientsOf(options_.optimizer, p.shape, StateDtype(p.dtype, options_.state_dtype, false));
      if (t.moments.empty() && t.carried == 0) continue;
      for (size_t k = 0; k < t.moments.size(); ++k) {
        const int s = NewStorage(sym::Expr(t.moments[k]), MemCategory::kTemp);
        Alloc(s);
        Point(StepPhase::kOptimizer, -1);
        Free(s);
        // The previous parameter's carried tensor dies when its name is rebound.
        if (prev >= 0) Free(prev);
        prev = -1;
      }
      if (prev >= 0) Free(prev);
      prev = -1;
      if (t.carried > 0) {
        prev = NewStorage(sym::Expr(t.carried), MemCategory::kTemp);
        Alloc(prev);
      }
    }
    if (prev >= 0) Free(prev);
    Point(StepPhase::kOptimizer, -1);
    if (options_.grad_scaler) Replay(Update(), StepPhase::kOptimizer);
  }

  const ir::Graph& g_;
  const ShapeFacts& shapes_;
  const AutogradFacts& grads_;
  const TrainingOptions& options_;
  Report* report_;
  TrainingReport& tr_;
  std::vector<Storage> storages_;
  std::vector<int> storage_of_;
  std::vector<std::vector<int>> list_storages_;
  std::vector<std::vector<int>> node_new_, node_temps_, saved_storages_;
  std::vector<int> setup_;
  std::vector<int> grad_of_;
  std::vector<std::vector<int>> list_grads_;
  std::vector<int> transient_;
  std::vector<int> scaler_;  // GradScaler tensor -> its storage.
  std::vector<int> joined_;  // Gradients replaced by a join's sum, freed after the node.
  std::vector<std::vector<int>> release_at_;  // Storages whose last forward use is each node.
  std::vector<bool> runs_backward_;
  std::vector<int> grad_contributions_;  // Backward nodes still to add to each value's gradient.
  std::vector<std::vector<int>> forward_saved_;  // Per node: the storages it saves in the forward.
  // Checkpointing: each node's recomputed segment (or -1), the segments starting
  // and ending at each node, each segment's saved inputs, and what the segment
  // being recomputed holds until it is done.
  std::vector<int> ckpt_of_, ckpt_starting_at_, ckpt_ending_at_;
  std::vector<std::vector<int>> ckpt_inputs_;
  std::vector<int> held_, held_grads_;
  // GaLore: the update loop's local names, and the parameter gradients
  // accumulated at the node being run (per-layer update).
  std::array<int64_t, kNumSlots> slot_bytes_{};  // Bytes each local name holds.
  int64_t update_temp_ = 0;                      // TEMP bytes of the update running (slots included).
  std::vector<std::pair<int, int>> accumulated_;  // (parameter value, gradient storage)
  std::map<int, size_t> param_of_value_;          // Trainable parameter value -> its index in Graph::params.
  CategoryBytes live_;
  sym::Expr live_total_;
};

}  // namespace

void SimulateStep(const ir::Graph& graph, const passes::ShapeFacts& shapes, const passes::AutogradFacts& grads,
                  const TrainingOptions& options, Report* report) {
  Simulator sim(graph, shapes, grads, options, report);
  sim.Run();
}

}  // namespace torchcost::analysis
