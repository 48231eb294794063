// ResnetDepthComposer: the costs of ResNets that differ in blocks per stage,
// from a cache of per-block contributions.
//
// NB: what composes. A stage's blocks after its first are the same block
// (same channels, stride 1, same spatial size), whatever the other stages
// hold, and a graph is the stem, each stage's first block, its repeated
// blocks and the head. So every additive quantity (params, FLOPs forward and
// backward, bytes autograd saves, the bytes of parameters, buffers, optimizer
// states and gradients) is affine in the block counts:
//   Q(n) = Q(base) + sum_s (n_s - base_s) * (Q(base + e_s) - Q(base)),
// where Q(base + e_s) - Q(base) is one repeated block of stage s: the cache,
// one entry per block configuration, filled by five whole-graph analyses
// (base = two blocks per stage, then one more in each stage). The peak is a
// max over moments and does not add: it is bracketed by
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
#include <string>
#include <vector>

#include "torchcost/families.h"
#include "torchcost/loss.h"
#include "torchcost/nas.h"
#include "torchcost/training.h"

namespace torchcost {
namespace {

enum Quantity { kParams, kTrainable, kForward, kBackward, kAct, kStatic, kGrads, kNumQuantities };

struct Probe {
  std::array<__int128, kNumQuantities> q{};
  __int128 transient = 0;
};

std::string BlocksText(const std::array<int64_t, 4>& n) {
  return std::to_string(n[0]) + ":" + std::to_string(n[1]) + ":" + std::to_string(n[2]) + ":" + std::to_string(n[3]);
}

Result<__int128> At(const sym::Expr& e, const sym::Bindings& b) { return sym::Evaluate128(e, b); }

}  // namespace

// Analyses the whole ResNet with `n` blocks per stage at the space's batch.
static Result<Probe> AnalyzeProbe(const ResnetDepthSpace& space, const RuleSet& rules, const std::array<int64_t, 4>& n) {
  const std::string config = space.config + (space.config.empty() ? "" : ",") + "blocks=" + BlocksText(n);
  Result<build::BuiltModel> built = build::BuildNamedModel("resnet", config);
  if (!built.ok()) return built.status();
  const build::BuiltModel& m = *built;
  sym::Context ctx;
  AnalysisOptions options = space.options;
  options.inputs.clear();
  for (const build::InputDecl& in : m.inputs) options.inputs.push_back({build::ResolveShape(m, in, ctx), in.dtype});
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
  // S: the live bytes when the setup ends; G: the most gradient bytes live at once.
  for (const TimelinePoint& t : tr.timeline) {
    if (t.phase == StepPhase::kSetup) {
      if (!(v = At(t.total, bind)).ok()) return v.status();
      p.q[kStatic] = *v;
    }
    if (!(v = At(t.live[static_cast<int>(MemCategory::kGrad)], bind)).ok()) return v.status();
    p.q[kGrads] = std::max(p.q[kGrads], *v);
  }
  // T: the largest transient, total - S - ACT live - GRAD live, over the moments after the setup.
  for (const TimelinePoint& t : tr.timeline) {
    if (t.phase == StepPhase::kSetup) continue;
    Result<__int128> total = At(t.total, bind), act = At(t.live[static_cast<int>(MemCategory::kAct)], bind),
                     grad = At(t.live[static_cast<int>(MemCategory::kGrad)], bind);
    if (!total.ok() || !act.ok() || !grad.ok()) return Status::OutOfRange("resnet depth space: bytes overflow");
    p.transient = std::max(p.transient, *total - p.q[kStatic] - *act - *grad);
  }
  return p;
}

Result<ResnetDepthComposer> ResnetDepthComposer::Create(const ResnetDepthSpace& space, const RuleSet& rules) {
  if (space.batch < 1) return Status::InvalidArgument("resnet depth space: batch must be >= 1");
  ResnetDepthComposer c;
  c.base_blocks_ = {2, 2, 2, 2};
  Result<Probe> base = AnalyzeProbe(space, rules, c.base_blocks_);
  if (!base.ok()) return base.status();
  c.analyses_ = 1;
  __int128 transient = base->transient;
  for (int q = 0; q < kNumQuantities; ++q) c.base_.v[q] = base->q[q];
  for (int s = 0; s < 4; ++s) {
    std::array<int64_t, 4> n = c.base_blocks_;
    ++n[s];
    Result<Probe> p = AnalyzeProbe(space, rules, n);
    if (!p.ok()) return p.status();
    ++c.analyses_;
    for (int q = 0; q < kNumQuantities; ++q) c.delta_[s].v[q] = p->q[q] - base->q[q];
    transient = std::max(transient, p->transient);
  }
  c.transient_ = static_cast<int64_t>(transient);
  return c;
}

Result<StructuralCosts> ResnetDepthComposer::Evaluate(const std::array<int64_t, 4>& blocks) const {
  std::array<__int128, kNumQuantities> q;
  for (int i = 0; i < kNumQuantities; ++i) {
    // Q(n) = Q(base) + sum_s (n_s - base_s) * delta_s.
    __int128 v = base_.v[i];
    for (int s = 0; s < 4; ++s) {
      if (blocks[s] < 1) return Status::InvalidArgument("resnet depth space: stage " + std::to_string(s + 1) + " needs >= 1 block");
      v += static_cast<__int128>(blocks[s] - base_blocks_[s]) * delta_[s].v[i];
    }
    q[i] = v;
  }
  const __int128 lower = q[kStatic] + q[kAct];
  const __int128 upper = lower + q[kGrads] + transient_;
  for (__int128 v : {q[kParams], q[kForward], q[kBackward], upper}) {
    if (v > sym::kPosInf) return Status::OutOfRange("resnet depth space: a cost overflows int64");
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
