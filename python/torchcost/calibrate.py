"""Calibration: run the step torchcost analysed for real, and put predicted and measured side by side.

    python3 -m torchcost.calibrate MODEL --input SHAPE [--input SHAPE ...] [--set B=8] [--optimizer adam]
                                   [--device cpu|cuda] [--warmup 2] [--steps 5] --out FILE.json

MODEL: `module:callable` (a function or class building the nn.Module; the
module imported from the current directory or sys.path), or a TorchScript
archive (.pt). The step is torchcost's: zero_grad(set_to_none=True), forward,
the sum of the first output as the loss, backward, optimizer step. The file's
format: docs/calibration.md.
"""

import argparse
import contextlib
import importlib
import json
import os
import platform
import sys
from typing import Any, Dict, List, Optional, Sequence

from ._options import TorchcostError

# Optimizer names torchcost models, as torch.optim builds them (tools/measure_step.py's hyper-parameters).
OPTIMIZERS = ("sgd", "sgd_momentum", "sgd_nesterov", "adam", "adamw", "adagrad", "rmsprop")
CATEGORIES = ("param", "buffer", "grad", "act", "opt")
PHASES = ("forward", "backward", "optimizer")
_NONE = object()


def make_optimizer(name: str, params: Sequence[Any]) -> Any:
    """torch.optim's optimizer for a torchcost optimizer name (torch defaults except lr and momentum 0.9)."""
    import torch

    params = list(params)
    table = {
        "sgd": lambda: torch.optim.SGD(params, lr=0.01),
        "sgd_momentum": lambda: torch.optim.SGD(params, lr=0.01, momentum=0.9),
        "sgd_nesterov": lambda: torch.optim.SGD(params, lr=0.01, momentum=0.9, nesterov=True),
        "adam": lambda: torch.optim.Adam(params, lr=1e-3),
        "adamw": lambda: torch.optim.AdamW(params, lr=1e-3),
        "adagrad": lambda: torch.optim.Adagrad(params, lr=1e-2),
        "rmsprop": lambda: torch.optim.RMSprop(params, lr=1e-2),
    }
    if name not in table:
        raise TorchcostError("optimizer: %r cannot be run by calibrate; expected one of %s"
                             % (name, ", ".join(OPTIMIZERS)))
    return table[name]()


def load_model(spec: Any, device: str) -> Any:
    """The nn.Module MODEL names (`module:callable` built, a .pt loaded, or the module itself) on device, training."""
    import torch

    if isinstance(spec, torch.nn.Module):
        return spec.to(device).train()
    if spec.lower().endswith(".pt"):
        if not os.path.isfile(spec):
            raise TorchcostError("model: no such file: %s" % spec)
        model = torch.jit.load(spec, map_location=device)
    elif ":" in spec:
        mod_name, _, attr = spec.partition(":")
        try:
            fn = importlib.import_module(mod_name)
            for part in attr.split("."):
                fn = getattr(fn, part)
        except (ImportError, AttributeError) as e:
            raise TorchcostError("model: cannot import %s: %s" % (spec, e)) from None
        model = fn()
        if not isinstance(model, torch.nn.Module):
            raise TorchcostError("model: %s returned %s, not an nn.Module" % (spec, type(model).__name__))
    else:
        # NB: a family's graph is built by torchcost in C++; there is no PyTorch module to run.
        raise TorchcostError("model: calibrate runs an nn.Module: give module:callable or a .pt, not %r" % spec)
    return model.to(device).train()


def parse_set(items: Sequence[str]) -> Dict[str, int]:
    """{"B": 8} from ["B=8"]."""
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        try:
            out[name.strip()] = int(value)
        except ValueError:
            eq = ""
        if not eq or not name.strip():
            raise TorchcostError("set: expected NAME=INT, got %r" % item)
    return out


def make_inputs(shapes: List[Any], bindings: Dict[str, int], device: str) -> List[Any]:
    """Random inputs (seed 0) at the shapes, symbols bound: randn for floats, zeros for integer ids."""
    import torch

    torch.manual_seed(0)
    out = []
    for shape, dtype in shapes:
        dims = []
        for d in shape:
            if isinstance(d, str):
                if d not in bindings:
                    raise TorchcostError("set: the input's symbol %s needs a value (set %s=N)" % (d, d))
                d = bindings[d]
            dims.append(int(d))
        dt = getattr(torch, dtype or "float32", None)
        if not isinstance(dt, torch.dtype):
            raise TorchcostError("input: unknown dtype %r" % dtype)
        if dt.is_floating_point:
            out.append(torch.randn(dims, dtype=dt, device=device))
        else:
            # NB: index 0 is valid for every embedding; the values do not change what the step allocates.
            out.append(torch.zeros(dims, dtype=dt, device=device))
    return out


def predicted(analysis: Any) -> Dict[str, Any]:
    """predicted.*: torchcost's peak, categories (each one's max) and phase peaks from its timeline."""
    doc = analysis.to_dict()["training"]
    mem = doc["memory"]

    def value(x: Any) -> Any:
        return x.get("value") if isinstance(x, dict) else x

    cat = {k: value(mem["category_max"][k]) for k in ("param", "buffer", "grad", "opt")}
    cat["act"] = value(mem["saved_bytes"])
    # Each phase's max over its points and the level it starts at (an unknown total: None).
    # NB: a phase without a point of its own (SGD's step allocates nothing) stays at the final level.
    def top(a: Any, b: Any) -> Any:
        return None if a is None or b is None else max(a, b)

    phases: Dict[str, Any] = {}
    level: Any = _NONE
    for point in (doc.get("timeline") or {}).get("points", []):
        phase, values = point[0], point[2:]
        total = sum(values) if all(isinstance(v, int) for v in values) else None
        phases[phase] = top(phases.get(phase, total if level is _NONE else level), total)
        level = total
    for p in PHASES:
        phases.setdefault(p, None if level is _NONE else level)
    return {"peak_bytes": value(mem["peak"]), "category_bytes": cat,
            "phase_peak_bytes": {p: phases[p] for p in PHASES},
            "peak_phase": mem.get("peak_phase")}


def measured_categories(m: Dict[str, Any]) -> Dict[str, int]:
    """measured.category_bytes from the measured *_bytes."""
    return {k: m[k + "_bytes"] for k in CATEGORIES}


def device_info(device: str) -> Dict[str, Any]:
    """The device and the software the step ran on."""
    import torch

    info: Dict[str, Any] = {"type": device.split(":")[0], "torch": torch.__version__,
                            "platform": platform.platform(), "processor": platform.processor() or platform.machine()}
    if info["type"] == "cuda":  # NB: untested here (no GPU).
        props = torch.cuda.get_device_properties(torch.device(device))
        info.update(name=props.name, total_memory=props.total_memory, cuda=torch.version.cuda,
                    capability="%d.%d" % (props.major, props.minor))
    return info


def _ratio(p: Any, m: Any) -> str:
    if not isinstance(p, int) or not isinstance(m, int):
        return "-"
    return "%.3f" % (p / m) if m else ("1.000" if p == 0 else "inf")


def table(doc: Dict[str, Any]) -> str:
    """Predicted and measured side by side, per category and phase, with predicted / measured."""
    p, m = doc["predicted"], doc["measured"]
    rows = [("peak", p["peak_bytes"], m["peak_bytes"])]
    rows += [("category " + k, p["category_bytes"][k], m["category_bytes"][k]) for k in CATEGORIES]
    rows += [("phase " + k, p["phase_peak_bytes"].get(k), m["phase_peak_bytes"].get(k))
             for k in PHASES]
    lines = ["%-20s %16s %16s %8s" % ("bytes", "predicted", "measured", "ratio")]
    for name, a, b in rows:
        lines.append("%-20s %16s %16s %8s" % (name, a, b, _ratio(a, b)))
    lines.append("step %.6f s measured (median of %d; forward %.6f, backward %.6f, optimizer %.6f)"
                 % (m["step_seconds"], m["steps"], *(m["phase_seconds"][k] for k in ("forward", "backward",
                                                                                       "optimizer"))))
    ops = list(m.get("op_seconds", {}).items())[:10]
    if ops:
        lines.append("slowest operators (one profiled step, inclusive):")
        lines += ["  %-60s %5d %12.6f s" % (name[:60], e["count"], e["seconds"]) for name, e in ops]
    return "\n".join(lines)


def calibrate(model_spec: Any, inputs: List[str], *, optimizer: str = "adam", bindings: Optional[Dict[str, int]] = None,
              device: str = "cpu", warmup: int = 2, steps: int = 5) -> Dict[str, Any]:
    """Predicts with torchcost.analyze and measures the same step on device; returns the calibration document."""
    import torch

    from . import _measure, _model, analyze

    bindings = dict(bindings or {})
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise TorchcostError("device: expected cpu or cuda, got %r" % device)
    cuda = device != "cpu"
    if cuda and not torch.cuda.is_available():
        raise TorchcostError("device: cuda is not available to this torch (%s)" % torch.__version__)
    if not inputs:
        raise TorchcostError("input_shapes: give the shape of every forward() input")
    shapes = _model.normalize_inputs(list(inputs))
    context = _measure.cuda_context_bytes(device) if cuda else {}
    model = load_model(model_spec, device)
    xs = make_inputs(shapes, bindings, device)
    # The analysis exports the module itself (torch.fx on meta inputs; its weights are not touched).
    is_file = isinstance(model_spec, str) and model_spec.lower().endswith(".pt")
    analysis = analyze(model_spec if is_file else model, list(inputs),
                       optimizer=optimizer, set=bindings or None, device="cuda" if cuda else "cpu")
    pred = predicted(analysis)
    opt = make_optimizer(optimizer, model.parameters())
    with _measure.one_thread() if not cuda else contextlib.nullcontext():
        meas = _measure.measure_step(model, xs, opt, device, warmup=warmup, steps=steps)
    meas["category_bytes"] = measured_categories(meas)
    meas.update(context)
    name = model_spec if isinstance(model_spec, str) else type(model_spec).__name__
    return {"format": "torchcost.calibration", "version": 1, "model": name,
            "inputs": [{"shape": s, "dtype": d or "float32"} for s, d in shapes], "bindings": bindings,
            "optimizer": optimizer, "device": device_info(device), "warmup": warmup,
            "predicted": pred, "measured": meas}


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m torchcost.calibrate",
                                 description="Run a model's training step for real and compare with torchcost.")
    ap.add_argument("model", help="module:callable building the nn.Module, or a TorchScript .pt")
    ap.add_argument("--input", action="append", default=[], help="an input shape: 8,3,32,32 or B,S:int64")
    ap.add_argument("--set", action="append", default=[], help="NAME=INT, a symbol's value")
    ap.add_argument("--optimizer", default="adam", choices=OPTIMIZERS)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N] (cuda: untested)")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured steps first (at least 1)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps (the median is reported)")
    ap.add_argument("--out", required=True, help="the calibration file to write (JSON)")
    args = ap.parse_args(argv)
    if os.getcwd() not in sys.path:  # NB: as `python3 -m` does: MODEL's module is found from here.
        sys.path.insert(0, os.getcwd())
    try:
        doc = calibrate(args.model, args.input, optimizer=args.optimizer, bindings=parse_set(args.set),
                        device=args.device, warmup=args.warmup, steps=args.steps)
    except TorchcostError as e:
        print("torchcost.calibrate: %s" % e, file=sys.stderr)
        return 2
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    print(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
