#include "memory/state.h"

namespace torchcost::memory {

StepState::StepState(const ir::Graph& graph, const passes::ShapeFacts& shapes,
                     const passes::AutogradFacts& grads,
                     const TrainingOptions& options, Report* report)
    : g(graph),
      shapes(shapes),
      grads(grads),
      options(options),
      report(report),
      tr(report->training),
      timeline(&report->training.timeline) {}

void StepState::Release(int s, int now) {
  const Storage& st = storages[s];
  if (!st.pinned && st.saved_by == 0 && st.grad_refs == 0 && st.last_use <= now)
    Free(s);
}

const sym::Expr* StepState::Workspace(size_t ni, bool backward) const {
  const auto& nf = shapes.nodes[ni];
  if (nf.rule == nullptr || !nf.ok) return nullptr;
  const sym::Expr& w =
      backward ? grads.nodes[ni].bwd_workspace : nf.applied->workspace_fwd;
  return w == sym::Expr(0) ? nullptr : &w;
}

bool StepState::WritesInPlace(int ni) const {
  const auto& nf = shapes.nodes[ni];
  return nf.ok && nf.rule != nullptr && nf.applied->variant != nullptr &&
         nf.applied->variant->inplace;
}

bool StepState::GradsPresent() const {
  return options.mode == StepMode::kTrain &&
         (!options.set_to_none || options.accumulate > 1);
}

bool StepState::Galore() const {
  return options.galore.has_value() &&
         tr.galore_targets.size() == g.params.size();
}

bool StepState::PerLayer() const {
  return Galore() && options.galore->per_layer;
}

}  // namespace torchcost::memory
