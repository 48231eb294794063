"""Measuring one real training step in PyTorch: the memory by category and phase, and the time.

The method is tools/measure_step.py's (docs/measuring.md): on CPU the legacy
autograd profiler's memory events (c10's CPU allocator does not round, so the
running sum is exact); ACT from saved_tensors_hooks; params, grads and
optimizer states from the tensors themselves, each storage once. On CUDA the
caching allocator's own counters (max_memory_allocated / max_memory_reserved,
reset between phases). NB: the CUDA path is written from PyTorch's documented
API (torch/cuda/memory.py) and has not been run here (no GPU on this machine).

NB: tools/measure_device.py loads this file by path, on machines with plain
PyTorch (1.13 or 2.x) and no torchcost: it imports nothing of the package.
"""

import contextlib
import gc
import statistics
import time
from typing import Any, Callable, Dict, List, Tuple

PHASES = ("forward", "backward", "optimizer")
_MARK = "torchcost::phase::"


def storage(t: Any) -> Tuple[int, int]:
    """(data_ptr, nbytes) of a tensor's storage (untyped_storage in torch 2.x, storage in 1.13)."""
    s = t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()
    return s.data_ptr(), s.nbytes()


def storage_bytes(tensors: List[Any]) -> Tuple[int, Dict[int, int]]:
    """Sum of the storage bytes of tensors, each storage once; and {data_ptr: bytes}."""
    seen: Dict[int, int] = {}
    for t in tensors:
        ptr, n = storage(t)
        if n:
            seen[ptr] = n
    return sum(seen.values()), seen


def first_tensor(out: Any) -> Any:
    """The first tensor of a model's output (a tuple's first element, recursively)."""
    while isinstance(out, (tuple, list)):
        out = out[0]
    if isinstance(out, dict):
        out = next(iter(out.values()))
    return out


def sum_loss(out: Any) -> Any:
    """torchcost's default loss: the sum of the first output, in float32."""
    return out.sum() if out.dtype == out.float().dtype else out.float().sum()


def opt_state_bytes(opt: Any) -> int:
    """Bytes of every tensor in opt.state, each storage once."""
    import torch

    tensors = [v for st in opt.state.values() for v in st.values() if isinstance(v, torch.Tensor)]
    return storage_bytes(tensors)[0]


def saved_bytes(model: Any, inputs: List[Any], exclude: Dict[int, int]) -> int:
    """ACT: bytes of the storages autograd keeps saved after one forward and the loss, each once.

    Pack hooks keep a holder per saved tensor (so it lives as long as autograd
    keeps it); after gc, the live holders are what the graph holds. Parameter
    and buffer storages (`exclude`) do not count; the input does where saved.
    """
    import weakref

    import torch

    class Holder:
        __slots__ = ("t", "__weakref__")

    packed: List[Tuple[Any, int, int]] = []

    def pack(t: Any) -> Any:
        h = Holder()
        h.t = t.detach()  # NB: t itself would make a cycle holder -> t -> grad_fn -> holder.
        packed.append((weakref.ref(h), *storage(t)))
        return h

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda h: h.t):
        loss = sum_loss(first_tensor(model(*inputs)))
        gc.collect()
        alive = {ptr: n for ref, ptr, n in packed if ref() is not None and ptr not in exclude}
    del loss
    return sum(alive.values())


class _CpuEvents:
    """The legacy profiler with memory events; phase marks as empty record_function ranges."""

    def __enter__(self) -> "_CpuEvents":
        import torch
        from torch.autograd import ProfilerConfig, ProfilerState, _enable_profiler_legacy

        _enable_profiler_legacy(ProfilerConfig(ProfilerState.CPU, False, True, False, False, False,
                                               torch._C._profiler._ExperimentalConfig()))
        self.records: Any = None
        return self

    def phase(self, name: str) -> None:
        import torch

        torch.ops.profiler._record_function_exit(
            torch.ops.profiler._record_function_enter_new(_MARK + name, None))

    def __exit__(self, *exc: Any) -> bool:
        from torch.autograd import _disable_profiler_legacy

        self.records = _disable_profiler_legacy()
        return False

    def phase_peaks(self) -> Tuple[int, Dict[str, int]]:
        """(max of the running sum of allocations, {phase: its max}) over the step."""
        threads = [lst for lst in self.records if any(r.kind() == "memory_alloc" for r in lst)]
        if len(threads) > 1:
            raise RuntimeError("memory events on %d threads; run with torch.set_num_threads(1)" % len(threads))
        phase, running, peak = "", 0, 0
        by_phase: Dict[str, int] = {}
        for r in threads[0] if threads else []:
            if r.kind() == "push" and r.name().startswith(_MARK):
                phase = r.name()[len(_MARK):]
                by_phase.setdefault(phase, running)
            elif r.kind() == "memory_alloc":
                running += r.cpu_memory_usage()
                peak = max(peak, running)
                if phase in by_phase:
                    by_phase[phase] = max(by_phase[phase], running)
        return peak, by_phase


def phase_runner(model: Any, inputs: List[Any], opt: Any) -> List[Tuple[str, Callable[[Dict], None]]]:
    """The step as (phase, function) pairs sharing a dict: zero_grad + forward + loss, backward, step."""

    def forward(s: Dict) -> None:
        opt.zero_grad(set_to_none=True)
        # NB: the output stays alive with the loss until the step ends, as in
        # tools/measure_step.py (docs/measuring.md, "The measured step").
        s["out"] = first_tensor(model(*inputs))
        s["loss"] = sum_loss(s["out"])

    def backward(s: Dict) -> None:
        s["loss"].backward()

    def optimizer(s: Dict) -> None:
        opt.step()

    return [("forward", forward), ("backward", backward), ("optimizer", optimizer)]


def measure_step(model: Any, inputs: List[Any], opt: Any, device: str, warmup: int = 2,
                 steps: int = 5) -> Dict[str, Any]:
    """Runs warm-up then measured steps of model on device; returns the measured dict (docs/calibration.md)."""
    import torch

    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    run = phase_runner(model, inputs, opt)
    for _ in range(max(warmup, 1)):  # NB: at least one: the optimizer's states exist from the first step.
        s: Dict[str, Any] = {}
        for _name, fn in run:
            fn(s)
        del s
    sync()

    params = list(model.parameters())
    buffers = list(model.buffers())
    param_bytes, param_ptrs = storage_bytes(params)
    buffer_bytes, buffer_ptrs = storage_bytes(buffers)
    input_bytes = storage_bytes([t for t in inputs if isinstance(t, torch.Tensor)])[0]
    grads = [p.grad for p in params if p.grad is not None]
    grad_bytes = sum(g.numel() * g.element_size() for g in grads)
    opt_bytes = opt_state_bytes(opt)
    opt.zero_grad(set_to_none=True)
    gc.collect()
    act_bytes = saved_bytes(model, inputs, {**param_ptrs, **buffer_ptrs})
    opt.zero_grad(set_to_none=True)
    gc.collect()

    baseline = param_bytes + buffer_bytes + opt_bytes + input_bytes
    out: Dict[str, Any] = {
        "param_bytes": param_bytes, "buffer_bytes": buffer_bytes, "grad_bytes": grad_bytes,
        "opt_bytes": opt_bytes, "act_bytes": act_bytes, "input_bytes": input_bytes,
        "baseline_bytes": baseline, "threads": torch.get_num_threads(),
    }
    if cuda:
        out.update(_cuda_memory(run, device))
    else:
        s = {}
        with _CpuEvents() as ev:
            for name, fn in run:
                ev.phase(name)
                fn(s)
            ev.phase("release")
            del s
        peak, by_phase = ev.phase_peaks()
        out["peak_bytes"] = baseline + peak
        out["phase_peak_bytes"] = {p: baseline + by_phase.get(p, 0) for p in PHASES}
        out["method"] = "cpu allocator events (legacy autograd profiler)"

    # Time: no profiler, synchronized around each phase; the median of the measured steps.
    # NB: on CPU the calling thread's CPU time (the step runs on it alone: one intra-op thread), which other
    # processes' load does not add to as it adds to wall time.
    clock = time.perf_counter if cuda else time.thread_time
    times: Dict[str, List[float]] = {p: [] for p in PHASES}
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
    out["op_seconds"], out["op_self_seconds"] = profile_step(run, cuda)
    out["step_seconds"] = statistics.median(totals)
    out["step_seconds_min"] = min(totals)  # NB: on a shared machine the least disturbed step.
    out["phase_seconds"] = {p: statistics.median(v) for p, v in times.items()}
    out["phase_seconds_min"] = {p: min(v) for p, v in times.items()}
    out["clock"] = "perf_counter" if cuda else "thread_time"
    out["steps"] = len(totals)
    opt.zero_grad(set_to_none=True)
    return out


def op_seconds(run: List[Tuple[str, Callable[[Dict], None]]], cuda: bool) -> Dict[str, Dict[str, Any]]:
    """Time per top-level operator over one more step under the legacy profiler (no memory events).

    {name: {"count", "seconds"}}, the slowest first: the outermost ranges (an aten op in the forward,
    "autograd::engine::evaluate_function: XBackward0" in the backward, "Optimizer.step#Adam.step"),
    inclusive of what they call. NB: on CUDA the ranges' CUDA-event times (untested: no GPU here).
    """
    return profile_step(run, cuda)[0]


def profile_step(run: List[Tuple[str, Callable[[Dict], None]]], cuda: bool,
                 steps: int = 1) -> Tuple[Dict[str, Dict[str, Any]], Dict[str, Dict[str, float]]]:
    """`steps` steps under the legacy profiler: (op_seconds as above, {phase: {range name: self seconds}}).

    A range's self seconds are its own less its children's; a range inside an "Optimizer.step" range counts
    toward that range's (inclusive) seconds only, so that the self seconds sum to the step's profiled time.
    Phases are found by marks (empty record_function ranges) put between them.
    """
    import torch
    from torch.autograd import ProfilerConfig, ProfilerState, _disable_profiler_legacy, _enable_profiler_legacy

    state = ProfilerState.CUDA if cuda else ProfilerState.CPU
    _enable_profiler_legacy(ProfilerConfig(state, False, False, False, False, False,
                                           torch._C._profiler._ExperimentalConfig()))
    try:
        for _ in range(max(steps, 1)):
            s: Dict[str, Any] = {}
            for name, fn in run:
                torch.ops.profiler._record_function_exit(
                    torch.ops.profiler._record_function_enter_new(_MARK + name, None))
                fn(s)
            del s
        if cuda:
            torch.cuda.synchronize()
    finally:
        records = _disable_profiler_legacy()
    out: Dict[str, Dict[str, Any]] = {}
    own: Dict[str, Dict[str, float]] = {p: {} for p in PHASES}
    for thread in records:
        # Each open range: [start record, its children's seconds].
        stack: List[List[Any]] = []
        phase = PHASES[0]
        for r in thread:
            if r.kind() == "push":
                if r.name().startswith(_MARK):
                    phase = r.name()[len(_MARK):]
                stack.append([r, 0.0])
            elif r.kind() == "pop":
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][0].handle() == r.handle():
                        start, children = stack.pop(i)
                        name = start.name()
                        if name.startswith(_MARK):
                            break
                        us = start.cuda_elapsed_us(r) if cuda and start.has_cuda() else start.cpu_elapsed_us(r)
                        seconds = us * 1e-6
                        if i > 0:
                            stack[i - 1][1] += seconds
                        else:
                            e = out.setdefault(name, {"count": 0, "seconds": 0.0})
                            e["count"] += 1
                            e["seconds"] += seconds
                        in_step = any(x[0].name().startswith("Optimizer.step") for x in stack[:i])
                        mine = own.setdefault(phase, {})
                        if name.startswith("Optimizer.step") and not in_step:
                            mine[name] = mine.get(name, 0.0) + seconds
                        elif not in_step:
                            mine[name] = mine.get(name, 0.0) + max(seconds - children, 0.0)
                        break
    return dict(sorted(out.items(), key=lambda kv: -kv[1]["seconds"])), own


def _cuda_memory(run: List[Tuple[str, Callable[[Dict], None]]], device: str) -> Dict[str, Any]:
    """Per phase max_memory_allocated / max_memory_reserved, peaks reset between phases.

    NB: untested (no GPU here); API as torch/cuda/memory.py defines it.
    """
    import torch

    dev = torch.device(device)
    torch.cuda.synchronize(dev)
    phase_alloc, phase_reserved = {}, {}
    s: Dict[str, Any] = {}
    for name, fn in run:
        torch.cuda.reset_peak_memory_stats(dev)
        fn(s)
        torch.cuda.synchronize(dev)
        phase_alloc[name] = torch.cuda.max_memory_allocated(dev)
        phase_reserved[name] = torch.cuda.max_memory_reserved(dev)
    del s
    stats = torch.cuda.memory_stats(dev)
    return {
        "peak_bytes": max(phase_alloc.values()),
        "reserved_peak_bytes": max(phase_reserved.values()),
        "phase_peak_bytes": phase_alloc,
        "phase_reserved_peak_bytes": phase_reserved,
        "memory_stats": {k: v for k, v in stats.items() if isinstance(v, int)},
        "method": "torch.cuda.max_memory_allocated/max_memory_reserved, reset per phase",
    }


def cuda_context_bytes(device: str) -> Dict[str, int]:
    """The device memory in use once CUDA is initialised, before the first tensor: the context's own bytes.

    NB: untested here (no GPU). mem_get_info counts every process on the GPU: calibrate on an idle one.
    """
    import torch

    dev = torch.device(device)
    torch.cuda.init()
    free, total = torch.cuda.mem_get_info(dev)
    return {"context_bytes": total - free, "total_bytes": total}


def openblas_thread_setters() -> List[Tuple[Callable[[int], None], Callable[[], int]]]:
    """(openblas_set_num_threads, openblas_get_num_threads) of each OpenBLAS library this process has loaded.

    NB: torch.set_num_threads does not reach OpenBLAS's own thread pool (Debian's torch calls the system BLAS,
    libopenblas0-pthread where tools/setup.sh installs it), and OPENBLAS_NUM_THREADS is read once, when the
    library loads. On a loaded 2-core machine its two threads made a 256^3 float32 matmul 6 times slower than
    one thread, unevenly across shapes (measured: 10 to 250 GFLOP/s against 113 to 162 on one thread).
    Found through /proc/self/maps (Linux); elsewhere, or with another BLAS, none.
    """
    import ctypes

    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.split()[-1]})
    except OSError:
        return []
    setters = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
            setters.append((lib.openblas_set_num_threads, lib.openblas_get_num_threads))
        except (OSError, AttributeError):
            continue
    return setters


def hold_freed_memory() -> bool:
    """Has glibc's malloc keep freed memory in the process from now on; True where it did (glibc), else False.

    NB: by default glibc hands a freed block above its mmap threshold (128 KiB, raised as blocks are freed) back
    to the kernel, and the next step's allocation of it faults fresh zeroed pages in: on the fit test's cnn-24
    ~1,250 minor faults a step in some fresh instances and none in others, the fastest of 41 steps 6.6 to 8.3 ms
    between instances (measured here), where CUDA's caching allocator keeps its segments. With mmap above 1 GiB
    and trimming above 2 GiB - 1 no step faults (6.2 to 6.7 ms). It lasts for the process: glibc cannot restore
    its dynamic threshold. The allocator's events, which the memory measurements read, are unchanged.
    """
    import ctypes
    import ctypes.util

    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        mallopt, _ = libc.mallopt, libc.gnu_get_libc_version  # NB: glibc's only.
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(m_mmap_threshold, 1 << 30)) and bool(mallopt(m_trim_threshold, (1 << 31) - 1))


@contextlib.contextmanager
def one_thread() -> Any:
    """torch.set_num_threads(1) and OpenBLAS's threads 1 for the block (memory events from one thread, in order;
    the time of one thread, all of it in thread_time)."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    blas = [(set_threads, get_threads()) for set_threads, get_threads in openblas_thread_setters()]
    for set_threads, _ in blas:
        set_threads(1)
    try:
        yield
    finally:
        for set_threads, before in blas:
            set_threads(before)
        torch.set_num_threads(n)


@contextlib.contextmanager
def steady_cpu() -> Any:
    """The conditions of a step measured on CPU: one_thread() for the block, and hold_freed_memory()."""
    hold_freed_memory()
    with one_thread():
        yield
