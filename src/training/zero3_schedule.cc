#include "training/zero3_schedule.h"

#include <algorithm>
#include <limits>

namespace torchcost::training {
namespace {

// A module entered (its pre-forward or pre-backward hook) or exited (its
// post-forward or post-backward hook) at a timeline point.
struct ModuleEvent {
  size_t point = 0;
  int scope = 0;
  bool enter = false;
};

// Whether torch calls a module of this scope, so that its hooks fire: a
// ModuleList or ModuleDict only holds modules.
bool Called(const ir::Scope& s) {
  return s.type != "ModuleList" && s.type != "ModuleDict";
}

// Whether a gradient reaches each scope's inputs: some value that requires
// one, not a parameter, is read inside the scope's subtree and made outside
// it (a graph input, or another module's output). DeepSpeed's post-backward
// hook sits on those inputs (PostBackwardFunctionModule), so a module without
// one releases only at the backward's end (release_backward_leftovers).
std::vector<bool> TakesGradients(const ir::Graph& g,
                                 const std::vector<bool>& requires_grad) {
  std::vector<bool> takes(g.scopes.size(), false);
  for (const ir::Node& n : g.nodes) {
    for (int v : n.inputs) {
      if (static_cast<size_t>(v) >= requires_grad.size() || !requires_grad[v] ||
          g.values[v].role == ir::ValueRole::kParam) {
        continue;
      }
      // Marks the scopes from the reader up to, not including, the lowest one
      // that also holds the producer (none for a graph input).
      const int producer = g.values[v].producer;
      int a = std::max(n.scope, 0);
      int b = producer >= 0 ? std::max(g.nodes[producer].scope, 0) : -1;
      while (a >= 0 && a != b) {
        if (b < 0 || g.scopes[a].depth >= g.scopes[b].depth) {
          takes[a] = true;
          a = g.scopes[a].parent;
        } else {
          b = g.scopes[b].parent;
        }
      }
    }
  }
  return takes;
}

// The module events of `timeline`: each forward or backward point enters the
// called scopes of its node that are not entered and exits those it is
// outside of (inner ones first); the turn from forward to backward exits
// every scope, as the forward's last hooks do before the backward's first; a
// point of neither phase after them exits every scope. In the backward, a
// scope no gradient enters (TakesGradients) exits only at the backward's end.
// NB: a point without a node (the loss) stays inside the scopes it is in.
std::vector<ModuleEvent> ModuleEvents(const ir::Graph& g,
                                      const std::vector<bool>& takes_gradients,
                                      const TimelinePoints& timeline) {
  std::vector<ModuleEvent> events;
  std::vector<int> stack, chain, deferred;  // Root first.
  StepPhase phase = StepPhase::kSetup;
  int last_scope = -1;
  auto exit_to = [&](size_t point, size_t depth) {
    while (stack.size() > depth) {
      if (phase == StepPhase::kBackward && !takes_gradients[stack.back()]) {
        deferred.push_back(stack.back());
      } else {
        events.push_back({point, stack.back(), false});
      }
      stack.pop_back();
    }
  };
  auto exit_all = [&](size_t point) {
    exit_to(point, 0);
    for (int s : deferred) events.push_back({point, s, false});
    deferred.clear();
    last_scope = -1;
  };
  for (size_t i = 0; i < timeline.size(); ++i) {
    const StepPhase p = timeline.phase(i);
    if (p != StepPhase::kForward && p != StepPhase::kBackward) {
      exit_all(i);
      phase = p;
      continue;
    }
    const int node = timeline.node(i);
    if (node < 0) continue;
    if (p != phase) exit_all(i);
    phase = p;
    const int scope = std::max(g.nodes[node].scope, 0);
    if (scope == last_scope) continue;
    last_scope = scope;
    chain.clear();
    for (int s = scope; s >= 0; s = g.scopes[s].parent) {
      if (Called(g.scopes[s])) chain.push_back(s);
    }
    std::reverse(chain.begin(), chain.end());
    size_t common = 0;
    while (common < stack.size() && common < chain.size() &&
           stack[common] == chain[common]) {
      ++common;
    }
    exit_to(i, common);
    for (size_t k = common; k < chain.size(); ++k) {
      events.push_back({i, chain[k], true});
      stack.push_back(chain[k]);
    }
  }
  exit_all(timeline.size());
  return events;
}

// The coordinator's state over the trace, one step of which is each module
// entry.
class Coordinator {
 public:
  Coordinator(const ir::Graph& g, const ShardPlan& plan,
              const ShardingOptions& s, const std::vector<int>& trace)
      : s_(s) {
    const size_t np = g.params.size();
    numel_.resize(np);
    bytes_.resize(np);
    for (size_t i = 0; i < np; ++i) {
      numel_[i] = ir::Numel(g.params[i].shape);
      // NB: the gathered buffer is N padded shards, as ShardUnit::full_bytes.
      const int64_t shard = (numel_[i] + s.world - 1) / s.world;
      bytes_[i] =
          s.world > 1 ? s.world * shard * ElementSize(g.params[i].dtype) : 0;
    }
    ModuleParams(g, plan);
    // The parameter trace: each step's module's parameters in order, with
    // each parameter's steps (CSR) and the elements traversed before a step.
    uses_begin_.assign(np + 1, 0);
    prefix_.assign(trace.size() + 1, 0);
    for (size_t t = 0; t < trace.size(); ++t) {
      prefix_[t + 1] = prefix_[t];
      for (int p : Params(trace[t])) {
        queue_.push_back({p, static_cast<int64_t>(t)});
        ++uses_begin_[p + 1];
        prefix_[t + 1] += numel_[p];
      }
    }
    for (size_t p = 0; p < np; ++p) uses_begin_[p + 1] += uses_begin_[p];
    uses_.resize(queue_.size());
    std::vector<size_t> fill(uses_begin_.begin(), uses_begin_.end() - 1);
    for (const QueuedParam& q : queue_) uses_[fill[q.param]++] = q.step;
    next_use_ = std::vector<size_t>(uses_begin_.begin(), uses_begin_.end() - 1);
    persistent_.resize(np);
    available_.resize(np);
    for (size_t p = 0; p < np; ++p) {
      persistent_[p] = plan.persistent[p];
      available_[p] = persistent_[p];
    }
    active_.assign(np, 0);
    most_recent_.assign(np, std::numeric_limits<int64_t>::min());
  }

  int64_t gathered() const { return gathered_; }
  int64_t all_gather_bytes() const { return all_gather_bytes_; }
  int all_gather_calls() const { return all_gather_calls_; }

  // fetch_sub_module: gathers the module's parameters, then prefetches.
  // NB: the module's missing parameters are gathered in one coalesced call,
  // and those prefetched in another.
  void Fetch(int scope) {
    int own_unfetched = 0;
    const int64_t before = all_gather_bytes_;
    for (int p : Params(scope)) {
      if (!available_[p]) Gather(p);
      ++active_[p];
      if (most_recent_[p] < step_) ++own_unfetched;
    }
    if (all_gather_bytes_ > before) ++all_gather_calls_;
    // The module's own parameters leave the queue's front.
    for (int k = 0; k < own_unfetched && head_ < queue_.size(); ++k, ++head_)
      most_recent_[queue_[head_].param] = queue_[head_].step;
    const int64_t bucket = s_.prefetch ? s_.prefetch_bucket_elements : 0;
    if (bucket > 0) {
      const int64_t limit = std::min(s_.max_live_elements - live_, bucket);
      int64_t prefetching = 0;
      while (head_ < queue_.size() && prefetching < limit) {
        const QueuedParam q = queue_[head_++];
        most_recent_[q.param] = std::max(most_recent_[q.param], q.step);
        if (available_[q.param]) continue;
        Gather(q.param);
        prefetching += numel_[q.param];
      }
      if (prefetching > 0) ++all_gather_calls_;
    }
    ++step_;
  }

  // release_sub_module: releases the module's parameters unless persistent,
  // prefetched for a later step, or used again within max_reuse_elements of
  // the parameters the trace runs next (__params_to_release).
  void Release(int scope) {
    for (int p : Params(scope)) {
      --active_[p];
      if (persistent_[p] || most_recent_[p] > step_) continue;
      size_t& next = next_use_[p];
      while (next < uses_begin_[p + 1] && uses_[next] < step_) ++next;
      // The scan over trace[step:] reaches step j while fewer than
      // max_reuse_elements were traversed before it: prefix[j] - prefix[step].
      if (next < uses_begin_[p + 1] &&
          prefix_[uses_[next]] - prefix_[step_] < s_.max_reuse_elements) {
        continue;
      }
      if (available_[p] && active_[p] == 0) {
        available_[p] = false;
        live_ -= numel_[p];
        gathered_ -= bytes_[p];
      }
    }
  }

 private:
  struct QueuedParam {
    int param = 0;
    int64_t step = 0;
  };

  // Each module's parameters (its own, and those its own nodes read from
  // outside its subtree: tied weights), in registration order.
  void ModuleParams(const ir::Graph& g, const ShardPlan& plan) {
    std::vector<std::vector<int>> of(g.scopes.size());
    std::vector<int> owner(g.params.size(), -1);
    for (size_t i = 0; i < g.params.size(); ++i) {
      const int u = i < plan.unit_of_param.size() ? plan.unit_of_param[i] : -1;
      if (u < 0) continue;
      owner[i] = plan.units[u].scope;
      of[owner[i]].push_back(static_cast<int>(i));
    }
    for (const ir::Node& n : g.nodes) {
      const int scope = std::max(n.scope, 0);
      for (int in : n.inputs) {
        const ir::Value& v = g.values[in];
        if (v.role != ir::ValueRole::kParam || v.table_index < 0) continue;
        const int p = v.table_index;
        if (owner[p] < 0 || ir::InSubtree(g, scope, owner[p])) continue;
        std::vector<int>& list = of[scope];
        if (std::find(list.begin(), list.end(), p) == list.end())
          list.push_back(p);
      }
    }
    params_begin_.assign(g.scopes.size() + 1, 0);
    for (size_t s = 0; s < of.size(); ++s) {
      std::sort(of[s].begin(), of[s].end());
      params_begin_[s + 1] = params_begin_[s] + of[s].size();
      params_.insert(params_.end(), of[s].begin(), of[s].end());
    }
  }

  struct Span {
    const int* b;
    const int* e;
    const int* begin() const { return b; }
    const int* end() const { return e; }
  };
  Span Params(int scope) const {
    return {params_.data() + params_begin_[scope],
            params_.data() + params_begin_[scope + 1]};
  }

  void Gather(int p) {
    available_[p] = true;
    live_ += numel_[p];
    gathered_ += bytes_[p];
    all_gather_bytes_ += bytes_[p];
  }

  const ShardingOptions& s_;
  std::vector<int64_t> numel_, bytes_;
  std::vector<size_t> params_begin_;
  std::vector<int> params_;
  std::vector<QueuedParam> queue_;
  size_t head_ = 0;
  std::vector<size_t> uses_begin_, next_use_;
  std::vector<int64_t> uses_, prefix_;
  std::vector<bool> persistent_, available_;
  std::vector<int> active_;
  std::vector<int64_t> most_recent_;
  int64_t step_ = 0, live_ = 0, gathered_ = 0, all_gather_bytes_ = 0;
  int all_gather_calls_ = 0;
};

}  // namespace

Zero3Schedule::Zero3Schedule(const ir::Graph& graph, const ShardPlan& plan,
                             const std::vector<bool>& requires_grad,
                             const TimelinePoints& timeline,
                             const ShardingOptions& options) {
  const std::vector<ModuleEvent> events =
      ModuleEvents(graph, TakesGradients(graph, requires_grad), timeline);
  std::vector<int> trace;
  for (const ModuleEvent& e : events) {
    if (e.enter) trace.push_back(e.scope);
  }
  Coordinator c(graph, plan, options, trace);
  for (size_t k = 0; k < events.size();) {
    const size_t point = events[k].point;
    for (; k < events.size() && events[k].point == point; ++k) {
      if (events[k].enter) {
        c.Fetch(events[k].scope);
      } else {
        c.Release(events[k].scope);
      }
    }
    if (changes_.empty() || changes_.back().second != c.gathered())
      changes_.push_back({point, c.gathered()});
    peak_gathered_bytes_ = std::max(peak_gathered_bytes_, c.gathered());
  }
  all_gather_bytes_ = c.all_gather_bytes();
  all_gather_calls_ = c.all_gather_calls();
}

int64_t Zero3Schedule::GatheredAt(size_t i) const {
  auto it =
      std::upper_bound(changes_.begin(), changes_.end(), i,
                       [](size_t point, const std::pair<size_t, int64_t>& c) {
                         return point < c.first;
                       });
  return it == changes_.begin() ? 0 : std::prev(it)->second;
}

}  // namespace torchcost::training
