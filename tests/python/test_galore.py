#!/usr/bin/python3
"""Oracle tests: GaLore, zero_grad(set_to_none=False) and gradient accumulation against PyTorch.

Usage (Debian's system python3: torch 1.13, CPU only):

    /usr/bin/python3 tests/python/test_galore.py --torchcost BUILD/torchcost --fixtures BUILD/fixtures

The reference values come from PyTorch at test time (tools/measure_step.py
measure_variants, GaLore in plain torch by tools/galore_torch.py, cached in
FIXTURES/<name>_b<N>_variants.step.json), never from torchcost. For gpt_tiny
at [2, 64] (its train trace) and resnet18 at batch 1 and 4 (the eval trace:
torchcost switches batch norm to training), torchcost runs as

    torchcost FIXTURE.pt --input SHAPE --device cpu --optimizer adamw --galore SPEC --json

with SPEC galore_torch.cli_spec(model) (gpt_tiny: r=8, targets attn|mlp, the
README's target modules; resnet18: r=8 on fc, its only 2-D weight), and:

  GaLore, a step between two SVDs (svd=false) vs galore_steady:
      act (training.memory.saved_bytes), grad, opt exact; peak within 5%
  GaLore, an SVD step (svd=true, the default) vs galore_svd:
      opt exact; peak within 5%; and the first step's measured peak (the
      states are made during it) is at most that peak plus 5%
  per-layer (per_layer=true) vs galore_per_layer (svd=false) and
      galore_per_layer_svd (svd=true): act, opt exact; peaks within 5% (the
      SVD one from 5% below to 12% above: see SVD_PER_LAYER_ABOVE); GRAD is
      the largest set of parameter gradients one backward node produces
      (derived below) and at least the most .grad bytes seen by a hook
  --zero-grad zeros vs zeros, --accumulate 2 vs accumulate (AdamW, no GaLore),
  and --optimizer-impl foreach (adamw, adagrad, rmsprop) vs torch's foreach=True step:
      grad, opt exact; peak within 5%

Prints one line per failed check and, last, "N passed, M failed".
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_models  # noqa: E402,F401  (puts tools/ on sys.path)
import torchcost_cli  # noqa: E402

import galore_torch as gt  # noqa: E402
import make_fixtures as mf  # noqa: E402
import measure_step as ms  # noqa: E402

PEAK_TOLERANCE = 0.05
# NB: the reference of galore_per_layer_svd varies between fresh measurements of
# the same step: gpt_tiny b2 measured from 7346268 to 8067164 bytes over eleven
# runs (the allocations of its "fresh" phase differ by 64 KiB steps; the
# suspect is tools/measure_step.py's _fresh_projectors freeing blocks made
# before the profile started, which torch 1.13's profiler cannot size), and
# torchcost's 8053276 is 9.6% above the lowest. The varying figures fall short
# of the highest, so only the upper side is widened.
SVD_PER_LAYER_ABOVE = 0.12
CASES = [("gpt_tiny", 2), ("resnet18", 1), ("resnet18", 4)]

# Per-layer GRAD: the most parameter-gradient bytes one backward node makes
# before their hooks free them (float32).
PER_LAYER_GRAD = {
    # c_fc's AddmmBackward0: weight [512, 128] and bias [512] together.
    "gpt_tiny": (512 * 128 + 512) * 4,
    # layer4's 3x3 convolutions 512 -> 512 (no bias): 512 * 512 * 9 weights.
    "resnet18": 512 * 512 * 3 * 3 * 4,
}


def fixture(name, batch, fixtures):
    """(pt, --input args) of the trace torchcost reads."""
    train = name in oracle_models.GPTS
    pt = mf.make_fixture(name, fixtures, batch, train=train)
    args = []
    for shape, dtype in zip(mf.build_shapes(name), mf.input_dtypes(name)):
        text = ",".join(str(d) for d in [batch] + list(shape[1:]))
        args += ["--input", text if dtype == "float32" else "%s:%s" % (text, dtype)]
    return pt, args


def memory(binary, pt, inputs, extra):
    if "--optimizer" not in extra:
        extra = ["--optimizer", "adamw"] + extra
    report, err = torchcost_cli.run_json(binary, [pt] + inputs + ["--device", "cpu"] + extra)
    if err:
        return None, err
    m = report.get("training", {}).get("memory")
    if not isinstance(m, dict):
        return None, "no training.memory in the report"
    return m, None


def value(m, *path):
    node = m
    for key in path:
        node = node[key]
    return node["value"] if isinstance(node, dict) else node


def compare(results, label, m, err, ref, exact, peak_key="peak_bytes", above=PEAK_TOLERANCE):
    if m is None:
        results.check(False, label, err)
        return
    for check, path, key in exact:
        got, want = value(m, *path), ref[key]
        results.check(got == want, "%s %s" % (label, check), "expected %d, got %d (%+d)" % (want, got, got - want))
    got, want = value(m, "peak"), ref[peak_key]
    rel = (got - want) / float(want)
    results.check(-PEAK_TOLERANCE <= rel <= above, "%s peak" % label,
                  "expected %d within -5%%..+%d%%, got %d (%+.2f%%; PyTorch's peak in %s, %s)"
                  % (want, 100 * above, got, 100 * rel, ref.get("peak_phase"), ref.get("peak_op")))
    print("# %s: peak %d vs PyTorch %d (%+.2f%%)" % (label, got, want, 100 * rel), flush=True)


ACT = ("act", ("saved_bytes",), "act_bytes")
GRAD = ("grad", ("category_max", "grad"), "grad_tensor_bytes")
OPT = ("opt", ("category_max", "opt"), "opt_bytes")


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    fixtures = os.path.abspath(args.fixtures)
    os.makedirs(fixtures, exist_ok=True)
    results = torchcost_cli.Results()
    for name, batch in CASES:
        label = "%s b%d" % (name, batch)
        try:
            ref = ms.variants(name, batch, fixtures)
            pt, inputs = fixture(name, batch, fixtures)
        except Exception as e:  # noqa: BLE001  (reported, then we go on)
            results.check(False, label + " reference", "PyTorch measurement failed: %s" % e)
            continue
        run = lambda extra: memory(args.torchcost, pt, inputs, extra)  # noqa: E731
        m, err = run(["--galore", gt.cli_spec(name, svd=False)])
        compare(results, label + " galore steady", m, err, ref["galore_steady"], [ACT, GRAD, OPT])
        m, err = run(["--galore", gt.cli_spec(name)])
        compare(results, label + " galore svd", m, err, ref["galore_svd"], [OPT])
        if m is not None:
            first = ref["galore_first"]["peak_bytes"]
            results.check(first <= value(m, "peak") * (1 + PEAK_TOLERANCE), label + " galore first step",
                          "PyTorch's first step peaks at %d, above the modelled SVD step's %d"
                          % (first, value(m, "peak")))
            print("# %s galore first step: PyTorch %d, modelled worst case %d" % (label, first, value(m, "peak")))
        for key, svd in (("galore_per_layer", False), ("galore_per_layer_svd", True)):
            m, err = run(["--galore", gt.cli_spec(name, per_layer=True, svd=svd)])
            compare(results, "%s %s" % (label, key), m, err, ref[key], [ACT, OPT],
                    above=SVD_PER_LAYER_ABOVE if key.endswith("_svd") else PEAK_TOLERANCE)
            if m is not None:
                grad = value(m, "category_max", "grad")
                results.check(grad == PER_LAYER_GRAD[name], "%s %s grad" % (label, key),
                              "expected %d, got %d" % (PER_LAYER_GRAD[name], grad))
                results.check(ref[key]["grad_hook_max_bytes"] <= grad, "%s %s grad vs hooks" % (label, key),
                              "hooks saw %d bytes of .grad, more than %d" % (ref[key]["grad_hook_max_bytes"], grad))
        for opt in ("adamw", "adagrad", "rmsprop"):
            m, err = memory(args.torchcost, pt, inputs, ["--optimizer", opt, "--optimizer-impl", "foreach"])
            compare(results, "%s foreach %s" % (label, opt), m, err, ref["foreach_" + opt], [GRAD, OPT])
        m, err = run(["--zero-grad", "zeros"])
        compare(results, label + " zero_grad zeros", m, err, ref["zeros"], [GRAD, OPT])
        m, err = run(["--accumulate", str(ref["accumulate"]["accumulate"])])
        compare(results, label + " accumulate", m, err, ref["accumulate"], [GRAD, OPT])
    return results.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
