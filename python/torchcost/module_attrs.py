"""Records the module attributes a TorchScript archive loses, for torchcost.

torch.jit.trace keeps parameters, buffers, submodules and each module's
`training` flag, but not plain Python attributes: nn.MultiheadAttention's
`dropout` is gone, and in eval mode F.multi_head_attention_forward sets
dropout_p = 0 before tracing, so the trace holds no attention dropout at all.
Saving the archive with this file beside it lets torchcost put that dropout
back when it analyses the eval-mode trace as a training step:

    from torchcost.module_attrs import save_traced   # or tools.export.module_attrs, from the repository
    model.eval()
    save_traced(torch.jit.trace(model, x), model, "model.pt")

The archive gets an extra file (torch.jit.save's `_extra_files`), EXTRA_FILE:

    {"format": "torchcost.modules", "version": 1,
     "modules": {"<path>": {"type": "<class name>", "training": bool,
                            "attrs": {"<name>": number | bool | string, ...}}}}

`attrs` holds every public attribute of the module whose value is a bool, an
int, a float or a string (nn.MultiheadAttention's dropout, nn.Dropout's p,
torchvision's StochasticDepth p and mode). torchcost reads it from the
archive (src/import/module_attrs.cc).
"""

import json
import math

import torch

EXTRA_FILE = "torchcost_modules.json"
FORMAT = "torchcost.modules"
VERSION = 1


def module_attributes(model):
    """Returns the JSON text of EXTRA_FILE for `model` (an nn.Module)."""
    modules = {}
    for path, m in model.named_modules():
        attrs = {}
        for k, v in sorted(vars(m).items()):
            if k.startswith("_") or k == "training":
                continue
            if isinstance(v, float) and not math.isfinite(v):
                continue           # JSON has no inf / nan
            if isinstance(v, (bool, int, float, str)):
                attrs[k] = v
        modules[path] = {"type": type(m).__name__, "training": bool(m.training), "attrs": attrs}
    return json.dumps({"format": FORMAT, "version": VERSION, "modules": modules}, sort_keys=True)


def save_traced(traced, model, path):
    """torch.jit.save(traced, path) with `model`'s attributes recorded beside the graph."""
    torch.jit.save(traced, path, _extra_files={EXTRA_FILE: module_attributes(model)})
