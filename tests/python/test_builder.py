#!/usr/bin/python3
"""Checks `torchcost --model FAMILY --config ...` (graphs from the C++ builder)
against the torch.jit.trace of the same architecture written in plain torch.

Usage: /usr/bin/python3 tests/python/test_builder.py --torchcost PATH --fixtures DIR

For each reference (tools/make_fixtures.py's gpt2_tiny, torchcost/reference/hf_reference.py's
llama_hf_tiny (Hugging Face's LlamaForCausalLM, GQA) and llama_hf_tiny_tied,
torchvision's resnet18 and vit_b_16) the builder's config is read off the
reference module itself, both are analysed with --device cpu --optimizer adam
at the trace's input shape (--set B=..,S=..), and params, forward FLOPs,
backward FLOPs, saved bytes and the training peak must be IDENTICAL; then
again with the reference in bfloat16 (model.to(torch.bfloat16), a bf16 image
for the vision models) against the builder's dtype=bf16. Presets
are checked against closed-form parameter counts, torchvision ResNets with
other kernel sizes per stage and the other block against the builder's
block= and kernels=, and bad --model / --config
usage must be one stderr line with exit code 2.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tools"))
sys.path.insert(0, os.path.join(REPO, "python"))

import make_fixtures  # noqa: E402
from torchcost.reference import hf_reference  # noqa: E402
from torchcost_cli import run_json  # noqa: E402

COMMON = ["--device", "cpu", "--optimizer", "adam"]


def gpt2_config(m):
    """The builder config of make_fixtures.GPT2, read off the module."""
    attn = m.h[0].attn
    return ("layers=%d,hidden=%d,heads=%d,vocab=%d,context=%d,dropout=%r" % (
        len(m.h), m.wte.embedding_dim, attn.n_head, m.wte.num_embeddings, m.wpe.num_embeddings,
        m.drop.p))


def llama_config(m):
    """The builder config of hf_reference.Llama, read off the module."""
    return m.config()


def resnet_config(m):
    """torchvision's ResNet: depth from the block type and the third stage's length."""
    if type(m.layer1[0]).__name__ == "BasicBlock":
        depth = 18 if len(m.layer3) == 2 else 34
    else:
        depth = {6: 50, 23: 101, 36: 152}[len(m.layer3)]
    return "depth=%d,classes=%d,image_size=224" % (depth, m.fc.out_features)


def vit_config(m):
    return "image_size=%d,patch=%d,layers=%d,hidden=%d,heads=%d,mlp=%d,classes=%d,dropout=%r" % (
        m.image_size, m.patch_size, len(m.encoder.layers), m.hidden_dim,
        m.encoder.layers[0].self_attention.num_heads, m.mlp_dim, m.heads.head.out_features, m.dropout)


# (reference fixture, family, config from the module, --set for the trace's input)
CASES = [
    ("gpt2_tiny", "gpt2", gpt2_config, ["--set", "B=2", "--set", "S=64"]),
    ("llama_hf_tiny", "llama", llama_config, ["--set", "B=2", "--set", "S=64"]),
    ("llama_hf_tiny_tied", "llama", llama_config, ["--set", "B=2", "--set", "S=64"]),
    ("resnet18", "resnet", resnet_config, ["--set", "B=1"]),
    ("vit_b_16", "vit", vit_config, ["--set", "B=1"]),
]


def quantities(report):
    t = report["training"]
    return {
        "params": report["totals"]["params"],
        "forward FLOPs": t["flops"]["forward"]["value"],
        "backward FLOPs": t["flops"]["backward"]["value"],
        "saved bytes": t["memory"]["saved_bytes"]["value"],
        "peak": t["memory"]["peak"]["value"],
    }


class Runner:
    """Counts checks by name; prints PASS or FAIL for each."""

    def __init__(self, torchcost):
        self.torchcost = torchcost
        self.passed = 0
        self.failed = 0

    def record(self, name, problems):
        if problems:
            self.failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)))
        else:
            self.passed += 1
            print("PASS %s" % name)

    def expect_error(self, name, args, words):
        proc = subprocess.run([self.torchcost] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
        problems = []
        if proc.returncode != 2:
            problems.append("exit %d, expected 2" % proc.returncode)
        lines = proc.stderr.strip().splitlines()
        if len(lines) != 1:
            problems.append("%d stderr lines, expected 1: %r" % (len(lines), proc.stderr[:300]))
        elif not all(w.lower() in lines[0].lower() for w in words):
            problems.append("stderr %r lacks %r" % (lines[0], words))
        self.record(name, problems)

    def summary(self):
        """Prints the last line, "N passed, M failed"; returns the exit status."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 else 1


def runner_from_argv(argv, doc):
    """Parses a builder test's --torchcost and --fixtures (the folder is created); returns (Runner, fixtures).

    `doc` is the test's module docstring, whose first line describes it.
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    os.makedirs(args.fixtures, exist_ok=True)
    return Runner(args.torchcost), args.fixtures


def trace_reference(fixtures, name, dtype):
    """Traces the reference `name` in `dtype` (model.to(dtype), floating inputs too) into
    FIXTURES/<name>_<dtype>.pt; returns (path, module, --input flags)."""
    import warnings

    import torch

    if name in hf_reference.MODELS:
        module = hf_reference.build(name, dtype)
        inputs = [hf_reference.example_input()]
    else:
        module, shapes = make_fixtures.build_model(name)
        module = module.to(dtype)
        inputs = [x.to(dtype) if x.is_floating_point() else x
                  for x in make_fixtures.example_inputs(name, shapes)]
    short = str(dtype).replace("torch.", "")
    pt = os.path.join(fixtures, "%s_%s.pt" % (name, short))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.jit.save(torch.jit.trace(module, tuple(inputs), check_trace=False), pt)
    flags = []
    for x in inputs:
        flags += ["--input", ",".join(str(d) for d in x.shape) + ":" + str(x.dtype).replace("torch.", "")]
    return pt, module, flags


def compare_with_trace(r, fixtures, name, family, config_of, sets, dtype=None):
    """Builder vs trace of `name`; dtype None: the fixture as make_fixtures writes it
    (float32), else the reference traced in that dtype and the builder's dtype=."""
    try:
        if dtype is None and name not in hf_reference.MODELS:
            pt = make_fixtures.make_fixture(name, fixtures)
            module, _ = make_fixtures.build_model(name)
            flags = []
        else:
            import torch

            pt, module, flags = trace_reference(fixtures, name, dtype or torch.float32)
        config = config_of(module)
        if dtype is not None:
            config += ",dtype=" + {"torch.bfloat16": "bf16", "torch.float16": "fp16"}.get(str(dtype), "fp32")
    except Exception as e:  # A missing torchvision or a failed trace: report, go on.
        r.record("%s_vs_trace" % family, ["cannot build the reference %s: %s" % (name, e)])
        return
    traced, err = run_json(r.torchcost, [pt] + flags + COMMON)
    if err:
        r.record("%s_vs_trace" % family, [err])
        return
    # NB: the trace is analysed with out.sum(); the families default to their task's loss, so ask for sum.
    # attn=eager: torch 1.13 traces have no scaled_dot_product_attention (the families default to sdpa).
    config += "" if family == "resnet" else ",attn=eager"
    built, err = run_json(r.torchcost, ["--model", family, "--config", config, "--loss", "sum"] + sets + COMMON)
    if err:
        r.record("%s_vs_trace" % family, [err])
        return
    problems = []
    for doc, who in ((traced, "trace"), (built, "builder")):
        if doc["unknown_ops"]:
            problems.append("%s has ops without rules: %s" % (who, [u["op"] for u in doc["unknown_ops"]]))
    a, b = quantities(traced), quantities(built)
    for key in a:
        if a[key] != b[key]:
            problems.append("%s: trace %s, builder %s" % (key, a[key], b[key]))
    r.record("%s_vs_trace (%s; %s)" % (family, name, config), problems)



def resnet_variant(block, blocks, kernels, image_size=64, classes=10):
    """torchvision's ResNet(block, blocks) with each stage's 3x3 convolutions made k x k
    (padding k // 2, as the builder's kernels= does); assigning an existing child keeps
    the registration order, so parameters come in torchvision's order."""
    import torch.nn as nn
    from torchvision.models.resnet import BasicBlock, Bottleneck, ResNet

    m = ResNet({"basic": BasicBlock, "bottleneck": Bottleneck}[block], blocks, num_classes=classes)
    for stage, k in enumerate(kernels):
        for blk in getattr(m, "layer%d" % (stage + 1)):
            names = ["conv1", "conv2"] if block == "basic" else ["conv2"]
            for name in names:
                old = getattr(blk, name)
                setattr(blk, name, nn.Conv2d(old.in_channels, old.out_channels, k, stride=old.stride,
                                             padding=k // 2, bias=False))
    config = "block=%s,blocks=%s,kernels=%s,classes=%d,image_size=%d" % (
        block, ":".join(map(str, blocks)), ":".join(map(str, kernels)), classes, image_size)
    return m.eval(), config  # Traced in eval mode, as make_fixtures traces resnet18.


def compare_resnet_variant(r, fixtures, block, blocks, kernels):
    """The builder's resnet with block=, blocks= and kernels= against the trace of resnet_variant."""
    import warnings

    import torch

    module, config = resnet_variant(block, blocks, kernels)
    pt = os.path.join(fixtures, "resnet_%s_%s_k%s.pt" % (block, "".join(map(str, blocks)),
                                                         "".join(map(str, kernels))))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.jit.save(torch.jit.trace(module, torch.randn(2, 3, 64, 64), check_trace=False), pt)
    traced, err = run_json(r.torchcost, [pt, "--input", "2,3,64,64"] + COMMON)
    built, err2 = run_json(r.torchcost, ["--model", "resnet", "--config", config, "--loss", "sum",
                                         "--set", "B=2"] + COMMON)
    os.remove(pt)
    if err or err2:
        r.record("resnet_variant_vs_trace (%s)" % config, [err or err2])
        return
    a, b = quantities(traced), quantities(built)
    r.record("resnet_variant_vs_trace (%s)" % config,
             ["%s: trace %s, builder %s" % (k, a[k], b[k]) for k in a if a[k] != b[k]])


def check_params(r, name, args, expected):
    doc, err = run_json(r.torchcost, args)
    if err:
        r.record(name, [err])
        return
    problems = []
    if doc["totals"]["params"] != expected:
        problems.append("params %d, expected %d" % (doc["totals"]["params"], expected))
    if doc["unknown_ops"]:
        problems.append("ops without rules: %s" % [u["op"] for u in doc["unknown_ops"]])
    if doc["symbols"] != ["B", "S"]:
        problems.append("symbols %r, expected B and S" % doc["symbols"])
    r.record(name, problems)


def gpt2_params(V, h, L, n_ctx):
    """wte V*h + wpe n_ctx*h + per layer 12h^2 + 13h + final LayerNorm 2h (tied head)."""
    return V * h + n_ctx * h + L * (12 * h * h + 13 * h) + 2 * h


def llama_params(V, h, L, heads, kv_heads, inter):
    """embed V*h + per layer (q, o: h^2; k, v: h*kv_heads*hd; SwiGLU 3*h*I; norms 2h) + norm h + head V*h."""
    kv = kv_heads * (h // heads)
    return V * h + L * (2 * h * h + 2 * h * kv + 3 * h * inter + 2 * h) + h + V * h


def check_backend_diagnostic(r, fixtures):
    """--attention-backend that acts on no node is a warning naming its value:
    with attn=eager and attn=flash (flash-attn's own kernel), and on a torch 1.13
    trace (matmul + softmax); never with attn=sdpa."""
    tiny = "layers=1,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256"
    cases = [("attn_" + a, ["--model", "llama", "--config", tiny + ",attn=" + a, "--set", "B=1,S=64"], a != "sdpa")
             for a in ("eager", "sdpa", "flash")]
    try:
        cases.append(("llama_tiny_trace", [make_fixtures.make_fixture("llama_tiny", fixtures)], True))
    except Exception as e:  # A failed trace: report, go on.
        r.record("backend_diagnostic_trace", ["cannot trace llama_tiny: %s" % e])
    for name, args, warns in cases:
        doc, err = run_json(r.torchcost, args + ["--attention-backend", "efficient"])
        if err:
            r.record("backend_diagnostic_" + name, [err])
            continue
        said = [d for d in doc["diagnostics"] if "attention backend 'efficient'" in d["message"]]
        problems = []
        if warns and not (said and said[0]["severity"] == "warning"):
            problems.append("no warning about --attention-backend efficient: %r" % doc["diagnostics"])
        if not warns and said:
            problems.append("unexpected warning: %r" % said)
        r.record("backend_diagnostic_" + name, problems)


def main(argv):
    r, fixtures = runner_from_argv(argv, __doc__)

    import torch

    for name, family, config_of, sets in CASES:
        compare_with_trace(r, fixtures, name, family, config_of, sets)
    for name, family, config_of, sets in CASES:
        compare_with_trace(r, fixtures, name, family, config_of, sets, torch.bfloat16)

    expected = gpt2_params(V=50257, h=768, L=12, n_ctx=1024)
    if expected != 124439808:
        r.record("gpt2_formula", ["formula gives %d" % expected])
    check_params(r, "gpt2_preset_params", ["--model", "gpt2"], expected)
    expected = llama_params(V=32000, h=4096, L=32, heads=32, kv_heads=32, inter=11008)
    if expected != 6738415616:
        r.record("llama_formula", ["formula gives %d" % expected])
    check_params(r, "llama_7b_like_params", ["--model", "llama-7b-like"], expected)
    check_params(r, "llama_gqa_params",
                 ["--model", "llama", "--config",
                  "layers=32,hidden=4096,heads=32,kv_heads=8,intermediate=11008,vocab=32000"],
                 llama_params(V=32000, h=4096, L=32, heads=32, kv_heads=8, inter=11008))

    # Structural search-space choices (docs/nas.md): the block and each stage's kernel size.
    compare_resnet_variant(r, fixtures, "basic", [1, 2, 1, 1], [3, 5, 7, 1])
    compare_resnet_variant(r, fixtures, "bottleneck", [1, 1, 2, 1], [5, 3, 3, 7])

    check_backend_diagnostic(r, fixtures)

    r.expect_error("unknown_config_key", ["--model", "llama", "--config", "layers=2,wings=3"],
                   ["unknown key 'wings'", "llama"])
    r.expect_error("bad_config_value", ["--model", "gpt2", "--config", "layers=two"], ["layers=two", "integer"])
    r.expect_error("indivisible_heads", ["--model", "gpt2", "--config", "hidden=100,heads=12"], ["divisible"])
    r.expect_error("unknown_model", ["--model", "bert-base"], ["bert-base", "known"])
    r.expect_error("bad_dtype", ["--model", "llama", "--config", "dtype=int8"], ["dtype=int8", "fp32, bf16 or fp16"])
    r.expect_error("dtypes_disagree", ["--model", "llama", "--config", "layers=2,dtype=fp32", "--param-dtype", "bf16"],
                   ["--param-dtype bf16", "dtype=fp32", "disagree"])
    r.expect_error("bad_attn", ["--model", "llama", "--config", "attn=fast"], ["attn='fast'", "eager, sdpa or flash"])
    r.expect_error("vit_flash", ["--model", "vit", "--config", "attn=flash"], ["attn=flash", "torchvision"])
    r.expect_error("bad_window", ["--model", "llama", "--config", "window=-4"], ["window=-4", ">= 0"])
    r.expect_error("config_without_model", ["x.pt", "--config", "layers=2"], ["--config", "--model"])
    r.expect_error("file_and_model", ["x.pt", "--model", "gpt2"], ["not both"])
    r.expect_error("set_out_of_context", ["--model", "gpt2", "--set", "S=2048"], ["S=2048", "range"])

    return r.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
