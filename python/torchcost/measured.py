"""A device's raw measurements (tools/measure_device.py) beside torchcost's predictions, and the fit of their times.

    python3 -m torchcost.calibrate --measured RAW.json [--gpu NAME] --out FIT.json

For every run of RAW.json (a model and Adam's step, measured on cuda or cpu)
the same step is analysed here: the family with its --config, or the module
of the file named, with the run's inputs, `--optimizer adam`,
`--optimizer-impl` as run, and on CUDA `--allocator cuda` with the context
measured (the device memory outside the allocator after the step) and the
allocator settings the run had (PYTORCH_CUDA_ALLOC_CONF). Predicted and
measured are printed side by side with predicted / measured; the phases'
times become the fit's samples (torchcost._fit.step_samples), all runs fitted
at once as `calibrate --fit` fits files; FIT.json is a calibration file
(`torchcost --gpu-file FIT.json`) with each run's document under `runs`.
docs/calibration.md, "On a GPU, in one run".
"""

import importlib.util
import json
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from ._options import TorchcostError, torch_version_of

FORMAT = "torchcost.device_measurements"
# GPUs of gpus/gpus.yaml by what torch.cuda.get_device_name says of them, most specific first.
_GPU_NAMES = (("h200", "h200"), ("h100 pcie", "h100-pcie"), ("h100", "h100"), ("a100-sxm4-80gb", "a100-80gb"),
              ("a100 80gb", "a100-80gb"), ("a100", "a100"), ("l40s", "l40s"), ("l4", "l4"), ("4090", "4090"),
              ("3090", "3090"), ("v100", "v100"), ("mi300x", "mi300x"), ("mi250x", "mi250x"))


def library_bytes(context: Optional[Dict[str, Any]]) -> Optional[Tuple[int, int]]:
    """(allocated, reserved) bytes of the libraries' workspaces tools/measure_device.py primed before any run
    (cuBLAS's, one per handle and stream), from the context's primed_blocks; None for older files."""
    blocks = (context or {}).get("primed_blocks")
    if not isinstance(blocks, list):
        return None
    return sum(sum(b) for _, b in blocks), sum(s for s, _ in blocks)


def context_bytes(context: Optional[Dict[str, Any]], runs: List[Dict[str, Any]]) -> int:
    """What --gpu-file gives --allocator cuda as the context: the most device memory a run used outside the
    allocator after its step, plus the segments of the libraries' workspaces (library_bytes), which the step's
    modelled allocations do not include."""
    outside = max(r["measured"]["outside_allocator_bytes"] for r in runs)
    lib = library_bytes(context)
    return outside + (lib[1] if lib else 0)


def gpu_of(device_name: str) -> Optional[str]:
    """The table's GPU for a device name ("NVIDIA H100 80GB HBM3" -> "h100"), or None."""
    low = device_name.lower()
    return next((gpu for key, gpu in _GPU_NAMES if key in low), None)


def read(path: str) -> Dict[str, Any]:
    """The raw measurements' document; errors name the file."""
    from . import _fit

    return _fit.read_json_doc(path, FORMAT, "the measurements", " (tools/measure_device.py's)")


def alloc_settings(conf: str) -> Dict[str, Any]:
    """The analysis's allocator options of a PYTORCH_CUDA_ALLOC_CONF ("expandable_segments:True,...")."""
    out: Dict[str, Any] = {}
    for item in filter(None, (conf or "").split(",")):
        key, _, value = item.partition(":")
        if key.strip() == "expandable_segments":
            out["expandable_segments"] = value.strip().lower() == "true"
        elif key.strip() == "max_split_size_mb":
            out["max_split_size_mb"] = int(value)
        else:
            raise TorchcostError("PYTORCH_CUDA_ALLOC_CONF %s: not modelled by --allocator cuda" % item)
    return out


def _module(spec: str, root: str) -> Any:
    """The nn.Module of "path/to/file.py:Class" (a path under root), built under seed 0."""
    import torch

    path, _, attr = spec.partition(":")
    full = os.path.join(root, path)
    if not os.path.isfile(full):
        raise TorchcostError("module %s: no such file under %s (run from the repository's root)" % (spec, root))
    mod_spec = importlib.util.spec_from_file_location("measured_model_file", full)
    mod = importlib.util.module_from_spec(mod_spec)
    # NB: the file may change sys.path (tools/make_fixtures.py puts the source tree's python/ first, whose
    # torchcost has no built _core): restored, so that the caller's imports are unchanged.
    saved_path = list(sys.path)
    try:
        mod_spec.loader.exec_module(mod)
    finally:
        sys.path[:] = saved_path
    torch.manual_seed(0)
    return getattr(mod, attr)()


def analyse(run: Dict[str, Any], cuda: bool, gpu_file: Optional[str], root: str, allocator: bool = False) -> Any:
    """torchcost's analysis of a run's step; with allocator, through --allocator cuda with the context and the
    allocator's settings as measured."""
    from . import analyze

    m = run["measured"]
    kw: Dict[str, Any] = dict(optimizer=run["optimizer"], optimizer_impl=run["optimizer_impl"],
                              set=run["bindings"] or None, device="cuda" if cuda else "cpu", gpu_file=gpu_file,
                              torch_version=torch_version_of(run.get("torch", "1.13")))
    if allocator:
        kw.update(allocator="cuda", cuda_context=str(m["outside_allocator_bytes"]),
                  **alloc_settings(run.get("alloc_conf", "")))
    if "family" in run:
        return analyze(run["family"], config=run["config"], loss="sum", **kw)
    shapes = [",".join(str(d) for d in i["shape"]) + ":" + i["dtype"] for i in run["inputs"]]
    return analyze(_module(run["module"], root), shapes, **kw)


def _ratio(p: Any, m: Any) -> str:
    if not isinstance(p, (int, float)) or not isinstance(m, (int, float)):
        return "-"
    return "%.4f" % (p / m) if m else ("1.0000" if p == 0 else "inf")


def memory_rows(run: Dict[str, Any], pred: Dict[str, Any], alloc: Optional[Dict[str, Any]]) -> List[Tuple]:
    """(name, predicted, measured) rows of a run's memory. On CUDA the measured peaks less the libraries'
    workspaces (cuBLAS's: not among torchcost's allocations), or, in files without them, less the bytes resident
    before the step's tensors."""
    m = run["measured"]
    rows: List[Tuple] = []
    if alloc is not None and m.get("peak_bytes") is not None:
        ra, rr = run.get("library_bytes") or (m["resident_allocated_bytes"], m["resident_reserved_bytes"])
        rows += [("allocated peak", alloc["allocated_peak"], m["peak_bytes"] - ra),
                 ("reserved peak", alloc["reserved_peak"], m["reserved_peak_bytes"] - rr),
                 ("device (reserved + context)", alloc["device_peak"],
                  m["reserved_peak_bytes"] - rr + m["outside_allocator_bytes"])]
        # NB: torchcost has the phases' peaks in exact bytes only; the measured ones are the allocator's blocks.
        rows += [("phase %s (exact / blocks)" % p, pred["phase_peak_bytes"][p], m["phase_peak_bytes"][p] - ra)
                 for p in ("forward", "backward", "optimizer")]
        stats = m.get("memory_stats") or {}
        if "segment.all.current" in stats and m.get("resident_segments") is not None:
            # NB: segments held after the step (nothing is released within it) less those held before it; with
            # expandable segments the model counts page mappings instead.
            rows.append(("segments", alloc["segments"], stats["segment.all.current"] - m["resident_segments"]))
        rows += [("warm cache: allocated peak", alloc["allocated_peak"], m["warm_cache"]["peak_bytes"] - ra),
                 ("warm cache: reserved peak", alloc["reserved_peak"], m["warm_cache"]["reserved_peak_bytes"] - rr)]
    rows += [("category %s" % c, pred["category_bytes"][c], m[c + "_bytes"])
             for c in ("param", "buffer", "grad", "act", "opt")]
    return rows


def compare(path: str, gpu: Optional[str] = None, root: Optional[str] = None) -> Dict[str, Any]:
    """Predicts every run of the measurements at path and fits the times: the calibration document (FIT.json)."""
    from . import _fit

    raw = read(path)
    device = raw.get("device") or {}
    cuda = device.get("type") == "cuda"
    root = root or os.getcwd()
    if cuda:
        gpu = gpu or gpu_of(device.get("name", ""))
        if not gpu:
            raise TorchcostError("gpu: %r is not a GPU of gpus/gpus.yaml by name; give one" % device.get("name"))
        roofline: Dict[str, Any] = {"device": "cuda", "gpu": gpu}
    else:
        if gpu:
            raise TorchcostError("gpu: %s is a GPU; the measurements are a CPU's" % gpu)
        # NB: measured here, not where the runs were: the CPU path is for exercising the pipeline on one machine.
        roofline = _fit.cpu_peaks()
    runs, samples, errors = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        peaks = os.path.join(tmp, "roofline.json")
        with open(peaks, "w") as f:
            json.dump({"roofline": roofline, "fit": {"efficiency": {}}}, f)
        for run in raw.get("runs", []):
            if "error" in run:
                errors.append("%s: not measured: %s" % (run["name"], run["error"]))
                continue
            run = dict(run, alloc_conf=device.get("alloc_conf", ""), torch=device.get("torch", "1.13"),
                       library_bytes=library_bytes(raw.get("context")))
            try:
                # The exact bytes (categories, phases) and the time; the allocator's blocks and segments apart.
                analysis = analyse(run, cuda, peaks, root)
                alloc = (analyse(run, cuda, None, root, allocator=True).to_dict()["training"]["memory"]["allocator"]
                         if cuda else None)
            except TorchcostError as e:
                errors.append("%s: not predicted: %s" % (run["name"], e))
                continue
            doc = analysis.to_dict()
            pred = _fit.predicted(analysis)
            m = dict(run["measured"])
            run_samples = _fit.step_samples(pred, m, doc["time"], run["name"])
            samples += run_samples
            pred["allocator"] = alloc
            runs.append({"format": "torchcost.calibration", "version": 1, "model": run["name"],
                         "family": run.get("family"), "config": run.get("config"), "module": run.get("module"),
                         "inputs": run["inputs"], "bindings": run["bindings"], "optimizer": run["optimizer"],
                         "optimizer_impl": run["optimizer_impl"], "device": device, "roofline": roofline,
                         "predicted": pred, "measured": m,
                         "memory": [list(r) for r in memory_rows(run, pred, alloc)],
                         "fit": {"samples": run_samples}})
    out = {"format": "torchcost.calibration", "version": 1, "files": [path], "device": device,
           "context": raw.get("context"), "roofline": roofline, "runs": runs, "errors": errors,
           **({"cuda_context_bytes": context_bytes(raw.get("context"), runs)} if cuda and runs else {}),
           "fit": _fit.fit_or_error(samples) if samples else {"error": "no run was measured and predicted"}}
    return out


def table(doc: Dict[str, Any]) -> str:
    """The side-by-side text of compare()'s document."""
    from . import _fit

    dev = doc["device"]
    lines = ["%s, torch %s%s" % (dev.get("name") or dev.get("processor"), dev.get("torch"),
                                 ", CUDA %s, PYTORCH_CUDA_ALLOC_CONF=%r" % (dev.get("cuda"), dev.get("alloc_conf"))
                                 if dev.get("type") == "cuda" else "")]
    ctx = doc.get("context")
    if ctx:
        lines.append("context: %d bytes used after CUDA's initialisation, before the first tensor" %
                     ctx["used_bytes_at_init"])
        lib = library_bytes(ctx)
        if lib:
            lines.append("libraries' workspaces, allocated before every run (less from every measured peak): "
                         "allocated %d, reserved %d" % lib)
    else:
        lines.append("cpu: max_memory_allocated / max_memory_reserved are CUDA's: only the categories compared")
    worst = 0.0
    for run in doc["runs"]:
        m = run["measured"]
        lines.append("")
        lines.append("%s: %s %s, B %s, adam %s" % (run["model"], run.get("family") or run.get("module"),
                                                   run.get("config") or "", run["bindings"], run["optimizer_impl"]))
        if m.get("resident_allocated_bytes") is not None:
            lines.append("  resident before the step's tensors%s: allocated %d, "
                         "reserved %d; outside the allocator after the step: %d" % (
                             "" if library_bytes(ctx) else " (less from every measured peak)",
                             m["resident_allocated_bytes"], m["resident_reserved_bytes"],
                             m["outside_allocator_bytes"]))
        stats = m.get("memory_stats") or {}
        if stats.get("num_alloc_retries") or stats.get("num_ooms"):
            lines.append("  NB: the allocator freed its cache to retry (num_alloc_retries %s, num_ooms %s): the "
                         "reserved peak is not the unlimited device's" % (stats.get("num_alloc_retries"),
                                                                          stats.get("num_ooms")))
        lines.append("  %-34s %16s %16s %8s" % ("bytes", "predicted", "measured", "ratio"))
        for name, p, v in run["memory"]:
            lines.append("  %-34s %16s %16s %8s" % (name, p, v, _ratio(p, v)))
            if name in ("allocated peak", "reserved peak") and isinstance(p, int) and v:
                worst = max(worst, abs(p / v - 1))
        lines.append("  step %.6f s measured (median of %d; forward %.6f, backward %.6f, optimizer %.6f); "
                     "roofline %.6f s" % (m["step_seconds"], m["steps"],
                                          *(m["phase_seconds"][p] for p in ("forward", "backward", "optimizer")),
                                          run["predicted"]["roofline_step_seconds"]))
        kernels = {s["name"].rpartition(" ")[2]: s["kernels"] for s in run["fit"]["samples"]}
        lines.append("  kernels predicted: %s%s" % (", ".join("%s %d" % kv for kv in kernels.items()),
                     "; measured (the device's kernels): %s" % ", ".join("%s %d" % kv for kv in m["kernels"].items())
                     if m.get("kernels") else ""))
    if any(r["measured"].get("peak_bytes") is not None for r in doc["runs"]):
        lines.append("")
        lines.append("largest deviation of the allocated and reserved peaks: %.2f%% (target 2%%)" % (100 * worst))
    for e in doc.get("errors", []):
        lines.append("error: %s" % e)
    lines.append("")
    lines += _fit.fit_table(doc)
    return "\n".join(lines)
