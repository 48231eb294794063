#!/usr/bin/python3
"""Oracle test: the bytes torchcost says autograd saves == what PyTorch saves (issue 3, point 5).

Usage (Debian's system python3, which has torch 1.13 and torchvision 0.14):

    /usr/bin/python3 tests/python/test_saved.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--models resnet18,gpt_tiny] [--batches 1,8]

PyTorch's side is tools/saved_probe.py: one train-mode forward under
torch.autograd.graph.saved_tensors_hooks, each saved storage counted once,
parameters and buffers excluded. It is cached in FIXTURES/<name>_b<N>.saved.json,
keyed by the torch version and a hash of saved_probe.py and make_fixtures.py.

torchcost's side, with CPU kernels (this PyTorch is a CPU build):

    torchcost FIXTURES/<stem>.pt --input <shape> --device cpu --json

on the eval trace at that batch (<name>.pt / <name>_b<N>.pt: torchcost switches
batch norm and dropout to training itself in --mode train, the default); for
the GPT models on the train-mode trace <name>_train.pt at [2, 64] int64, and
for efficientnet_b0 on its train-mode trace too (<stem>_train.pt, made here if
missing): its StochasticDepth is absent from the eval trace (TRAIN_TRACE).
Checked: training.memory.saved_bytes.value == saved_bytes, exactly, for every
model at batch 1 and 8 (the GPT models at their example batch, 2).

On a mismatch it prints both sides per module (bytes of the storages first
saved by that module's own nodes) and the PyTorch grad_fn attributes and
torchcost saved tensors involved. Last line: "N passed, M failed"; exits 0 only
if nothing failed.
"""

import argparse
import collections
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
import time

import oracle_models  # noqa: E402  (puts tools/ on sys.path)
from oracle_models import CNNS, GPTS, MODELS  # noqa: E402

import make_fixtures as mf  # noqa: E402
import saved_probe  # noqa: E402

# Models whose training forward runs ops that their eval trace lacks altogether,
# so torchcost reads their train-mode trace: efficientnet_b0's StochasticDepth
# is the identity in eval mode, while in training it multiplies each residual
# branch by a saved [N, 1, 1, 1] noise (MulBackward0._saved_other, 4*N bytes
# per block). The GPT models are always read from their train-mode trace.
TRAIN_TRACE = {"efficientnet_b0"} | set(GPTS)
BATCHES = (1, 8)
TORCHCOST_TIMEOUT_S = 120


def run_torchcost(binary, fixtures, name, batch):
    """Returns torchcost's JSON report for a model at a batch, with CPU kernels."""
    pt = mf.make_fixture(name, fixtures, batch, train=name in TRAIN_TRACE)
    shape = [batch] + mf.build_shapes(name)[0][1:]
    spec = ",".join(str(d) for d in shape)
    if mf.input_dtypes(name)[0] != "float32":
        spec += ":" + mf.input_dtypes(name)[0]
    report, err = torchcost_cli.run_json(binary, [pt, "--input", spec, "--device", "cpu"], TORCHCOST_TIMEOUT_S)
    if err:
        raise RuntimeError(err)
    return report


def torchcost_breakdown(report):
    """Returns ({module: bytes first saved there}, {"op.tensor": bytes}) from training.saved."""
    by_module = collections.Counter()
    by_tensor = collections.Counter()
    for s in report["training"]["saved"]:
        if s.get("counted"):
            by_module[s.get("module", "")] += s["bytes"]
            by_tensor["%s.%s" % (s["op"], s["tensor"])] += s["bytes"]
    return by_module, by_tensor


def explain(ref, report, limit=25):
    """Prints where PyTorch's and torchcost's saved bytes differ."""
    tc_mod, tc_tensor = torchcost_breakdown(report)
    pt_mod = collections.Counter(ref["by_module"])
    rows = [(m, pt_mod.get(m, 0), tc_mod.get(m, 0)) for m in set(pt_mod) | set(tc_mod)]
    rows = [r for r in rows if r[1] != r[2]]
    rows.sort(key=lambda r: -abs(r[1] - r[2]))
    print("    per module (pytorch, torchcost, torchcost - pytorch):")
    for m, a, b in rows[:limit]:
        print("      %-48s %12d %12d %+12d" % (m or "(root)", a, b, b - a))
    if len(rows) > limit:
        print("      ... %d more modules differ" % (len(rows) - limit))
    print("    pytorch by grad_fn attribute (count, bytes):")
    for label, v in sorted(ref["by_grad_fn"].items(), key=lambda kv: -kv[1]["bytes"])[:limit]:
        print("      %-48s %5d %12d" % (label, v["count"], v["bytes"]))
    print("    pytorch by torch function (bytes):")
    for label, b in sorted(ref.get("by_op", {}).items(), key=lambda kv: -kv[1])[:limit]:
        print("      %-48s %12d" % (label, b))
    print("    torchcost by op.tensor (bytes):")
    for label, b in tc_tensor.most_common(limit):
        print("      %-48s %12d" % (label, b))


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True, help="the torchcost binary")
    parser.add_argument("--fixtures", required=True, help="fixture directory (make_fixtures.py OUTDIR)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated model names")
    parser.add_argument("--batches", default=",".join(str(b) for b in BATCHES),
                        help="batches of the CNNs (the GPT models run at their example batch)")
    parser.add_argument("--quiet", action="store_true", help="no per-module diff on a mismatch")
    args = parser.parse_args(argv)
    names = [n for n in args.models.split(",") if n]
    batches = [int(b) for b in args.batches.split(",") if b]
    passed = failed = 0
    t0 = time.time()
    for name in names:
        model_batches = [mf.default_batch(name)] if name in GPTS else batches
        for batch in model_batches:
            label = "%s b%d" % (name, batch)
            try:
                ref = saved_probe.cached_probe(name, batch, args.fixtures)
                report = run_torchcost(args.torchcost, args.fixtures, name, batch)
            except Exception as e:  # noqa: BLE001 (reported as a failure, then the next model)
                failed += 1
                print("FAIL %s: %s" % (label, e))
                continue
            got = report["training"]["memory"]["saved_bytes"]["value"]
            want = ref["saved_bytes"]
            if got == want:
                passed += 1
                print("ok   %-28s %14d" % (label, want))
            else:
                failed += 1
                print("FAIL %s saved bytes: pytorch %d, torchcost %d (%+d)" % (label, want, got, got - want))
                if not args.quiet:
                    explain(ref, report)
            sys.stdout.flush()
    print("(%.1f s)" % (time.time() - t0))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
