#!/usr/bin/python3
"""GaLore in plain torch, following the reference implementation: torchcost's oracle.

galore_torch (github.com/jiaweizzhao/GaLore) is not packaged for Debian; this
module does what its galore_torch/galore_projector.py (GaLoreProjector,
proj_type 'std', no quantization) and galore_torch/adamw.py (AdamW) do, op for
op, on torch 1.13 (Zhao et al., "GaLore: Memory-Efficient LLM Training by
Gradient Low-Rank Projection", ICML 2024):

  project(grad [m, n], step):
      m >= n: every update_proj_gap steps (and at the first):
                  U, S, Vh = torch.linalg.svd(grad (.float() if not float32), full_matrices=False)
                  ortho = Vh[:r, :]   (a view of Vh; cast back to grad's dtype if not float32)
              low = grad @ ortho.t()                       [m, r]
      m <  n: ortho = U[:, :r]; low = ortho.t() @ grad     [r, n]
  project_back(low): (low @ ortho or ortho @ low) * scale   [m, n]
  AdamW.step, per parameter (state['step'] a Python int):
      grad = p.grad; grad = projector.project(grad, step)  (galore group only)
      exp_avg, exp_avg_sq = zeros_like(grad) at the first step
      exp_avg.mul_(b1).add_(grad, alpha=1-b1)
      exp_avg_sq.mul_(b2).addcmul_(grad, grad, value=1-b2)
      denom = exp_avg_sq.sqrt().add_(eps)
      norm_grad = exp_avg / denom
      norm_grad = projector.project_back(norm_grad)        (galore group only)
      p.add_(norm_grad, alpha=-step_size)
      p.add_(p, alpha=-lr*wd) if wd > 0

param_groups(model, targets) builds the groups as the reference README does:
the weights of nn.Linear modules whose qualified name matches `targets`
(re.search; the README's `any(key in name for key in ["attn", "mlp"])`) in a
GaLore group {rank, update_proj_gap, scale, proj_type}, the rest regular.

per_layer(model, ...) is the reference's galore_adamw*_per_layer: one
optimizer per parameter, stepped in a hook when the parameter's gradient is
accumulated, then p.grad = None. NB: torch 1.13 has no
register_post_accumulate_grad_hook (2.1+); the hook goes on the parameter's
AccumulateGrad node (p.expand_as(p).grad_fn.next_functions[0][0]), whose
post-hook runs right after AccumulateGrad has set p.grad.
"""

import math
import re

import torch
from torch import nn

# (model) -> GaLore arguments of the oracle tests; the torchcost --galore spec says the same.
PRESETS = {
    "gpt_tiny": dict(rank=8, update_proj_gap=200, scale=0.25, targets="attn|mlp"),
    "resnet18": dict(rank=8, update_proj_gap=200, scale=0.25, targets="fc"),
}


def cli_spec(model, per_layer=False, svd=True):
    """Returns the torchcost --galore spec of a preset."""
    p = PRESETS[model]
    spec = "r=%d,gap=%d,scale=%g,targets=%s" % (p["rank"], p["update_proj_gap"], p["scale"], p["targets"])
    if per_layer:
        spec += ",per_layer=true"
    if not svd:
        spec += ",svd=false"
    return spec


class GaLoreProjector:
    """The reference's GaLoreProjector, proj_type 'std', no quantization."""

    def __init__(self, rank, update_proj_gap=200, scale=1.0):
        self.rank = rank
        self.update_proj_gap = update_proj_gap
        self.scale = scale
        self.ortho_matrix = None

    def project(self, full_rank_grad, iter):
        if full_rank_grad.shape[0] >= full_rank_grad.shape[1]:
            if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
                self.get_orthogonal_matrix(full_rank_grad, self.rank, type="right")
            return torch.matmul(full_rank_grad, self.ortho_matrix.t().to(full_rank_grad.device.type))
        if self.ortho_matrix is None or iter % self.update_proj_gap == 0:
            self.get_orthogonal_matrix(full_rank_grad, self.rank, type="left")
        return torch.matmul(self.ortho_matrix.t().to(full_rank_grad.device.type), full_rank_grad)

    def project_back(self, low_rank_grad):
        if low_rank_grad.shape[0] >= low_rank_grad.shape[1]:
            full_rank_grad = torch.matmul(low_rank_grad, self.ortho_matrix.to(low_rank_grad.device.type))
        else:
            full_rank_grad = torch.matmul(self.ortho_matrix.to(low_rank_grad.device.type), low_rank_grad)
        return full_rank_grad * self.scale

    def get_orthogonal_matrix(self, weights, rank, type):
        module_params = weights
        if module_params.data.dtype != torch.float:
            float_data = False
            original_type = module_params.data.dtype
            original_device = module_params.data.device
            matrix = module_params.data.float()
        else:
            float_data = True
            matrix = module_params.data
        U, s, Vh = torch.linalg.svd(matrix, full_matrices=False)
        if type == "right":
            B = Vh[:rank, :]
            if not float_data:
                B = B.to(original_device).type(original_type)
            self.ortho_matrix = B
            return B
        A = U[:, :rank]
        if not float_data:
            A = A.to(original_device).type(original_type)
        self.ortho_matrix = A
        return A


class GaLoreAdamW(torch.optim.Optimizer):
    """The reference's AdamW (galore_torch/adamw.py), GaLore groups with 'rank'."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0, correct_bias=True):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "correct_bias": correct_bias}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if "step" not in state:
                    state["step"] = 0
                if "rank" in group:
                    if "projector" not in state:
                        state["projector"] = GaLoreProjector(group["rank"], update_proj_gap=group["update_proj_gap"],
                                                             scale=group["scale"])
                    grad = state["projector"].project(grad, state["step"])
                if "exp_avg" not in state:
                    state["exp_avg"] = torch.zeros_like(grad)
                    state["exp_avg_sq"] = torch.zeros_like(grad)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                beta1, beta2 = group["betas"]
                state["step"] += 1
                exp_avg.mul_(beta1).add_(grad, alpha=(1.0 - beta1))
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"]
                if group["correct_bias"]:
                    bias_correction1 = 1.0 - beta1 ** state["step"]
                    bias_correction2 = 1.0 - beta2 ** state["step"]
                    step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
                norm_grad = exp_avg / denom
                if "rank" in group:
                    norm_grad = state["projector"].project_back(norm_grad)
                p.add_(norm_grad, alpha=-step_size)
                if group["weight_decay"] > 0.0:
                    p.add_(p, alpha=(-group["lr"] * group["weight_decay"]))


def targeted(model, targets):
    """The weights the README puts in the GaLore group: nn.Linear modules whose name matches."""
    rx = re.compile(targets)
    out = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and rx.search(name):
            out.append(module.weight)
    return out


def param_groups(model, rank=8, update_proj_gap=200, scale=0.25, targets="attn|mlp"):
    """The README's groups: [{'params': regular}, {'params': galore, 'rank': r, ...}]."""
    galore = targeted(model, targets)
    ids = {id(p) for p in galore}
    regular = [p for p in model.parameters() if id(p) not in ids]
    return [{"params": regular},
            {"params": galore, "rank": rank, "update_proj_gap": update_proj_gap, "scale": scale,
             "proj_type": "std"}]


def make(model, lr=1e-3, **galore):
    """A GaLoreAdamW over the README's groups."""
    return GaLoreAdamW(param_groups(model, **galore), lr=lr)


class PerLayer:
    """The reference's per-layer weight update: one GaLoreAdamW per parameter, stepped
    when its gradient is accumulated in backward, then the gradient freed."""

    def __init__(self, model, lr=1e-3, rank=8, update_proj_gap=200, scale=0.25, targets="attn|mlp"):
        galore = {id(p) for p in targeted(model, targets)}
        self.params = list(model.parameters())
        self.grad_max_bytes = 0  # The most bytes of .grad alive when a hook runs.
        self.optimizers = {}
        self._keep = []  # The expanded tensors whose grad_fn leads to each AccumulateGrad node.
        for p in model.parameters():
            if not p.requires_grad:
                continue
            if id(p) in galore:
                group = {"params": [p], "rank": rank, "update_proj_gap": update_proj_gap, "scale": scale,
                         "proj_type": "std"}
            else:
                group = {"params": [p]}
            self.optimizers[p] = GaLoreAdamW([group], lr=lr)
            expanded = p.expand_as(p)
            acc = expanded.grad_fn.next_functions[0][0]
            acc.register_hook(self._hook(p))
            self._keep.append((expanded, acc))

    def _hook(self, p):
        def hook(*_):
            if p.grad is None:
                return
            live = sum(q.grad.numel() * q.grad.element_size() for q in self.params if q.grad is not None)
            self.grad_max_bytes = max(self.grad_max_bytes, live)
            self.optimizers[p].step()
            self.optimizers[p].zero_grad(set_to_none=True)
        return hook

    def state_tensors(self):
        """Every tensor the optimizers keep (states and projectors)."""
        out = []
        for opt in self.optimizers.values():
            for state in opt.state.values():
                for value in state.values():
                    if isinstance(value, torch.Tensor):
                        out.append(value)
                    elif isinstance(value, GaLoreProjector) and value.ortho_matrix is not None:
                        out.append(value.ortho_matrix)
        return out


def state_tensors(opt):
    """Every tensor a GaLoreAdamW keeps: exp_avg, exp_avg_sq and the projectors' matrices."""
    out = []
    for state in opt.state.values():
        for value in state.values():
            if isinstance(value, torch.Tensor):
                out.append(value)
            elif isinstance(value, GaLoreProjector) and value.ortho_matrix is not None:
                out.append(value.ortho_matrix)
    return out


def projectors(opt):
    """The GaLoreProjectors of an optimizer that hold a matrix."""
    return [v for state in opt.state.values() for v in state.values()
            if isinstance(v, GaLoreProjector) and v.ortho_matrix is not None]
