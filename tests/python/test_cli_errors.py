#!/usr/bin/python3
"""Checks that the torchcost CLI fails cleanly on bad input.

Usage: /usr/bin/python3 tests/python/test_cli_errors.py --torchcost PATH --fixtures DIR

Every bad input must give exit code 2 (1 for --strict with ops without rules) and
exactly one non-empty stderr line "torchcost: <message>" that names the problem.
A few good runs check the other side: --version, and LeNet5 analysed from its
sidecar (DIR/lenet5.pt, written by tools/make_fixtures.py if missing).
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYTHON = "/usr/bin/python3"
TIMEOUT_S = 300

# LeNet5 as in DeepSpeed's profiler docs: 61.71 k params.
LENET5_PARAMS = (
    (6 * 1 * 5 * 5 + 6)        # conv 1->6, 5x5 = 156
    + (16 * 6 * 5 * 5 + 16)    # conv 6->16 = 2416
    + (120 * 16 * 5 * 5 + 120) # conv 16->120 = 48120
    + (84 * 120 + 84)          # linear 120->84 = 10164
    + (10 * 84 + 10)           # linear 84->10 = 850
)


class Runner:
    def __init__(self, torchcost):
        self.torchcost = torchcost
        self.passed = 0
        self.failed = 0

    def run(self, args):
        proc = subprocess.run([self.torchcost] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT_S)
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), \
            proc.stderr.decode("utf-8", "replace")

    def record(self, name, problems):
        if problems:
            self.failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)))
        else:
            self.passed += 1
            print("PASS %s" % name)

    def expect_error(self, name, args, words=(), any_words=(), pattern=None, code=2):
        """Runs torchcost; expects `code` and one stderr line with all `words`
        (case-insensitive), one of `any_words`, and a match of `pattern`."""
        problems = []
        try:
            rc, out, err = self.run(args)
        except subprocess.TimeoutExpired:
            self.record(name, ["timed out after %d s" % TIMEOUT_S])
            return
        lines = [l for l in err.splitlines() if l.strip()]
        if rc != code:
            problems.append("exit code %d, expected %d" % (rc, code))
        if len(lines) != 1:
            problems.append("%d non-empty stderr lines, expected 1: %r" % (len(lines), err[-600:]))
        line = lines[0] if lines else ""
        if lines and not line.startswith("torchcost: "):
            problems.append("stderr does not start with 'torchcost: ': %r" % line)
        for w in words:
            if w.lower() not in line.lower():
                problems.append("stderr lacks %r: %r" % (w, line))
        if any_words and not any(w.lower() in line.lower() for w in any_words):
            problems.append("stderr has none of %r: %r" % (list(any_words), line))
        if pattern and not re.search(pattern, line):
            problems.append("stderr does not match %r: %r" % (pattern, line))
        self.record(name, problems)


def ensure_lenet5(fixtures):
    """Returns DIR/lenet5.pt, generating it with tools/make_fixtures.py if missing."""
    path = os.path.join(fixtures, "lenet5.pt")
    if not os.path.exists(path):
        os.makedirs(fixtures, exist_ok=True)
        subprocess.run([PYTHON, os.path.join(REPO, "tools", "make_fixtures.py"), fixtures,
                        "--models", "lenet5"], timeout=TIMEOUT_S, check=False)
    return path if os.path.exists(path) else None


def write_bad_files(tmp):
    """Writes the unreadable models and rule files the error cases read."""
    rng = random.Random(0)  # Fixed seed: the same bytes every run.
    files = {}
    files["corrupt"] = os.path.join(tmp, "corrupt.pt")
    with open(files["corrupt"], "wb") as f:
        f.write(bytes(rng.getrandbits(8) for _ in range(4096)))
    files["empty"] = os.path.join(tmp, "empty.pt")
    open(files["empty"], "wb").close()
    files["zip"] = os.path.join(tmp, "not_torchscript.pt")
    with zipfile.ZipFile(files["zip"], "w") as z:
        z.writestr("archive/data.txt", "this zip holds no TorchScript\n")
    files["truncated_zip"] = os.path.join(tmp, "truncated.pt")
    with open(files["zip"], "rb") as src, open(files["truncated_zip"], "wb") as dst:
        dst.write(src.read()[:40])
    files["rules"] = os.path.join(tmp, "rules")
    os.makedirs(files["rules"])
    with open(os.path.join(files["rules"], "bad.yaml"), "w") as f:
        f.write("ops:\n  - name: aten::relu\n    flops: {fwd: [unclosed\n")
    files["dir_model"] = os.path.join(tmp, "dir.pt")
    os.makedirs(files["dir_model"])
    return files


def strict_case(r, tmp):
    """--strict exits 1 on a model with an op no rule covers, if such an op can be found."""
    model = os.path.join(tmp, "exotic.pt")
    script = (
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.special.i1e(torch.special.erfcx(x)).cummax(1)[0]\n"
        "torch.jit.trace(M(), torch.rand(2, 3)).save(%r)\n" % model)
    if subprocess.run([PYTHON, "-c", script], timeout=TIMEOUT_S, stdout=subprocess.DEVNULL,
                      stderr=subprocess.DEVNULL).returncode != 0:
        print("SKIP strict_without_rules: could not build a model with torch")
        return
    rc, out, err = r.run([model, "--input", "2,3", "--json"])
    try:
        unknown = json.loads(out)["unknown_ops"] if rc == 0 else None
    except ValueError:
        unknown = None
    if not unknown:
        print("SKIP strict_without_rules: every op of the model has a rule (rc %d)" % rc)
        return
    r.expect_error("strict_without_rules", [model, "--input", "2,3", "--strict"],
                   words=[unknown[0]["op"]], code=1)


def good_runs(r, lenet5):
    rc, out, err = r.run(["--version"])
    r.record("version", [] if rc == 0 and out.strip() == "torchcost 0.1.0"
             else ["rc %d, stdout %r" % (rc, out)])
    if lenet5 is None:
        r.record("lenet5_json", ["no lenet5.pt fixture (tools/make_fixtures.py failed?)"])
        return
    rc, out, err = r.run([lenet5, "--json"])  # Inputs from lenet5.meta.json.
    problems = []
    if rc != 0:
        problems.append("exit code %d: %r" % (rc, err[-400:]))
    else:
        try:
            doc = json.loads(out)
            if doc.get("schema") != "torchcost.report" or doc.get("version") != 1:
                problems.append("schema %r version %r" % (doc.get("schema"), doc.get("version")))
            if doc.get("totals", {}).get("params") != LENET5_PARAMS:
                problems.append("params %r, expected %d" % (doc.get("totals", {}).get("params"),
                                                           LENET5_PARAMS))
        except ValueError as e:
            problems.append("stdout is not JSON: %s" % e)
    r.record("lenet5_json", problems)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    r = Runner(args.torchcost)
    lenet5 = ensure_lenet5(args.fixtures)
    scratch = tempfile.TemporaryDirectory(prefix="torchcost_cli_")  # NB: removed when the test returns.
    tmp = scratch.name
    try:
        files = write_bad_files(tmp)
        good_runs(r, lenet5)

        # Unreadable models.
        missing = os.path.join(tmp, "missing.pt")
        r.expect_error("missing_model", [missing, "--input", "1,1,32,32"],
                       words=["missing.pt"], any_words=["no such file", "cannot read"])
        r.expect_error("directory_model", [files["dir_model"], "--input", "1,1,32,32"],
                       words=["dir.pt"])
        r.expect_error("corrupt_model", [files["corrupt"], "--input", "1,1,32,32"],
                       words=["corrupt.pt"])
        if lenet5 is not None:
            # A readable archive whose module attributes file (tools/export/module_attrs.py) is malformed.
            bad_attrs = os.path.join(tmp, "bad_attrs.pt")
            shutil.copy(lenet5, bad_attrs)
            with zipfile.ZipFile(bad_attrs) as z:
                root = z.namelist()[0].split("/")[0]
            with zipfile.ZipFile(bad_attrs, "a") as z:
                z.writestr(root + "/extra/torchcost_modules.json",
                           '{"format": "torchcost.modules", "version": 1, "modules": {"conv1": {"attrs": {"p": [1]}}}}')
            r.expect_error("bad_module_attrs", [bad_attrs, "--input", "1,1,32,32"],
                           words=["bad_attrs.pt", "torchcost_modules.json", "conv1", "'p'"])
        r.expect_error("empty_model", [files["empty"], "--input", "1,1,32,32"],
                       words=["empty.pt"])
        r.expect_error("zip_not_torchscript", [files["zip"], "--input", "1,1,32,32"],
                       words=["not_torchscript.pt"])
        r.expect_error("truncated_zip", [files["truncated_zip"], "--input", "1,1,32,32"],
                       words=["truncated.pt"])

        # Bad usage.
        r.expect_error("no_arguments", [], any_words=["model", "required"])
        r.expect_error("unknown_option", [files["corrupt"], "--frobnicate"],
                       words=["frobnicate"])
        r.expect_error("non_integer_depth", [files["corrupt"], "--depth", "deep"],
                       words=["--depth"])
        r.expect_error("bad_dtype", [files["corrupt"], "--input", "1,1,32,32", "--dtype",
                                     "float99"], words=["float99"])
        r.expect_error("non_numeric_dim", [files["corrupt"], "--input", "B,x?,3"],
                       words=["x?"])
        r.expect_error("empty_dim", [files["corrupt"], "--input", "1,,32,32"],
                       words=["--input"])
        r.expect_error("set_without_value", [files["corrupt"], "--input", "B,1,32,32",
                                             "--set", "B"], words=["--set", "SYM=VAL"])
        r.expect_error("set_non_integer", [files["corrupt"], "--input", "B,1,32,32",
                                           "--set", "B=1.5"], words=["not an integer"])
        r.expect_error("set_unknown_symbol", [files["corrupt"], "--input", "B,1,32,32",
                                              "--set", "Q=3"],
                       words=["unknown symbol 'Q'", "symbols: B"])

        # Limits that hold: absurd sizes end in one line and exit 2, never a
        # hang, a crash or a report without its memory figure.
        empty_graph = os.path.join(tmp, "empty.json")
        with open(empty_graph, "w") as f:
            json.dump({"format": "torchcost.graph", "version": 1, "model": "Empty",
                       "inputs": [{"name": "x", "shape": [1, 4], "dtype": "float32"}],
                       "nodes": [], "outputs": []}, f)
        r.expect_error("empty_graph", [empty_graph, "--input", "1,4"], words=["empty.json", "no nodes"])
        r.expect_error("absurd_layers", ["--model", "gpt2", "--config", "layers=9223372036854775807"],
                       words=["layers=9223372036854775807", "limit"])
        r.expect_error("param_bytes_overflow", ["--model", "llama", "--config",
                                                "hidden=1073741824,heads=1,kv_heads=1"],
                       words=["q_proj.weight", "overflows"])
        r.expect_error("memory_bytes_overflow", ["--model", "gpt2", "--set", "B=4611686018427387904,S=8"],
                       words=["memory bytes overflow"])
        # The collectives' network needs a GPU to time them on; a negative bandwidth is no bandwidth.
        r.expect_error("network_without_gpu", ["--model", "gpt2", "--shard", "ddp", "--world", "16",
                                               "--network", "50"], words=["--network", "--gpu"])
        r.expect_error("node_gpus_zero", ["--model", "gpt2", "--gpu", "h100", "--node-gpus", "0"],
                       words=["--node-gpus"])
        r.expect_error("network_negative", ["--model", "gpt2", "--gpu", "h100", "--network", "-5"],
                       words=["--network", "bandwidth >= 0"])
        # Mixture of experts: expert parallelism, capacity, and symbols in --config.
        moe = "layers=1,hidden=64,heads=4,kv_heads=4,intermediate=32,vocab=100,experts=8,top_k=2"
        r.expect_error("moe_ep_not_dividing", ["--model", "llama", "--config", moe + ",ep=3"],
                       words=["ep=3 must divide experts=8"])
        r.expect_error("moe_ep_zero3", ["--model", "llama", "--config", moe + ",ep=2", "--shard", "zero3",
                                        "--world", "4"], words=["--shard zero3", "expert parallelism"])
        r.expect_error("moe_pad_without_capacity", ["--model", "llama", "--config", moe + ",pad_to_capacity=true"],
                       words=["pad_to_capacity", "capacity_factor"])
        r.expect_error("config_symbol", ["--model", "llama", "--config", "hidden=H"],
                       words=["hidden=H", "'H' is not an integer", "symbols"])
        r.expect_error("cache_dtype_value", ["--model", "llama", "--mode", "generate", "--cache-dtype", "int3"],
                       words=["--cache-dtype 'int3'", "fp8"])
        r.expect_error("cache_dtype_without_generate", ["--model", "llama", "--cache-dtype", "fp8"],
                       words=["--cache-dtype fp8", "--mode generate"])
        r.expect_error("arch_symbol_not_divisible", ["--model", "llama", "--config", "layers=2,hidden=H,heads=4",
                                                     "--arch-symbol", "H=1:64"],
                       words=["--arch-symbol H=1:64:1", "the sample H=1", "not divisible"])
        r.expect_error("arch_symbol_bad_range", ["--model", "llama", "--config", "hidden=H*64,heads=H",
                                                 "--arch-symbol", "H=64:8"], words=["--arch-symbol 'H=64:8'"])
        r.expect_error("arch_symbol_off_samples", ["--model", "llama", "--config", "layers=1,hidden=H*64,heads=H,kv_heads=H",
                                                   "--arch-symbol", "H=2:8:2", "--set", "H=3"],
                       words=["--set H=3", "H=2:8:2"])
        r.expect_error("arch_symbol_compare", ["compare", "--model", "llama", "--config", "hidden=H*64,heads=H",
                                               "--arch-symbol", "H=1:16", "full"], words=["compare", "--arch-symbol"])
        r.expect_error("compare_generate_row", ["compare", "--model", "llama", "--mode", "generate", "lora:r=8"],
                       words=["compare lora:r=8", "not a serving configuration", "int4"])
        r.expect_error("compare_generate_cache", ["compare", "--model", "llama", "--mode", "generate", "int8:cache=int3"],
                       words=["compare int8:cache=int3", "cache 'int3'", "fp8"])
        r.expect_error("compare_generate_symbol", ["compare", "--model", "llama", "--mode", "generate",
                                                   "--batch-symbol", "H", "full"], words=["--batch-symbol H", "B, S or T"])
        r.expect_error("compare_generate_sweep_symbol", ["compare", "--model", "llama", "--mode", "generate",
                                                         "--sweep", "H=1,2", "full"],
                       words=["--sweep H=1,2", "B, S, T"])
        r.expect_error("compare_training_sweep", ["compare", "--model", "llama", "--sweep", "B=1,2", "full"],
                       words=["compare", "--sweep", "--mode generate"])

        if lenet5 is None:
            r.record("lenet5_cases", ["no lenet5.pt fixture (tools/make_fixtures.py failed?)"])
        else:
            r.expect_error("wrong_rank_input", [lenet5, "--input", "1,32,32"],
                           any_words=["rank", "shape", "dim", "input"])
            r.expect_error("too_many_inputs", [lenet5, "--input", "1,1,32,32", "--input",
                                               "1,1,32,32"], any_words=["input"])
            r.expect_error("malformed_rule_file", [lenet5, "--rules", files["rules"]],
                           words=["bad.yaml"], pattern=r"bad\.yaml:\d+:\d+")
            r.expect_error("rules_not_a_directory", [lenet5, "--rules",
                                                     os.path.join(tmp, "nowhere")],
                           words=["nowhere"])
            no_sidecar = os.path.join(tmp, "lenet5_copy.pt")
            shutil.copyfile(lenet5, no_sidecar)
            r.expect_error("no_input_no_sidecar", [no_sidecar], words=["--input"])
            with open(os.path.join(tmp, "lenet5_bad.meta.json"), "w") as f:
                f.write("{\"input_shapes\": [[1, \"x\"]]}")
            shutil.copyfile(lenet5, os.path.join(tmp, "lenet5_bad.pt"))
            r.expect_error("bad_sidecar", [os.path.join(tmp, "lenet5_bad.pt")],
                           words=["lenet5_bad.meta.json"])
            # Fine-tuning methods and compare.
            r.expect_error("peft_unknown_method", [lenet5, "--peft", "prefix:r=8"],
                           words=["--peft", "unknown method 'prefix'"])
            r.expect_error("peft_bad_rank", [lenet5, "--peft", "lora:r=0"], words=["r=0 must be a positive integer"])
            r.expect_error("peft_no_target", [lenet5, "--peft", "lora:targets=q_proj"],
                           words=["no Linear or Conv1D layer", "q_proj"])
            r.expect_error("state_dtype_int", [lenet5, "--state-dtype", "int64"],
                           words=["--state-dtype", "not a float dtype"])
            r.expect_error("state_dtype_adafactor", [lenet5, "--optimizer", "adafactor", "--state-dtype", "fp32"],
                           words=["--state-dtype", "adafactor"])
            r.expect_error("paged_lion", [lenet5, "--optimizer", "lion", "--paged"], words=["--paged", "lion"])
            r.expect_error("lora_and_peft", [lenet5, "--lora", "r=2", "--peft", "dora"], words=["--lora", "--peft"])
            r.expect_error("lora_bad_regex", [lenet5, "--lora", "targets=("], words=["not a valid regular expression"])
            r.expect_error("compare_no_config", ["compare", lenet5], words=["at least one configuration"])
            r.expect_error("compare_bad_budget", ["compare", lenet5, "--budget", "12 apples", "full"],
                           words=["--budget", "unknown unit"])
            r.expect_error("bad_budget", [lenet5, "--budget", "12 apples"], words=["--budget", "unknown unit"])
            r.expect_error("generate_bad_budget", ["--model", "gpt2", "--mode", "generate", "--budget", "0"],
                           words=["--budget", "not a memory size"])
            r.expect_error("compare_unknown_method", ["compare", lenet5, "full", "ia3"],
                           words=["unknown method 'ia3'"])
            r.expect_error("galore_bad_spec", [lenet5, "--galore", "r=0"], words=["--galore", "r=0"])
            r.expect_error("galore_no_target", [lenet5, "--galore", "r=4,targets=attn"],
                           words=["galore", "targets 'attn'", "match no"])
            r.expect_error("galore_not_adamw", [lenet5, "--galore", "r=4", "--optimizer", "sgd"],
                           words=["--galore", "adamw", "'sgd'"])
            r.expect_error("galore_per_layer_accumulate", [lenet5, "--galore", "per_layer=true",
                                                           "--accumulate", "2"],
                           words=["--galore", "per_layer", "--accumulate"])
            r.expect_error("loss_unknown", [lenet5, "--loss", "hinge"], words=["--loss", "unknown loss 'hinge'"])
            r.expect_error("loss_bad_chunks", [lenet5, "--loss", "causal_lm:chunks=0"], words=["--loss", "chunks=0"])
            r.expect_error("loss_causal_lm_rank", [lenet5, "--loss", "causal_lm"],
                           words=["--loss causal_lm", "needs logits [B, S, V]"])
            r.expect_error("loss_none_not_scalar", [lenet5, "--loss", "none"], words=["loss none", "not a 0-dim loss"])
            strict_case(r, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (r.passed, r.failed))
    return 0 if r.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
