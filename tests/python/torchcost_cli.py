"""Runs the torchcost binary for the oracle tests and reads its JSON report."""

import json
import os
import subprocess


def oracle_torch_version():
    """The --torch-version of the torch the oracle measures ("1.13" for Debian's 1.13, else "2")."""
    import torch

    return "1.13" if torch.__version__.startswith("1.") else "2"


def oracle_has_avx512():
    """Whether the oracle's torch runs its AVX-512 kernels on this CPU (torch.__config__.show()'s CPU capability).

    NB: rules/conv.yaml's CPU scratch follows oneDNN's AVX-512 layouts (channels padded to 16); its AVX2
    kernels pad to 8, which changes the scratch of convolutions whose channels are not a multiple of 16.
    """
    import torch

    return "CPU capability usage: AVX512" in torch.__config__.show()


def run_json(binary, args, timeout=180, label=None):
    """Runs `binary args... --json`; returns (report dict, None) or (None, one-line error).

    `label` names the run in messages (default: the arguments, with the model's
    file name only). NB: unless the arguments name one, the analysis models the
    torch the oracle measures (--torch-version, oracle_torch_version()).
    """
    cmd = [binary] + list(args)
    if "--torch-version" not in cmd:
        cmd += ["--torch-version", oracle_torch_version()]
    cmd += ["--json"]
    if label is None:
        label = " ".join([os.path.basename(args[0])] + list(args[1:])) if args else ""
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "`torchcost %s` timed out after %ds" % (label, timeout)
    except OSError as e:
        return None, "`torchcost %s` could not run: %s" % (label, e)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return None, "`torchcost %s` exited %d: %s" % (
            label, proc.returncode, lines[0] if lines else "(no stderr)")
    try:
        report = json.loads(proc.stdout)
    except ValueError as e:
        return None, "`torchcost %s` printed no JSON: %s" % (label, e)
    if not isinstance(report, dict) or report.get("schema") != "torchcost.report" \
            or report.get("version") != 1:
        return None, "`torchcost %s`: not a torchcost.report version 1" % label
    return report, None


# What the recomputation tests (checkpointing, selective) compare: (name, path under
# training.memory, measure_step's key, exact?); the peak is compared within a tolerance.
RECOMPUTE_CHECKS = [
    ("act", ("saved_bytes",), "act_bytes", True),
    ("grad", ("category_max", "grad"), "grad_tensor_bytes", True),
    ("opt", ("category_max", "opt"), "opt_bytes", True),
    ("peak", ("peak",), "peak_bytes", False),
]


def memory_value(training, path):
    """Returns the entry at `path` under a report's training.memory: a symbolic entry's "value"."""
    node = training["memory"]
    for key in path:
        node = node[key]
    return node["value"] if isinstance(node, dict) else node


class Results:
    """Counts checks; prints one line per failed check ("FAIL <label>: <detail>", or "FAIL <label>")."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, label, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s%s" % (label, ": " + detail if detail else ""), flush=True)
        return ok

    def summary(self):
        """Prints the last line, "N passed, M failed"; returns the exit status."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 else 1
