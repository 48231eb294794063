#!/usr/bin/python3
"""One op without a rule does not poison the rest of the analysis (issue 10, point 1).

Usage: /usr/bin/python3 tests/python/test_unknown_op.py --torchcost PATH --fixtures DIR

The model is a small CNN with `torch.diff` between its convolutions; no rule
covers `aten::diff` (the test fails loudly if one appears: then pick another
rare op). diff changes the width (W -> W - 1), so every layer after it depends
on the shape torchcost takes for diff's output. PyTorch measures, torchcost
predicts:

  params        totals.params == sum(p.numel())                          exact
  macs          conv1, conv2 and fc: modules[].macs == out.numel() * dot length
                (forward hooks), at the traced batch and, from one analysis
                with B symbolic, at other batches                        exact
  lower bounds  totals, the root and the step's FLOPs are lower_bound; conv1
                and fc (no diff inside) are not; the text prints ">= "
  grads         training.grad_params == elements that get a .grad, and the
                GRAD category's maximum == the bytes of those .grad     exact
  act           memory.lower_bound; saved_bytes == the storages autograd saves
                (saved_tensors_hooks, parameters excluded): NB: diff is
                narrow + sub in 1.13, whose backward saves nothing, so the
                lower bound is here the exact value
  sweep         --sweep --json marks flops and memory as lower bounds
  strict        --strict exits 1
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

from torchcost_cli import Results, run_json

C, H, W = 3, 12, 12  # NB: small, so the test costs a second of CPU.
TRACE_BATCH = 2


def build_model():
    import torch
    from torch import nn

    class DiffNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(C, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 16, 3)
            # diff: W -> W - 1; conv2 (3x3, no padding): H -> H - 2, W - 1 -> W - 3.
            self.fc = nn.Linear(16 * (H - 2) * (W - 3), 10)

        def forward(self, x):
            x = torch.relu(self.conv1(x))
            x = torch.diff(x, dim=-1)
            x = torch.relu(self.conv2(x))
            return self.fc(x.flatten(1))

    torch.manual_seed(0)
    return DiffNet()


def reference(model, batch):
    """Per-module MACs of conv1, conv2 and fc from forward hooks at `batch`."""
    import torch
    from torch import nn

    macs = {}

    def make_hook(path):
        def hook(mod, inputs, out):
            if isinstance(mod, nn.Conv2d):
                # Each output element is a dot product of length Cin/groups * kh * kw.
                macs[path] = out.numel() * (mod.in_channels // mod.groups) * mod.kernel_size[0] * mod.kernel_size[1]
            elif isinstance(mod, nn.Linear):
                # Each output element is a dot product of length in_features.
                macs[path] = out.numel() * mod.in_features
        return hook

    handles = [m.register_forward_hook(make_hook(p)) for p, m in model.named_modules() if p]
    with torch.no_grad():
        model(torch.randn(batch, C, H, W))
    for h in handles:
        h.remove()
    return macs


def measure_step(model, batch):
    """One training step's gradients and saved bytes, measured."""
    import torch

    params = {p.untyped_storage().data_ptr() if hasattr(p, "untyped_storage") else p.storage().data_ptr()
              for p in model.parameters()}
    saved = {}

    def pack(t):
        s = t.storage()
        if s.data_ptr() not in params and s.nbytes():
            saved[s.data_ptr()] = s.nbytes()
        return t

    model.train()
    model.zero_grad(set_to_none=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(torch.randn(batch, C, H, W))
    out.sum().backward()
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    return {
        "grad_elements": sum(g.numel() for g in grads),
        "grad_bytes": sum(g.numel() * g.element_size() for g in grads),
        "saved_bytes": sum(saved.values()),
    }


def value(sym):
    return sym.get("value") if isinstance(sym, dict) else sym


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", required=True)
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    results = Results()
    model = build_model().eval()
    scratch = tempfile.TemporaryDirectory(prefix="tc_unknown_")  # NB: removed when main returns.
    tmp = scratch.name
    pt = os.path.join(tmp, "diffnet.pt")
    torch.jit.save(torch.jit.trace(model, torch.randn(TRACE_BATCH, C, H, W)), pt)
    shape = "%d,%d,%d" % (C, H, W)
    params = sum(p.numel() for p in model.parameters())

    rep, err = run_json(args.torchcost, [pt, "--input", "%d,%s" % (TRACE_BATCH, shape), "--device", "cpu"])
    if not results.check(rep is not None, "concrete run", err):
        return results.summary()
    unknown = [u["op"] for u in rep["unknown_ops"]]
    results.check(unknown == ["aten::diff"], "the op without a rule",
                  "expected only aten::diff without a rule, got %s (if diff gained a rule, use another rare op)"
                  % unknown)
    results.check(rep["totals"]["params"] == params, "params", "%s != %d" % (rep["totals"]["params"], params))
    modules = {m["path"]: m for m in rep["modules"]}
    ref = reference(model, TRACE_BATCH)
    for path, macs in sorted(ref.items()):
        got = value(modules.get(path, {}).get("macs"))
        results.check(got == macs, "macs %s" % path, "expected %d, got %s" % (macs, got))
    results.check(rep["totals"].get("lower_bound") is True, "totals.lower_bound", rep["totals"].get("lower_bound"))
    results.check(modules[""].get("lower_bound") is True, "root lower_bound", modules[""].get("lower_bound"))
    for path in ("conv1", "fc"):
        results.check(modules[path].get("lower_bound") is False, "%s lower_bound" % path, modules[path].get("lower_bound"))
    # The totals miss only diff's cost: they are the known layers' MACs at least.
    results.check(value(rep["totals"]["macs"]) >= sum(ref.values()), "totals.macs",
                  "%s < %d" % (value(rep["totals"]["macs"]), sum(ref.values())))
    tr = rep["training"]
    results.check(tr["flops"].get("lower_bound") is True, "training.flops.lower_bound", tr["flops"])

    step = measure_step(model, TRACE_BATCH)
    results.check(tr["grad_params"] == step["grad_elements"] == params, "grad_params",
                  "torchcost %s, PyTorch %d of %d" % (tr["grad_params"], step["grad_elements"], params))
    grad = value(tr["memory"]["category_max"]["grad"])
    results.check(grad == step["grad_bytes"], "grad bytes", "torchcost %s, PyTorch %d" % (grad, step["grad_bytes"]))
    results.check(tr["memory"].get("lower_bound") is True, "memory.lower_bound", tr["memory"].get("lower_bound"))
    act = value(tr["memory"]["saved_bytes"])
    results.check(act == step["saved_bytes"], "saved bytes",
                  "torchcost %s, PyTorch %d" % (act, step["saved_bytes"]))

    # One analysis with the batch symbolic: diff's output is written in B.
    sym_rep, err = run_json(args.torchcost, [pt, "--input", "B," + shape, "--device", "cpu"])
    if results.check(sym_rep is not None, "symbolic run", err):
        results.check(any("aten::diff" in a for a in sym_rep["assumptions"]), "assumption stated",
                      sym_rep["assumptions"])
        expr = sym_rep["totals"]["macs"]["expr"]
        results.check("B" in expr, "symbolic macs", expr)
    for batch in (1, 5):
        rep_b, err = run_json(args.torchcost, [pt, "--input", "B," + shape, "--set", "B=%d" % batch,
                                               "--device", "cpu"])
        if not results.check(rep_b is not None, "B=%d run" % batch, err):
            continue
        mods = {m["path"]: m for m in rep_b["modules"]}
        ref_b = reference(model, batch)
        for path, macs in sorted(ref_b.items()):
            got = value(mods.get(path, {}).get("macs"))
            results.check(got == macs, "B=%d macs %s" % (batch, path), "expected %d, got %s" % (macs, got))
        grad_b = value(rep_b["training"]["memory"]["category_max"]["grad"])
        results.check(grad_b == step["grad_bytes"], "B=%d grad bytes" % batch, grad_b)

    text = subprocess.run([args.torchcost, pt, "--input", "%d,%s" % (TRACE_BATCH, shape)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    macs_line = [l for l in text.stdout.splitlines() if l.strip().startswith("MACs:")]
    results.check(text.returncode == 0 and macs_line and ">= " in macs_line[0], "text lower bound",
                  macs_line or text.stderr.strip())
    sweep = subprocess.run([args.torchcost, pt, "--input", "B," + shape, "--sweep", "B=1:2:x2", "--json"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    try:
        marks = json.loads(sweep.stdout).get("lower_bound")
    except ValueError:
        marks = sweep.stderr.strip()
    results.check(marks == {"flops": True, "memory": True}, "sweep lower_bound", marks)
    # compare: each row says its numbers are lower bounds and names the op.
    cmp = subprocess.run([args.torchcost, "compare", pt, "--input", "%d,%s" % (TRACE_BATCH, shape), "--device", "cpu",
                          "full", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=120)
    try:
        row = json.loads(cmp.stdout)["rows"][0]
        got = (row.get("lower_bound"), [u["op"] for u in row.get("unknown_ops", [])])
    except (ValueError, KeyError, IndexError):
        got = cmp.stderr.strip()
    results.check(got == ({"flops": True, "memory": True}, ["aten::diff"]), "compare lower_bound", got)
    cmp_text = subprocess.run([args.torchcost, "compare", pt, "--input", "%d,%s" % (TRACE_BATCH, shape), "full"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    results.check("no rule for full: aten::diff" in cmp_text.stdout, "compare text lower bound",
                  cmp_text.stdout[-300:] or cmp_text.stderr.strip())
    strict = subprocess.run([args.torchcost, pt, "--input", "%d,%s" % (TRACE_BATCH, shape), "--strict"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
    results.check(strict.returncode == 1, "--strict exits 1", "exit %d" % strict.returncode)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
