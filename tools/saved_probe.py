#!/usr/bin/python3
"""Measures what PyTorch's autograd saves for backward in one training forward.

Usage (Debian's system python3, torch 1.13 CPU):

    /usr/bin/python3 tools/saved_probe.py MODEL [--batch N] [--json] [--top K]

MODEL is a name tools/make_fixtures.py builds (build_model). The model runs one
forward in train mode (model.train(): batch norm uses batch statistics, dropout
drops) on make_fixtures' example input with the first dimension set to N
(default: the model's example batch, 1, or 2 for the GPT models), under
torch.autograd.graph.saved_tensors_hooks. Every tensor autograd packs is
recorded; each storage counts once, and storages of parameters and buffers do
not count: this is the activation memory (ACT) torchcost's
training.memory.saved_bytes predicts, `--device cpu` (CPU kernels: dropout's
float mask, ...).

Printed (or, with --json, one JSON object):
- saved_bytes: the total;
- by_grad_fn: "<grad_fn type>._saved_<name>" -> {count, bytes}: every tensor
  attribute of the autograd graph's nodes that holds a counted storage; bytes
  count each storage once, at the node that saved it first (the unpack
  hook returns the packed tensor object itself, so its pack order is known);
- by_module: module path (as named_modules names it; "" for the root) ->
  bytes of the storages first saved while that module was the innermost one
  running; its values sum to saved_bytes.

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
    # (the probe keeps every saved tensor alive until it is done).
    return s._cdata, s.nbytes()


def probe(name, batch=None):
    """Runs one train-mode forward of `name`; returns the dict described in the module doc."""
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

    first_module = {}   # storage identity -> module path at its first save
    nbytes = {}         # storage identity -> bytes (counted storages only)
    keep = []           # keeps every packed tensor alive, so identities stay unique

    pack_index = {}     # id(packed tensor) -> order of its pack

    def pack(t):
        pack_index.setdefault(id(t), len(keep))
        keep.append(t)
        key, nb = _storage_key(t)
        if key not in excluded and key not in nbytes:
            nbytes[key] = nb
            first_module[key] = stack[-1]
        return t

    def unpack(t):
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        out = model(*inputs)
    for h in handles:
        h.remove()

    # The autograd graph: which node attributes hold which storages.
    outs = out if isinstance(out, (tuple, list)) else (out,)
    roots = [o.grad_fn for o in outs if isinstance(o, torch.Tensor) and o.grad_fn is not None]
    holders = collections.defaultdict(list)  # storage -> [(pack order, "Fn._saved_x")]
    visited = set()
    todo = list(roots)
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
                    if key in nbytes:
                        order = pack_index.get(id(v), len(keep))
                        holders[key].append((order, type(fn).__name__ + "." + attr))
        for nxt, _ in fn.next_functions:
            todo.append(nxt)

    by_fn = collections.defaultdict(lambda: {"count": 0, "bytes": 0})
    for key, hs in holders.items():
        hs.sort()
        for _, label in hs:
            by_fn[label]["count"] += 1
        by_fn[hs[0][1]]["bytes"] += nbytes[key]
    unattributed = sum(nb for key, nb in nbytes.items() if key not in holders)
    if unattributed:
        by_fn["(not reachable from the output)"]["bytes"] += unattributed

    by_module = collections.Counter()
    for key, nb in nbytes.items():
        by_module[first_module[key]] += nb

    return {
        "torch": torch.__version__,
        "model": name,
        "input_shapes": shapes,
        "saved_bytes": sum(nbytes.values()),
        "storages": len(nbytes),
        "by_grad_fn": dict(sorted(by_fn.items())),
        "by_module": dict(sorted(by_module.items())),
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
    print("by module (innermost, bytes first saved there):")
    for path, b in sorted(r["by_module"].items(), key=lambda kv: -kv[1])[: args.top]:
        print("  %-50s %12d" % (path or "(root)", b))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
