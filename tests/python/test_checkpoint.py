#!/usr/bin/python3
"""Oracle test: torchcost's activation checkpointing against PyTorch's torch.utils.checkpoint.

Usage (Debian's system python3: torch 1.13, CPU only):

    /usr/bin/python3 tests/python/test_checkpoint.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--batches 1,8]

PyTorch runs the real step with the blocks wrapped in torch.utils.checkpoint
(use_reentrant=True, 1.13's default): gpt_tiny's transformer blocks h.N and
resnet18's BasicBlocks layerK.N, at batch 1 and 8, measured by
tools/measure_step.py --checkpoint REGEX (method: docs/measuring.md; cached in
FIXTURES/<name>_b<N>_<opt>_<mode>_ckpt-<hash>.step.json). torchcost analyses
the trace of the plain model:

    torchcost FIXTURE.pt --input SHAPE --device cpu --optimizer adam --checkpoint PATTERN --json

with PATTERN "blocks" for gpt_tiny (the repeated blocks, found by torchcost)
and the same regex as PyTorch's for resnet18. Checks on "training":

  act   memory.saved_bytes        == act_bytes (exact: with reentrant checkpoint
                                     only CheckpointFunction's saves are seen)
  grad  memory.category_max.grad  == grad_tensor_bytes (exact)
  opt   memory.category_max.opt   == opt_bytes (exact)
  peak  memory.peak               within 5% of peak_bytes

Prints each relative error, one line per failed check, and as its last line
"N passed, M failed". Exits 0 only if nothing failed.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
from torchcost_cli import RECOMPUTE_CHECKS, memory_value  # noqa: E402
import oracle_models  # noqa: E402,F401  (puts tools/ on sys.path)

import make_fixtures as mf  # noqa: E402
import measure_step as ms  # noqa: E402

PEAK_TOLERANCE = 0.05
OPTIMIZER = "adam"
# (model, train trace?, torchcost's --checkpoint, PyTorch's regex)
CASES = [
    ("gpt_tiny", True, "blocks", r"^h\.\d+$"),
    ("resnet18", False, r"^layer\d\.\d+$", r"^layer\d\.\d+$"),
]
def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--batches", default="1,8")
    args = parser.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",") if b]
    passed = failed = 0
    for name, train_trace, pattern, regex in CASES:
        for batch in batches:
            label = "%s b%d --checkpoint %s" % (name, batch, pattern)
            measured = ms.measure(name, batch, OPTIMIZER, "train", fixtures=args.fixtures, checkpoint=regex)
            pt = mf.make_fixture(name, args.fixtures, batch, train=train_trace)
            shape = [batch] + list(mf.build_shapes(name)[0][1:])
            dtype = mf.input_dtypes(name)[0]
            text = ",".join(str(d) for d in shape) + ("" if dtype == "float32" else ":" + dtype)
            cli = [pt, "--input", text, "--device", "cpu", "--optimizer", OPTIMIZER, "--checkpoint", pattern]
            report, err = torchcost_cli.run_json(args.torchcost, cli)
            if err:
                failed += len(RECOMPUTE_CHECKS)
                print("FAIL %s: %s" % (label, err), flush=True)
                continue
            training = report["training"]
            for check, path, key, exact in RECOMPUTE_CHECKS:
                got, want = memory_value(training, path), measured[key]
                rel = (got - want) / want if isinstance(got, int) and want else float("nan")
                ok = got == want if exact else isinstance(got, int) and abs(rel) <= PEAK_TOLERANCE
                print("%s %s: torchcost %s, PyTorch %s (%+.3f%%)" % (label, check, got, want, 100 * rel))
                if ok:
                    passed += 1
                else:
                    failed += 1
                    print("FAIL %s %s: expected %s, got %s" % (label, check, want, got), flush=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
