"""Calibration: run the step torchcost analysed for real, and put predicted and measured side by side.

    python3 -m torchcost.calibrate MODEL --input SHAPE [--input SHAPE ...] [--set B=8] [--optimizer adam]
                                   [--device cpu|cuda] [--gpu NAME | --peaks FILE.json] [--warmup 2]
                                   [--steps 5] --out FILE.json
    python3 -m torchcost.calibrate FAMILY|PRESET|config.json [--config KEY=VALUE,...] --set B=8 [--set S=128] ...
    python3 -m torchcost.calibrate --fit A.json B.json ... --out DEVICE.json

MODEL: `module:callable` (a function or class building the nn.Module; the
module imported from the current directory or sys.path), or a TorchScript
archive (.pt); or what the analysis builds itself (a family or preset name, a
Hugging Face config.json), run as torchcost.reference's plain-torch module of
the same config with eager attention. The step is torchcost's: zero_grad(set_to_none=True), forward,
the sum of the first output as the loss, backward, optimizer step. The file's
format: docs/calibration.md. The time of each phase beside its roofline seconds per op class are the
samples from which torchcost's library fits the efficiency per class (least squares); --fit fits the samples of
several files at once, and `torchcost --gpu-file FILE.json` predicts with the result. --measured reads a
device's raw measurements (tools/measure_device.py, run where torchcost is not built) and does the rest here
(torchcost.measured).
"""

import argparse
import contextlib
import importlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ._fit import (PHASES, cpu_peaks, fit_files, fit_or_error, fit_table, phase_class_seconds,  # noqa: F401
                   predicted, read_doc, step_samples)
from ._options import TorchcostError

# Optimizer names torchcost models, as torch.optim builds them (tools/measure_step.py's hyper-parameters).
OPTIMIZERS = ("sgd", "sgd_momentum", "sgd_nesterov", "adam", "adamw", "adagrad", "rmsprop")
CATEGORIES = ("param", "buffer", "grad", "act", "opt")


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


def is_family(spec: Any) -> bool:
    """Whether MODEL is what the analysis builds itself: a family or preset name, or a config.json path."""
    return isinstance(spec, str) and ":" not in spec and not spec.lower().endswith(".pt")


def config_text(config: Any) -> str:
    """"key=value,..." from a config given as text or as a dict (booleans as true/false)."""
    if config is None:
        return ""
    if isinstance(config, str):
        return config
    return ",".join("%s=%s" % (k, str(v).lower() if isinstance(v, bool) else v) for k, v in config.items())


def family_model(spec: str, config: Any = None) -> Tuple[Any, str]:
    """The plain-torch module of a family, preset or config.json (torchcost.reference), on the CPU, and the config
    text the analysis is given for the same model (attn=eager added where the family has attention)."""
    from . import _call, reference

    text = config_text(config)
    if spec.lower().endswith(".json"):
        try:
            with open(spec) as f:
                hf = json.load(f)
        except (OSError, ValueError) as e:
            raise TorchcostError("model: cannot read %s: %s" % (spec, e)) from None
        if not isinstance(hf, dict) or "model_type" not in hf:
            raise TorchcostError("model: %s is not a Hugging Face config.json (no model_type); calibrate runs a "
                                 "module, not a JSON graph" % spec)
        keys, own = reference.parse_overrides(text)
        for key in own:
            if key not in ("dtype", "attn"):
                raise TorchcostError("config %s=%s: calibrate runs the whole model on one device (settings: dtype, "
                                     "attn=eager)" % (key, own[key]))
        if own.setdefault("attn", "eager") != "eager":
            raise TorchcostError("config attn=%s: calibrate runs eager attention (matmul and softmax); set "
                                 "attn=eager" % own["attn"])
        hf.update(keys)
        model = reference.build_hf_config(hf, own.get("dtype", "float32"))
        return model, ",".join(x for x in (text, "" if "attn=" in text else "attn=eager") if x)
    family, values = _call(lambda core: core.named_config, spec, text)
    if "attn" in values and not any(item.partition("=")[0] == "attn" for item in text.split(",")):
        text = ",".join(x for x in (text, "attn=eager") if x)
        family, values = _call(lambda core: core.named_config, spec, text)
    defaults = _call(lambda core: core.named_config, family, "")[1]
    reference.check_family(family, values, defaults)
    return reference.build_family(family, values), text


def load_model(spec: Any, device: str, config: Any = None) -> Any:
    """The nn.Module MODEL names (`module:callable` built, a .pt loaded, a family, preset or config.json built in
    plain torch, or the module itself) on device, training."""
    import torch

    if isinstance(spec, torch.nn.Module):
        return spec.to(device).train()
    if is_family(spec):
        return family_model(spec, config)[0].to(device).train()
    if spec.lower().endswith(".pt"):
        if not os.path.isfile(spec):
            raise TorchcostError("model: no such file: %s" % spec)
        model = torch.jit.load(spec, map_location=device)
    else:
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
    lines += fit_table(doc)
    ops = list(m.get("op_seconds", {}).items())[:10]
    if ops:
        lines.append("slowest operators (one profiled step, inclusive):")
        lines += ["  %-60s %5d %12.6f s" % (name[:60], e["count"], e["seconds"]) for name, e in ops]
    return "\n".join(lines)


def _roofline(device: str, gpu: Optional[str], peaks: Any) -> Optional[Dict[str, Any]]:
    """roofline.*: the peaks the efficiencies are fractions of (given, a GPU of the table, or measured on CPU)."""
    if peaks is not None:
        if isinstance(peaks, str):
            doc = read_doc(peaks)
            if not doc.get("roofline"):
                raise TorchcostError("%s: key roofline: missing" % peaks)
            peaks = doc["roofline"]
        if peaks.get("device") != device.split(":")[0]:
            raise TorchcostError("peaks: measured on %s, not %s" % (peaks.get("device"), device))
        return dict(peaks)
    if gpu:
        if device == "cpu":
            raise TorchcostError("gpu: %s is a GPU; --device cpu measures its own peaks" % gpu)
        return {"device": "cuda", "gpu": gpu}
    return cpu_peaks() if device == "cpu" else None


def calibrate(model_spec: Any, inputs: Optional[List[str]] = None, *, optimizer: str = "adam",
              bindings: Optional[Dict[str, int]] = None, device: str = "cpu", warmup: int = 2, steps: int = 5,
              gpu: Optional[str] = None, peaks: Any = None, config: Any = None) -> Dict[str, Any]:
    """Predicts with torchcost.analyze and measures the same step on device; returns the calibration document.

    model_spec: an nn.Module, `module:callable`, a .pt, or what the analysis builds itself (a family or preset
    name with `config`, or a Hugging Face config.json): then the module run is torchcost.reference's plain-torch
    one, the inputs are the family's own (their sizes from `bindings`) and the loss is the sum of the output in
    both (NB: not the family's task loss, which the runner does not reproduce).
    gpu: on cuda, the GPU of torchcost's table whose datasheet peaks the fitted efficiencies are fractions of
    (without it, no time is fitted); peaks: a calibration file (or its roofline dict) whose peaks to use
    instead of measuring them (CPU) again, so that files can be fitted together.
    """
    import torch

    from . import _measure, _model, analyze
    from ._options import torch_version_of

    bindings = dict(bindings or {})
    inputs = list(inputs or [])
    if device not in ("cpu", "cuda") and not device.startswith("cuda:"):
        raise TorchcostError("device: expected cpu or cuda, got %r" % device)
    cuda = device != "cpu"
    if cuda and not torch.cuda.is_available():
        raise TorchcostError("device: cuda is not available to this torch (%s)" % torch.__version__)
    family = is_family(model_spec)
    if family and inputs:
        raise TorchcostError("input_shapes: %s builds its own inputs; give their sizes with set (B=8, S=128)"
                             % model_spec)
    if not family and config is not None:
        raise TorchcostError("config: only for a family, a preset or a config.json, not %s" % model_spec)
    if not family and not inputs:
        raise TorchcostError("input_shapes: give the shape of every forward() input")
    context = _measure.cuda_context_bytes(device) if cuda else {}
    roofline = _roofline(device, gpu, peaks)
    time_options: Dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        if roofline is not None:
            # The pure roofline (every efficiency 1): the roofline seconds per class are what the fit needs.
            path = os.path.join(tmp, "roofline.json")
            with open(path, "w") as f:
                json.dump({"roofline": roofline, "fit": {"efficiency": {}}}, f)
            time_options["gpu_file"] = path
        # NB: the step runs on this torch: its autograd formulas and optimizer steps are modelled.
        common = dict(optimizer=optimizer, set=bindings or None, device="cuda" if cuda else "cpu",
                      torch_version=torch_version_of(torch.__version__), **time_options)
        if family:
            module, config = family_model(model_spec, config)
            model = module.to(device).train()
            analysis = analyze(model_spec, config=config or None, loss="sum", **common)
            # The step runs at concrete shapes: every symbol of the family's inputs needs a value.
            unbound = [s for s in analysis.symbols if s not in (bindings or {})]
            if unbound:
                raise TorchcostError("set: %s's inputs need a value of every symbol: unbound symbol '%s'"
                                     % (model_spec, unbound[0]))
            shapes = [(i["shape"], i["dtype"]) for i in analysis.to_dict()["inputs"]]
            xs = make_inputs(shapes, bindings, device)
        else:
            shapes = _model.normalize_inputs(inputs)
            model = load_model(model_spec, device)
            xs = make_inputs(shapes, bindings, device)
            # The analysis exports the module itself (torch.fx on meta inputs; its weights are not touched).
            is_file = isinstance(model_spec, str) and model_spec.lower().endswith(".pt")
            analysis = analyze(model_spec if is_file else model, inputs, **common)
        pred = predicted(analysis)
        time_doc = analysis.to_dict().get("time") if roofline is not None else None
    opt = make_optimizer(optimizer, model.parameters())
    with _measure.steady_cpu() if not cuda else contextlib.nullcontext():
        meas = _measure.measure_step(model, xs, opt, device, warmup=warmup, steps=steps)
    meas["category_bytes"] = measured_categories(meas)
    meas["class_seconds"] = phase_class_seconds(meas, pred.get("op_classes"))
    meas.update(context)
    name = model_spec if isinstance(model_spec, str) else type(model_spec).__name__
    doc = {"format": "torchcost.calibration", "version": 1, "model": name,
           "inputs": [{"shape": s, "dtype": d or "float32"} for s, d in shapes], "bindings": bindings,
           "optimizer": optimizer, "device": device_info(device), "warmup": warmup,
           "predicted": pred, "measured": meas, "roofline": roofline, "fit": None}
    if family:
        doc.update(config=config, loss="sum", module="torchcost.reference: %s" % type(model).__name__)
    if time_doc is not None:
        doc["fit"] = fit_or_error(step_samples(pred, meas, time_doc, name))
    return doc


def calibrate_together(models: Sequence[Tuple[str, Any, List[str], Dict[str, int]]], *, optimizer: str = "adam",
                       peaks: Any = None, rounds: int = 9) -> Dict[str, Dict[str, Any]]:
    """calibrate() for several models on this CPU, their steps timed in turn: {name: document}.

    models: (name, nn.Module or spec, inputs, bindings). Each is calibrated (memory, one profiled step), then
    `rounds` rounds each time one step of every model in turn, so that a machine's changing load falls on all
    of them alike (NB: the way to compare models' times on a shared machine); measured.*seconds* are
    replaced by those rounds' medians and fastest, and each fit refitted to them.
    """
    from . import _measure, _model

    peaks = _roofline("cpu", None, peaks)
    docs: Dict[str, Dict[str, Any]] = {}
    runs = []
    for name, spec, inputs, bindings in models:
        doc = calibrate(spec, inputs, optimizer=optimizer, bindings=bindings, device="cpu", warmup=1, steps=1,
                        peaks=peaks)
        doc["model"] = name
        docs[name] = doc
        model = load_model(spec, "cpu")
        xs = make_inputs(_model.normalize_inputs(list(inputs)), dict(bindings or {}), "cpu")
        runs.append((name, _measure.phase_runner(model, xs, make_optimizer(optimizer, model.parameters()))))
    times = {name: {p: [] for p in PHASES} for name, _ in runs}
    totals: Dict[str, List[float]] = {name: [] for name, _ in runs}
    with _measure.steady_cpu():
        for r in range(rounds + 1):  # NB: round 0 warms every model up (the optimizer's states exist).
            for name, run in runs:
                s: Dict[str, Any] = {}
                t0 = time.thread_time()
                for phase, fn in run:
                    t = time.thread_time()
                    fn(s)
                    if r:
                        times[name][phase].append(time.thread_time() - t)
                if r:
                    totals[name].append(time.thread_time() - t0)
                del s
        # The shares of the classes, profiled warm: three steps of each model.
        for name, run in runs:
            docs[name]["measured"]["op_self_seconds"] = _measure.profile_step(run, False, steps=3)[1]
    for name, doc in docs.items():
        m = doc["measured"]
        m.update(step_seconds=statistics.median(totals[name]), step_seconds_min=min(totals[name]), steps=rounds,
                 phase_seconds={p: statistics.median(v) for p, v in times[name].items()},
                 phase_seconds_min={p: min(v) for p, v in times[name].items()},
                 interleaved_with=[n for n in docs if n != name])
        p = doc["predicted"]
        if doc.get("fit"):
            time_doc = {"step_seconds": p["roofline_step_seconds"], "classes": p["roofline_classes"]}
            doc["fit"] = fit_or_error(step_samples(p, m, time_doc, name))
        else:
            m["class_seconds"] = phase_class_seconds(m, p.get("op_classes"))
    return docs


def _write(path: str, doc: Dict[str, Any]) -> None:
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="torchcost calibrate",
                                 description="Run a model's training step for real and compare with torchcost.")
    ap.add_argument("model", nargs="?", help="module:callable building the nn.Module, a TorchScript .pt, a family or "
                    "preset name (gpt2, llama, resnet, vit, resnet50, ...) or a Hugging Face config.json")
    ap.add_argument("--config", help="a family's or config.json's keys: layers=2,hidden=128 (as the analysis's)")
    ap.add_argument("--input", action="append", default=[], help="an input shape: 8,3,32,32 or B,S:int64")
    ap.add_argument("--set", action="append", default=[], help="NAME=INT, a symbol's value")
    ap.add_argument("--optimizer", default="adam", choices=OPTIMIZERS)
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N] (cuda: untested)")
    ap.add_argument("--warmup", type=int, default=2, help="unmeasured steps first (at least 1)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps (the median is reported)")
    ap.add_argument("--gpu", help="cuda: the GPU of torchcost's table (its datasheet peaks) to fit efficiencies to")
    ap.add_argument("--peaks", metavar="FILE.json", help="the peaks of an earlier calibration file, not measured again")
    ap.add_argument("--fit", nargs="+", metavar="FILE.json", help="fit the samples of these calibration files at once")
    ap.add_argument("--measured", metavar="RAW.json", help="predict and fit tools/measure_device.py's measurements "
                    "(run from the repository's root)")
    ap.add_argument("--out", required=True, help="the calibration file to write (JSON)")
    args = ap.parse_args(argv)
    try:
        import torch  # noqa: F401
    except ImportError as e:
        print("torchcost.calibrate: calibrate runs the step in PyTorch: torch is not importable by %s (%s)"
              % (sys.executable, e), file=sys.stderr)
        return 2
    if args.measured:
        from . import measured

        try:
            if args.model or args.fit:
                raise TorchcostError("measured: give the measurements only, not a model or --fit")
            doc = measured.compare(args.measured, gpu=args.gpu)
        except TorchcostError as e:
            print("torchcost.calibrate: %s" % e, file=sys.stderr)
            return 2
        _write(args.out, doc)
        print(measured.table(doc))
        return 0
    if args.fit:
        try:
            if args.model:
                raise TorchcostError("fit: give calibration files only, not a model (%s)" % args.model)
            doc = fit_files(args.fit)
        except TorchcostError as e:
            print("torchcost.calibrate: %s" % e, file=sys.stderr)
            return 2
        _write(args.out, doc)
        print("\n".join(fit_table(doc)))
        return 0
    if not args.model:
        ap.error("give MODEL, or --fit FILE.json ...")
    if os.getcwd() not in sys.path:  # NB: as `python3 -m` does: MODEL's module is found from here.
        sys.path.insert(0, os.getcwd())
    try:
        doc = calibrate(args.model, args.input, optimizer=args.optimizer, bindings=parse_set(args.set),
                        device=args.device, warmup=args.warmup, steps=args.steps, gpu=args.gpu, peaks=args.peaks,
                        config=args.config)
    except TorchcostError as e:
        print("torchcost.calibrate: %s" % e, file=sys.stderr)
        return 2
    _write(args.out, doc)
    print(table(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
