#!/usr/bin/env python3
"""Measures the training step torchcost models, for real, on a device; writes the raw numbers as one JSON file.

Usage (plain PyTorch 1.13 or 2.x; no torchcost build, no torchvision needed):

    python3 tools/measure_device.py --out DIR [--device cuda|cpu] [--models gpt2,llama,resnet18,lenet5]
        [--impls single,foreach] [--size full|tiny] [--steps 5] [--warmup 2] [--name NAME]

It writes DIR/NAME.json (NAME default: measured-<device>) of format
"torchcost.device_measurements", which `python3 -m torchcost.calibrate
--measured DIR/NAME.json --out FIT.json` (a machine with torchcost built)
reads: it prints torchcost's prediction beside each number with the ratio
and fits the efficiencies per op class to the times (docs/calibration.md,
"On a GPU, in one run"; docs/allocator.md).

The models are torchcost's own families in plain torch, loaded by file path
(nothing of the torchcost package is imported): GPT-2
(python/torchcost/reference/gpt2.py, family gpt2), LLaMA
(python/torchcost/reference/hf_reference.py, family llama), torchvision's
resnet18 (family resnet, skipped where torchvision is missing) and LeNet-5
(tools/make_fixtures.py's, read from its source). Each runs with Adam in the
single-tensor loop and, with --impls foreach, the foreach step, float32.

The step (python/torchcost/_measure.py's, docs/calibration.md):

    opt.zero_grad(set_to_none=True); out = model(*x)[0...]; loss = out.sum()   # phase forward
    loss.backward()                                                            # phase backward
    opt.step()                                                                 # phase optimizer
    del out, loss

Per run it records: the categories from the tensors (params, buffers, grads,
optimizer states, inputs; ACT through saved_tensors_hooks); on CUDA
max_memory_allocated and max_memory_reserved per phase with the peak stats
reset before each phase, twice: once from an empty cache with the parameters,
buffers, inputs and optimizer states allocated first in that order (the
replay torchcost's --allocator cuda models; the blocks resident before them,
recorded apart), and once on the cache the warm-up steps
left (what a training loop sees); memory_stats() after the first; the device
memory outside the allocator (mem_get_info's used bytes less
memory_reserved()). Once per process: the device memory used after CUDA's
initialisation, before the first tensor (the context), and, after one small
linear layer's forward and backward that make cuBLAS allocate its workspaces
first, in segments of their own, those blocks (`context.primed_blocks`: what
calibrate subtracts from every measured peak). Then the median and
the fastest of --steps timed steps per phase (perf_counter with a
synchronize after each phase on CUDA; the thread's CPU time on one thread on
CPU), and one step under torch.profiler, each phase profiled apart: each
operator's self time (CUDA: the kernel time it launched itself), the
number and time of the device's kernels, and their number per autograd node
or outermost operator that launched them. On CPU the CUDA-only numbers are
null, and `cuda_only` says which.

Every run is isolated: an error is recorded in its `error` and the others go
on; the file is rewritten after each run, so a run cut short leaves the runs
before it.
"""

import argparse
import gc
import importlib.util
import json
import os
import platform
import statistics
import sys
import time
import traceback
import types

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FORMAT = "torchcost.device_measurements"
CUDA_ONLY = ("peak_bytes", "reserved_peak_bytes", "phase_peak_bytes", "phase_reserved_peak_bytes",
             "resident_allocated_bytes", "resident_reserved_bytes", "resident_segments", "resident_blocks",
             "memory_stats", "warm_cache", "outside_allocator_bytes", "device_used_bytes", "kernels", "kernel_seconds",
             "kernel_launches", "kernels_by_launcher")


def load_file(path, name):
    """The module of a Python file, by path (so that no package of the repository is imported), registered as
    sys.modules[name]: loaded once."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def load_reference(filename):
    """A module of python/torchcost/reference/ by path, its relative imports (hf_reference.py's
    `from .decoder_layers import ...`) resolved among the same files: the package's __init__, which imports
    the built torchcost, is not run."""
    package, folder = "torchcost_reference", os.path.join("python", "torchcost", "reference")
    if package not in sys.modules:
        pkg = types.ModuleType(package)
        pkg.__path__ = [os.path.join(ROOT, folder)]
        sys.modules[package] = pkg
    return load_file(os.path.join(folder, filename), package + "." + os.path.splitext(filename)[0])


# The step and the tensors' bytes as calibrate measures them: python/torchcost/_measure.py, which imports
# nothing of the package (torch only), loaded by path.
measure = load_file("python/torchcost/_measure.py", "torchcost_measure")
PHASES = measure.PHASES


def lenet5_class():
    """tools/make_fixtures.py's LeNet5, from its source alone (that module imports the torchcost package)."""
    import ast

    path = os.path.join(ROOT, "tools", "make_fixtures.py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LeNet5")
    scope = {"torch": torch, "nn": torch.nn}
    exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), scope)
    return scope["LeNet5"]


# Per model and size: the constructor's arguments and the symbols' values. NB: the sizes "full" take about a
# second per step on an H100 in float32 and fit in its 80 GB with the foreach step's temporaries.
SIZES = {
    "gpt2": {"full": ({"vocab": 50257, "d_model": 768, "n_head": 12, "n_layer": 12, "context": 1024,
                       "dropout": 0.1}, {"B": 8, "S": 1024}),
             "tiny": ({"vocab": 256, "d_model": 32, "n_head": 2, "n_layer": 1, "context": 16, "dropout": 0.1},
                      {"B": 2, "S": 16})},
    "llama": {"full": ({"vocab": 32000, "hidden": 2048, "heads": 16, "kv_heads": 4, "layers": 8,
                        "intermediate": 5632, "eps": 1e-5, "tie": False}, {"B": 4, "S": 1024}),
              "tiny": ({"vocab": 256, "hidden": 32, "heads": 4, "kv_heads": 2, "layers": 1, "intermediate": 64,
                        "eps": 1e-6, "tie": False}, {"B": 2, "S": 16})},
    "resnet18": {"full": ({}, {"B": 64}), "tiny": ({}, {"B": 1})},
    "lenet5": {"full": ({}, {"B": 4096}), "tiny": ({}, {"B": 2})},
}


def build(name, size):
    """(module on the CPU, seed 0; the analysis's description of it; the inputs' shapes and dtypes; bindings)."""
    args, bindings = SIZES[name][size]
    torch.manual_seed(0)
    if name == "gpt2":
        mod = load_reference("gpt2.py")
        model = mod.GPT2(**args)
        config = ("layers=%(n_layer)d,hidden=%(d_model)d,heads=%(n_head)d,vocab=%(vocab)d,context=%(context)d,"
                  "dropout=%(dropout)r,attn=eager" % args)
        spec = {"family": "gpt2", "config": config}
        inputs = [(["B", "S"], "int64")]
    elif name == "llama":
        mod = load_reference("hf_reference.py")
        model = mod.Llama(**args)
        spec = {"family": "llama", "config": model.config() + ",attn=eager"}
        inputs = [(["B", "S"], "int64")]
    elif name == "resnet18":
        import torchvision  # NB: absent on some machines: the run records the ImportError.

        model = torchvision.models.resnet18()
        spec = {"family": "resnet", "config": "depth=18"}
        inputs = [(["B", 3, 224, 224], "float32")]
    elif name == "lenet5":
        model = lenet5_class()()
        spec = {"module": "tools/make_fixtures.py:LeNet5"}
        inputs = [(["B", 1, 32, 32], "float32")]
    else:
        raise ValueError("unknown model %r (%s)" % (name, ", ".join(SIZES)))
    return model.train(), spec, inputs, dict(bindings)


def make_inputs(shapes, bindings, device):
    """randn for floats, zeros for token ids (index 0 is valid for every embedding), seed 0."""
    torch.manual_seed(0)
    out = []
    for shape, dtype in shapes:
        dims = [bindings[d] if isinstance(d, str) else d for d in shape]
        if dtype == "float32":
            out.append(torch.randn(dims, device=device))
        else:
            out.append(torch.zeros(dims, dtype=getattr(torch, dtype), device=device))
    return out


def categories(model, inputs, opt):
    """The categories' bytes from the tensors, after a step (grads and states exist)."""
    params = list(model.parameters())
    param_bytes, param_ptrs = measure.storage_bytes(params)
    buffer_bytes, buffer_ptrs = measure.storage_bytes(list(model.buffers()))
    state = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    on_device = [v for v in state if v.device.type != "cpu"]
    out = {"param_bytes": param_bytes, "buffer_bytes": buffer_bytes,
           "grad_bytes": sum(p.grad.numel() * p.grad.element_size() for p in params if p.grad is not None),
           "opt_bytes": measure.storage_bytes(state)[0], "input_bytes": measure.storage_bytes(inputs)[0],
           # NB: torch 2.x keeps Adam's `step` on the CPU unless capturable or fused.
           "opt_bytes_on_cpu": measure.storage_bytes(state)[0] - measure.storage_bytes(on_device)[0]}
    opt.zero_grad(set_to_none=True)
    gc.collect()
    out["act_bytes"] = measure.saved_bytes(model, inputs, {**param_ptrs, **buffer_ptrs})
    gc.collect()
    return out


def memory_step(run, dev):
    """One step: max_memory_allocated / max_memory_reserved per phase, the peak stats reset before each."""
    alloc, reserved = {}, {}
    s = {}
    for name, fn in run:
        torch.cuda.reset_peak_memory_stats(dev)
        fn(s)
        torch.cuda.synchronize(dev)
        alloc[name] = torch.cuda.max_memory_allocated(dev)
        reserved[name] = torch.cuda.max_memory_reserved(dev)
    del s
    torch.cuda.synchronize(dev)
    return alloc, reserved


def fresh_cache(model, inputs, opt, dev):
    """Moves every tensor of the step to the CPU, empties the cache, and allocates them again in torchcost's
    order (parameters, buffers, inputs, optimizer states per parameter): the cache torchcost's replay starts
    from. Returns the bytes allocated and reserved and the segments held before them (what the process holds
    besides: cuBLAS's workspace); the inputs are replaced in place by the device's."""
    params = list(model.parameters())
    mods = list(model.modules())
    opt.zero_grad(set_to_none=True)
    for p in params:
        p.data = p.data.cpu()
    for m in mods:
        for k, b in m._buffers.items():
            if b is not None:
                m._buffers[k] = b.cpu()
    moved = []
    for st in opt.state.values():
        for v in st.values():
            if isinstance(v, torch.Tensor) and v.device.type == "cuda":
                # NB: in place (.data), as the parameters: another reference to the state tensor (torch 2.11's
                # Adam keeps one of the last parameter's) would keep its CUDA block (250 MiB of the llama's).
                v.data = v.data.cpu()
                moved.append(v)
    host_inputs = [x.cpu() for x in inputs]
    del inputs[:]
    gc.collect()
    torch.cuda.synchronize(dev)
    torch.cuda.empty_cache()
    resident = (torch.cuda.memory_allocated(dev), torch.cuda.memory_reserved(dev),
                torch.cuda.memory_stats(dev).get("segment.all.current", 0), resident_blocks(dev))
    for p in params:
        p.data = p.data.to(dev)
    for m in mods:
        for k, b in m._buffers.items():
            if b is not None:
                m._buffers[k] = b.to(dev)
    inputs.extend(x.to(dev) for x in host_inputs)
    for v in moved:
        v.data = v.data.to(dev)
    torch.cuda.synchronize(dev)
    return resident


def resident_blocks(dev):
    """The segments the cache holds, as [segment bytes, [allocated block bytes]]: what stays resident."""
    try:
        return [[seg["total_size"], [b["size"] for b in seg["blocks"] if b["state"] == "active_allocated"]]
                for seg in torch.cuda.memory_snapshot() if seg.get("device", 0) == dev.index or dev.index is None]
    except Exception as e:  # NB: a diagnostic: its absence does not stop the run.
        return "%s: %s" % (type(e).__name__, e)


def prime_libraries(dev):
    """One small linear layer's forward and backward and a matmul, then an empty cache: cuBLAS's workspaces
    (one per handle and stream: the forward's thread and autograd's device thread) are allocated before the
    step's tensors, in segments of their own. NB: else the warm-up's first products take them from the middle
    of the step's large segments, which empty_cache then cannot release (torch 2.11 on an H200: 420 MiB
    reserved around 65 MiB of workspaces), and the step measured from the "empty" cache reuses them."""
    lin = torch.nn.Linear(64, 64).to(dev)
    x = torch.randn(8, 64, device=dev, requires_grad=True)
    (lin(x) @ x.t()).sum().backward()
    torch.cuda.synchronize(dev)
    del lin, x
    torch.cuda.empty_cache()


def _us(e, *names):
    for n in names:
        v = getattr(e, n, None)
        if v is not None:
            return float(v)
    return 0.0


_NODE_PREFIX = "autograd::engine::evaluate_function: "


def _launcher(e):
    """The autograd node event `e` ran in ("NativeLayerNormBackward0"), else its outermost aten operator; None
    outside both."""
    top = None
    while e is not None:
        if e.name.startswith(_NODE_PREFIX):
            return e.name[len(_NODE_PREFIX):]
        if e.name.startswith("aten::"):
            top = e.name
        e = e.cpu_parent
    return top


def kernels_by_launcher(events):
    """{launcher: {"calls", "kernels", "ops": {op: kernels}}} of one phase's profiled events: the device's kernels
    grouped by what ran them. A launcher is the autograd node whose evaluation launched them (its gradient
    accumulations included) or, outside the backward, the outermost operator ("aten::linear"); "ops" splits its
    kernels by the operator that launched each ("aten::addmm"). NB: torch.profiler lists a CUDA kernel under
    the CPU event of the operator that launched it (FunctionEvent.kernels); an event's cpu_parent is the range
    it ran in."""
    out = {}
    for e in events:
        is_node = e.name.startswith(_NODE_PREFIX)
        if is_node or (e.name.startswith("aten::") and _launcher(e.cpu_parent) is None):
            out.setdefault(_launcher(e), {"calls": 0, "kernels": 0, "ops": {}})["calls"] += 1
        n = len(getattr(e, "kernels", None) or ())
        if n:
            entry = out.setdefault(_launcher(e) or e.name, {"calls": 0, "kernels": 0, "ops": {}})
            entry["kernels"] += n
            entry["ops"][e.name] = entry["ops"].get(e.name, 0) + n
    return out


def profile_phases(run, cuda, sync):
    """One step, each phase under its own torch.profiler.profile: (op_seconds, op_self_seconds, kernels,
    kernel_seconds, kernel_launches, kernels_by_launcher). An op's seconds: its self CUDA time (kernels it
    launched itself) on CUDA, its self CPU time on CPU; kernels: the device's kernel, memcpy and memset events per
    phase; launches: the CUDA runtime's and driver's kernel launch calls; kernels_by_launcher: per phase, the
    kernels per autograd node or outermost operator (kernels_by_launcher()). The last four are CUDA's (None on
    CPU)."""
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    device_type = getattr(torch.autograd, "DeviceType", None)
    op_seconds, own, kernels, kernel_seconds, kernel_launches, launchers = {}, {}, {}, {}, {}, {}
    s = {}
    for name, fn in run:
        with profile(activities=acts) as prof:
            fn(s)
            sync()
        mine, n, ks, launches = {}, 0, 0.0, 0
        for e in prof.key_averages():
            if getattr(e, "is_user_annotation", False):
                continue  # NB: record_function ranges, on the GPU's timeline too in torch 2.x: not kernels.
            dev_time = _us(e, "self_device_time_total", "self_cuda_time_total")
            if cuda and device_type is not None and getattr(e, "device_type", None) == device_type.CUDA:
                if e.key.startswith("Optimizer."):
                    continue  # NB: the same, where torch does not flag them.
                n += e.count
                ks += dev_time * 1e-6
                continue
            if "LaunchKernel" in e.key:  # cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel(Ex)
                launches += e.count
            seconds = (dev_time if cuda else _us(e, "self_cpu_time_total")) * 1e-6
            if seconds > 0:
                mine[e.key] = seconds
                acc = op_seconds.setdefault(e.key, {"count": 0, "seconds": 0.0})
                acc["count"] += e.count
                acc["seconds"] += seconds
        own[name] = mine
        kernels[name], kernel_seconds[name], kernel_launches[name] = n, ks, launches
        launchers[name] = kernels_by_launcher(prof.events())
    del s
    ordered = dict(sorted(op_seconds.items(), key=lambda kv: -kv[1]["seconds"]))
    if not cuda:
        return ordered, own, None, None, None, None
    return ordered, own, kernels, kernel_seconds, kernel_launches, launchers


def measure_run(model_name, impl, size, device, warmup, steps):
    """One model and optimizer implementation: the run's record."""
    cuda = device.startswith("cuda")
    dev = torch.device(device)
    sync = (lambda: torch.cuda.synchronize(dev)) if cuda else (lambda: None)
    model, spec, shapes, bindings = build(model_name, size)
    rec = {"name": "%s-%s" % (model_name, impl), "model": model_name, **spec,
           "inputs": [{"shape": s, "dtype": d} for s, d in shapes], "bindings": bindings,
           "optimizer": "adam", "optimizer_impl": impl, "dtype": "float32", "warmup": warmup}
    model = model.to(dev)
    inputs = make_inputs(shapes, bindings, dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=(impl == "foreach"))
    run = measure.phase_runner(model, inputs, opt)
    for _ in range(max(warmup, 1)):  # NB: at least one: the optimizer's states exist from the first step.
        s = {}
        for _name, fn in run:
            fn(s)
        del s
    sync()
    m = categories(model, inputs, opt)
    m["baseline_bytes"] = m["param_bytes"] + m["buffer_bytes"] + m["opt_bytes"] + m["input_bytes"]
    m["threads"] = torch.get_num_threads()
    if cuda:
        # What a training loop sees: the cache the warm-up steps left.
        alloc, reserved = memory_step(run, dev)
        m["warm_cache"] = {"phase_peak_bytes": alloc, "phase_reserved_peak_bytes": reserved,
                           "peak_bytes": max(alloc.values()), "reserved_peak_bytes": max(reserved.values())}
        # What torchcost replays: an empty cache, the step's standing tensors allocated first.
        (m["resident_allocated_bytes"], m["resident_reserved_bytes"], m["resident_segments"],
         m["resident_blocks"]) = fresh_cache(model, inputs, opt, dev)
        alloc, reserved = memory_step(run, dev)
        m.update(peak_bytes=max(alloc.values()), reserved_peak_bytes=max(reserved.values()),
                 phase_peak_bytes=alloc, phase_reserved_peak_bytes=reserved,
                 memory_stats={k: v for k, v in torch.cuda.memory_stats(dev).items() if isinstance(v, int)})
        free, total = torch.cuda.mem_get_info(dev)
        m["device_used_bytes"] = total - free
        m["outside_allocator_bytes"] = total - free - torch.cuda.memory_reserved(dev)
        m["method"] = ("torch.cuda.max_memory_allocated/max_memory_reserved, reset per phase, from an empty "
                       "cache with params, buffers, inputs and optimizer states allocated first")
    else:
        m.update({k: None for k in CUDA_ONLY})
        m["cuda_only"] = list(CUDA_ONLY)
        m["method"] = "cpu: no allocator counters (max_memory_allocated/reserved are CUDA's)"
    clock = time.perf_counter if cuda else time.thread_time
    times = {p: [] for p in PHASES}
    totals = []
    for _ in range(max(steps, 1)):
        s = {}
        sync()
        t0 = clock()
        for name, fn in run:
            t = clock()
            fn(s)
            sync()
            times[name].append(clock() - t)
        totals.append(clock() - t0)
        del s
    m.update(step_seconds=statistics.median(totals), step_seconds_min=min(totals), steps=len(totals),
             phase_seconds={p: statistics.median(v) for p, v in times.items()},
             phase_seconds_min={p: min(v) for p, v in times.items()},
             clock="perf_counter" if cuda else "thread_time")
    try:
        (m["op_seconds"], m["op_self_seconds"], m["kernels"], m["kernel_seconds"], m["kernel_launches"],
         m["kernels_by_launcher"]) = profile_phases(run, cuda, sync)
    except Exception as e:  # NB: the profiler is optional; the memory and the times stand without it.
        m["op_seconds"], m["op_self_seconds"] = {}, {}
        m["profiler_error"] = "%s: %s" % (type(e).__name__, e)
    opt.zero_grad(set_to_none=True)
    rec["measured"] = m
    return rec


def device_record(device):
    info = {"type": device.split(":")[0], "torch": torch.__version__, "python": platform.python_version(),
            "platform": platform.platform(), "processor": platform.processor() or platform.machine()}
    if info["type"] == "cuda":
        props = torch.cuda.get_device_properties(torch.device(device))
        info.update(name=props.name, total_memory=props.total_memory, cuda=torch.version.cuda,
                    capability="%d.%d" % (props.major, props.minor), multi_processors=props.multi_processor_count,
                    alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
                    module_loading=os.environ.get("CUDA_MODULE_LOADING", ""))
        for key, get in (("matmul_allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
                         ("cudnn_allow_tf32", lambda: torch.backends.cudnn.allow_tf32)):
            try:
                info[key] = bool(get())
            except Exception as e:  # NB: newer torch may deprecate the flags for fp32_precision.
                info[key] = "%s: %s" % (type(e).__name__, e)
        try:
            info["driver"] = torch.cuda.driver_version() if hasattr(torch.cuda, "driver_version") else None
        except Exception:
            info["driver"] = None
    return info


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the directory to write NAME.json to")
    ap.add_argument("--name", help="the file's stem (default measured-<device>)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--models", default="gpt2,llama,resnet18,lenet5")
    ap.add_argument("--impls", default="single,foreach", help="Adam's step: single (foreach=False), foreach")
    ap.add_argument("--size", default="full", choices=("full", "tiny"))
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args(argv)
    cuda = args.device.startswith("cuda")
    doc = {"format": FORMAT, "version": 1, "size": args.size, "argv": sys.argv[1:], "runs": []}
    if cuda:
        if not torch.cuda.is_available():
            print("measure_device: cuda is not available to torch %s" % torch.__version__, file=sys.stderr)
            return 2
        dev = torch.device(args.device)
        torch.cuda.init()
        # NB: before the first tensor: the context's own bytes (mem_get_info counts every process on the GPU).
        free, total = torch.cuda.mem_get_info(dev)
        doc["context"] = {"used_bytes_at_init": total - free, "total_bytes": total}
        prime_libraries(dev)
        doc["context"]["primed_blocks"] = resident_blocks(dev)
    else:
        # NB: as calibrate on CPU: one thread, its CPU time (OpenBLAS's own pool too: _measure.one_thread), and
        # freed memory kept in the process (_measure.hold_freed_memory).
        measure.hold_freed_memory()
        torch.set_num_threads(1)
        for set_threads, _ in measure.openblas_thread_setters():
            set_threads(1)
        doc["context"] = None
    doc["device"] = device_record(args.device)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, (args.name or "measured-%s" % args.device.split(":")[0]) + ".json")
    for model_name in args.models.split(","):
        for impl in args.impls.split(","):
            t0 = time.perf_counter()
            try:
                rec = measure_run(model_name, impl, args.size, args.device, args.warmup, args.steps)
            except Exception as e:
                rec = {"name": "%s-%s" % (model_name, impl), "model": model_name, "optimizer_impl": impl,
                       "error": "%s: %s" % (type(e).__name__, e), "traceback": traceback.format_exc()}
            rec["wall_seconds"] = time.perf_counter() - t0
            gc.collect()
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.empty_cache()
                rec["allocated_after_bytes"] = torch.cuda.memory_allocated()
            doc["runs"].append(rec)
            m = rec.get("measured") or {}
            print("%-16s %7.1f s  %s" % (rec["name"], rec["wall_seconds"], rec.get("error") or
                  "step %.4f s, allocated peak %s, reserved peak %s" % (
                      m["step_seconds"], m.get("peak_bytes"), m.get("reserved_peak_bytes"))), flush=True)
            with open(path + ".tmp", "w") as f:
                json.dump(doc, f, indent=1)
            os.replace(path + ".tmp", path)
    print("wrote %s" % path)
    return 0 if all("error" not in r for r in doc["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
