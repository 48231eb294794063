"""torchcost.Profiler: the pytorch-model-profiler way in: Profiler(model, optimizer).profile(x).

The optimizer's type and hyper-parameters are read from the torch.optim
object (SGD's momentum and nesterov, foreach), frozen parameters from
requires_grad (the export keeps it per parameter), and the step is then
analysed, not run.
"""

import warnings
from typing import Any, Dict, Optional

from ._options import TorchcostError
from .result import Analysis


def optimizer_options(optimizer: Any) -> Dict[str, Any]:
    """Returns analyze()'s keywords for a torch.optim optimizer: {"optimizer": name[, "optimizer_impl": impl]}.

    SGD is sgd, sgd_momentum (momentum > 0) or sgd_nesterov; Adam, AdamW,
    Adagrad, RMSprop are themselves. Hyper-parameters that change what the step
    keeps and costs and that torchcost does not model (Adam's amsgrad,
    RMSprop's momentum or centered) are an error naming them.
    """
    import torch

    groups = optimizer.param_groups
    first = groups[0] if groups else {}

    def any_group(key: str, pred: Any = bool) -> bool:
        return any(pred(g.get(key)) for g in groups)

    out: Dict[str, Any] = {}
    kind = type(optimizer)
    name = kind.__name__
    if isinstance(optimizer, torch.optim.SGD):
        if any_group("nesterov"):
            out["optimizer"] = "sgd_nesterov"
        elif any_group("momentum", lambda m: bool(m)):
            out["optimizer"] = "sgd_momentum"
        else:
            out["optimizer"] = "sgd"
    elif isinstance(optimizer, torch.optim.AdamW):
        out["optimizer"] = "adamw"
    elif isinstance(optimizer, torch.optim.Adam):
        out["optimizer"] = "adam"
    elif isinstance(optimizer, torch.optim.Adagrad):
        out["optimizer"] = "adagrad"
    elif isinstance(optimizer, torch.optim.RMSprop):
        if any_group("centered") or any_group("momentum", lambda m: bool(m)):
            raise TorchcostError("optimizer: RMSprop with momentum or centered=True is not modelled "
                                 "(its extra states); plain RMSprop is")
        out["optimizer"] = "rmsprop"
    else:
        raise TorchcostError("optimizer: %s is not modelled; torchcost models SGD (momentum, nesterov), Adam, "
                             "AdamW, Adagrad, RMSprop (and by name: lion, adafactor, adam8bit)" % name)
    if out["optimizer"] in ("adam", "adamw") and any_group("amsgrad"):
        raise TorchcostError("optimizer: %s(amsgrad=True) is not modelled (its max_exp_avg_sq state)" % name)
    # foreach=None (the default) leaves torch's choice: analyze()'s "auto".
    if first.get("foreach") is not None:
        out["optimizer_impl"] = "foreach" if first["foreach"] else "single"
    if first.get("fused"):  # torch 2.x's fused=True.
        out["optimizer_impl"] = "fused"
    # NB: torch 1.13's SGD, Adam, Adagrad and RMSprop apply weight decay as grad.add(param, alpha=wd): a
    # parameter-sized temporary and 2 FLOPs per element that torchcost's optimizer models leave out
    # (AdamW decays in place: modelled).
    if out["optimizer"] != "adamw" and any_group("weight_decay", lambda w: bool(w)):
        warnings.warn("torchcost.Profiler: %s(weight_decay=%g) is modelled without its weight-decay "
                      "temporary (grad.add(param)) and its 2 FLOPs per element: the step's temp memory and "
                      "optimizer FLOPs are lower bounds" % (name, next(g["weight_decay"] for g in groups
                                                                        if g.get("weight_decay"))),
                      stacklevel=3)
    return out


def data_parallel_options(model: Any) -> Any:
    """Returns (the module to analyse, analyze()'s keywords) for `model`.

    A torch.nn.parallel.DistributedDataParallel is its .module with
    {"shard": "ddp", "world": its process group's size, "ddp_bucket": its
    bucket_cap_mb, "ddp_bucket_view": its gradient_as_bucket_view}; any other
    model is itself with no keywords.
    """
    try:
        from torch.nn.parallel import DistributedDataParallel
    except ImportError:  # pragma: no cover - torch without distributed
        return model, {}
    if not isinstance(model, DistributedDataParallel):
        return model, {}
    # NB: DDP keeps bucket_cap_mb as bytes (bucket_bytes_cap = int(mb * 2^20)).
    return model.module, {"shard": "ddp", "world": model.process_group.size(),
                          "ddp_bucket": model.bucket_bytes_cap / float(1 << 20),
                          "ddp_bucket_view": bool(model.gradient_as_bucket_view)}


class Profiler:
    """Profiler(model, optimizer).profile(*inputs): the analysis of one training step of `model` with `optimizer`.

    model: an nn.Module (meta device welcome), a ScriptModule or a model file; a
      DistributedDataParallel is analysed as one rank of it (data_parallel_options).
    optimizer: a torch.optim optimizer over the model's parameters, or None
      (then options' optimizer, default adamw). Parameters with
      requires_grad=False are frozen: no gradient, no optimizer state.
    options: any other keyword of torchcost.analyze (set=, loss=, autocast=, ...).
    """

    def __init__(self, model: Any, optimizer: Any = None, **options: Any):
        self.model, parallel = data_parallel_options(model)
        self.optimizer = optimizer
        self.options = dict(options)
        for key, value in parallel.items():
            if key in self.options:
                raise TorchcostError("%s: given twice (read from the DistributedDataParallel model and a keyword)"
                                     % key)
            self.options[key] = value
        if optimizer is not None:
            if "optimizer" in self.options:
                raise TorchcostError("optimizer: given twice (a torch.optim object and a keyword)")
            self.options.update(optimizer_options(optimizer))
            self._check_params(optimizer)
        self.result: Optional[Analysis] = None

    def _check_params(self, optimizer: Any) -> None:
        import torch

        if not isinstance(self.model, torch.nn.Module) or isinstance(self.model, torch.jit.ScriptModule):
            return
        in_opt = {id(p) for g in optimizer.param_groups for p in g["params"]}
        left = [n for n, p in self.model.named_parameters() if p.requires_grad and id(p) not in in_opt]
        if left:
            warnings.warn("torchcost.Profiler: %d trainable parameters are not in the optimizer (%s...): "
                          "they are modelled with optimizer state" % (len(left), left[0]), stacklevel=3)

    def profile(self, *inputs: Any, **options: Any) -> Analysis:
        """Analyses the step on `inputs` (tensors, meta ones included, or shapes); returns the Analysis."""
        from . import analyze

        if len(inputs) == 1 and isinstance(inputs[0], list):
            inputs = tuple(inputs[0])
        kw = dict(self.options)
        kw.update(options)
        self.result = analyze(self.model, list(inputs) if inputs else None, **kw)
        return self.result
