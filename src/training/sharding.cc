#include "training/sharding.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "ir/int_math.h"
#include "training/optimizer_model.h"
#include "training/shard_plan.h"
#include "training/zero3_schedule.h"

namespace torchcost::training {
namespace {

using ir::CeilDiv;

constexpr int kParam = static_cast<int>(MemCategory::kParam);
constexpr int kGrad = static_cast<int>(MemCategory::kGrad);
constexpr int kTemp = static_cast<int>(MemCategory::kTemp);
constexpr int kOpt = static_cast<int>(MemCategory::kOpt);

class Rewriter {
 public:
  // `zero3`: ZeRO-3's schedule of gathers (null for other strategies).
  Rewriter(const ShardPlan& plan, const Zero3Schedule* zero3,
           const TrainingOptions& o, TrainingReport* tr)
      : plan_(plan), zero3_(zero3), o_(o), s_(o.sharding), tr_(*tr) {}

  void Run() {
    const auto& tl = tr_.timeline;
    first_opt_ = tl.size();
    for (size_t i = 0; i < tl.size(); ++i) {
      if (tl[i].phase == StepPhase::kOptimizer) {
        first_opt_ = i;
        break;
      }
      if (tl[i].phase == StepPhase::kSetup)
        grad_pre_ = Constant(tl[i].live[kGrad]);
    }
    Coverage();
    TimelinePoints out;
    out.reserve(tl.size() + plan_.update.size() * 2 + 1);
    const bool new_update = !plan_.update.empty();
    const size_t end = new_update ? first_opt_ : tl.size();
    int64_t prev_produced = 0, flushed = 0;
    int current_unit = -1, last_node = -1;
    for (size_t i = 0; i < end; ++i) {
      const TimelinePoint& p = tl[i];
      const bool runs_nodes =
          p.phase == StepPhase::kForward || p.phase == StepPhase::kBackward;
      if (!runs_nodes) last_node = -1;
      if (runs_nodes && p.node >= 0) last_node = p.node;
      const int64_t produced = Constant(p.live[kGrad]) - grad_pre_;
      if (s_.strategy == ShardStrategy::kFsdp &&
          p.phase == StepPhase::kBackward) {
        // FSDP reduce-scatters a unit's gradients when its backward is done.
        const int u = p.node >= 0 ? plan_.innermost_unit[p.node] : -1;
        if (current_unit >= 0 && u != current_unit &&
            !Contains(current_unit, p.node))
          flushed = prev_produced;
        current_unit = u;
      }
      const int64_t made = std::max<int64_t>(produced - prev_produced, 0);
      prev_produced = produced;
      out.push_back(
          Rewrite(p, Grad(p, produced, made, flushed), Param(p, i, last_node)));
    }
    if (new_update && first_opt_ > 0) Update(tl[first_opt_ - 1], out);
    tr_.timeline = std::move(out);
  }

 private:
  static int64_t Constant(const sym::Expr& e) {
    return e.AsConstant().value_or(0);
  }

  bool Contains(int u, int node) const {
    return node >= 0 && plan_.units[u].first_node <= node &&
           node <= plan_.units[u].last_node;
  }

  bool ShardsParams() const {
    return s_.strategy == ShardStrategy::kZero3 ||
           s_.strategy == ShardStrategy::kFsdp;
  }
  bool ShardsGrads() const { return ShardsGradients(s_.strategy); }

  // Bytes of FSDP's non-root units gathered at each node, by a difference
  // array over their node ranges (FULL_SHARD) or from their first node on
  // (SHARD_GRAD_OP: in the forward from there to its end, in the backward
  // down to there).
  void Coverage() {
    if (s_.strategy != ShardStrategy::kFsdp) return;
    cover_.assign(plan_.innermost_unit.size() + 1, 0);
    for (const ShardUnit& u : plan_.units) {
      if (u.root) {
        root_bytes_ += u.full_bytes;
      } else if (u.first_node >= 0) {
        cover_[u.first_node] += u.full_bytes;
        if (s_.reshard_after_forward) cover_[u.last_node + 1] -= u.full_bytes;
      }
    }
    for (size_t n = 1; n < cover_.size(); ++n) cover_[n] += cover_[n - 1];
  }

  // One rank's parameters at `p`, timeline point `i` (`last_node`: the last
  // node of its phase so far, or -1): its shards, plus every parameter
  // gathered now: ZeRO-3's by its schedule (with the persistent ones,
  // always); FSDP's root from its forward to the end of backward, a unit over
  // its node range (FULL_SHARD: in backward with the next unit prefetched;
  // SHARD_GRAD_OP: from its first node on, also where no node runs).
  // NB: SHARD_GRAD_OP's first unit stays at the backward's last point, after
  // its post-backward hook.
  int64_t Param(const TimelinePoint& p, size_t i, int last_node) const {
    if (!ShardsParams()) return Constant(p.live[kParam]);
    // NB: offloaded shards are on the host (but ZeRO-3's persistent ones);
    // each gather's copy up is part of the gathered parameters.
    const int64_t shards =
        s_.offload_params ? plan_.persistent_shard_bytes : plan_.param_bytes;
    const int64_t base = Constant(p.live[kParam]) - plan_.full_param_bytes +
                         shards + plan_.persistent_bytes;
    if (p.phase != StepPhase::kForward && p.phase != StepPhase::kBackward)
      return base;
    if (zero3_ != nullptr) return base + zero3_->GatheredAt(i);
    int64_t gathered = root_bytes_;
    if (!s_.reshard_after_forward) {
      return base + gathered + (last_node >= 0 ? cover_[last_node] : 0);
    }
    if (p.node >= 0) {
      gathered += cover_[p.node];
      const int u = plan_.innermost_unit[p.node];
      if (p.phase == StepPhase::kBackward && s_.prefetch && u >= 0) {
        const int next = plan_.units[u].prefetch;
        if (next >= 0 && !Contains(next, p.node))
          gathered += plan_.units[next].full_bytes;
      }
    }
    return base + gathered;
  }

  // One rank's gradients at `p`, `produced` bytes of them made by this
  // backward so far, `made` of those at `p` itself, `flushed` reduced by
  // FSDP's unit boundaries.
  int64_t Grad(const TimelinePoint& p, int64_t produced, int64_t made,
               int64_t flushed) const {
    const int64_t grad = Constant(p.live[kGrad]);
    if (s_.strategy == ShardStrategy::kDdp) {
      // Buckets hold every gradient from DDP's construction on; .grad is a
      // second copy, or views them: then a gradient AccumulateGrad makes is
      // copied into its bucket by the reducer's hook and freed, so only the
      // one made at `p` is whole (torch/csrc/distributed/c10d/reducer.cpp,
      // mark_variable_ready_dense: `grad = bucket_view`).
      if (!s_.gradient_as_bucket_view) return grad + plan_.full_grad_bytes;
      return plan_.full_grad_bytes +
             (p.phase == StepPhase::kBackward ? made : 0);
    }
    if (IsZero(s_.strategy) && s_.contiguous_gradients)
      return ContiguousGrad(p, grad, produced, made);
    if (!ShardsGrads()) return grad;
    // Gradients present before the step (accumulation, zeros) are held as the
    // rank's shard; with ZeRO-Offload on the host.
    const bool offload = s_.offload_optimizer;
    const int64_t pre = grad_pre_ > 0 && !offload ? plan_.grad_bytes : 0;
    if (p.phase != StepPhase::kBackward)
      return p.phase == StepPhase::kOptimizer && !offload ? plan_.grad_bytes
                                                          : pre;
    int64_t reduced = flushed;
    if (s_.strategy != ShardStrategy::kFsdp) {
      // ZeRO reduces a bucket whenever reduce_bucket_size elements are ready.
      const int64_t bucket =
          s_.reduce_bucket_elements * plan_.grad_element_bytes;
      reduced = bucket > 0 ? produced / bucket * bucket : produced;
    }
    // NB: a rank keeps ceil(reduced / N) bytes of what was reduced
    // (ZeRO-Offload copies them to the host); the bytes in flight (made, not
    // yet reduced) are whole.
    return pre + (offload ? 0 : CeilDiv(reduced, ShardWorld(s_))) +
           (produced - reduced);
  }

  // DeepSpeed's gradients with contiguous_gradients (stage_1_and_2.py,
  // stage3.py at deepspeedai/DeepSpeed edaa722; ShardPlan::
  // bucket_buffer_bytes): a gradient is copied into the bucket buffer by its
  // hook as soon as it is made, so only the one made at `p` is whole.
  // NB: a parameter larger than the bucket is reduced from its own gradient,
  // which the model also holds whole only where it is made.
  int64_t ContiguousGrad(const TimelinePoint& p, int64_t grad, int64_t produced,
                         int64_t made) const {
    const bool backward = p.phase == StepPhase::kBackward;
    const bool offload = s_.offload_optimizer;
    const int64_t staging = plan_.offload_staging_bytes;
    if (s_.strategy == ShardStrategy::kZero3) {
      // The bucket buffer and the flat gradient partition
      // (grad_partitions_flat_buffer, on the host with offload) from
      // initialization on.
      return plan_.bucket_buffer_bytes + (offload ? 0 : plan_.grad_bytes) +
             (backward ? made : 0);
    }
    // ZeRO-1/2: the buffers from the backward's first gradient
    // (setup_buckets in the hook) to its end (_release_ipg_buffers).
    const int64_t buffers =
        backward && produced > 0 ? plan_.bucket_buffer_bytes : 0;
    // NB: ZeRO-1 keeps its whole gradients through the backward; copying the
    // rank's partition after it moves bytes without adding any.
    if (s_.strategy == ShardStrategy::kZero1) return grad + buffers;
    // ZeRO-2: the rank's flat partition (grads_in_partition) is allocated
    // whole at the first reduction, when a bucket is full, and kept through
    // the optimizer step; ZeRO-Offload copies to the host instead. Gradients
    // present before the step are held in it.
    const int64_t pre = grad_pre_ > 0 && !offload ? plan_.grad_bytes : 0;
    if (!backward) {
      return staging + (p.phase == StepPhase::kOptimizer && !offload
                            ? plan_.grad_bytes
                            : pre);
    }
    const int64_t bucket = s_.reduce_bucket_elements * plan_.grad_element_bytes;
    const int64_t partition =
        produced > bucket && !offload ? plan_.grad_bytes : pre;
    return staging + partition + buffers + made;
  }

  TimelinePoint Rewrite(const TimelinePoint& p, int64_t grad,
                        int64_t param) const {
    TimelinePoint q = p;
    const int64_t opt = Constant(p.live[kOpt]);
    // NB: ZeRO-Offload's states and masters are on the host.
    const int64_t new_opt =
        opt == 0 || s_.offload_optimizer
            ? 0
            : opt - plan_.simulated_opt_bytes + plan_.opt_bytes;
    // delta = the changed categories' differences, so the total costs one
    // addition.
    const int64_t delta = (param - Constant(p.live[kParam])) +
                          (grad - Constant(p.live[kGrad])) + (new_opt - opt);
    q.live[kParam] = sym::Expr(param);
    q.live[kGrad] = sym::Expr(grad);
    q.live[kOpt] = sym::Expr(new_opt);
    if (delta != 0) q.total = p.total + sym::Expr(delta);
    return q;
  }

  // The optimizer step over the rank's update tensors (flat shards, or
  // float32 masters), in the single-tensor loop of memory/optimizer_replay.cc:
  // a tensor's `carried` temporary dies at the next tensor's first moment.
  // `last` is the simulated point before the step.
  void Update(const TimelinePoint& last, TimelinePoints& out) const {
    TimelinePoint p = last;
    // After backward: every bucket reduced, every unit resharded.
    p.phase = StepPhase::kOptimizer;
    p.node = -1;
    const TimelinePoint after = Rewrite(p, Grad(p, 0, 0, 0), Param(p, 0, -1));
    // A point of the step: `after` with `grad` bytes of gradients and `temp`
    // bytes of temporaries more.
    auto emit = [&](int64_t grad, int64_t temp) {
      TimelinePoint q = after;
      const int64_t old_grad = Constant(after.live[kGrad]);
      q.live[kGrad] = sym::Expr(grad);
      q.live[kTemp] = after.live[kTemp] + sym::Expr(temp);
      q.total = after.total + sym::Expr(grad - old_grad + temp);
      out.push_back(std::move(q));
    };
    int64_t grad = Constant(after.live[kGrad]);
    // ZeRO-Offload steps on the host (DeepSpeedCPUAdam): no device
    // temporaries.
    if (s_.offload_optimizer) {
      emit(grad, 0);
      return;
    }
    // DeepSpeed's step with float32 masters (stage_1_and_2.py and stage3.py
    // step at deepspeedai/DeepSpeed edaa722): ZeRO-1/2 flatten the rank's
    // 16-bit gradient partition (a copy; ZeRO-1 first frees the gradients of
    // other ranks' partitions), cast it to the masters' float32 gradient and
    // free the 16-bit ones; ZeRO-3 casts its flat buffer, which stays. The
    // optimizer steps with the float32 gradient alive, then it is freed.
    // NB: TEMP holds the copies; one sub_group_size group is assumed.
    int64_t master_grad = 0;
    if (IsZero(s_.strategy) && s_.contiguous_gradients && o_.master_weights) {
      int64_t elements = 0;
      for (const UpdateTensor& t : plan_.update) elements += t.elements;
      master_grad = 4 * elements;
      if (s_.strategy != ShardStrategy::kZero3) {
        const int64_t partition = elements * plan_.grad_element_bytes;
        emit(partition, partition);                // flatten
        emit(partition, partition + master_grad);  // .to(float32)
        grad = 0;
      }
    }
    // The update's temporaries: none for a fused step; else the single-
    // tensor loop's.
    int64_t carried = 0;
    for (const UpdateTensor& t : plan_.update) {
      if (o_.fused) break;
      const UpdateTransients tr =
          TransientsOf(o_.optimizer, {t.elements}, t.dtype);
      if (tr.moments.empty() && tr.carried == 0) continue;
      for (int64_t m : tr.moments) {
        emit(grad, master_grad + m + carried);
        carried = 0;
      }
      carried = tr.carried;
    }
    if (master_grad > 0) emit(grad, master_grad);
    emit(grad, 0);
  }

  const ShardPlan& plan_;
  const Zero3Schedule* zero3_;
  const TrainingOptions& o_;
  const ShardingOptions& s_;
  TrainingReport& tr_;
  size_t first_opt_ = 0;
  int64_t grad_pre_ = 0;
  int64_t root_bytes_ = 0;
  std::vector<int64_t> cover_;
};

// Payload per collective and the rank's states, for the report; `accumulate`
// micro-batches per step.
void Summarize(const ir::Graph& g, const ShardPlan& plan,
               const Zero3Schedule* zero3, const ShardingOptions& s,
               int accumulate, ShardingReport* r) {
  r->strategy = s.strategy;
  r->world = s.world;
  r->reshard_after_forward = s.reshard_after_forward;
  r->shard_group = s.shard_group;
  r->param_bytes = plan.param_bytes + plan.persistent_bytes;
  r->grad_bytes = plan.grad_bytes;
  r->opt_bytes = plan.opt_bytes;
  r->unsharded_param_bytes = plan.full_param_bytes;
  r->unsharded_grad_bytes = plan.full_grad_bytes;
  r->unsharded_opt_bytes = plan.full_opt_bytes;
  r->ddp_buckets = plan.ddp_buckets;
  if (s.offload_optimizer) {
    r->offload_optimizer = true;
    r->host_opt_bytes = plan.opt_bytes;
    // The shard's elements in float32 (4 bytes each), as the masters' grads.
    const int64_t elements = plan.grad_element_bytes > 0
                                 ? plan.grad_bytes / plan.grad_element_bytes
                                 : 0;
    r->host_grad_bytes = 4 * elements;
    // Down: the gradient shard; up: the updated parameter shard, the same
    // elements in the same 16-bit dtype.
    r->host_transfer_bytes = 2 * plan.grad_bytes;
    r->grad_bytes = 0;
    r->opt_bytes = 0;
  }
  if (s.offload_params) {
    r->offload_params = true;
    r->host_param_bytes = plan.param_bytes - plan.persistent_shard_bytes;
    r->param_bytes = plan.persistent_bytes + plan.persistent_shard_bytes;
    // Down: the gradient shard; up: a rank's shard of each gather (1/N of
    // its payload): FSDP's in the forward and again in the backward, ZeRO-3's
    // as scheduled.
    const int64_t gathered_shards =
        zero3 != nullptr ? zero3->all_gather_bytes() / s.world
                         : (s.reshard_after_forward ? 2 : 1) * plan.param_bytes;
    r->host_transfer_bytes = plan.grad_bytes + gathered_shards;
  }
  r->contiguous_gradients = plan.bucket_buffers > 0;
  if (r->contiguous_gradients)
    r->reduce_bucket_elements = s.reduce_bucket_elements;
  r->bucket_buffers = plan.bucket_buffers;
  r->bucket_buffer_bytes = plan.bucket_buffer_bytes;
  r->offload_staging_bytes = plan.offload_staging_bytes;
  if (zero3 != nullptr) {
    r->prefetch_bucket_elements = s.prefetch ? s.prefetch_bucket_elements : 0;
    r->max_live_elements = s.max_live_elements;
    r->max_reuse_elements = s.max_reuse_elements;
    r->persistence_threshold = s.persistence_threshold;
    r->persistent_param_bytes = plan.persistent_bytes;
    r->peak_gathered_bytes = zero3->peak_gathered_bytes();
  }
  for (const ShardUnit& u : plan.units) {
    r->units.push_back(g.scopes[u.scope].path);
    r->largest_unit_bytes = std::max(r->largest_unit_bytes, u.full_bytes);
  }
  if (s.world <= 1) return;  // One rank communicates nothing.
  // ZeRO reduces the gradients in buckets of reduce_bucket_size elements.
  const int64_t reduce_bucket =
      std::max<int64_t>(s.reduce_bucket_elements, 1) * plan.grad_element_bytes;
  const int reduce_buckets =
      static_cast<int>((plan.full_grad_bytes + reduce_bucket - 1) /
                       std::max<int64_t>(reduce_bucket, 1));
  switch (s.strategy) {
    case ShardStrategy::kNone:
      break;
    case ShardStrategy::kDdp:
      r->all_reduce_bytes = plan.full_grad_bytes;
      r->all_reduce_calls = plan.ddp_buckets;
      break;
    case ShardStrategy::kZero1:
    case ShardStrategy::kZero2:
      // Reduce-scatter the gradients, all-gather the updated parameters
      // (Rajbhandari et al. 2020, Sec. 7.2.1).
      r->reduce_scatter_bytes = plan.full_grad_bytes;
      r->reduce_scatter_calls = reduce_buckets;
      r->all_gather_bytes = plan.full_grad_bytes;
      r->after_step_all_gather_bytes = r->all_gather_bytes;
      break;
    case ShardStrategy::kZero3:
      // The schedule's gathers, and the persistent parameters gathered after
      // the optimizer step (stage3.py _post_step).
      r->reduce_scatter_bytes = plan.full_grad_bytes;
      r->reduce_scatter_calls = reduce_buckets;
      r->all_gather_bytes = zero3->all_gather_bytes() + plan.persistent_bytes;
      r->all_gather_calls = zero3->all_gather_calls();
      r->after_step_all_gather_bytes = plan.persistent_bytes;
      break;
    case ShardStrategy::kFsdp:
      r->reduce_scatter_bytes = plan.full_grad_bytes;
      // Each unit gathered in the forward and again in the backward
      // (SHARD_GRAD_OP: once); the root once.
      for (const ShardUnit& u : plan.units) {
        if (u.root || u.first_node >= 0) {
          const int gathers = u.root || !s.reshard_after_forward ? 1 : 2;
          r->all_gather_bytes += u.full_bytes * gathers;
          r->all_gather_calls += gathers;
          ++r->reduce_scatter_calls;
        }
      }
      // HYBRID_SHARD: the reduced gradient shards all-reduced across the
      // groups.
      if (ShardWorld(s) < s.world) {
        r->all_reduce_bytes = plan.grad_bytes;
        r->all_reduce_calls = r->reduce_scatter_calls;
      }
      break;
  }
  if (accumulate > 1 && ShardsGradients(s.strategy)) {
    // NB: with gradient accumulation ZeRO-2 and ZeRO-3 reduce every micro-
    // batch's gradients (DeepSpeed edaa722, engine.py allreduce_gradients:
    // "ZeRO stage >= 2 communicates during non gradient accumulation
    // boundaries as well"), ZeRO-3 and FSDP gather the parameters for every
    // micro-batch, and FSDP reduce-scatters every micro-batch's gradients (no
    // no_sync(), as the rank's sharded gradients above assume). DDP and ZeRO-1
    // reduce at the last micro-batch only (DDP under no_sync(), as Hugging
    // Face Accelerate and Lightning accumulate; ZeRO-1 at DeepSpeed's
    // accumulation boundary). The gathers after the optimizer step run once.
    const int64_t gathered =
        r->all_gather_bytes - r->after_step_all_gather_bytes;
    r->all_gather_bytes =
        accumulate * gathered + r->after_step_all_gather_bytes;
    r->all_gather_calls *= accumulate;
    r->reduce_scatter_bytes *= accumulate;
    r->reduce_scatter_calls *= accumulate;
    r->all_reduce_bytes *= accumulate;
    r->all_reduce_calls *= accumulate;
  }
}

}  // namespace

Status ShardStep(const ir::Graph& graph, const std::vector<bool>& trainable,
                 const std::vector<bool>& requires_grad,
                 const TrainingOptions& options, Report* report) {
  TrainingReport& tr = report->training;
  tr.sharding = ShardingReport();
  tr.sharding.world = options.sharding.world;
  tr.sharding.master_weights =
      options.master_weights && options.mode == StepMode::kTrain;
  const bool sharded = options.sharding.strategy != ShardStrategy::kNone;
  if (options.mode != StepMode::kTrain) return Status::Ok();
  // NB: expert parallelism's experts are data-parallel over world / ep ranks
  // only (Megatron-core's expert data-parallel group); ZeRO and FSDP would
  // shard their states over all world ranks here, so that pairing is refused.
  if (options.sharding.strategy != ShardStrategy::kNone &&
      options.sharding.strategy != ShardStrategy::kDdp) {
    for (const ir::Node& n : graph.nodes) {
      if (n.op == "torchcost::all_to_all") {
        return Status::InvalidArgument(
            "StepConfig.shard " +
            std::string(ShardStrategyName(options.sharding.strategy)) +
            ": not modelled with expert parallelism (ep > 1): use ddp or none");
      }
    }
  }
  Result<ShardPlan> plan = PlanShards(graph, trainable, options);
  if (!plan.ok()) return plan.status();
  std::optional<Zero3Schedule> zero3;
  if (options.sharding.strategy == ShardStrategy::kZero3)
    zero3.emplace(graph, *plan, requires_grad, tr.timeline, options.sharding);
  const Zero3Schedule* schedule = zero3 ? &*zero3 : nullptr;
  if (sharded || options.master_weights)
    Rewriter(*plan, schedule, options, &tr).Run();
  Summarize(graph, *plan, schedule, options.sharding, options.accumulate,
            &tr.sharding);
  // One rank steps its shards only: its share of the optimizer's FLOPs and
  // bytes, both per element (rank elements / trainable elements).
  if (!plan->step_tensors.empty() && tr.grad_params > 0) {
    int64_t rank = 0;
    for (int64_t n : plan->step_tensors) rank += n;
    auto share = [&](const sym::Expr& e) {
      const std::optional<int64_t> v = e.AsConstant();
      return v ? sym::Expr(static_cast<int64_t>(static_cast<__int128>(*v) *
                                                rank / tr.grad_params))
               : e;
    };
    const sym::Expr whole = tr.flops_optimizer;
    tr.flops_optimizer = share(whole);
    tr.flops_step = tr.flops_step - whole + tr.flops_optimizer;
    tr.optimizer_bytes = share(tr.optimizer_bytes);
    tr.rank_step_tensors = plan->step_tensors;
  }
  if (options.sharding.offload_params) {
    report->diagnostics.push_back(
        {Diagnostic::Severity::kNote,
         "parameter offload: the optimizer step runs on the host and every "
         "gather copies its parameter shards up from the host; a predicted "
         "time counts neither"});
  } else if (options.sharding.offload_optimizer) {
    report->diagnostics.push_back(
        {Diagnostic::Severity::kNote,
         "ZeRO-Offload: the optimizer step runs on the host (DeepSpeedCPUAdam) "
         "and the gradient and parameter shards cross the host link; a "
         "predicted time counts neither"});
  }
  return Status::Ok();
}

}  // namespace torchcost::training
