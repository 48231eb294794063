#!/usr/bin/python3
"""Oracle test: torchcost's --checkpoint selective against PyTorch recomputing the attention core.

Usage (Debian's system python3: torch 1.13, CPU only):

    /usr/bin/python3 tests/python/test_selective.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--batches 2,8]

Megatron-LM's selective recomputation (Korthikanti et al. 2022, Sec. 5;
`recompute_granularity=selective`) wraps its core-attention module, which takes
(query, key, value, attention_mask) and returns the context, in its checkpoint
(megatron/core/transformer/attention.py, `_checkpointed_attention_forward`,
NVIDIA/Megatron-LM d98e8a64ddf34856e74b24714e3bedb2f5a39553). Here the model is
tools/make_fixtures.py's gpt2_tiny (Hugging Face's GPT-2 structure) with its
attention core moved, op for op, into such a module, `core_attention`
(Q K^T / sqrt(hd), torch.where with the causal mask, softmax, dropout, A V).
PyTorch runs the real step with every `core_attention` wrapped in
torch.utils.checkpoint (reentrant, 1.13's default), measured by
tools/measure_step.py --checkpoint 'core_attention$' (docs/measuring.md).

torchcost analyses the train-mode trace of the same model and finds the cores
by the graph's structure, not by the module:

    torchcost FIXTURE.pt --input B,64:int64 --device cpu --optimizer adam --checkpoint selective --json

Checks on "training": ACT (memory.saved_bytes), GRAD and OPT exact; the peak
within 5%; the segments are the model's 2 cores; `--checkpoint
'core_attention$'` (the module) gives the same ACT as the structural search;
and the model exported as JSON (tools/export, methods fx and aten) finds the
2 cores and the measured ACT too.
Prints each relative error, one line per failed check, and as its last line
"N passed, M failed". Exits 0 only if nothing failed.
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
from torchcost_cli import RECOMPUTE_CHECKS, memory_value  # noqa: E402
import oracle_models  # noqa: E402,F401  (puts tools/ on sys.path)

import make_fixtures as mf  # noqa: E402
import measure_step as ms  # noqa: E402
from export import export  # noqa: E402  (tools/export)
import torch  # noqa: E402
from torch import nn  # noqa: E402

NAME = "gpt2_core_tiny"
PEAK_TOLERANCE = 0.05
OPTIMIZER = "adam"


class CoreAttention(nn.Module):
    """GPT2Attention's core as a module: (q, k, v, causal) -> softmax(QK^T/sqrt(hd), masked), dropped out, @ V."""

    def __init__(self, dropout):
        super().__init__()
        self.attn_dropout = nn.Dropout(dropout)

    def forward(self, q, k, v, causal):
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
        mask_value = torch.full([], torch.finfo(att.dtype).min, dtype=att.dtype, device=att.device)
        att = torch.where(causal, att, mask_value)
        att = self.attn_dropout(nn.functional.softmax(att, dim=-1))
        return torch.matmul(att, v)


class CoreGPT2Attention(mf.GPT2Attention):
    """mf.GPT2Attention with the ops from Q K^T to A V in `core_attention`."""

    def __init__(self, d_model, n_head, context, dropout):
        super().__init__(d_model, n_head, context, dropout)
        del self.attn_dropout
        self.core_attention = CoreAttention(dropout)

    def forward(self, x):
        B, T, C = x.size()
        qkv = torch.addmm(self.c_attn_bias, x.view(-1, C), self.c_attn_weight).view(B, T, 3 * C)
        q, k, v = qkv.split(self.d_model, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).permute(0, 2, 1, 3)
        k = k.view(B, T, self.n_head, hd).permute(0, 2, 1, 3)
        v = v.view(B, T, self.n_head, hd).permute(0, 2, 1, 3)
        y = self.core_attention(q, k, v, self.bias[:, :, :T, :T])
        y = y.permute(0, 2, 1, 3).contiguous().view(B, T, C)
        y = torch.addmm(self.c_proj_bias, y.view(-1, C), self.c_proj_weight).view(B, T, C)
        return self.resid_dropout(y)


class CoreGPT2(mf.GPT2):
    """gpt2_tiny with CoreGPT2Attention in every block."""

    def __init__(self, vocab=512, d_model=128, n_head=4, n_layer=2, context=128, dropout=0.1):
        super().__init__(vocab, d_model, n_head, n_layer, context, dropout)
        for block in self.h:
            block.attn = CoreGPT2Attention(d_model, n_head, context, dropout)


# Known to make_fixtures (and so to measure_step) for this process only.
mf._GPT[NAME] = (CoreGPT2, {})

def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--batches", default="2,8")
    args = parser.parse_args(argv)
    passed = failed = 0

    def check(label, ok, detail):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL %s: %s" % (label, detail), flush=True)

    for batch in [int(b) for b in args.batches.split(",") if b]:
        label = "%s b%d --checkpoint selective" % (NAME, batch)
        measured = ms.measure(NAME, batch, OPTIMIZER, "train", fixtures=args.fixtures, checkpoint=r"core_attention$")
        check(label + " wrapped", len(measured["checkpointed_modules"]) == 2, measured["checkpointed_modules"])
        pt = mf.make_fixture(NAME, args.fixtures, batch, train=True)
        cli = [pt, "--input", "%d,%d:int64" % (batch, mf.GPT_INPUT_SHAPE[1]), "--device", "cpu",
               "--optimizer", OPTIMIZER]
        report, err = torchcost_cli.run_json(args.torchcost, cli + ["--checkpoint", "selective"])
        module, err2 = torchcost_cli.run_json(args.torchcost, cli + ["--checkpoint", "core_attention$"])
        if err or err2:
            check(label, False, err or err2)
            continue
        training = report["training"]
        segments = training["checkpoint"]["segments"]
        check(label + " segments", [s["module"] for s in segments] == ["h.0.attn.core_attention",
                                                                       "h.1.attn.core_attention"],
              [s["module"] for s in segments])
        for name, path, key, exact in RECOMPUTE_CHECKS:
            got, want = memory_value(training, path), measured[key]
            rel = (got - want) / want if isinstance(got, int) and want else float("nan")
            print("%s %s: torchcost %s, PyTorch %s (%+.3f%%)" % (label, name, got, want, 100 * rel))
            check("%s %s" % (label, name), got == want if exact else abs(rel) <= PEAK_TOLERANCE,
                  "expected %s, got %s" % (want, got))
        same = memory_value(module["training"], ("saved_bytes",)) == memory_value(training, ("saved_bytes",))
        check(label + " same as the module's checkpoint", same, "module %s vs selective %s" % (
            memory_value(module["training"], ("saved_bytes",)), memory_value(training, ("saved_bytes",))))
        # The JSON frontends: the train-mode model exported by torch.fx and by make_fx
        # (aten decompositions: explicit expand / clone / _unsafe_view around bmm).
        model, _ = mf.build_model(NAME)
        model.train()
        for method in ("fx", "aten"):
            path = os.path.join(args.fixtures, "%s_b%d_train_%s.json" % (NAME, batch, method))
            export(model, [torch.zeros([batch, mf.GPT_INPUT_SHAPE[1]], dtype=torch.int64)], path, method=method)
            exported, err = torchcost_cli.run_json(args.torchcost, [path] + cli[1:] + ["--checkpoint", "selective"])
            if err:
                check("%s %s" % (label, method), False, err)
                continue
            got = exported["training"]
            check("%s %s cores" % (label, method), len(got["checkpoint"]["segments"]) == 2,
                  got["checkpoint"]["segments"])
            check("%s %s act" % (label, method), memory_value(got, ("saved_bytes",)) == measured["act_bytes"],
                  "expected %s, got %s" % (measured["act_bytes"], memory_value(got, ("saved_bytes",))))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
