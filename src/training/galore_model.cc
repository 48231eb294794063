#include "training/galore_model.h"

#include <algorithm>
#include <regex>
#include <set>
#include <string>

#include "passes/user_regex.h"
#include "training/optimizer_model.h"

namespace torchcost::training {
namespace {

using ir::Numel;

bool Targetable(const std::vector<int64_t>& shape) { return shape.size() == 2; }

// Builds the event list of one update.
class Events {
 public:
  int Alloc(int64_t bytes) {
    out_.push_back(AllocEvent(next_, bytes));
    return next_++;
  }
  void Free(int t) { out_.push_back(FreeEvent(t)); }
  void Bind(int slot, int t) { out_.push_back(BindEvent(slot, t)); }
  void Point() { out_.push_back(PointEvent()); }
  // Allocates a temporary, marks the moment, and binds it to `slot`.
  void AllocPointBind(int slot, int64_t bytes) {
    const int t = Alloc(bytes);
    Point();
    Bind(slot, t);
  }
  std::vector<Event> Take() { return std::move(out_); }

 private:
  std::vector<Event> out_;
  int next_ = 0;
};

// get_orthogonal_matrix: matrix = grad (float32) or grad.float(); U, S, Vh =
// torch.linalg.svd(matrix, full_matrices=False), which on CPU also clones the
// input column-major for LAPACK (gesdd overwrites it) and allocates a 4-byte
// int32 `info` (its LAPACK work arrays are std::vectors, outside PyTorch's
// allocator: measured, tools/galore_torch.py); the kept slice is the new
// projector and the old one is freed when it is assigned, so OPT is unchanged.
void Svd(const GaloreShape& s, DType dtype, Events* ev) {
  const int64_t b = std::min(s.m, s.n);
  const bool upcast = dtype != DType::kFloat32;
  const int f = upcast ? ev->Alloc(s.m * s.n * 4) : -1;  // grad.float()
  // LAPACK's column-major copy
  const int clone = ev->Alloc(s.m * s.n * 4);
  const int u = ev->Alloc(s.m * b * 4);   // U [m, b]
  const int sv = ev->Alloc(b * 4);        // S [b]
  const int vh = ev->Alloc(b * s.n * 4);  // Vh [b, n]
  const int info = ev->Alloc(4);
  ev->Point();
  ev->Free(clone);
  ev->Free(info);
  if (upcast) {
    // B = slice.to(dtype): the new projector, alive beside the old one until
    // assigned.
    const int cast = ev->Alloc(ProjectorBytes(s, dtype));
    ev->Point();
    ev->Free(cast);
  }
  // Returning drops U, S, Vh and the float copy; in float32 the kept factor
  // becomes the projector as the old one goes (same bytes).
  ev->Free(u);
  ev->Free(sv);
  ev->Free(vh);
  if (upcast) ev->Free(f);
}

}  // namespace

GaloreShape ShapeOf(int64_t m, int64_t n, int64_t rank) {
  GaloreShape s;
  s.m = m;
  s.n = n;
  s.k = std::min({rank, m, n});
  s.right = m >= n;
  // grad @ P.t() [m, k], or P.t() @ grad [k, n]
  s.projected = s.right ? m * s.k : s.k * n;
  return s;
}

int64_t ProjectorBytes(const GaloreShape& s, DType dtype) {
  if (dtype == DType::kFloat32) {
    const int64_t b = std::min(s.m, s.n);
    return b * b * 4;  // Vh [n, n] (m >= n) or U [m, m] (m < n), thin SVD
  }
  return (s.right ? s.k * s.n : s.m * s.k) * ElementSize(dtype);
}

int64_t GaloreStateBytes(const std::vector<int64_t>& shape, DType dtype,
                         bool targeted, const GaloreConfig& c) {
  if (c.eight_bit) {
    // bitsandbytes' 8-bit states (optimizer_model.cc's kAdam8bit) on the
    // projected gradient's shape (init_state runs after p.data is the projected
    // clone).
    if (!targeted || !Targetable(shape))
      return StateBytes(OptimizerKind::kAdam8bit, shape, dtype);
    const GaloreShape s = ShapeOf(shape[0], shape[1], c.rank);
    return StateBytes(OptimizerKind::kAdam8bit, {s.projected}, dtype) +
           ProjectorBytes(s, dtype);
  }
  const int64_t e = ElementSize(dtype);
  // exp_avg, exp_avg_sq
  if (!targeted || !Targetable(shape)) return 2 * Numel(shape) * e;
  const GaloreShape s = ShapeOf(shape[0], shape[1], c.rank);
  return 2 * s.projected * e + ProjectorBytes(s, dtype);
}

int64_t SvdFlops(int64_t m, int64_t n) {
  const int64_t a = std::max(m, n), b = std::min(m, n);
  // R-SVD: QR of the tall matrix, then Golub-Kahan on the b x b R
  return 6 * a * b * b + 11 * b * b * b;
}

int64_t GaloreFlops(const std::vector<int64_t>& shape, bool targeted,
                    const GaloreConfig& c) {
  const int64_t n = Numel(shape);
  // The reference's AdamW per element: exp_avg.mul_(b1).add_(g, alpha) 3,
  // exp_avg_sq.mul_(b2).addcmul_(g, g, value) 4, sqrt(...).add_(eps) 1 (+1
  // transcendental), exp_avg / denom 1: 9 on the state's elements; then
  // p.add_(update, alpha=-step_size) 2 on the parameter's. weight_decay = 0
  // (the reference's default): no decay.
  if (c.eight_bit && (!targeted || !Targetable(shape)))
    return ModelOf(OptimizerKind::kAdam8bit).flops_per_element * n;
  if (!targeted || !Targetable(shape)) return 9 * n + 2 * n;
  const GaloreShape s = ShapeOf(shape[0], shape[1], c.rank);
  if (c.eight_bit) {
    // project, 8-bit Adam on the projected p.data (18 per element), project
    // back, scale, and p.saved_data.add_(...) (1 per element).
    return 2 * s.m * s.n * s.k + 18 * s.projected + 2 * s.m * s.n * s.k + n +
           n + SvdFlops(s.m, s.n) / c.update_proj_gap;
  }
  // [m, n] @ [n, k] or [k, m] @ [m, n]: 2mnk
  const int64_t project = 2 * s.m * s.n * s.k;
  // [m, k] @ [k, n] or [m, k] @ [k, n]: 2mnk
  const int64_t back = 2 * s.m * s.n * s.k;
  const int64_t scale = n;  // full_rank_grad * scale
  return project + 9 * s.projected + back + scale + 2 * n +
         SvdFlops(s.m, s.n) / c.update_proj_gap;
}

std::vector<Event> GaloreUpdate(const std::vector<int64_t>& shape, DType dtype,
                                bool targeted, const GaloreConfig& c,
                                bool svd) {
  Events ev;
  const int64_t e = ElementSize(dtype);
  // grad = p.grad: the previous parameter's projected gradient goes
  ev.Bind(kGradSlot, -1);
  if (c.eight_bit) {
    // GaLoreAdamW8bit.step (github.com/jiaweizzhao/GaLore at
    // 1317b5f7e589ba778d8d122f6102fda6fa7ba49e, galore_torch/adamw8bit.py):
    // bitsandbytes' fused 8-bit kernel updates in place (no temporaries).
    if (!targeted || !Targetable(shape)) return ev.Take();
    const GaloreShape s = ShapeOf(shape[0], shape[1], c.rank);
    if (svd) Svd(s, dtype, &ev);
    const int64_t low = s.projected * e, full = s.m * s.n * e;
    // grad = projector.project(p.grad, step)
    ev.AllocPointBind(kGradSlot, low);
    // p.saved_data = p.data.clone(), beside the parameter
    const int saved = ev.Alloc(full);
    ev.Point();
    // p.data = grad.clone().to(...): the parameter's own storage goes and
    // saved_data holds the same bytes (kept as PARAM); the projected clone is
    // new.
    ev.Free(saved);
    const int low_data = ev.Alloc(low);
    ev.Point();
    // (p.grad = grad: the full gradient is released here; NB: kept as GRAD, an
    // overestimate.) project_back: the matmul back to [m, n]
    const int back = ev.Alloc(full);
    ev.Point();
    const int scaled = ev.Alloc(full);  // * scale, the matmul still bound
    ev.Point();
    ev.Free(back);
    // saved_data.add_(...) in place; the statement ends
    ev.Free(scaled);
    ev.Free(low_data);  // p.data = p.saved_data
    return ev.Take();
  }
  if (!targeted || !Targetable(shape)) {
    const int64_t bytes = Numel(shape) * e;
    // denom = exp_avg_sq.sqrt().add_(eps)
    ev.AllocPointBind(kDenomSlot, bytes);
    ev.AllocPointBind(kNormGradSlot, bytes);  // norm_grad = exp_avg / denom
    return ev.Take();
  }
  const GaloreShape s = ShapeOf(shape[0], shape[1], c.rank);
  if (svd) Svd(s, dtype, &ev);
  const int64_t low = s.projected * e;
  // grad = projector.project(grad, step)
  ev.AllocPointBind(kGradSlot, low);
  ev.AllocPointBind(kDenomSlot, low);  // denom
  const int ng = ev.Alloc(low);        // norm_grad = exp_avg / denom
  ev.Point();
  ev.Bind(kNormGradSlot, ng);
  // project_back: the matmul back to [m, n]
  const int full = ev.Alloc(s.m * s.n * e);
  ev.Point();
  // full_rank_grad * scale, the matmul still bound
  const int scaled = ev.Alloc(s.m * s.n * e);
  ev.Point();
  ev.Free(full);  // project_back returns
  // norm_grad = ...: the low-rank one goes
  ev.Bind(kNormGradSlot, scaled);
  return ev.Take();
}

Result<std::vector<bool>> GaloreTargets(const ir::Graph& graph,
                                        const std::vector<bool>& trainable,
                                        const GaloreConfig& c) {
  std::regex re;
  try {
    re = passes::UserRegex(c.targets);
  } catch (const std::regex_error&) {
    return Status::InvalidArgument("galore: targets '" + c.targets +
                                   "': not a valid regular expression");
  }
  // Values read as the weight of a linear layer.
  std::set<int> linear_weights;
  for (const ir::Node& node : graph.nodes) {
    if (node.op == "aten::linear" && node.inputs.size() >= 2)
      linear_weights.insert(node.inputs[1]);
  }
  std::vector<bool> out(graph.params.size(), false);
  bool any = false;
  for (size_t i = 0; i < graph.params.size(); ++i) {
    const ir::TensorEntry& p = graph.params[i];
    if (i >= trainable.size() || !trainable[i] || !Targetable(p.shape))
      continue;
    std::vector<std::string> names{p.name};
    names.insert(names.end(), p.aliases.begin(), p.aliases.end());
    bool linear = p.value >= 0 && linear_weights.count(p.value) > 0;
    bool match = false;
    for (const std::string& name : names) {
      const size_t dot = name.rfind('.');
      const std::string path =
          dot == std::string::npos ? "" : name.substr(0, dot);
      const bool is_weight =
          name.substr(dot == std::string::npos ? 0 : dot + 1) == "weight";
      for (const ir::Scope& sc : graph.scopes) {
        if (is_weight && sc.path == path && sc.type == "Linear") linear = true;
      }
      match = match || (!path.empty() && std::regex_search(path, re)) ||
              std::regex_search(name, re);
    }
    out[i] = linear && match;
    any = any || out[i];
  }
  if (!any) {
    return Status::InvalidArgument(
        "galore: targets '" + c.targets +
        "' match no trainable 2-D weight of a Linear module");
  }
  return out;
}

}  // namespace torchcost::training
