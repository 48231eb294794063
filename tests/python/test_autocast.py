#!/usr/bin/python3
"""Oracle tests of mixed precision: the rules' autocast policies and torchcost's
`--autocast bf16` step against PyTorch's own (CPU, torch 1.13).

Usage (Debian's system python3):

    /usr/bin/python3 tests/python/test_autocast.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--models gpt_tiny,resnet18]

1. Policies. tools/autocast_probe.py runs each probed op under
   torch.autocast("cpu", dtype=torch.bfloat16) and reads the dispatcher's
   AutocastCPU / AutocastCUDA registrations. For every probed op, the
   `autocast:` of its rule in rules/*.yaml (the case named after "|", if any)
   must give the measured CPU policy, and a CUDA policy other than none exactly
   when PyTorch registers a CUDA autocast kernel for it.

2. The step. tools/measure_step.py --autocast bf16 measures one training step
   whose forward runs under torch.autocast("cpu", dtype=torch.bfloat16) (loss
   = out.sum() in the output's dtype), cached in FIXTURES/*_autocast-bf16.step.json.
   torchcost runs as

       torchcost FIXTURE.pt --input SHAPE --device cpu --autocast bf16 --optimizer OPT --json

   on the same traces as test_training.py (gpt_tiny: its train trace at [2, 64];
   resnet18: its eval traces at batch 1 and 8). Checks: training.memory.saved_bytes
   == ACT, category_max.{param,grad,opt} exact, peak within 5%, for adam and sgd;
   the inference peak within 5%; and the forward FLOPs equal to the float32
   analysis's (casts cost no FLOPs).

Prints one line per failed check and, last, "N passed, M failed".
"""

import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oracle_models  # noqa: E402,F401  (puts tools/ on sys.path)
import test_training as tt  # noqa: E402
import torchcost_cli  # noqa: E402

import autocast_probe  # noqa: E402
import make_fixtures as mf  # noqa: E402
import measure_step as ms  # noqa: E402

REPO = oracle_models.REPO
MODELS = {"gpt_tiny": [2], "resnet18": [1, 8]}
OPTIMIZERS = ("adam", "sgd")
CHECKS = [c for c in tt.TRAIN_CHECKS if c[0] != "buffer"]


def rule_policies():
    """{op name: [(when text or None, {"cuda": policy, "cpu": policy, "only": [...]})]} from rules/*.yaml."""
    import yaml

    def spec(value):
        if value is None:
            return None
        if isinstance(value, str):
            return {"cuda": value, "cpu": value, "only": []}
        return {"cuda": value.get("cuda", "none"), "cpu": value.get("cpu", "none"),
                "only": value.get("only", [])}

    out = {}
    for path in sorted(glob.glob(os.path.join(REPO, "rules", "*.yaml"))):
        with open(path) as f:
            doc = yaml.safe_load(f)
        for rule in doc.get("rules") or []:
            ops = rule["op"] if isinstance(rule["op"], list) else [rule["op"]]
            top = spec(rule.get("autocast"))
            variants = [(None, top)]
            for case in rule.get("cases") or []:
                own = spec(case.get("autocast"))
                variants.append((str(case.get("when")), own if own is not None else top))
            for op in ops:
                out[op] = variants
    return out


def policy_of(variants, op, when, device):
    """The policy of one device for `op` (in the case whose `when` is `when`, else the rule's)."""
    chosen = variants[0][1]
    if when is not None:
        match = [s for w, s in variants[1:] if w == when]
        if not match:
            return "no case 'when: %s'" % when
        chosen = match[0]
    if chosen is None or (chosen["only"] and op not in chosen["only"]):
        return "none"
    return chosen[device]


def check_policies(results):
    probed = autocast_probe.probe()
    rules = rule_policies()
    for key, measured in sorted(probed.items()):
        op, _, when = key.partition("|")
        variants = rules.get(op)
        if variants is None:
            results.check(measured["cpu"] == "none" and not measured["cuda"], "policy %s" % key,
                          "no rule for %s, but PyTorch autocasts it (cpu %s, cuda %s)"
                          % (op, measured["cpu"], measured["cuda"]))
            continue
        cpu = policy_of(variants, op, when or None, "cpu")
        results.check(cpu == measured["cpu"], "policy %s cpu" % key,
                      "the rule says %s, torch.autocast('cpu', bfloat16) does %s"
                      % (cpu, measured["cpu"]))
        cuda = policy_of(variants, op, when or None, "cuda")
        results.check((cuda != "none") == measured["cuda"], "policy %s cuda" % key,
                      "the rule says %s, PyTorch %s an AutocastCUDA kernel for %s"
                      % (cuda, "registers" if measured["cuda"] else "has no", measured["dispatch"]))
    print("# policies: %d ops probed" % len(probed), flush=True)


def run(binary, pt, inputs, extra):
    args = [pt]
    for shape in inputs:
        args += ["--input", shape]
    args += ["--device", "cpu"] + extra
    report, err = torchcost_cli.run_json(binary, args, tt.TORCHCOST_TIMEOUT_S)
    if err:
        return None, err
    return report.get("training"), None


# NB: oneDNN's bfloat16 convolutions have AVX-512 kernels (avx512_core_bf16); on a CPU without AVX-512
# (torchcost_cli.oracle_has_avx512) they run other kernels, with other scratch, than rules/conv.yaml follows.
# Measured on an AVX2-only AMD EPYC, resnet18: inference +5.6% (B=1) and -15.9% (B=8), SGD -5.3% (B=8).
AVX512_KERNEL_MODELS = ("resnet18",)
AVX2_PEAK_TOLERANCE = 0.20


def check_step(results, binary, fixtures, name, batch):
    label = "%s b%d autocast" % (name, batch)
    loose = name in AVX512_KERNEL_MODELS and not torchcost_cli.oracle_has_avx512()
    tol = AVX2_PEAK_TOLERANCE if loose else tt.PEAK_TOLERANCE
    try:
        refs = ms.measure_all(name, batch, fixtures, autocast="bf16")
        pts = {mode: tt.fixture_for(name, batch, fixtures, mode) for mode in ms.MODES}
    except Exception as e:  # noqa: BLE001  (reported, then we go on)
        results.check(False, label + " reference", "PyTorch measurement failed: " + tt._first_line(e))
        return
    r = refs[("adam", "train")]
    print("# %s: param %d grad %d opt(adam) %d act %d peak(adam) %d (%s %s) infer peak %d"
          % (label, r["param_bytes"], r["grad_bytes"], r["opt_bytes"], r["act_bytes"],
             r["peak_bytes"], r["peak_phase"], r["peak_op"], refs[("adam", "infer")]["peak_bytes"]),
          flush=True)
    pt, inputs = pts["train"]
    for opt in OPTIMIZERS:
        training, err = run(binary, pt, inputs, ["--autocast", "bf16", "--optimizer", opt])
        tt.compare(results, "%s %s" % (label, opt), training, err, CHECKS, refs[(opt, "train")], tol)
        if opt == OPTIMIZERS[0] and training is not None:
            plain, err = run(binary, pt, inputs, ["--optimizer", opt])
            if plain is None:
                results.check(False, label + " fp32 run", err)
            else:
                want = plain["flops"]["forward"]["value"]
                got = training["flops"]["forward"]["value"]
                results.check(got == want, label + " forward flops",
                              "expected the float32 forward's %s, got %s" % (want, got))
            results.check(training.get("precision") == "bf16-mixed", label + " precision",
                          "expected \"bf16-mixed\", got %r" % training.get("precision"))
    pt, inputs = pts["infer"]
    training, err = run(binary, pt, inputs, ["--autocast", "bf16", "--mode", "infer"])
    tt.compare(results, label + " infer", training, err, [("peak", ("peak",), "peak_bytes", False)],
               refs[("adam", "infer")], tol)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True, help="path to the torchcost binary")
    parser.add_argument("--fixtures", required=True, help="fixture directory (created if missing)")
    parser.add_argument("--models", default=",".join(MODELS), help="comma-separated subset")
    args = parser.parse_args(argv)
    fixtures = os.path.abspath(args.fixtures)
    os.makedirs(fixtures, exist_ok=True)
    results = torchcost_cli.Results()
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if not results.check(not unknown, "- arguments", "unknown models: %s" % ", ".join(unknown)) or \
            not results.check(os.access(args.torchcost, os.X_OK), "- torchcost binary",
                              "%s is not an executable file" % args.torchcost):
        print("%d passed, %d failed" % (results.passed, results.failed))
        return 1
    try:
        check_policies(results)
    except Exception as e:  # noqa: BLE001
        results.check(False, "policies", tt._first_line(e))
    for name in names:
        for batch in MODELS[name]:
            check_step(results, args.torchcost, fixtures, name, batch)
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 0 if results.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
