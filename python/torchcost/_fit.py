"""What a calibration fits: the roofline's peaks measured on this CPU, the analysis's predicted figures, the
measured seconds per op class, the samples and the least-squares fit of the efficiencies (torchcost.calibrate
and torchcost.measured share them).
"""

import json
import platform
import re
import time
from typing import Any, Dict, List, Optional, Sequence

from ._options import TorchcostError

PHASES = ("forward", "backward", "optimizer")
# The roofline's op classes (include/torchcost/op_class.h), in its order.
CLASSES = ("matmul", "attention", "pointwise", "reduction", "optimizer", "convolution")
FIT_METHOD = ("least squares (Eigen) of the errors (p - m) / step over the samples (the phases of each model, m "
              "the fastest of the timed steps, step their sum), p = sum over classes of roofline seconds / "
              "efficiency + kernels x overhead (an overhead below 0, or leaving a class a time below 0, dropped)")
DEVICE_HOST_METHOD = ("least squares (Eigen) in two steps (torchcost's FitDeviceAndHost): the efficiency per class and "
                      "the device's seconds per kernel from the device's seconds per class and phase (the profiler's "
                      "kernels); the host's seconds per forward kernel, per backward kernel, per optimizer kernel and "
                      "per optimizer tensor from the phases the host bounds (wall > 1.1 x device); a phase predicted "
                      "as max(device, host)")
_NONE = object()



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
            "peak_phase": mem.get("peak_phase"), "op_classes": op_classes_of(analysis.to_dict())}


def cpu_peaks(repeats: int = 7) -> Dict[str, Any]:
    """roofline for this CPU on one thread, measured: a float32 matmul's FLOP/s and a copy's bytes per second.

    Each the best of `repeats` (thread CPU time): 256x256 @ 256x256 (2 * 256^3 FLOPs) 8 times, and a copy of
    32 MiB (read and written: 64 MiB moved).
    """
    import torch

    from . import _measure

    with _measure.steady_cpu():
        n, reps = 256, 8
        a, b = torch.randn(n, n), torch.randn(n, n)
        c = torch.empty(n, n)
        x = torch.randn(8 << 20)
        y = torch.empty_like(x)
        torch.mm(a, b, out=c)
        y.copy_(x)
        mm, cp = float("inf"), float("inf")
        for _ in range(repeats):
            t = time.thread_time()
            for _ in range(reps):
                torch.mm(a, b, out=c)
            mm = min(mm, (time.thread_time() - t) / reps)
            t = time.thread_time()
            y.copy_(x)
            cp = min(cp, time.thread_time() - t)
    # NB: thread_time ticks in ns on Linux; a zero reading is not a rate.
    if not (mm > 0 and cp > 0):
        raise TorchcostError("peaks: the microbenchmark took no measurable time")
    return {"device": "cpu", "name": "cpu %s (1 thread)" % (platform.processor() or platform.machine()),
            "tflops": {"fp32": 2.0 * n ** 3 / mm / 1e12},
            "bandwidth_gbs": 2.0 * x.numel() * x.element_size() / cp / 1e9,
            "method": "measured: best of %d, thread CPU time: torch.mm %dx%d fp32 (FLOP/s), copy_ of %d MiB "
                      "(bytes read + written per second)" % (repeats, n, n, x.numel() * x.element_size() >> 20)}


def read_json_doc(path: str, fmt: str, what: str, whose: str = "") -> Dict[str, Any]:
    """The JSON document at path whose key format is fmt; errors name the file ("cannot read WHAT", and the
    format expected, WHOSE after it)."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise TorchcostError("%s: cannot read %s: %s" % (path, what, e)) from None
    if not isinstance(doc, dict) or doc.get("format") != fmt:
        raise TorchcostError("%s: key format: expected \"%s\"%s" % (path, fmt, whose))
    return doc


def read_doc(path: str) -> Dict[str, Any]:
    """A calibration file's document; errors name the file."""
    return read_json_doc(path, "torchcost.calibration", "a calibration file")


# The measured side's op classes, by profiler range name, following the rule files' families
# (docs/calibration.md): matmul.yaml, rnn.yaml -> matmul; conv.yaml -> convolution; attention.yaml; reduction.yaml,
# norm.yaml, loss.yaml -> reduction (pooling is pointwise); views and metadata ops launch no kernel (None); the rest
# pointwise.
_NO_KERNEL = re.compile(r"^(view|unsafe_view|reshape|reshape_alias|t|transpose|permute|expand|flatten|unflatten|"
                        r"unsqueeze|squeeze|select|slice|split|chunk|narrow|as_strided|detach|alias|size|stride|"
                        r"numel|empty|empty_like|empty_strided|resize_|set_|lift_fresh|unbind|"
                        r"accumulate_grad|to|item|local_scalar_dense)$")
_CONVOLUTION = re.compile(r"conv")
_MATMUL = re.compile(r"^(add|b|addb|baddb)?mm$|^addmv$|^mv$|matmul|linear|einsum|^dot$|lstm|gru|^rnn")
_ATTENTION = re.compile(r"scaled_dot_product|flash|_efficient_attention|multi_head_attention")
_REDUCTION = re.compile(r"sum|mean|softmax|norm|nll|cross_entropy|loss|logsumexp|^var|^std|^prod|^amax|^amin|"
                        r"cumsum|^max$|^min$|argmax|argmin")


def _snake(camel: str) -> str:
    """"NativeLayerNorm" -> "native_layer_norm", "MaxPool2DWithIndices" -> "max_pool2d_with_indices"."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", camel)
    s = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", s).lower()
    return re.sub(r"_(\d)d", r"\1d", s)


def _op_base(name: str) -> str:
    """A profiler range's op, snake_case without namespace or leading underscores: "aten::_softmax" -> "softmax",
    "autograd::engine::evaluate_function: NativeLayerNormBackward0" -> "native_layer_norm"."""
    base = name.rpartition(": ")[2] if name.startswith("autograd::") else name
    base = base.rpartition("::")[2]
    m = re.match(r"^(\w+?)Backward\d*$", base)
    if m:
        base = _snake(m.group(1))
    elif base == "AccumulateGrad":
        base = "accumulate_grad"
    return base.lstrip("_")


def op_key(name: str) -> str:
    """The op a profiler range or an analysis's op stands for, forward and backward alike: "aten::softmax",
    "aten::_softmax" and "aten::_softmax_backward_data" -> "softmax"; "aten::native_layer_norm" -> "layer_norm"."""
    base = re.sub(r"_backward(_data|_input|_weight)?$", "", _op_base(name))
    return base[len("native_"):] if base.startswith("native_") else base


def op_classes_of(doc: Dict[str, Any]) -> Dict[str, str]:
    """{op_key: class} of an analysis's JSON ops (their "class", with --gpu or a calibration file's peaks)."""
    return {op_key(o["op"]): o["class"] for o in doc.get("ops") or [] if o.get("class")}


def op_class_of(name: str, known: Optional[Dict[str, str]] = None) -> Optional[str]:
    """The op class of a profiler range (CLASSES), or None for one that launches no kernel.

    The analysis's own class of the op where `known` (op_classes_of) has it, so that both sides group an op
    alike (softmax is activation.yaml's: pointwise); else by name: "aten::addmm" -> matmul;
    "autograd::engine::evaluate_function: NativeLayerNormBackward0" -> reduction (a backward node belongs to
    its forward op's class); "aten::convolution_backward" -> convolution; "Optimizer.step#Adam.step" -> optimizer;
    a range without a namespace (the profiler's own: "Activity Buffer Request") -> None.
    """
    if name.startswith("Optimizer."):
        return "optimizer"
    if "::" not in name:
        return None  # NB: the profiler's own ranges ("Activity Buffer Request": CUPTI's, with device time) run no op.
    base = _op_base(name)
    if _NO_KERNEL.match(base):
        return None
    by_analysis = known.get(op_key(name)) if known else None
    if by_analysis:
        return by_analysis
    if _ATTENTION.search(base):
        return "attention"
    if "pool" in base:
        return "pointwise"
    if _CONVOLUTION.search(base):
        return "convolution"
    if _MATMUL.search(base):
        return "matmul"
    if _REDUCTION.search(base):
        return "reduction"
    return "pointwise"


def class_seconds(self_seconds: Dict[str, float], known: Optional[Dict[str, str]] = None) -> Dict[str, float]:
    """Profiled self seconds per op class (op_class_of, with the analysis's `known` classes) of {range name:
    seconds}, ranges without a kernel left out."""
    out = {c: 0.0 for c in CLASSES}
    for name, seconds in self_seconds.items():
        c = op_class_of(name, known)
        if c is not None:
            out[c] += seconds
    return out


def phase_class_seconds(measured: Dict[str, Any],
                        known: Optional[Dict[str, str]] = None) -> Dict[str, Dict[str, float]]:
    """measured.class_seconds: per phase, each class's share of the phase's profiled self seconds (class_seconds)
    times the phase's measured seconds (median, unprofiled); the optimizer phase is its class's whole.

    NB: recorded beside the fit, not fitted: on the 2-core test machine such per-class samples moved the
    held-out predictions by a factor of two between runs (docs/calibration.md, "The fit").
    """
    out: Dict[str, Dict[str, float]] = {}
    for phase in ("forward", "backward"):
        by_class = class_seconds((measured.get("op_self_seconds") or {}).get(phase) or {}, known)
        total = sum(by_class.values())
        out[phase] = {c: (v / total * measured["phase_seconds"][phase] if total > 0 else 0.0)
                      for c, v in by_class.items()}
    out["optimizer"] = {c: (measured["phase_seconds"]["optimizer"] if c == "optimizer" else 0.0) for c in CLASSES}
    return out


def timing_samples(time_doc: Dict[str, Any], measured: Dict[str, Any], name: str,
                   known: Optional[Dict[str, str]] = None) -> List[Dict[str, Any]]:
    """The fit's samples of one step: each phase's measured seconds beside its roofline seconds per class and
    its kernels (time.classes.<c>.forward_kernels, backward_kernels; the optimizer's kernels), and the step's
    seconds (the phases' sum) that its error is relative to. Where the device's own seconds were measured (a
    GPU's kernel_seconds), each sample also has them, in all and per class (the profiler's self device seconds
    grouped by class_seconds with the analysis's `known` classes; the optimizer phase's are its class's), and
    the optimizer's tensors: a device and host fit's (fit).

    NB: a phase's measured seconds are the fastest of the timed steps (phase_seconds_min), not the median:
    other work on the machine only adds time, and on the shared 2-core test machine the medians of steps timed
    in turn moved by 27-63% between models in one run, the fastest by 1-3% (docs/calibration.md, "The fit").
    """
    classes = time_doc["classes"]
    seconds = measured.get("phase_seconds_min") or measured["phase_seconds"]
    rows = {
        "forward": ({c: classes[c]["forward_roofline_seconds"] for c in CLASSES},
                    sum(classes[c].get("forward_kernels", 0) for c in CLASSES)),
        "backward": ({c: classes[c]["backward_roofline_seconds"] for c in CLASSES},
                     sum(classes[c].get("backward_kernels", 0) for c in CLASSES)),
        # NB: the optimizer's step is its own class; its roofline is the class's whole.
        "optimizer": ({c: (classes[c]["roofline_seconds"] if c == "optimizer" else 0.0) for c in CLASSES},
                      classes["optimizer"].get("kernels", 0)),
    }
    out = []
    for phase in PHASES:
        roofline, kernels = rows[phase]
        if any(v > 0 for v in roofline.values()):
            out.append({"name": "%s %s" % (name, phase), "roofline_seconds": roofline, "kernels": kernels,
                        "measured_seconds": seconds[phase]})
    for sample in out:
        sample["step_seconds"] = sum(x["measured_seconds"] for x in out)
    device = measured.get("kernel_seconds") or {}
    if all(device.get(s["name"].rpartition(" ")[2], 0) > 0 for s in out):
        for sample in out:
            phase = sample["name"].rpartition(" ")[2]
            sample["device_seconds"] = device[phase]
            sample["phase"] = phase
            sample["class_kernels"] = (
                {c: (sample["kernels"] if c == "optimizer" else 0) for c in CLASSES} if phase == "optimizer"
                else {c: time_doc["classes"][c].get(phase + "_kernels", 0) for c in CLASSES})
            sample["tensors"] = time_doc.get("optimizer_tensors", 0) if phase == "optimizer" else 0
            sample["device_class_seconds"] = (
                {c: (device[phase] if c == "optimizer" else 0.0) for c in CLASSES} if phase == "optimizer"
                else class_seconds((measured.get("op_self_seconds") or {}).get(phase) or {}, known))
    return out


def step_samples(pred: Dict[str, Any], measured: Dict[str, Any], time_doc: Dict[str, Any],
                 name: str) -> List[Dict[str, Any]]:
    """One step's time beside its roofline: predicted.roofline_step_seconds and roofline_classes from the
    analysis's time.*, measured.class_seconds (phase_class_seconds); returns the fit's samples (timing_samples)."""
    pred["roofline_step_seconds"] = time_doc["step_seconds"]
    pred["roofline_classes"] = time_doc["classes"]
    measured["class_seconds"] = phase_class_seconds(measured, pred.get("op_classes"))
    return timing_samples(time_doc, measured, name, pred.get("op_classes"))


def fit(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """fit.*: the efficiency per class that torchcost's library fits to the samples (each gets predicted_seconds);
    where every sample has its device seconds (a GPU's), the device and host fit (fit_device_and_host)."""
    from . import _call

    if samples and all(s.get("device_seconds", 0) > 0 for s in samples):
        return fit_device_and_host(samples)
    rows = [(s["name"], [float(s["roofline_seconds"][c]) for c in CLASSES], float(s["measured_seconds"]),
             float(s.get("kernels", 0)), float(s.get("step_seconds", 0))) for s in samples]
    r = _call(lambda core: core.fit_efficiencies, rows, True)
    samples = [dict(s, predicted_seconds=p) for s, p in zip(samples, r["predicted_seconds"])]
    return {"efficiency": {c: e for c, e, f in zip(CLASSES, r["efficiency"], r["fitted"]) if f},
            "kernel_overhead_seconds": r["kernel_overhead_seconds"], "overhead_fitted": r["overhead_fitted"],
            "rank": r["rank"], "tie_penalty": r["tie_penalty"], "rms_relative_error": r["rms_relative_error"],
            "max_relative_error": r["max_relative_error"], "method": FIT_METHOD, "samples": samples}


def fit_device_and_host(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """fit.*: the efficiencies, the device's seconds per kernel and the host's launch costs that torchcost's
    library fits to samples with device seconds (each gets predicted_seconds and host_bound)."""
    from . import _call

    rows = [(s["name"], [float(s["roofline_seconds"][c]) for c in CLASSES], float(s["measured_seconds"]),
             [float(s["class_kernels"][c]) for c in CLASSES], [float(s["device_class_seconds"][c]) for c in CLASSES],
             float(s["device_seconds"]), s["phase"], float(s.get("tensors", 0))) for s in samples]
    r = _call(lambda core: core.fit_device_and_host, rows)
    samples = [dict(s, predicted_seconds=p, host_bound=b)
               for s, p, b in zip(samples, r["predicted_seconds"], r["host_bound"])]
    return {"efficiency": {c: e for c, e, f in zip(CLASSES, r["efficiency"], r["fitted"]) if f},
            "kernel_overhead_seconds": r["kernel_overhead_seconds"],
            "overhead_fitted": r["kernel_overhead_seconds"] > 0, "host": r["host"],
            "rms_relative_error": r["rms_relative_error"], "max_relative_error": r["max_relative_error"],
            "method": DEVICE_HOST_METHOD, "samples": samples}


def fit_or_error(samples: List[Dict[str, Any]]) -> Dict[str, Any]:
    """fit(samples), or {"error", "samples"} where the samples do not determine one."""
    try:
        return fit(samples)
    except TorchcostError as e:
        return {"error": str(e), "method": FIT_METHOD, "samples": samples}


def fit_files(paths: Sequence[str]) -> Dict[str, Any]:
    """One fit over the samples of several calibration files measured against the same roofline."""
    if not paths:
        raise TorchcostError("fit: give the calibration files to fit")
    docs = [(p, read_doc(p)) for p in paths]
    roofline = docs[0][1].get("roofline")
    samples: List[Dict[str, Any]] = []
    for path, doc in docs:
        if not doc.get("roofline"):
            raise TorchcostError("%s: key roofline: missing (calibrated without peaks: give --gpu NAME on cuda)"
                                 % path)
        if doc["roofline"] != roofline:
            raise TorchcostError("%s: key roofline: differs from %s's (calibrate each model with --peaks %s)"
                                 % (path, docs[0][0], docs[0][0]))
        samples += (doc.get("fit") or {}).get("samples", [])
    result = fit(samples)
    return {"format": "torchcost.calibration", "version": 1, "files": list(paths), "roofline": roofline,
            "fit": result}


def fit_table(doc: Dict[str, Any]) -> List[str]:
    """The fit's lines: efficiencies per class, and each sample's measured and fitted seconds."""
    f = doc.get("fit")
    if not f:
        return []
    if "error" in f:
        return ["fit: none (%s)" % f["error"]]
    lines = ["efficiency per op class (fitted; peaks: %s): %s" % (
        doc["roofline"].get("gpu") or doc["roofline"].get("name"),
        ", ".join("%s %.3f" % kv for kv in f["efficiency"].items()))]
    host = f.get("host")
    if host is not None:
        lines.append("device seconds per kernel: %.3g us; host seconds per forward kernel: %.3g us, per backward "
                     "kernel: %.3g us, per optimizer kernel: %.3g us, per optimizer tensor: %.3g us (fitted; a phase "
                     "is max(device, host))" % (
                         f["kernel_overhead_seconds"] * 1e6, host["forward_kernel_seconds"] * 1e6,
                         host["backward_kernel_seconds"] * 1e6,
                         host["optimizer_kernel_seconds"] * 1e6, host["optimizer_tensor_seconds"] * 1e6))
    else:
        lines.append("overhead per kernel: %s" % ("%.3g us (fitted)" % (f["kernel_overhead_seconds"] * 1e6)
                                                  if f.get("overhead_fitted") else "0 (not fitted: with it, it or "
                                                  "a class came out below 0, or no sample launches kernels)"))
    lines.append("%-44s %12s %12s %8s%s" % ("seconds", "fitted", "measured", "ratio",
                                           "  bound" if host is not None else ""))
    for s in f["samples"]:
        lines.append("%-44s %12.6f %12.6f %8.3f%s" % (
            s["name"][-44:], s["predicted_seconds"], s["measured_seconds"],
            s["predicted_seconds"] / s["measured_seconds"],
            ("  host" if s["host_bound"] else "  device") if host is not None else ""))
    lines.append("fit: %srms relative error %.3f, max %.3f" % (
        "rank %d, tie penalty %g, " % (f["rank"], f.get("tie_penalty", 0)) if "rank" in f else "",
        f["rms_relative_error"], f["max_relative_error"]))
    return lines
