#!/usr/bin/python3
"""CLI tests of `torchcost compare` (issue 5, point 7): rows, budget, JSON, chart, errors.

Usage: /usr/bin/python3 tests/python/test_compare.py --torchcost BUILD/torchcost --fixtures DIR

On a small LLaMA built from a config (no files), with S bound and B free:
  - each row of `compare --json` equals the single analysis of that configuration
    (`torchcost --peft CONFIG --set B=1,S=... --json`): trainable params, peak,
    the breakdown at the peak, FLOPs forward, backward and per step;
  - max_batch m is the boundary the single analyses see: peak(B=m) <= budget <
    peak(B=m+1), each peak from its own run with --set B=...;
  - fits says peak <= budget at the evaluated batch;
  - the text table names every configuration and the budget; --chart writes an
    SVG with a bar per configuration and the budget line;
  - bad input: an unknown method, a bad budget, no configuration: one line, exit 2.
Last line: "N passed, M failed".
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402

MODEL = ["--model", "llama", "--config", "layers=2,hidden=128,heads=4,kv_heads=2,intermediate=344,vocab=512"]
SET_S = "S=64"
CONFIGS = ["full", "lora:r=8,targets=q_proj|v_proj", "dora:r=4", "qlora:r=4"]
BUDGET = 64 * 2 ** 20


def run(binary, args):
    p = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def single(binary, config, batch):
    args = MODEL + ["--set", "B=%d,%s" % (batch, SET_S), "--json"]
    if config != "full":
        args += ["--peft", config]
    rc, out, err = run(binary, args)
    if rc != 0:
        raise RuntimeError(err.strip())
    return json.loads(out)


def val(x):
    return x["value"] if isinstance(x, dict) else x


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    res = torchcost_cli.Results()
    tc = args.torchcost
    scratch = tempfile.TemporaryDirectory(prefix="torchcost_compare_")  # NB: removed when the test returns.
    chart = os.path.join(scratch.name, "compare.svg")
    rc, out, err = run(tc, ["compare"] + MODEL + ["--set", SET_S, "--budget", "64MiB", "--json",
                                                  "--chart", chart] + CONFIGS)
    if not res.check(rc == 0, "compare --json", err.strip()):
        print("%d passed, %d failed" % (res.passed, res.failed))
        return 1
    report = json.loads(out)
    res.check(report["schema"] == "torchcost.compare" and report["budget_bytes"] == BUDGET, "header",
              json.dumps({k: report.get(k) for k in ("schema", "budget_bytes")}))
    res.check([r["config"] for r in report["rows"]] == CONFIGS, "rows in order",
              str([r["config"] for r in report["rows"]]))
    for row in report["rows"]:
        label = row["config"]
        one = single(tc, label, 1)
        t = one["training"]
        mem = t["memory"]
        same = [("trainable", row["trainable_params"], one["totals"]["trainable_params"]),
                ("params", row["params"], one["totals"]["params"]),
                ("peak", row["peak"], val(mem["peak"])),
                ("fwd flops", row["flops"]["forward"], val(t["flops"]["forward"])),
                ("bwd flops", row["flops"]["backward"], val(t["flops"]["backward"])),
                ("step flops", row["flops"]["step"], val(t["flops"]["step"]))]
        for cat, b in row["at_peak"].items():
            same.append(("at peak " + cat, b, val(mem["at_peak"][cat])))
        for what, a, b in same:
            res.check(a == b, "%s %s == single run" % (label, what), "compare %s, single %s" % (a, b))
        res.check(sum(row["at_peak"].values()) == row["peak"], label + " breakdown sums to the peak")
        res.check(row["fits"] == (row["peak"] <= BUDGET), label + " fits", str(row["fits"]))
        m = row["max_batch"]
        if not res.check(isinstance(m, int) and m >= 1, label + " max_batch", str(m)):
            continue
        at_m = val(single(tc, label, m)["training"]["memory"]["peak"])
        above = val(single(tc, label, m + 1)["training"]["memory"]["peak"])
        res.check(at_m <= BUDGET < above, "%s max_batch %d is the boundary" % (label, m),
                  "peak(B=%d) = %d, peak(B=%d) = %d, budget %d" % (m, at_m, m + 1, above, BUDGET))
        print("# %s: trainable %d, peak at B=1 %d, max B %d" % (label, row["trainable_params"], row["peak"], m))
    # Text and chart.
    rc, text, err = run(tc, ["compare"] + MODEL + ["--set", SET_S, "--budget", "64MiB"] + CONFIGS)
    res.check(rc == 0 and all(c in text for c in CONFIGS) and "budget 64.00 MiB" in text and "Max B" in text,
              "text table", err.strip() or text[:300])
    svg = open(chart).read() if os.path.exists(chart) else ""
    res.check(svg.startswith("<svg") and all('data-config="%s"' % c for c in CONFIGS) and 'class="budget"' in svg,
              "chart", svg[:200])
    # Errors: one line, exit 2.
    for bad, want in [(["prefix:r=8"], "unknown method 'prefix'"),
                      (["--budget", "lots", "full"], "--budget"),
                      ([], "at least one configuration")]:
        rc, out, err = run(tc, ["compare"] + MODEL + ["--set", SET_S] + bad)
        lines = err.strip().splitlines()
        res.check(rc == 2 and len(lines) == 1 and want in lines[0], "error %s" % bad, "rc %d, stderr %r" % (rc, err))
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 0 if res.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
