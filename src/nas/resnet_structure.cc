// ResnetStructureComposer: the costs of ResNets that differ in blocks and
// kernel sizes per stage, from a cache of per-block contributions.
//
// NB: what composes. A stage's blocks after its first are the same block
// (same channels, stride 1, same spatial size), whatever the other stages
// hold, and a graph is the stem, each stage's first block, its repeated
// blocks and the head. A stage's kernel size k changes only that stage's
// blocks: padding k / 2 keeps every spatial size, (H + 2 * (k / 2) - k) / s + 1
// = (H - 1) / s + 1 for odd k, and channels do not depend on k. So every
// additive quantity (params, FLOPs forward and backward, bytes autograd saves,
// the bytes of parameters, buffers, optimizer states and gradients) is
//   Q(n, k) = Q(base) + sum_s [F(s, k_s) + (n_s - 2) * R(s, k_s)],
// where the base has two blocks per stage at the first kernel size k0,
// F(s, k) = Q(base with stage s at k) - Q(base) (zero at k0) and R(s, k) =
// Q(base with stage s at k and three blocks) - Q(base with stage s at k): one
// repeated block of stage s at k. The cache holds F and R, one entry per block
// configuration (stage, kernel), filled by 1 + 4 * (2K - 1) whole-graph
// analyses for K kernel sizes. The peak is a max over moments and does not
// add: it is bracketed by
//   lower = S + ACT   (at the end of the forward every parameter, buffer,
//                      optimizer state and input (S, the live bytes when the
//                      setup ends) and every saved tensor (ACT) are live),
//   upper = S + ACT + G + T   (each moment's live bytes are S, the ACT and
//                      GRAD then live (<= ACT, <= G: every gradient) and a
//                      transient: activations not saved, gradients of
//                      activations, temporaries; T is the largest transient of
//                      the probes' moments).
// NB: the upper bound assumes the largest transient is one block's own, so
// that it does not grow with depth (each moment runs inside one block, and
// the probes hold every block configuration); tests/nas check both bounds
// against whole-graph analyses.
#include <algorithm>
#include <string>
#include <vector>

#include "torchcost/families.h"
#include "torchcost/loss.h"
#include "torchcost/nas.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

enum Quantity {
  kParams,
  kTrainable,
  kForward,
  kBackward,
  kAct,
  kStatic,
  kGrads,
  kNumQuantities
};

struct Probe {
  std::array<__int128, kNumQuantities> q{};
  __int128 transient = 0;
};

std::string StageText(const std::array<int64_t, 4>& n) {
  return std::to_string(n[0]) + ":" + std::to_string(n[1]) + ":" +
         std::to_string(n[2]) + ":" + std::to_string(n[3]);
}

Result<__int128> At(const sym::Expr& e, const sym::Bindings& b) {
  return sym::Evaluate128(e, b);
}

}  // namespace

// Analyses the whole ResNet with `n` blocks and kernel sizes `k` per stage at
// the space's batch.
static Result<Probe> AnalyzeProbe(const ResnetStructureSpace& space,
                                  const RuleSet& rules,
                                  const std::array<int64_t, 4>& n,
                                  const std::array<int64_t, 4>& k) {
  const std::string config = space.config + (space.config.empty() ? "" : ",") +
                             "blocks=" + StageText(n) +
                             ",kernels=" + StageText(k);
  Result<builder::BuiltModel> built =
      builder::BuildNamedModel("resnet", config);
  if (!built.ok()) return built.status();
  const builder::BuiltModel& m = *built;
  sym::Context ctx;
  AnalysisOptions options = space.options;
  options.inputs.clear();
  for (const builder::InputDecl& in : m.inputs)
    options.inputs.push_back({builder::ResolveShape(m, in, ctx), in.dtype});
  ir::Graph graph = m.graph;
  if (options.training.mode == StepMode::kTrain && !m.default_loss.empty()) {
    Result<LossSpec> spec = ParseLossSpec(m.default_loss);
    if (!spec.ok()) return spec.status();
    options.training.loss = *spec;
    Result<ir::Graph> g = ApplyLoss(graph, rules, ctx, &options);
    if (!g.ok()) return g.status();
    graph = std::move(g).value();
  }
  Result<Report> r = Analyze(graph, rules, ctx, options);
  if (!r.ok()) return r.status();
  const TrainingReport& tr = r->training;
  const sym::Bindings bind = {{"B", space.batch}};
  Probe p;
  p.q[kParams] = r->params;
  p.q[kTrainable] = r->trainable_params;
  Result<__int128> v = At(tr.flops_forward, bind);
  if (!v.ok()) return v.status();
  p.q[kForward] = *v;
  if (!(v = At(tr.flops_backward, bind)).ok()) return v.status();
  p.q[kBackward] = *v;
  if (!(v = At(tr.saved_bytes, bind)).ok()) return v.status();
  p.q[kAct] = *v;
  // S: the live bytes when the setup ends; G: the most gradient bytes live at
  // once.
  for (const TimelinePoint& t : tr.timeline) {
    if (t.phase == StepPhase::kSetup) {
      if (!(v = At(t.total, bind)).ok()) return v.status();
      p.q[kStatic] = *v;
    }
    if (!(v = At(t.live[static_cast<int>(MemCategory::kGrad)], bind)).ok())
      return v.status();
    p.q[kGrads] = std::max(p.q[kGrads], *v);
  }
  // T: the largest transient, total - S - ACT live - GRAD live, over the
  // moments after the setup.
  for (const TimelinePoint& t : tr.timeline) {
    if (t.phase == StepPhase::kSetup) continue;
    Result<__int128> total = At(t.total, bind),
                     act =
                         At(t.live[static_cast<int>(MemCategory::kAct)], bind),
                     grad =
                         At(t.live[static_cast<int>(MemCategory::kGrad)], bind);
    if (!total.ok() || !act.ok() || !grad.ok())
      return Status::OutOfRange("resnet structure space: bytes overflow");
    p.transient = std::max(p.transient, *total - p.q[kStatic] - *act - *grad);
  }
  return p;
}

Result<ResnetStructureComposer> ResnetStructureComposer::Create(
    const ResnetStructureSpace& space, const RuleSet& rules) {
  if (space.batch < 1)
    return Status::InvalidArgument(
        "resnet structure space: batch must be >= 1");
  if (space.kernels.empty())
    return Status::InvalidArgument("resnet structure space: kernels is empty");
  // NB: peak_upper takes the probes' largest transient as one block's own; a
  // foreach step's temporaries span every parameter and grow with depth.
  if (space.options.training.foreach) {
    return Status::InvalidArgument(
        "resnet structure space: options.training.foreach: the peak's bounds "
        "assume the single-tensor optimizer step (its temporaries one "
        "parameter's)");
  }
  ResnetStructureComposer c;
  c.slot_.fill(-1);
  for (size_t j = 0; j < space.kernels.size(); ++j) {
    const int64_t k = space.kernels[j];
    if (k < 1 || k > kMaxKernel || k % 2 == 0 || c.slot_[k] >= 0) {
      return Status::InvalidArgument(
          "resnet structure space: kernels[" + std::to_string(j) +
          "] = " + std::to_string(k) + " must be odd, in [1, " +
          std::to_string(kMaxKernel) + "] and not repeated");
    }
    c.slot_[k] = static_cast<int>(j);
  }
  c.base_blocks_ = {2, 2, 2, 2};
  c.base_kernel_ = space.kernels[0];
  const std::array<int64_t, 4> base_kernels = {c.base_kernel_, c.base_kernel_,
                                               c.base_kernel_, c.base_kernel_};
  Result<Probe> base = AnalyzeProbe(space, rules, c.base_blocks_, base_kernels);
  if (!base.ok()) return base.status();
  c.analyses_ = 1;
  __int128 transient = base->transient;
  for (int q = 0; q < kNumQuantities; ++q) c.base_.v[q] = base->q[q];
  c.first_.resize(space.kernels.size());
  c.repeated_.resize(space.kernels.size());
  for (size_t j = 0; j < space.kernels.size(); ++j) {
    for (int s = 0; s < 4; ++s) {
      std::array<int64_t, 4> k = base_kernels;
      k[s] = space.kernels[j];
      // Stage s at kernel j, two blocks: the base itself for j = 0.
      Probe two = *base;
      if (j > 0) {
        Result<Probe> p = AnalyzeProbe(space, rules, c.base_blocks_, k);
        if (!p.ok()) return p.status();
        ++c.analyses_;
        two = *p;
      }
      std::array<int64_t, 4> n = c.base_blocks_;
      ++n[s];
      Result<Probe> three = AnalyzeProbe(space, rules, n, k);
      if (!three.ok()) return three.status();
      ++c.analyses_;
      for (int q = 0; q < kNumQuantities; ++q) {
        c.first_[j][s].v[q] = two.q[q] - base->q[q];
        c.repeated_[j][s].v[q] = three->q[q] - two.q[q];
      }
      transient = std::max({transient, two.transient, three->transient});
    }
  }
  c.transient_ = static_cast<int64_t>(transient);
  return c;
}

Result<StructuralCosts> ResnetStructureComposer::Evaluate(
    const std::array<int64_t, 4>& blocks) const {
  return Evaluate(blocks,
                  {base_kernel_, base_kernel_, base_kernel_, base_kernel_});
}

Result<StructuralCosts> ResnetStructureComposer::Evaluate(
    const std::array<int64_t, 4>& blocks,
    const std::array<int64_t, 4>& kernels) const {
  std::array<int, 4> slot;
  for (int s = 0; s < 4; ++s) {
    if (blocks[s] < 1) {
      return Status::InvalidArgument("resnet structure space: stage " +
                                     std::to_string(s + 1) +
                                     " needs >= 1 block");
    }
    slot[s] =
        kernels[s] >= 0 && kernels[s] <= kMaxKernel ? slot_[kernels[s]] : -1;
    if (slot[s] < 0) {
      return Status::InvalidArgument("resnet structure space: stage " +
                                     std::to_string(s + 1) + "'s kernel size " +
                                     std::to_string(kernels[s]) +
                                     " is not one of the space's");
    }
  }
  std::array<__int128, kNumQuantities> q;
  for (int i = 0; i < kNumQuantities; ++i) {
    // Q(n, k) = Q(base) + sum_s [F(s, k_s) + (n_s - base_s) * R(s, k_s)].
    __int128 v = base_.v[i];
    for (int s = 0; s < 4; ++s) {
      v += first_[slot[s]][s].v[i] +
           static_cast<__int128>(blocks[s] - base_blocks_[s]) *
               repeated_[slot[s]][s].v[i];
    }
    q[i] = v;
  }
  const __int128 lower = q[kStatic] + q[kAct];
  const __int128 upper = lower + q[kGrads] + transient_;
  for (__int128 v : {q[kParams], q[kForward], q[kBackward], upper}) {
    if (v > sym::kPosInf)
      return Status::OutOfRange(
          "resnet structure space: a cost overflows int64");
  }
  StructuralCosts out;
  out.params = static_cast<int64_t>(q[kParams]);
  out.trainable_params = static_cast<int64_t>(q[kTrainable]);
  out.flops_forward = static_cast<int64_t>(q[kForward]);
  out.flops_backward = static_cast<int64_t>(q[kBackward]);
  out.act_bytes = static_cast<int64_t>(q[kAct]);
  out.peak_lower = static_cast<int64_t>(lower);
  out.peak_upper = static_cast<int64_t>(upper);
  return out;
}

}  // namespace torchcost
