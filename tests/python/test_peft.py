#!/usr/bin/python3
"""Oracle tests: LoRA and DoRA (--lora) against the same adapters written in plain torch.

Usage (Debian's system python3, torch 1.13):

    /usr/bin/python3 tests/python/test_peft.py --torchcost BUILD/torchcost --fixtures BUILD/fixtures

peft is not packaged for Debian, so tools/peft_torch.py writes its LoRA and
DoRA layers in plain torch, op for op as peft computes them (its module doc
says which peft code each follows). For each preset (base model, variant) of
peft_torch.PRESETS, at each batch:

  transform  torchcost BASE.pt --lora SPEC --device cpu   (the base model's trace, rewritten)
  wrapped    torchcost BASE+VARIANT.pt --device cpu       (the trace of the wrapped model)
  PyTorch    tools/measure_step.py on the wrapped model   (a real training step on CPU)

Checks (issue 5, points 1 and 8), for the transform against PyTorch:
  act  training.memory.saved_bytes  == act_bytes (saved_tensors_hooks)      exact
  grad training.memory.category_max.grad == grad_tensor_bytes               exact
  opt  training.memory.category_max.opt  == opt_bytes (after a real step)   exact
  param, and trainable_params == the wrapped model's trainable elements     exact
  peak training.memory.peak within 5% of the CPU allocator's peak
for the optimizers adamw and sgd_momentum; and the wrapped trace's report gives
the transform's numbers (params, FLOPs forward and backward, saved bytes,
peak, every category's maximum): "a graph that already contains LoRA-style
modules gives the same result as applying the transform" (for DoRA all but the
peak and TEMP: a trace loses the Python locals DoRA's forward keeps alive).
gpt2_tiny's attention projections are transformers' Conv1D (addmm(b, x, W) with
W [in, out]), adapted as peft does with fan_in_fan_out=True (tools/peft_torch.py's
LoraConv1D); its c_fc and c_proj are Linear layers.
And LoRA on a trace of Hugging Face's GPT2LMHeadModel (python/torchcost/reference/hf_reference.py, Conv1D
modules) adapts every Conv1D with peft's count of trainable parameters.
Also: LoRA on gpt_tiny's TorchScript trace, its FX graph and its aten graph
(make_fx: Linear as t + addmm) gives the same trainable params, FLOPs, saved
bytes and peak ("applied to any graph").
Last line: "N passed, M failed".
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
import oracle_models  # noqa: E402,F401  (puts tools/ on sys.path)

import make_fixtures as mf  # noqa: E402
import measure_step as ms  # noqa: E402
import peft_torch  # noqa: E402

PEAK_TOLERANCE = 0.05
OPTIMIZERS = ("adamw", "sgd_momentum")
# (base, variant, batches): the GPT decoder at its [2, 64] example, resnet18 at 1 and 4.
CASES = [
    ("gpt_tiny", "lora", [2]),
    ("gpt_tiny", "dora", [2]),
    ("gpt_tiny", "dora_dropout", [2]),
    ("resnet18", "lora", [1, 4]),
    ("resnet18", "dora", [1]),
    # GPT-2's Conv1D (addmm with W [in, out]; peft's fan_in_fan_out) and Linear c_fc / c_proj.
    ("gpt2_tiny", "lora", [2]),
    ("gpt2_tiny", "dora", [2]),
    ("gpt2_tiny", "dora_dropout", [2]),
]
EXACT = [("act", ("saved_bytes",), "act_bytes"),
         ("param", ("category_max", "param"), "param_bytes"),
         ("grad", ("category_max", "grad"), "grad_tensor_bytes"),
         ("opt", ("category_max", "opt"), "opt_bytes")]


def value(training, *path):
    node = training["memory"] if path[0] != "flops" else training
    for key in path:
        node = node[key]
    return node["value"] if isinstance(node, dict) and "value" in node else node


def inputs_of(name, batch):
    shape = [batch] + list(mf.build_shapes(name)[0][1:])
    text = ",".join(str(d) for d in shape)
    return text if mf.input_dtypes(name)[0] == "float32" else text + ":" + mf.input_dtypes(name)[0]


def trainable_elements(name):
    model, _ = mf.build_model(name)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--only", default="", help="run the cases whose BASE+VARIANT contains this (and no frontends)")
    args = parser.parse_args(argv)
    fixtures = os.path.abspath(args.fixtures)
    os.makedirs(fixtures, exist_ok=True)
    results = torchcost_cli.Results()
    for base, variant, batches in CASES:
        wrapped = "%s+%s" % (base, variant)
        if args.only not in wrapped:
            continue
        spec = peft_torch.cli_spec(base, variant)
        train_trace = base in oracle_models.GPTS
        expected_trainable = trainable_elements(wrapped)
        for b in batches:
            t0 = time.time()
            label = "%s b%d" % (wrapped, b)
            try:
                refs = ms.measure_all(wrapped, b, fixtures)
                base_pt = mf.make_fixture(base, fixtures, b, train=train_trace)
                wrapped_pt = mf.make_fixture(wrapped, fixtures, b, train=train_trace)
            except Exception as e:  # noqa: BLE001
                results.check(False, label + " reference", "PyTorch failed: %s" % e)
                continue
            shape = inputs_of(base, b)
            for opt in OPTIMIZERS:
                ref = refs[(opt, "train")]
                common = ["--input", shape, "--device", "cpu", "--optimizer", opt]
                transform, err = torchcost_cli.run_json(args.torchcost, [base_pt, "--lora", spec] + common)
                if not results.check(transform is not None, label + " transform " + opt, err or ""):
                    continue
                t = transform["training"]
                results.check(transform["totals"]["trainable_params"] == expected_trainable,
                              "%s %s trainable" % (label, opt),
                              "expected %d, got %d" % (expected_trainable, transform["totals"]["trainable_params"]))
                for check, path, key in EXACT:
                    got = value(t, *path)
                    results.check(got == ref[key], "%s %s %s" % (label, opt, check),
                                  "expected %d, got %d (diff %+d)" % (ref[key], got, got - ref[key]))
                peak = value(t, "peak")
                rel = (peak - ref["peak_bytes"]) / float(ref["peak_bytes"])
                results.check(abs(rel) <= PEAK_TOLERANCE, "%s %s peak" % (label, opt),
                              "expected %d within 5%%, got %d (%+.2f%%)" % (ref["peak_bytes"], peak, 100 * rel))
                print("# %s %s: act %d grad %d opt %d peak %d vs PyTorch %d (%+.2f%%)"
                      % (label, opt, ref["act_bytes"], ref["grad_tensor_bytes"], ref["opt_bytes"], peak,
                         ref["peak_bytes"], 100 * rel), flush=True)
                # The wrapped model's own trace: the same numbers as the transform.
                w, err = torchcost_cli.run_json(args.torchcost, [wrapped_pt] + common)
                if not results.check(w is not None, label + " wrapped " + opt, err or ""):
                    continue
                same = [("params", transform["totals"]["params"], w["totals"]["params"]),
                        ("trainable", transform["totals"]["trainable_params"], w["totals"]["trainable_params"]),
                        ("flops fwd", transform["totals"]["flops"]["value"], w["totals"]["flops"]["value"])]
                for k in ("backward", "step"):
                    same.append(("flops " + k, t["flops"][k]["value"], w["training"]["flops"][k]["value"]))
                same.append(("saved", value(t, "saved_bytes"), value(w["training"], "saved_bytes")))
                same.append(("peak", peak, value(w["training"], "peak")))
                for cat in t["memory"]["category_max"]:
                    same.append(("max " + cat, value(t, "category_max", cat), value(w["training"], "category_max", cat)))
                if peft_torch.preset(base, variant)["method"] == "dora":
                    # NB: a trace cannot see that DoRA's forward keeps its locals (x_eye,
                    # lora_weight, ...) until it returns; the transform does
                    # (torchcost::keep_alive), so only the peak and TEMP differ.
                    same = [x for x in same if x[0] not in ("peak", "max temp")]
                for what, a, bb in same:
                    results.check(a == bb, "%s %s wrapped == transform: %s" % (label, opt, what),
                                  "transform %s, wrapped trace %s" % (a, bb))
            print("# %s: %.1fs" % (label, time.time() - t0), flush=True)
    if not args.only:
        frontends(args, fixtures, results)
    if not args.only or args.only == "hf":
        hf_conv1d(args, fixtures, results)
    print("%d passed, %d failed" % (results.passed, results.failed))
    return 0 if results.failed == 0 else 1


def frontends(args, fixtures, results):
    """LoRA on any graph: the TorchScript trace, an FX graph and an aten graph (make_fx,
    where Linear is t + addmm) of gpt_tiny give the same numbers."""
    import subprocess

    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pt = mf.make_fixture("gpt_tiny", fixtures)
    spec = peft_torch.cli_spec("gpt_tiny", "lora")
    common = ["--input", "2,64:int64", "--device", "cpu", "--lora", spec]
    ref, err = torchcost_cli.run_json(args.torchcost, [pt] + common)
    if not results.check(ref is not None, "frontends torchscript", err or ""):
        return
    for method in ("fx", "aten"):
        out = os.path.join(fixtures, "gpt_tiny_%s.graph.json" % method)
        proc = subprocess.run(["/usr/bin/python3", "-m", "tools.export", "fixtures:gpt_tiny", out, "--method", method,
                               "--input", "2,64:int64"], cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, env=dict(os.environ, TORCHCOST_FIXTURES=fixtures))
        if not results.check(proc.returncode == 0, "frontends export " + method, proc.stderr.strip()[-300:]):
            continue
        got, err = torchcost_cli.run_json(args.torchcost, [out] + common)
        if not results.check(got is not None, "frontends " + method, err or ""):
            continue
        for what, path in [("trainable", ("totals", "trainable_params")), ("flops fwd", ("totals", "flops")),
                           ("flops bwd", ("training", "flops", "backward")),
                           ("saved", ("training", "memory", "saved_bytes")),
                           ("peak", ("training", "memory", "peak"))]:
            a, b = ref, got
            for k in path:
                a, b = a[k], b[k]
            a = a["value"] if isinstance(a, dict) else a
            b = b["value"] if isinstance(b, dict) else b
            results.check(a == b, "lora on %s graph == torchscript: %s" % (method, what), "torchscript %s, %s %s"
                          % (a, method, b))


def hf_conv1d(args, fixtures, results):
    """LoRA on a trace of Hugging Face's GPT2LMHeadModel (python/torchcost/reference/hf_reference.py: Conv1D modules
    c_attn, attn.c_proj, c_fc, mlp.c_proj with weight [nx, nf]): peft's count of trainable
    parameters, r * (in + out) per adapted Conv1D (LoraLayer: in, out = Conv1D weight.shape),
    and the adapters' parameter names under the Conv1D modules."""
    import torch
    from torchcost.reference import hf_reference

    model = hf_reference.build("gpt2_hf_tiny").train()
    pt = os.path.join(fixtures, "gpt2_hf_tiny_train.pt")
    if not os.path.exists(pt):
        torch.jit.trace(model, (hf_reference.example_input(),), check_trace=False).save(pt)
    r = 4
    expected = sum(r * (m.weight.shape[0] + m.weight.shape[1]) for _, m in model.named_modules()
                   if type(m).__name__ == "Conv1D")
    got, err = torchcost_cli.run_json(args.torchcost, [pt, "--input", "2,64:int64", "--device", "cpu",
                                                       "--lora", "r=%d,targets=c_attn|c_proj|c_fc" % r])
    if not results.check(got is not None, "lora on hf gpt2 Conv1D", err or ""):
        return
    results.check(got["totals"]["trainable_params"] == expected, "lora on hf gpt2 Conv1D: trainable",
                  "expected %d, got %d" % (expected, got["totals"]["trainable_params"]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
