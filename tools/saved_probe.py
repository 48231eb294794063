#!/usr/bin/python3
"""Measures what PyTorch's autograd saves for backward in one training forward.

Usage (Debian's system python3, torch 1.13 CPU):

    /usr/bin/python3 tools/saved_probe.py MODEL [--batch N] [--json] [--top K]

MODEL is a name tools/make_fixtures.py builds (build_model). The model runs one
forward in train mode (model.train(): batch norm uses batch statistics, dropout
drops) on make_fixtures' example input with the first dimension set to N
(default: the model's example batch, 1, or 2 for the GPT models), under
torch.autograd.graph.saved_tensors_hooks. Every tensor autograd packs is
recorded; then, as in a training step, only the first output is kept (the
graph only other outputs reach dies: LeNet5's probs). Each storage still held
by the graph counts once, and storages of parameters and buffers do not count:
this is the activation memory (ACT) torchcost's
training.memory.saved_bytes predicts, `--device cpu` (CPU kernels: dropout's
float mask, ...).

Printed (or, with --json, one JSON object):
- saved_bytes: the total;
- by_grad_fn: "<grad_fn type>._saved_<name>" -> {count, bytes}: every tensor
  attribute of the autograd graph's nodes that holds a counted storage; bytes
  count each storage once, at the node that saved it first (nodes that
  in-place ops on views hide inside CopySlices are not reachable: their bytes
  are listed as "(not reachable by next_functions)");
- by_module: module path (as named_modules names it; "" for the root) ->
  bytes of the storages first saved while that module was the innermost one
  running; its values sum to saved_bytes;
- by_op: the same by the torch function running (__torch_function__ name:
  conv2d, linear, dropout, mul, ...).

Other scripts import probe(name, batch) and cached_probe(name, batch, dir),
which keeps the result in DIR/<name>_b<N>.saved.json, keyed by the torch
version and a hash of this file and make_fixtures.py (cache_key()).
"""

import argparse
import collections
import hashlib
import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

import torch  # noqa: E402

import make_fixtures  # noqa: E402


def _storage_key(t):
    """Returns (identity, nbytes) of the storage a tensor lives in."""
    s = t.storage()
    # NB: _cdata is the StorageImpl's address: unique while the storage lives
    # (each saved entry's token keeps its storage alive, see _Token).
    return s._cdata, s.nbytes()


class _Token:
    """What the pack hook hands autograd instead of the tensor.

    Autograd keeps the token as long as the graph node that saved it lives, so
    a weak reference to the token says whether the saved entry is still held.
    The token keeps the storage (not the tensor) alive, so storage identities
    stay unique. It holds the tensor itself only until the graph has been
    walked (`tensor`, for unpack), then lets it go: a saved output would
    otherwise be a reference cycle (tensor -> grad_fn -> token -> tensor)
    that keeps a dropped branch alive.
    """

    __slots__ = ("storage", "key", "nbytes", "module", "op", "order", "tensor", "__weakref__")


def _labels(fn):
    """Returns the innermost function name torch's __torch_function__ reports."""
    return getattr(fn, "__name__", None) or str(fn)


def probe(name, batch=None):
    """Runs one train-mode forward of `name`; returns the dict described in the module doc."""
    import gc
    import weakref

    from torch.overrides import TorchFunctionMode

    model, shapes = make_fixtures.build_model(name)
    model.train()
    batch = make_fixtures.default_batch(name) if batch is None else batch
    shapes = [[batch] + list(s[1:]) for s in shapes]
    inputs = make_fixtures.example_inputs(name, shapes)
    torch.manual_seed(0)

    excluded = set()
    for t in list(model.parameters()) + list(model.buffers()):
        excluded.add(_storage_key(t)[0])

    # The innermost module running, from forward pre-hooks and hooks.
    stack = [""]
    handles = []
    for path, mod in model.named_modules():
        def pre(_m, _inp, path=path):
            stack.append(path)

        def post(_m, _inp, _out):
            stack.pop()

        handles.append(mod.register_forward_pre_hook(pre))
        handles.append(mod.register_forward_hook(post))

    # The torch function running (F.conv2d, Tensor.mul, F.dropout, ...).
    ops = ["?"]

    class OpMode(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            ops.append(_labels(func))
            try:
                return func(*args, **(kwargs or {}))
            finally:
                ops.pop()

    tokens = []  # weak references to every token, in pack order

    def pack(t):
        tok = _Token()
        tok.storage = t.storage()
        tok.key, tok.nbytes = _storage_key(t)
        tok.module, tok.op, tok.order = stack[-1], ops[-1], len(tokens)
        tok.tensor = t
        tokens.append(weakref.ref(tok))
        return tok

    def unpack(tok):
        return tok.tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack), OpMode():
        out = model(*inputs)
    for h in handles:
        h.remove()
    first_order = {}  # storage -> order of its first pack
    for w in tokens:
        tok = w()
        if tok is not None and tok.key not in first_order:
            first_order[tok.key] = tok.order
    # The autograd graph: which node attributes hold which storages (informational:
    # nodes hidden inside CopySlices, in-place ops on views, are not reachable).
    holders = collections.defaultdict(list)  # storage -> [(pack order, "Fn._saved_x")]
    visited = set()
    first = out[0] if isinstance(out, (tuple, list)) else out
    todo = [first.grad_fn] if isinstance(first, torch.Tensor) else []
    while todo:
        fn = todo.pop()
        if fn is None or fn in visited:
            continue
        visited.add(fn)
        for attr in dir(fn):
            if not attr.startswith("_saved_"):
                continue
            try:
                val = getattr(fn, attr)
            except Exception:  # noqa: BLE001 (freed or unreadable: not ours to judge)
                continue
            vals = val if isinstance(val, (tuple, list)) else (val,)
            for v in vals:
                if isinstance(v, torch.Tensor):
                    key = _storage_key(v)[0]
                    if key not in excluded:
                        holders[key].append((first_order[key], type(fn).__name__ + "." + attr))
        for nxt, _ in fn.next_functions:
            todo.append(nxt)

    # NB: a training step keeps only the first output (the loss is computed
    # from it); other outputs (LeNet5's probs) and the graph only they reach
    # die after the forward, as torchcost models it.
    first = out[0] if isinstance(out, (tuple, list)) else out
    del out
    for w in tokens:
        tok = w()
        if tok is not None:
            tok.tensor = None
    # NB: no local variable may keep a token (or a tensor of the dropped graph) alive.
    tok = val = vals = v = fn = todo = visited = None
    gc.collect()

    alive = [tok for tok in (w() for w in tokens) if tok is not None]
    alive.sort(key=lambda tok: tok.order)
    nbytes, first_tok = {}, {}
    for tok in alive:
        if tok.key in excluded or tok.key in nbytes:
            continue
        nbytes[tok.key] = tok.nbytes
        first_tok[tok.key] = tok

    for key in [k for k in holders if k not in nbytes]:
        del holders[key]  # held only by the dropped graph
    by_fn = collections.defaultdict(lambda: {"count": 0, "bytes": 0})
    for key, hs in holders.items():
        hs.sort()
        for _, label in hs:
            by_fn[label]["count"] += 1
        by_fn[hs[0][1]]["bytes"] += nbytes[key]
    hidden = sum(nb for key, nb in nbytes.items() if key not in holders)
    if hidden:
        by_fn["(not reachable by next_functions)"]["bytes"] += hidden

    by_module = collections.Counter()
    by_op = collections.Counter()
    for key, nb in nbytes.items():
        by_module[first_tok[key].module] += nb
        by_op[first_tok[key].op] += nb

    return {
        "torch": torch.__version__,
        "model": name,
        "input_shapes": shapes,
        "saved_bytes": sum(nbytes.values()),
        "storages": len(nbytes),
        "by_grad_fn": dict(sorted(by_fn.items())),
        "by_module": dict(sorted(by_module.items())),
        "by_op": dict(sorted(by_op.items())),
    }


def cache_key():
    """Returns the key cached results are valid under: torch version and a hash of the probe's code."""
    h = hashlib.sha256()
    for path in (os.path.abspath(__file__), os.path.join(_HERE, "make_fixtures.py")):
        with open(path, "rb") as f:
            h.update(f.read())
    return "torch %s; code %s" % (torch.__version__, h.hexdigest()[:16])


def cached_probe(name, batch, cache_dir):
    """probe(name, batch), kept in CACHE_DIR/<name>_b<batch>.saved.json under cache_key()."""
    batch = make_fixtures.default_batch(name) if batch is None else batch
    path = os.path.join(cache_dir, "%s_b%d.saved.json" % (name, batch))
    key = cache_key()
    try:
        with open(path) as f:
            data = json.load(f)
        if data.get("key") == key:
            return data
    except (OSError, ValueError):
        pass
    data = probe(name, batch)
    data["key"] = key
    os.makedirs(cache_dir, exist_ok=True)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)
    return data


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a make_fixtures.py model name")
    parser.add_argument("--batch", type=int, default=None, help="first input dimension")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--top", type=int, default=40, help="grad_fn attributes and modules listed")
    args = parser.parse_args(argv)
    if args.model not in make_fixtures.model_names():
        parser.error("unknown model %r; known: %s" % (args.model, ", ".join(make_fixtures.model_names())))
    r = probe(args.model, args.batch)
    if args.json:
        json.dump(r, sys.stdout, indent=1)
        print()
        return 0
    print("%s %s: saved %d bytes in %d storages" % (r["model"], r["input_shapes"], r["saved_bytes"], r["storages"]))
    print("by grad_fn attribute (count, bytes first saved there):")
    for label, v in sorted(r["by_grad_fn"].items(), key=lambda kv: -kv[1]["bytes"])[: args.top]:
        print("  %-50s %5d %12d" % (label, v["count"], v["bytes"]))
    print("by torch function (bytes first saved there):")
    for op, b in sorted(r["by_op"].items(), key=lambda kv: -kv[1])[: args.top]:
        print("  %-50s %12d" % (op, b))
    print("by module (innermost, bytes first saved there):")
    for path, b in sorted(r["by_module"].items(), key=lambda kv: -kv[1])[: args.top]:
        print("  %-50s %12d" % (path or "(root)", b))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
