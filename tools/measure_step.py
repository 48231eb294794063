#!/usr/bin/python3
"""Measures the memory of one PyTorch training (or inference) step on CPU: torchcost's oracle.

Usage (Debian's system python3: torch 1.13, CPU only, no Kineto):

    /usr/bin/python3 tools/measure_step.py MODEL [--batch N] [--optimizer adam]
        [--mode train|infer] [--fixtures DIR] [--curve] [--direct] [--no-cache]
        [--autocast bf16]

MODEL is a name of tools/make_fixtures.py (build_model). Prints one JSON
object on stdout. The method is described precisely in docs/measuring.md;
in short, all on CPU, float32, torch.manual_seed(0), one intra-op thread:

  PARAM   bytes of the storages of model.parameters() (tied weights once).
  BUFFER  bytes of the storages of model.buffers().
  GRAD    bytes of the .grad storages after backward.
  OPT     bytes of every tensor in optimizer.state after a real opt.step()
          (Adam/AdamW: exp_avg, exp_avg_sq and the 4-byte float32 'step'
          tensor of every parameter; SGD with momentum (plain or nesterov):
          momentum_buffer; SGD: 0;
          Adagrad: sum + the float32 'step' tensor; RMSprop: square_avg, its
          'step' is a Python int).
  ACT     bytes autograd saves in one train-mode forward, seen by
          torch.autograd.graph.saved_tensors_hooks: every saved tensor's
          storage counted once; storages of parameters and buffers excluded
          (reported apart); the model input IS included when saved (it is
          also reported apart as act_input_bytes); only saves reachable
          from the loss's grad_fn count (outputs the loss ignores, such as
          LeNet5's probs, are dropped with their graph right after forward).
  peak    the legacy autograd profiler's CPU memory events (every
          c10 CPU allocation and free, with its size, in time order):
          peak = baseline_bytes + max of the running sum of the events.
          train baseline: params + buffers + optimizer states + input
          (grads are None: zero_grad(set_to_none=True)); infer baseline:
          params + buffers + input.

The measured training step is opt.zero_grad(set_to_none=True); out =
model(x) (the first output of a tuple); loss = out.float().sum() (no
targets, no cross-entropy); loss.backward(); opt.step(); out and loss stay
alive until the step ends. By default the forward+backward is profiled once
and opt.step() separately for each optimizer (exact: see docs/measuring.md);
--direct profiles the whole step for the one optimizer instead.

--checkpoint REGEX wraps the forward of every module whose qualified name
matches REGEX (Python re.search; the outermost if nested ones match; never
the root) in torch.utils.checkpoint.checkpoint (torch 1.13's default
use_reentrant=True), as `checkpoint(block, x)` would.

--autocast bf16 runs the forward (not the loss) under
torch.autocast("cpu", dtype=torch.bfloat16) with float32 weights; the loss is
then out.sum() in the output's own dtype, outside the autocast region (as
torchcost models it); ACT includes the bfloat16 copies autocast saves.

Importable: measure(name, batch, optimizer, mode, checkpoint=None, autocast=None)
-> dict (cached in FIXTURES/<name>_b<N>_<opt>_<mode>[_ckpt-<hash>][_autocast-bf16].step.json,
keyed by the torch version and a hash of this file and tools/make_fixtures.py).
"""

import argparse
import contextlib
import gc
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# NB: oneDNN's AMX kernels (Sapphire Rapids and later) run bf16 convolutions in
# blocked layouts and reorder each output through two more output-sized buffers,
# which no GPU does and which CPUs without AMX do not do: capped below AMX, the
# measurement is the same on every AVX-512 machine (resnet18 at batch 8 under
# bf16 autocast: 81,074,368 bytes at the peak capped, 92,575,936 with AMX).
# Set before torch is imported (make_fixtures imports it); oneDNN reads it once.
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX512_CORE_BF16")
os.environ.setdefault("DNNL_MAX_CPU_ISA", "AVX512_CORE_BF16")

import make_fixtures as mf  # noqa: E402

OPTIMIZERS = ("sgd", "sgd_momentum", "sgd_nesterov", "adam", "adamw", "adagrad", "rmsprop")
MODES = ("train", "infer")
# Bump to invalidate cached measurements when the method changes outside this file.
MEASURE_VERSION = 1
PHASES = ("zero_grad", "forward", "loss", "backward", "optimizer", "release")
_MARK = "torchcost::phase::"


# --- helpers -------------------------------------------------------------------

def _storage_key(t):
    """Returns (data_ptr, nbytes) of a tensor's whole storage."""
    s = t.storage()
    return s.data_ptr(), s.nbytes()


def _unique_bytes(tensors):
    """Sum of the storage bytes of tensors, each storage once; and the set of storage pointers."""
    seen = {}
    for t in tensors:
        ptr, nbytes = _storage_key(t)
        if nbytes and ptr not in seen:
            seen[ptr] = nbytes
    return sum(seen.values()), seen


def _first(out):
    """The first tensor of a model output (LeNet5 returns (logits, probs))."""
    import torch

    while isinstance(out, (tuple, list)):
        out = out[0]
    assert isinstance(out, torch.Tensor)
    return out


def _loss(out, autocast=None):
    """The loss of the measured step: the sum of the (first) output, in float32
    (under autocast: in the output's own dtype)."""
    if autocast:
        return out.sum()
    return out.float().sum() if out.dtype != out.float().dtype else out.sum()


AUTOCAST = ("bf16",)


def _autocast(autocast):
    """The context the forward runs in: torch.autocast on CPU (bfloat16), or nothing."""
    import torch

    if not autocast:
        return contextlib.nullcontext()
    if autocast not in AUTOCAST:
        raise ValueError("CPU autocast runs bf16 only, not %r" % autocast)
    return torch.autocast("cpu", dtype=torch.bfloat16)


def make_optimizer(name, params):
    """Returns the optimizer: torch defaults except lr and momentum (0.9)."""
    import torch

    params = list(params)
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01)
    if name == "sgd_momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9)
    if name == "sgd_nesterov":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, nesterov=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3)
    if name == "adagrad":
        return torch.optim.Adagrad(params, lr=1e-2)
    if name == "rmsprop":
        return torch.optim.RMSprop(params, lr=1e-2)
    raise ValueError("unknown optimizer %r; known: %s" % (name, ", ".join(OPTIMIZERS)))


def _opt_state_bytes(opt):
    """Bytes of every tensor in opt.state (storages once), and per state key."""
    import torch

    by_key = {}
    tensors = []
    for state in opt.state.values():
        for key, value in state.items():
            if isinstance(value, torch.Tensor):
                tensors.append(value)
                by_key[key] = by_key.get(key, 0) + value.storage().nbytes()
    total, _ = _unique_bytes(tensors)
    return total, by_key


def build(name, batch):
    """Returns (model in train mode, input tuple) at this batch, weights and input under seed 0."""
    import torch

    model, shapes = mf.build_model(name)
    shapes = [[batch] + list(s[1:]) for s in shapes]
    inputs = mf.example_inputs(name, shapes)
    torch.manual_seed(0)
    return model.train(), inputs, shapes


# --- profiler ------------------------------------------------------------------

class Profile:
    """The legacy autograd profiler with memory events (no Kineto needed).

    Usage: with Profile() as p: ... p.phase("forward") ...; then p.events().
    Phase marks are record_function ranges entered and exited at once
    (torch.ops.profiler._record_function_enter_new: allocates nothing).
    """

    def __enter__(self):
        import torch
        from torch.autograd import ProfilerConfig, ProfilerState, _enable_profiler_legacy

        cfg = ProfilerConfig(ProfilerState.CPU, False, True, False, False, False,
                             torch._C._profiler._ExperimentalConfig())
        _enable_profiler_legacy(cfg)
        self.records = None
        return self

    def phase(self, name):
        import torch

        handle = torch.ops.profiler._record_function_enter_new(_MARK + name, None)
        torch.ops.profiler._record_function_exit(handle)

    def __exit__(self, *exc):
        from torch.autograd import _disable_profiler_legacy

        self.records = _disable_profiler_legacy()
        return False

    def events(self):
        """Returns the memory events [(phase, op, outer_op, delta)] in time order.

        op is the innermost open range (an aten op, an autograd node such as
        'ConvolutionBackward0', or 'torch::autograd::AccumulateGrad'), outer_op
        the outermost one ('' at Python level). Raises if memory events come
        from more than one thread (the order across threads would be unknown).
        """
        threads = [lst for lst in self.records
                   if any(r.kind() == "memory_alloc" for r in lst)]
        if len(threads) > 1:
            raise RuntimeError("memory events on %d threads; run with one intra-op thread"
                               % len(threads))
        out = []
        phase = "pre"
        stack = []  # [(handle, name)]
        for r in (threads[0] if threads else []):
            kind = r.kind()
            if kind == "push":
                name = r.name()
                if name.startswith(_MARK):
                    phase = name[len(_MARK):]
                stack.append((r.handle(), name))
            elif kind == "pop":
                h = r.handle()
                for i in range(len(stack) - 1, -1, -1):
                    if stack[i][0] == h:
                        del stack[i]
                        break
            elif kind == "memory_alloc":
                delta = r.cpu_memory_usage()
                if delta:
                    names = [n for _, n in stack if not n.startswith(_MARK)]
                    out.append((phase, names[-1] if names else "", names[0] if names else "",
                                delta))
        return out


def analyse(events, baseline):
    """Returns the peak and its context from memory events over a baseline."""
    running = 0
    peak = 0
    peak_i = -1
    phase_max = {}
    phase_end = {}
    for i, (phase, _op, _outer, delta) in enumerate(events):
        running += delta
        if running > peak:
            peak, peak_i = running, i
        if running > phase_max.get(phase, -1):
            phase_max[phase] = running
        phase_end[phase] = running
    res = {"baseline_bytes": baseline, "peak_bytes": baseline + peak, "peak_delta": peak,
           "end_delta": running, "n_events": len(events),
           "phase_peak_delta": phase_max, "phase_end_delta": phase_end}
    if peak_i >= 0:
        phase, op, outer, _ = events[peak_i]
        res.update(peak_phase=phase, peak_op=op, peak_outer_op=outer, peak_event=peak_i)
    else:
        res.update(peak_phase="baseline", peak_op="", peak_outer_op="", peak_event=-1)
    return res


def _curve(events):
    running = 0
    curve = []
    for phase, op, outer, delta in events:
        running += delta
        curve.append([phase, outer, op, delta, running])
    return curve


def _alloc_by_op(events):
    """{outer op: [n allocs, bytes allocated]} — which ops allocate, for diffing."""
    out = {}
    for _phase, op, outer, delta in events:
        if delta > 0:
            key = outer if outer == op else "%s > %s" % (outer, op)
            e = out.setdefault(key, [0, 0])
            e[0] += 1
            e[1] += delta
    return out


# --- measurements --------------------------------------------------------------

def measure_saved(model, inputs, param_ptrs, buffer_ptrs, autocast=None):
    """ACT: the storages autograd saves in one train-mode forward, attributed to their nodes.

    Pack hooks record every saved tensor and return a holder (so the tensor
    lives exactly as long as autograd would keep it). Then a walk over the
    graph from the loss's grad_fn reads every node's _saved_* attributes: the
    unpack hook tells which holders each node owns. Returns (loss, dict).
    """
    import weakref

    import torch

    packed = []  # [(ptr, nbytes, dtype, shape)], in pack order
    refs = []  # weak references to the holders, in pack order

    class Holder:
        __slots__ = ("t", "i", "__weakref__")

    def pack(t):
        h = Holder()
        # detach(): same storage, no grad_fn. Holding t itself would make a
        # reference cycle for saved outputs (holder -> t -> t.grad_fn -> holder)
        # that outlives the graph (LeNet5's ignored probs).
        h.t = t.detach()
        h.i = len(packed)
        ptr, nbytes = _storage_key(t)
        packed.append((ptr, nbytes, str(t.dtype).replace("torch.", ""), list(t.shape)))
        refs.append(weakref.ref(h))
        return h

    current = [None]
    owner = {}  # holder index -> [node names]

    def unpack(h):
        if current[0] is not None:
            owner.setdefault(h.i, []).append(current[0])
        return h.t

    input_ptrs = {_storage_key(t)[0] for t in inputs}
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        with _autocast(autocast):
            out = _first(model(*inputs))
        loss = _loss(out, autocast)
        # What autograd still holds once the outputs the loss ignores are gone.
        gc.collect()
        alive = {i for i, r in enumerate(refs) if r() is not None}
        # Walk the graph (inside the hooks' context: unpack needs them).
        seen = set()
        stack = [loss.grad_fn]
        order = []
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            order.append(node)
            for nxt, _ in node.next_functions:
                stack.append(nxt)
        for node in order:
            current[0] = type(node).__name__
            for attr in dir(node):
                if attr.startswith("_saved_"):
                    getattr(node, attr)
        current[0] = None

    storages = {}  # ptr -> dict
    detail = {}
    for i, (ptr, nbytes, dtype, shape) in enumerate(packed):
        nodes = owner.get(i)
        if i in alive and not nodes:
            # Alive, so held by the graph, but by no node the walk can read: the
            # node an in-place op on a view wraps in CopySlices (its _saved_*
            # are not reachable from Python).
            nodes = ["(inside CopySlices)"]
        if not nodes or not nbytes or i not in alive:
            continue  # Saved by a node the loss does not reach, or an empty tensor.
        if ptr in param_ptrs:
            cat = "param"
        elif ptr in buffer_ptrs:
            cat = "buffer"
        elif ptr in input_ptrs:
            cat = "input"
        else:
            cat = "act"
        node = nodes[0]
        d = detail.setdefault(node, {"saved_tensors": 0, "new_storages": 0, "bytes": 0,
                                     "param_tensors": 0, "buffer_tensors": 0})
        d["saved_tensors"] += 1
        if cat in ("param", "buffer"):
            d[cat + "_tensors"] += 1
        if ptr in storages:
            storages[ptr]["savers"].append(node)
            continue
        storages[ptr] = {"bytes": nbytes, "category": cat, "dtype": dtype, "shape": shape,
                         "savers": [node]}
        if cat in ("act", "input"):
            d["new_storages"] += 1
            d["bytes"] += nbytes
    unreachable = {}
    for i, (ptr, nbytes, _d, _s) in enumerate(packed):
        if i not in alive and ptr not in storages and nbytes:
            unreachable[ptr] = nbytes
    by_cat = {}
    for s in storages.values():
        by_cat[s["category"]] = by_cat.get(s["category"], 0) + s["bytes"]
    result = {
        "act_bytes": by_cat.get("act", 0) + by_cat.get("input", 0),
        "act_input_bytes": by_cat.get("input", 0),
        "act_saved_param_bytes": by_cat.get("param", 0),
        "act_saved_buffer_bytes": by_cat.get("buffer", 0),
        "act_unreachable_bytes": sum(unreachable.values()),
        "act_saved_tensors": len(alive),
        "act_detail": detail,
        "act_storages": [[s["savers"][0], s["category"], s["dtype"], s["shape"], s["bytes"],
                          len(s["savers"])] for s in storages.values()],
    }
    del out
    return loss, result


def _release(model, opt=None):
    if opt is not None:
        opt.zero_grad(set_to_none=True)
    else:
        for p in model.parameters():
            p.grad = None
    gc.collect()


def apply_checkpoint(model, pattern):
    """Wraps the matching modules' forward in torch.utils.checkpoint; returns their names.

    The outermost match wins (a module inside a wrapped one is left alone);
    the root module ("") never matches.
    """
    import functools
    import re

    import torch.utils.checkpoint as tcp

    rx = re.compile(pattern)
    wrapped = []
    for qual, module in model.named_modules():
        if not qual or not rx.search(qual) or any(qual.startswith(w + ".") for w in wrapped):
            continue
        wrapped.append(qual)
        # An instance attribute shadows the class's forward; nn.Module.__call__ calls it.
        module.forward = functools.partial(tcp.checkpoint, module.forward)
    if not wrapped:
        raise ValueError("--checkpoint %r matches no module of the model" % pattern)
    return wrapped


def measure_model(name, batch, optimizers=OPTIMIZERS, curve=False, direct=False, checkpoint=None,
                  autocast=None):
    """Measures one model at one batch; returns {(optimizer, mode): result dict}.

    Train: one hooked forward+backward (ACT; also the warm-up), one profiled
    forward+backward with grads None, then per optimizer: a warm-up step
    (creates the states) and one profiled opt.step() on the same grads. The
    step's curve is the concatenation of the two profiles (the optimizer does
    not run during forward/backward, and forward/backward do not depend on the
    optimizer). With direct=True, each optimizer's whole step (zero_grad,
    forward, loss, backward, step) is profiled at once after a warm-up step.
    Infer: model.eval(), torch.no_grad(), one profiled forward.
    """
    import torch

    torch.set_num_threads(1)
    model, inputs, shapes = build(name, batch)
    checkpointed = apply_checkpoint(model, checkpoint) if checkpoint else []
    params = list(model.parameters())
    buffers = list(model.buffers())
    param_bytes, param_ptrs = _unique_bytes(params)
    buffer_bytes, buffer_ptrs = _unique_bytes(buffers)
    input_bytes, _ = _unique_bytes(inputs)
    common = {"model": name, "batch": batch, "input_shapes": shapes,
              "checkpoint": checkpoint, "checkpointed_modules": checkpointed,
              "input_dtypes": mf.input_dtypes(name),
              "param_bytes": param_bytes, "buffer_bytes": buffer_bytes,
              "input_bytes": input_bytes, "num_params": sum(p.numel() for p in params),
              "num_threads": torch.get_num_threads(), "torch": torch.__version__,
              "autocast": autocast}
    results = {}

    # ACT, from a hooked forward; its backward is the warm-up.
    loss, saved = measure_saved(model, inputs, param_ptrs, buffer_ptrs, autocast)
    loss.backward()
    del loss
    grads = [p.grad for p in params if p.grad is not None]
    grad_bytes, _ = _unique_bytes(grads)
    # Storage bytes (what stays allocated) can exceed the tensors' own bytes when
    # AccumulateGrad stole a view (vit_b_16's class_token at batch 1: docs/measuring.md).
    grad_tensor_bytes = sum(g.numel() * g.element_size() for g in grads)
    train_common = dict(common, grad_bytes=grad_bytes, grad_tensor_bytes=grad_tensor_bytes,
                        **saved)

    def fwd_bwd(prof):
        prof.phase("forward")
        with _autocast(autocast):
            out = _first(model(*inputs))
        prof.phase("loss")
        loss = _loss(out, autocast)
        prof.phase("backward")
        loss.backward()
        return out, loss

    if not direct:
        _release(model)
        with Profile() as prof:
            out, loss = fwd_bwd(prof)
            prof.phase("end")
        fb_events = prof.events()
        for opt_name in optimizers:
            opt = make_optimizer(opt_name, params)
            opt.step()  # Warm-up: creates the states (same grads).
            opt_bytes, opt_by_key = _opt_state_bytes(opt)
            with Profile() as prof:
                prof.phase("optimizer")
                opt.step()
                prof.phase("end")
            results[(opt_name, "train")] = (opt_bytes, opt_by_key, fb_events + prof.events())
            del opt
        # The step's end: out and loss go (as the next iteration's assignments
        # would free them); profiled once, appended to every optimizer's curve.
        with Profile() as prof:
            prof.phase("release")
            del out, loss
            prof.phase("end")
        release = prof.events()
        for k, (ob, obk, events) in list(results.items()):
            results[k] = (ob, obk, events + release)
        _release(model)
    else:
        for opt_name in optimizers:
            _release(model)
            opt = make_optimizer(opt_name, params)
            out, loss = fwd_bwd(_NoProf())
            opt.step()
            del out, loss
            opt_bytes, opt_by_key = _opt_state_bytes(opt)
            opt.zero_grad(set_to_none=True)
            gc.collect()
            with Profile() as prof:
                prof.phase("zero_grad")
                opt.zero_grad(set_to_none=True)
                out, loss = fwd_bwd(prof)
                prof.phase("optimizer")
                opt.step()
                prof.phase("release")
                del out, loss
                prof.phase("end")
            results[(opt_name, "train")] = (opt_bytes, opt_by_key, prof.events())
            del opt
            _release(model)

    final = {}
    for (opt_name, mode), (opt_bytes, opt_by_key, events) in results.items():
        baseline = param_bytes + buffer_bytes + opt_bytes + input_bytes
        r = dict(train_common, optimizer=opt_name, mode="train", opt_bytes=opt_bytes,
                 opt_bytes_by_key=opt_by_key, method="direct" if direct else "composed")
        r.update(analyse(events, baseline))
        r["alloc_by_op"] = _alloc_by_op(events)
        if curve:
            r["curve"] = _curve(events)
        final[(opt_name, mode)] = r

    # Inference.
    model.eval()
    with torch.no_grad():
        with _autocast(autocast):  # NB: its own region, so autocast's weight cache is emptied.
            _first(model(*inputs))  # Warm-up.
        gc.collect()
        with Profile() as prof:
            prof.phase("forward")
            with _autocast(autocast):
                out = _first(model(*inputs))
            prof.phase("release")
            del out
            prof.phase("end")
    events = prof.events()
    baseline = param_bytes + buffer_bytes + input_bytes
    r = dict(common, mode="infer", optimizer=None, grad_bytes=0, opt_bytes=0, act_bytes=0)
    r.update(analyse(events, baseline))
    r["alloc_by_op"] = _alloc_by_op(events)
    if curve:
        r["curve"] = _curve(events)
    for opt_name in optimizers:
        final[(opt_name, "infer")] = dict(r, optimizer=opt_name)
    return final


def profile_step(forward, loss_of, opt):
    """Profiles one whole step: out = forward(), loss_of(out), its backward, opt.step(), then out and
    the loss released; returns the memory events (Profile.events)."""
    with Profile() as prof:
        prof.phase("forward")
        out = forward()
        prof.phase("loss")
        loss = loss_of(out)
        prof.phase("backward")
        loss.backward()
        prof.phase("optimizer")
        opt.step()
        prof.phase("release")
        del out, loss
        prof.phase("end")
    return prof.events()


class _NoProf:
    def phase(self, name):
        pass


# --- cache and API -------------------------------------------------------------

def cache_key():
    import torch

    h = hashlib.sha256()
    # The peft_torch.py oracle modules build the "<base>+<variant>" models.
    for path in (os.path.abspath(__file__), mf.__file__, os.path.join(HERE, "peft_torch.py"),
                 os.path.join(HERE, "galore_torch.py")):
        with open(path, "rb") as f:
            h.update(f.read())
    return {"torch": torch.__version__, "sources_sha256": h.hexdigest(),
            "measure_version": MEASURE_VERSION}


def cache_path(fixtures, name, batch, optimizer, mode, checkpoint=None, autocast=None):
    suffix = ""
    if checkpoint:
        suffix = "_ckpt-" + hashlib.sha256(checkpoint.encode()).hexdigest()[:12]
    if autocast:
        suffix += "_autocast-" + autocast
    return os.path.join(fixtures, "%s_b%d_%s_%s%s.step.json" % (name, batch, optimizer, mode, suffix))


def _read_cache(path, key):
    try:
        with open(path) as f:
            cached = json.load(f)
        if cached.get("key") == key:
            return cached["result"]
    except (OSError, ValueError, KeyError):
        pass
    return None


def _write_cache(path, key, result):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"key": key, "result": result}, f, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def measure_all(name, batch, fixtures=None, curve=False, direct=False, checkpoint=None,
                autocast=None):
    """Returns {(optimizer, mode): result} for every optimizer and mode, from the cache if fresh.

    Measures the whole set at once when any is missing (one model build and
    one forward+backward serve all optimizers), then caches each file.
    """
    key = cache_key() if fixtures else None
    if fixtures and not curve and not direct:
        cached = {}
        for opt in OPTIMIZERS:
            for mode in MODES:
                r = _read_cache(cache_path(fixtures, name, batch, opt, mode, checkpoint, autocast), key)
                if r is not None:
                    cached[(opt, mode)] = r
        if len(cached) == len(OPTIMIZERS) * len(MODES):
            return cached
    res = measure_model(name, batch, curve=curve, direct=direct, checkpoint=checkpoint,
                        autocast=autocast)
    if fixtures and not curve and not direct:
        os.makedirs(fixtures, exist_ok=True)
        for (opt, mode), r in res.items():
            _write_cache(cache_path(fixtures, name, batch, opt, mode, checkpoint, autocast), key, r)
    return res


def measure(name, batch, optimizer, mode, fixtures=None, curve=False, direct=False, checkpoint=None,
            autocast=None):
    """Returns the measurement dict of one model, batch, optimizer and mode (see module doc)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError("unknown optimizer %r" % optimizer)
    if mode not in MODES:
        raise ValueError("unknown mode %r" % mode)
    if direct:
        res = measure_model(name, batch, optimizers=(optimizer,), curve=curve, direct=True,
                            checkpoint=checkpoint, autocast=autocast)
        return res[(optimizer, mode)]
    return measure_all(name, batch, fixtures, curve=curve, checkpoint=checkpoint,
                       autocast=autocast)[(optimizer, mode)]


# --- GaLore, zero_grad(set_to_none=False), gradient accumulation ---------------

def _composed(baseline, *event_lists):
    """analyse() over concatenated event lists."""
    events = []
    for e in event_lists:
        events += e
    return analyse(events, baseline)


def _fresh_projectors(projectors):
    """Replaces every projector's matrix by a copy in a new storage of the same size;
    returns the bytes allocated.

    NB: the profiler reports no free of a block allocated before it started, so
    the SVD step's freeing of the old projectors would go unseen; run inside the
    profile, with the baseline lowered by the bytes returned, the frees are seen.
    """
    import torch

    total = 0
    for pj in projectors:
        old = pj.ortho_matrix
        buf = torch.empty(old.storage().size(), dtype=old.dtype)
        pj.ortho_matrix = buf.as_strided(old.shape, old.stride(), old.storage_offset()).copy_(old)
        total += buf.storage().nbytes()
        del old
    return total


def measure_variants(name, batch, accumulate=2):
    """Measures the steps beside the plain one, on one model and batch (float32, CPU).

    GaLore (tools/galore_torch.py, the model's PRESETS entry, update_proj_gap
    2 so that step 2 recomputes the projectors with the states present):
      galore_first   the first opt.step() (SVD, states created; baseline without states)
      galore_steady  a step between two SVDs (step 1)
      galore_svd     a step that recomputes the projectors (step 2)
    each composed as measure_model does: the profiled forward+backward (grads
    None before it) followed by the profiled opt.step() on the same grads.
      galore_per_layer      per-layer update (galore_torch.PerLayer): forward,
                            backward with the hooks stepping (step 1), all profiled
      galore_per_layer_svd  the same at step 2 (SVD)
    foreach_adamw, foreach_adagrad, foreach_rmsprop: torch's foreach step
      (foreach=True), composed like the GaLore steps
    also grad_hook_max_bytes: the most bytes of .grad alive when a hook runs.
    AdamW (torch.optim.AdamW):
      zeros        zero_grad(set_to_none=False) (grads kept, zeroed in place), forward,
                   backward adding into them, opt.step(); baseline includes the grads
      accumulate   zero_grad(set_to_none=True), `accumulate` micro-batches of
                   forward+backward, opt.step()
    OPT is the optimizer's tensors after a step (GaLore: exp_avg, exp_avg_sq
    and the projectors' storages, each once).
    """
    import torch

    import galore_torch as gt

    torch.set_num_threads(1)
    preset = dict(gt.PRESETS[name])
    targets = preset.pop("targets")
    preset["update_proj_gap"] = 2
    model, inputs, shapes = build(name, batch)
    params = list(model.parameters())
    param_bytes, param_ptrs = _unique_bytes(params)
    buffer_bytes, buffer_ptrs = _unique_bytes(list(model.buffers()))
    input_bytes, _ = _unique_bytes(inputs)
    loss, saved = measure_saved(model, inputs, param_ptrs, buffer_ptrs)
    loss.backward()
    del loss
    grads = [p.grad for p in params if p.grad is not None]
    grad_bytes, _ = _unique_bytes(grads)
    grad_tensor_bytes = sum(g.numel() * g.element_size() for g in grads)
    common = {"model": name, "batch": batch, "input_shapes": shapes, "param_bytes": param_bytes,
              "buffer_bytes": buffer_bytes, "input_bytes": input_bytes, "grad_bytes": grad_bytes,
              "grad_tensor_bytes": grad_tensor_bytes, "act_bytes": saved["act_bytes"],
              "galore": dict(preset, targets=targets), "torch": torch.__version__}
    base = param_bytes + buffer_bytes + input_bytes
    out = {}

    def fwd_bwd(prof):
        prof.phase("forward")
        out_ = _first(model(*inputs))
        prof.phase("loss")
        loss_ = _loss(out_)
        prof.phase("backward")
        loss_.backward()
        return out_, loss_

    def release():
        with Profile() as prof:
            prof.phase("release")
        return prof.events()

    # GaLore, composed.
    _release(model)
    with Profile() as prof:
        o, l = fwd_bwd(prof)
        prof.phase("end")
    fb = prof.events()
    opt = gt.make(model, targets=targets, **preset)
    steps = []
    fresh = 0
    for i in range(3):
        with Profile() as prof:
            if i == 2:
                prof.phase("fresh")
                fresh = _fresh_projectors(gt.projectors(opt))
            prof.phase("optimizer")
            opt.step()
            prof.phase("end")
        steps.append(prof.events())
        if not out.get("opt_bytes"):
            out["opt_bytes"], _ = _unique_bytes(gt.state_tensors(opt))
    with Profile() as prof:
        prof.phase("release")
        del o, l
        prof.phase("end")
    rel = prof.events()
    opt_bytes = out.pop("opt_bytes")
    # NB: the copies made in the "fresh" phase stand for the projectors the baseline counts:
    # their allocations are left out, their frees in the SVD step kept.
    steps[2] = [e for e in steps[2] if e[0] != "fresh"]
    for key, events, states in (("galore_first", steps[0], 0), ("galore_steady", steps[1], opt_bytes),
                                ("galore_svd", steps[2], opt_bytes)):
        r = dict(common, opt_bytes=opt_bytes)
        r.update(_composed(base + states, fb, events, rel))
        out[key] = r
    del opt
    # torch's foreach step (_multi_tensor_*; foreach=True runs on CPU too), composed the same way.
    for key, cls, kwargs in (("foreach_adamw", torch.optim.AdamW, {"lr": 1e-3}),
                             ("foreach_adagrad", torch.optim.Adagrad, {"lr": 1e-2}),
                             ("foreach_rmsprop", torch.optim.RMSprop, {"lr": 1e-2})):
        fopt = cls(params, foreach=True, **kwargs)
        fopt.step()  # Warm-up: the states.
        fopt_bytes, _ = _opt_state_bytes(fopt)
        with Profile() as prof:
            prof.phase("optimizer")
            fopt.step()
            prof.phase("end")
        r = dict(common, opt_bytes=fopt_bytes)
        r.update(_composed(base + fopt_bytes, fb, prof.events(), rel))
        out[key] = r
        del fopt
    _release(model)

    # GaLore per layer: the whole forward+backward profiled, hooks stepping.
    pl = gt.PerLayer(model, targets=targets, **preset)
    o, l = fwd_bwd(_NoProf())  # Step 0: SVD, states created.
    del o, l
    pl_opt_bytes, _ = _unique_bytes(pl.state_tensors())
    for key in ("galore_per_layer", "galore_per_layer_svd"):
        pl.grad_max_bytes = 0
        gc.collect()
        fresh = 0
        with Profile() as prof:
            if key.endswith("_svd"):
                prof.phase("fresh")
                fresh = _fresh_projectors([pj for o_ in pl.optimizers.values() for pj in gt.projectors(o_)])
            o, l = fwd_bwd(prof)
            prof.phase("release")
            del o, l
            prof.phase("end")
        r = dict(common, opt_bytes=pl_opt_bytes, grad_hook_max_bytes=pl.grad_max_bytes)
        r.update(analyse(prof.events(), base + pl_opt_bytes - fresh))
        out[key] = r
    del pl
    _release(model)

    # AdamW with zero_grad(set_to_none=False), and gradient accumulation.
    opt = torch.optim.AdamW(params, lr=1e-3)
    o, l = fwd_bwd(_NoProf())
    opt.step()
    del o, l
    aw_opt_bytes, _ = _opt_state_bytes(opt)
    opt.zero_grad(set_to_none=False)
    gc.collect()
    with Profile() as prof:
        prof.phase("zero_grad")
        opt.zero_grad(set_to_none=False)
        o, l = fwd_bwd(prof)
        prof.phase("optimizer")
        opt.step()
        prof.phase("release")
        del o, l
        prof.phase("end")
    r = dict(common, opt_bytes=aw_opt_bytes)
    r.update(analyse(prof.events(), base + aw_opt_bytes + grad_bytes))
    out["zeros"] = r
    opt.zero_grad(set_to_none=True)
    gc.collect()
    with Profile() as prof:
        prof.phase("zero_grad")
        opt.zero_grad(set_to_none=True)
        for _ in range(accumulate):
            o, l = fwd_bwd(prof)
            del o, l
        prof.phase("optimizer")
        opt.step()
        prof.phase("end")
    r = dict(common, opt_bytes=aw_opt_bytes, accumulate=accumulate)
    r.update(analyse(prof.events(), base + aw_opt_bytes))
    out["accumulate"] = r
    del opt
    _release(model)
    return out


def variants(name, batch, fixtures=None):
    """measure_variants, cached in FIXTURES/<name>_b<N>_variants.step.json."""
    key = cache_key()
    path = os.path.join(fixtures, "%s_b%d_variants.step.json" % (name, batch)) if fixtures else None
    if path:
        cached = _read_cache(path, key)
        if cached is not None:
            return cached
    res = measure_variants(name, batch)
    if path:
        os.makedirs(fixtures, exist_ok=True)
        _write_cache(path, key, res)
    return res


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="one of: " + ", ".join(mf.model_names()))
    parser.add_argument("--batch", type=int, default=None,
                        help="first input dimension (default: the model's, 1 or 2 for GPT)")
    parser.add_argument("--optimizer", default="adam", choices=OPTIMIZERS)
    parser.add_argument("--mode", default="train", choices=MODES)
    parser.add_argument("--fixtures", default=None, help="cache directory (no cache without)")
    parser.add_argument("--curve", action="store_true",
                        help="add the time-ordered memory events (not cached)")
    parser.add_argument("--direct", action="store_true",
                        help="profile the whole step at once for this optimizer (not cached)")
    parser.add_argument("--checkpoint", default=None, metavar="REGEX",
                        help="wrap the modules whose name matches in torch.utils.checkpoint")
    parser.add_argument("--autocast", default=None, choices=AUTOCAST,
                        help="run the forward under torch.autocast('cpu', dtype=torch.bfloat16)")
    parser.add_argument("--no-detail", action="store_true",
                        help="leave out act_storages and alloc_by_op")
    args = parser.parse_args(argv)
    if args.model.split("+")[0] not in mf.model_names():
        parser.error("unknown model %r" % args.model)
    batch = args.batch if args.batch is not None else mf.default_batch(args.model)
    r = measure(args.model, batch, args.optimizer, args.mode, args.fixtures, args.curve,
                args.direct, args.checkpoint, args.autocast)
    if args.no_detail:
        r = {k: v for k, v in r.items() if k not in ("act_storages", "alloc_by_op")}
    json.dump(r, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
