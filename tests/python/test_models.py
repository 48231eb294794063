#!/usr/bin/python3
"""Oracle tests: torchcost's JSON report against PyTorch itself, on real models.

Usage (Debian's system python3, which has torch 1.13 and torchvision 0.14):

    /usr/bin/python3 tests/python/test_models.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--models resnet18,vit_b_16] [--batches 1,3,8]

For every model the reference values come from PyTorch at test time, never
from torchcost's output:
  params        totals.params == sum(p.numel() for p in model.parameters()).
  unknown_ops   the report lists no op without a rule.
  output_shape  every module whose forward returned tensors: modules[].output_shapes
                equals the shapes of its last call, seen by a forward hook (except
                modules whose traced forward returns no tensor: nothing in the
                archive says their shape).
  module_path   every module the report lists is a path of model.named_modules().
  macs          every nn.Conv{1,2,3}d and nn.Linear module: modules[].macs.value
                equals the MACs derived from the hooked output (formulas below).
  batch         for b in --batches: the batch-1 trace analysed with --input B,...
                --set B=b gives the same totals (params, macs, flops) and the same
                per-module macs and flops as a trace made at batch b analysed with
                --input b,...

Reference values are cached in FIXTURE_DIR/<name>.ref.json, keyed by the torch
and torchvision versions, the fixture generator's source and REF_VERSION, so a
second run runs no forward at all. Fixtures are written by tools/make_fixtures.py
(it skips files that exist).

Prints one line per failed check ("FAIL <model> <check> ...: expected X, got Y")
and, as its last line, "N passed, M failed". Exits 0 only if nothing failed.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
import time

import oracle_models  # noqa: E402  (puts tools/ on sys.path)

import make_fixtures as mf  # noqa: E402  (needs the sys.path entry above)

# Point 5 of the issue: the models, each at its own example input (batch 1).
MODELS = oracle_models.CNNS
BATCHES = (1, 3, 8)
# Bump when the reference computation below changes, to invalidate cached files.
REF_VERSION = 2
TORCHCOST_TIMEOUT_S = 180


class Results:
    """Counts checks; prints one line per failed check."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, model, what, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s %s%s" % (model, what, ": " + detail if detail else ""), flush=True)
        return ok

    def expect_eq(self, model, what, expected, got):
        return self.check(expected == got, model, what,
                          "expected %s, got %s" % (_short(expected), _short(got)))


def _short(value, limit=300):
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + "...(%d chars)" % len(text)


# --- PyTorch side -------------------------------------------------------------

def _tensor_shapes(out):
    """Returns the shapes of the tensors in a module output, in order (tuples flattened)."""
    import torch

    if isinstance(out, torch.Tensor):
        return [list(out.shape)]
    if isinstance(out, (tuple, list)):
        shapes = []
        for item in out:
            shapes.extend(_tensor_shapes(item))
        return shapes
    if isinstance(out, dict):
        shapes = []
        for item in out.values():
            shapes.extend(_tensor_shapes(item))
        return shapes
    return []


def _prod(values):
    result = 1
    for v in values:
        result *= int(v)
    return result


def _traced_without_tensor_output(pt):
    """Returns the module paths whose forward in a traced archive returns no tensor.

    NB: a module that returns its input untouched and runs no op (torchvision's
    StochasticDepth in eval mode) is traced as a forward with no input that
    returns None, so no analysis of the archive can know its output shape.
    """
    import torch

    paths = []
    for path, module in torch.jit.load(pt).named_modules():
        try:
            graph = module.graph
        except (AttributeError, RuntimeError):
            continue  # Never called while tracing: no forward at all.
        if not any("Tensor" in str(out.type()) for out in graph.outputs()):
            paths.append(path)
    return sorted(paths)


def compute_reference(name, pt):
    """Runs one batch-1 forward with hooks and reads the trace at pt; returns the reference dict."""
    import torch
    from torch import nn

    torch.set_num_threads(2)
    model, input_shapes = mf.build_model(name)
    model.eval()
    out_shapes = {}  # path -> shapes of the tensor outputs of its last call
    types = {}  # path -> class name, for modules that ran
    macs = {}  # path -> MACs of its conv/linear op, summed over calls
    convs = (nn.Conv1d, nn.Conv2d, nn.Conv3d)

    def make_hook(path):
        def hook(mod, inputs, out):
            types[path] = type(mod).__name__
            shapes = _tensor_shapes(out)
            if shapes:
                out_shapes[path] = shapes
            else:
                out_shapes.pop(path, None)  # The last call returned no tensor.
            if type(mod) in convs:
                # Each output element is a dot product of length Cin/groups * prod(kernel).
                cin_per_group = mod.in_channels // mod.groups
                macs[path] = macs.get(path, 0) + out.numel() * cin_per_group * _prod(mod.kernel_size)
            elif isinstance(mod, nn.Linear):
                # Each output element is a dot product of length in_features.
                macs[path] = macs.get(path, 0) + out.numel() * mod.in_features
        return hook

    handles = [m.register_forward_hook(make_hook(p)) for p, m in model.named_modules()]
    torch.manual_seed(0)
    inputs = tuple(torch.randn(s) for s in input_shapes)
    with torch.no_grad():
        model(*inputs)
    for h in handles:
        h.remove()
    return {
        "model": name,
        "input_shapes": input_shapes,
        "params": sum(p.numel() for p in model.parameters()),
        "module_paths": [p for p, _ in model.named_modules()],
        "types": types,
        "output_shapes": out_shapes,
        "macs": macs,
        "conv_linear_macs_total": sum(macs.values()),
        "traced_without_tensor_output": _traced_without_tensor_output(pt),
    }


def _reference_key():
    import torch
    import torchvision

    with open(mf.__file__, "rb") as f:
        generator_sha = hashlib.sha256(f.read()).hexdigest()
    return {"torch": torch.__version__, "torchvision": torchvision.__version__,
            "ref_version": REF_VERSION, "make_fixtures_sha256": generator_sha}


def load_reference(name, fixtures, pt, key):
    """Returns the cached reference for a model, computing and caching it if stale."""
    path = os.path.join(fixtures, name + ".ref.json")
    try:
        with open(path) as f:
            cached = json.load(f)
        if cached.get("key") == key:
            return cached["ref"]
    except (OSError, ValueError, KeyError):
        pass
    ref = compute_reference(name, pt)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"key": key, "ref": ref}, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return ref


# --- torchcost side -------------------------------------------------------------

def run_torchcost(binary, pt, input_shapes, bindings=None):
    """Runs torchcost --json; returns (report, None) or (None, error text)."""
    args = [pt]
    for shape in input_shapes:
        args += ["--input", ",".join(str(d) for d in shape)]
    for sym, value in sorted((bindings or {}).items()):
        args += ["--set", "%s=%d" % (sym, value)]
    return torchcost_cli.run_json(binary, args, TORCHCOST_TIMEOUT_S, label=" ".join(args))


def sym_value(sym):
    """Returns the bound value of a symbolic quantity {"expr", "value"}, else the raw object."""
    if isinstance(sym, dict) and "value" in sym:
        return sym["value"]
    return sym


def modules_by_path(report):
    return {m.get("path"): m for m in report.get("modules", []) if isinstance(m, dict)}


# --- checks ---------------------------------------------------------------------

def check_single_report(results, name, ref, report):
    """Checks 1, 2, 3 and 5 on the batch-1 report."""
    totals = report.get("totals", {})
    results.expect_eq(name, "params (totals.params)", ref["params"], totals.get("params"))
    unknown = report.get("unknown_ops")
    results.check(unknown == [], name, "unknown_ops", "expected [], got %s" % _short(unknown))

    modules = modules_by_path(report)
    known_paths = set(ref["module_paths"])
    untraceable = set(ref["traced_without_tensor_output"])
    for path in sorted(p for p in modules if p not in known_paths):
        results.check(False, name, "module_path %r" % path,
                      "the report lists a module that model.named_modules() does not have")
    for path, shapes in sorted(ref["output_shapes"].items()):
        if path in untraceable:
            continue
        label = "output_shape %r (%s)" % (path, ref["types"].get(path, "?"))
        if path not in modules:
            results.check(False, name, label, "expected %s, got no module with this path"
                          % _short(shapes))
            continue
        results.expect_eq(name, label, shapes, modules[path].get("output_shapes"))
    for path, macs in sorted(ref["macs"].items()):
        label = "macs %r (%s)" % (path, ref["types"].get(path, "?"))
        if path not in modules:
            results.check(False, name, label, "expected %d, got no module with this path" % macs)
            continue
        results.expect_eq(name, label, macs, sym_value(modules[path].get("macs")))


def _values(report):
    """Returns (totals {params, macs, flops}, {path: (macs, flops)}) of a report."""
    totals = report.get("totals", {})
    tot = {"params": totals.get("params"), "macs": sym_value(totals.get("macs")),
           "flops": sym_value(totals.get("flops"))}
    mods = {p: {"macs": sym_value(m.get("macs")), "flops": sym_value(m.get("flops"))}
            for p, m in modules_by_path(report).items()}
    return tot, mods


def check_batch(results, name, b, symbolic, concrete):
    """Check 4: the symbolic report bound at B=b equals the report of a batch-b trace."""
    sym_tot, sym_mods = _values(symbolic)
    con_tot, con_mods = _values(concrete)
    for field in ("params", "macs", "flops"):
        got = sym_tot[field]
        ok = got is not None and not isinstance(got, dict) and got == con_tot[field]
        results.check(ok, name, "batch B=%d totals.%s" % (b, field),
                      "expected %s (trace at batch %d), got %s (--set B=%d)"
                      % (_short(con_tot[field]), b, _short(got), b))
    for path in sorted(set(sym_mods) | set(con_mods)):
        label = "batch B=%d module %r macs/flops" % (b, path)
        if path not in sym_mods:
            results.check(False, name, label, "module only in the batch-%d trace's report" % b)
            continue
        if path not in con_mods:
            results.check(False, name, label, "module only in the --set B=%d report" % b)
            continue
        want, got = con_mods[path], sym_mods[path]
        bound = all(v is not None and not isinstance(v, dict) for v in got.values())
        results.check(bound and want == got, name, label,
                      "expected %s (trace at batch %d), got %s (--set B=%d)"
                      % (_short(want), b, _short(got), b))


def _first_line(e):
    text = str(e).strip()
    return "%s: %s" % (type(e).__name__, text.splitlines()[0] if text else "")


def prepare_model(results, args, name, key):
    """Makes the fixtures and the PyTorch reference of a model; returns (ref, {batch: pt}) or None."""
    # The batch-1 trace and one trace per other batch (each a single forward).
    pts = {}
    try:
        for b in sorted(set(args.batches) | {1}):
            pts[b] = mf.make_fixture(name, args.fixtures, b)
    except Exception as e:  # noqa: BLE001  (any failure is reported, then we go on)
        results.check(False, name, "fixture", "make_fixtures failed: " + _first_line(e))
        return None
    try:
        ref = load_reference(name, args.fixtures, pts[1], key)
    except Exception as e:  # noqa: BLE001
        results.check(False, name, "reference", "PyTorch reference failed: " + _first_line(e))
        return None
    print("# %s: params %d, conv+linear MACs %d"
          % (name, ref["params"], ref["conv_linear_macs_total"]), flush=True)
    return ref, pts


def submit_runs(pool, args, ref, pts):
    """Starts every torchcost run one model needs; returns {(kind, batch): future}."""
    shapes = ref["input_shapes"]
    runs = {("trace", 1): pool.submit(run_torchcost, args.torchcost, pts[1], shapes)}
    sym_shapes = [["B"] + list(s[1:]) for s in shapes]
    for b in args.batches:
        if b != 1:
            runs[("trace", b)] = pool.submit(run_torchcost, args.torchcost, pts[b],
                                             [[b] + list(s[1:]) for s in shapes])
        runs[("set", b)] = pool.submit(run_torchcost, args.torchcost, pts[1], sym_shapes, {"B": b})
    return runs


def check_model(results, args, name, ref, runs):
    """Runs every check of one model on the reports its torchcost runs produced."""
    report, err = runs[("trace", 1)].result()
    if results.check(report is not None, name, "torchcost run (batch 1)", err or ""):
        check_single_report(results, name, ref, report)
    for b in args.batches:
        concrete, err = runs[("trace", b)].result()
        if b != 1 and not results.check(concrete is not None, name,
                                        "torchcost run (trace at batch %d)" % b, err or ""):
            continue
        symbolic, err = runs[("set", b)].result()
        if not results.check(symbolic is not None, name, "torchcost run (--set B=%d)" % b,
                             err or ""):
            continue
        if concrete is not None:  # At batch 1 its failure is already counted above.
            check_batch(results, name, b, symbolic, concrete)
    skipped = sorted(set(ref["output_shapes"]) & set(ref["traced_without_tensor_output"]))
    if skipped:
        print("# %s: output_shape not checked for %d modules whose traced forward returns no "
              "tensor: %s" % (name, len(skipped), ", ".join(skipped)), flush=True)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True, help="path to the torchcost binary")
    parser.add_argument("--fixtures", required=True, help="fixture directory (created if missing)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset")
    parser.add_argument("--batches", default=",".join(str(b) for b in BATCHES),
                        help="batch sizes for the symbolic-batch check")
    parser.add_argument("--jobs", type=int, default=2, help="torchcost runs at a time")
    args = parser.parse_args(argv)
    args.batches = [int(b) for b in args.batches.split(",") if b]
    names = [n for n in args.models.split(",") if n]
    args.fixtures = os.path.abspath(args.fixtures)
    os.makedirs(args.fixtures, exist_ok=True)

    import torch

    torch.set_num_threads(2)
    results = Results()
    if not results.check(os.access(args.torchcost, os.X_OK), "-", "torchcost binary",
                         "%s is not an executable file" % args.torchcost):
        print("%d passed, %d failed" % (results.passed, results.failed))
        return 1
    key = _reference_key()
    start = time.time()
    # PyTorch work first, one model at a time; then torchcost runs, --jobs at a time.
    prepared = [(name, prepare_model(results, args, name, key)) for name in names]
    prepared = [(name, p) for name, p in prepared if p is not None]
    print("# fixtures and references: %.1fs" % (time.time() - start), flush=True)
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        runs = [(name, ref, submit_runs(pool, args, ref, pts)) for name, (ref, pts) in prepared]
        for name, ref, model_runs in runs:
            check_model(results, args, name, ref, model_runs)
    print("# torchcost runs and checks: %.1fs" % (time.time() - start), flush=True)
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 0 if results.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
