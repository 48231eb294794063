#!/usr/bin/python3
"""Checks `torchcost --mode generate` against a real generation with a KV cache.

Usage: /usr/bin/python3 tests/python/test_generate.py --torchcost PATH

The oracle is a tiny Llama-style decoder in plain torch (torchcost.reference.hf_decoders' MLP
and torchcost.reference.hf_reference's LlamaRMSNorm, eager attention, float32, GQA)
generating greedily on CPU with a cache written as Hugging Face's DynamicLayer
is (transformers src/transformers/cache_utils.py at
004999d972e478164dd7e8e508350937c803531e: keys = torch.cat([keys, key_states],
dim=-2), starting from an empty tensor, so the prefill copies the prompt's keys),
lm_head on the last position only (generate()'s logits_to_keep=1). For each
(B, S, T) it measures, the way tools/measure_step.py does (the legacy autograd
profiler's CPU memory events over a baseline of the live tensors):

  prefill  peak of model(prompt) under no_grad; baseline params + prompt ids;
  decode   peak of the last decode step (S + T - 2 tokens cached before it);
           baseline params + its ids + the cache before it;
  kv       the cache's storage bytes after the last step (S + T - 1 tokens:
           the last new token is never fed back), per token and sequence;

and compares with `torchcost --model llama --config ... --mode generate --json`:
totals.params and kv bytes per token exact (generation.kv_cache_bytes is for
S + T tokens), each phase's peak exact (generate_oracle.py: the cache, the
measurement and the per-case loop the three generation oracles share). `torchcost compare --mode generate
--budget SIZE`, SIZE a measured generation peak: the largest B (then S) that
fits is the measured one. Departures from Hugging Face, none of
which changes a byte: the RoPE tables are computed from arange for the step's
positions count (the decode step's for one position, as the builder does), once
per forward and passed to every layer as LlamaModel.forward does; the
eager decode step adds no mask (Hugging Face adds a [B, 1, 1, S + T - 1] zero mask).
One departure that does, checked apart (LOCALS below): the attention `del`s its
locals after their last use, as a traced graph frees them and torchcost models.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate_oracle  # noqa: E402  (first: it puts tools/ and python/ on the path)
import torch  # noqa: E402
from torch import nn  # noqa: E402

from torchcost.reference.hf_decoders import MLP  # noqa: E402
from torchcost.reference.hf_reference import LlamaRMSNorm, RotaryEmbedding, repeat_kv, rotate_half  # noqa: E402

CONFIG = {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
          "intermediate_size": 128, "vocab_size": 256, "num_hidden_layers": 2}
BUILDER = "layers=2,hidden=64,heads=4,kv_heads=2,intermediate=128,vocab=256,attn=eager,make_vocab_size_divisible_by=1"
CASES = [(1, 16, 4), (2, 40, 9), (3, 7, 2), (2, 200, 6)]
# compare --mode generate --budget: (B, S, T) whose measured peak is the budget, B searched, then S searched.
COMPARE_B = (3, 24, 4)
COMPARE_S = (2, 40, 5)
# NB: eager Python keeps a function's locals until it returns, where a graph
# (and torchcost) frees each tensor after its last use; no graph says which
# tensors a Python local holds. So the reference's attention `del`s them where
# the graph's liveness ends (q and the repeated k after q @ k^T; the mask after
# its add; the probabilities and v after the product), and the peaks are exact.
# Written as Hugging Face writes it (keep_locals), the prefill's peak at (B, S)
# = LOCALS[0] is the scores' add with q and the repeated k (B*H*S*hd*4 bytes
# each) still alive: LOCALS[1] bytes above, measured in the test. NB: the
# model's cos and sin tables are its forward's local, as in Hugging Face's
# LlamaModel.forward, alive through every layer; torchcost keeps them to the
# end of the last decoder layer's call (a module's argument lives until the
# call that reads it returns), which holds the peak.
# NB: torch 1.13's matmul copies an operand whose batch dims cannot be
# flattened as a view (expand(...).reshape(batch, n, m) in LinearAlgebra.cpp's
# matmul; here q, since the RoPE sum keeps q's transposed strides: a
# TensorIterator output follows its inputs' layout). torchcost tracks no
# strides and does not model that copy (B*H*S*hd*4, alive only during bmm,
# beside the [B, H, S, S] scores it allocates next); it sets no peak here.
HD = CONFIG["hidden_size"] // CONFIG["num_attention_heads"]
VOCAB = CONFIG["vocab_size"]
LOCALS = ((2, 200), 2 * (2 * CONFIG["num_attention_heads"] * 200 * HD * 4))  # q and k: 204800


class Attention(nn.Module):
    def __init__(self, c, i):
        super().__init__()
        h, H, K = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.H, self.K, self.d, self.i = H, K, h // H, i
        self.keep_locals = False  # True: no `del`, as Hugging Face's code reads (the LOCALS check).
        self.q_proj = nn.Linear(h, H * self.d, bias=False)
        self.k_proj = nn.Linear(h, K * self.d, bias=False)
        self.v_proj = nn.Linear(h, K * self.d, bias=False)
        self.o_proj = nn.Linear(H * self.d, h, bias=False)

    def forward(self, x, cache, position_embeddings):
        bsz, q_len, _ = x.size()
        H, K, d = self.H, self.K, self.d
        q = self.q_proj(x).view(bsz, q_len, H, d).transpose(1, 2)
        k = self.k_proj(x).view(bsz, q_len, K, d).transpose(1, 2)
        v = self.v_proj(x).view(bsz, q_len, K, d).transpose(1, 2)
        cos, sin = position_embeddings
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        k, v = cache.update(k, v, self.i)
        k = repeat_kv(k, H // K)
        v = repeat_kv(v, H // K)
        attn = torch.matmul(q, k.transpose(2, 3))
        dtype = q.dtype
        if not self.keep_locals:
            del q, k
        attn = attn / math.sqrt(d)
        if q_len > 1:
            mask = torch.full((q_len, q_len), torch.finfo(x.dtype).min, dtype=x.dtype).triu(1)
            attn = attn + mask
            if not self.keep_locals:
                del mask
        attn = nn.functional.softmax(attn, dim=-1, dtype=torch.float32).to(dtype)
        out = torch.matmul(attn, v).transpose(1, 2).contiguous()
        if not self.keep_locals:
            del attn, v
        return self.o_proj(out.reshape(bsz, q_len, H * d))


class Layer(nn.Module):
    def __init__(self, c, i):
        super().__init__()
        self.self_attn = Attention(c, i)
        self.mlp = MLP(c)
        self.input_layernorm = LlamaRMSNorm(c["hidden_size"])
        self.post_attention_layernorm = LlamaRMSNorm(c["hidden_size"])

    def forward(self, x, cache, position_embeddings):
        residual = x
        x = self.self_attn(self.input_layernorm(x), cache, position_embeddings)
        x = residual + x
        residual = x
        return residual + self.mlp(self.post_attention_layernorm(x))


class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([Layer(c, i) for i in range(c["num_hidden_layers"])])
        self.norm = LlamaRMSNorm(c["hidden_size"])
        self.rotary_emb = RotaryEmbedding(c)

    def forward(self, ids, cache):
        x = self.embed_tokens(ids)
        position_embeddings = self.rotary_emb(x)
        for layer in self.layers:
            x = layer(x, cache, position_embeddings)
        return self.norm(x)


class Decoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.model = Model(c)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)

    def forward(self, ids, cache):
        # generate()'s logits_to_keep=1: lm_head on the last position only.
        return self.lm_head(self.model(ids, cache)[:, -1:, :])


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", help="unused: the oracle model is built here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Decoder(CONFIG).eval()
    checks = generate_oracle.Checks()
    # 2 (keys, values) x layers x kv_heads x head_dim x 4 bytes per token and sequence.
    kv_per_token = 2 * CONFIG["num_hidden_layers"] * CONFIG["num_key_value_heads"] * HD * 4
    measured = generate_oracle.check_cases(checks, args.torchcost, "llama", BUILDER, model, CASES, VOCAB, kv_per_token)
    # compare --mode generate --budget: the largest B (S bound) and the largest S (B bound) whose generation peak,
    # the larger of the measured prefill and last decode step peaks, fits a budget set to the measured peak at
    # COMPARE_B (COMPARE_S); the next value's measured peak exceeds it, so the boundary is the measured one.
    def generation_peak(B, S, T):
        m = generate_oracle.measure(model, B, S, T, VOCAB)
        return max(m["prefill"], m["decode"])
    for symbol, (B, S, T), fixed in (("B", COMPARE_B, "S=%d,T=%d" % COMPARE_B[1:]),
                                     ("S", COMPARE_S, "B=%d,T=%d" % (COMPARE_S[0], COMPARE_S[2]))):
        at = generation_peak(B, S, T)
        above = generation_peak(B + 1, S, T) if symbol == "B" else generation_peak(B, S + 1, T)
        want = B if symbol == "B" else S
        label = "compare --budget %d (measured peak at B=%d S=%d T=%d), %s searched" % (at, B, S, T, symbol)
        if not above > at:
            checks.fail(label, "the measured peak does not grow at %s + 1 (%d, %d)" % (symbol, at, above))
            continue
        proc = subprocess.run([args.torchcost, "compare", "--model", "llama", "--config", BUILDER, "--mode",
                               "generate", "--set", fixed, "--budget", str(at), "--json", "full"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=180)
        if proc.returncode != 0:
            checks.fail(label, "exit %d: %s" % (proc.returncode, proc.stderr.strip()))
            continue
        doc = json.loads(proc.stdout)
        row = doc["rows"][0]
        checks.check(label + ": batch_symbol", doc["batch_symbol"], symbol)
        checks.check(label + ": max", row["max_batch"], want)
        # Evaluated at 1 for the searched symbol: 2 (keys, values) x layers x kv_heads x head_dim x (S + T) x B x 4.
        b1, s1 = (1, S) if symbol == "B" else (B, 1)
        kv = 2 * CONFIG["num_hidden_layers"] * CONFIG["num_key_value_heads"] * HD * (s1 + T) * b1 * 4
        checks.check(label + ": kv_cache_bytes at %s=1" % symbol, row["kv_cache_bytes"], kv)
        # The same question over a sweep of the other context symbol (S, or with S searched T) through the
        # measured point: compare --sweep gives that point's row, the same boundary; torchcost --sweep marks the
        # measured point as fitting and the next value of the searched symbol (whose measured peak is above) not.
        other = "S" if symbol == "B" else "T"
        value = S if symbol == "B" else T
        fixed_other = ",".join(kv for kv in fixed.split(",") if not kv.startswith(other + "="))
        proc = subprocess.run([args.torchcost, "compare", "--model", "llama", "--config", BUILDER, "--mode",
                               "generate", "--set", fixed_other, "--sweep", "%s=%d,%d" % (other, value, value + 1),
                               "--budget", str(at), "--json", "full"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=180)
        if proc.returncode != 0:
            checks.fail(label + " --sweep", "exit %d: %s" % (proc.returncode, proc.stderr.strip()))
            continue
        swept = json.loads(proc.stdout)
        checks.check(label + " --sweep %s: points" % other, [r["at"] for r in swept["rows"]],
                     [{other: value}, {other: value + 1}])
        checks.check(label + " --sweep %s: max at the measured point" % other, swept["rows"][0]["max_batch"], want)
        at_b, at_s = (B + 1, S) if symbol == "B" else (B, S + 1)
        sweep_cmd = ["--model", "llama", "--config", BUILDER, "--mode", "generate", "--set", "T=%d" % T, "--sweep",
                     "B=%d,%d" % (B, at_b), "--sweep", "S=%d,%d" % (S, at_s), "--budget", str(at), "--json"]
        proc = subprocess.run([args.torchcost] + sweep_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=180)
        if proc.returncode != 0:
            checks.fail(label + " torchcost --sweep", "exit %d: %s" % (proc.returncode, proc.stderr.strip()))
            continue
        fits = {(r["B"], r["S"]): r["fits"] for r in json.loads(proc.stdout)["rows"]}
        checks.check(label + " torchcost --sweep: the measured point fits", fits.get((B, S)), True)
        checks.check(label + " torchcost --sweep: the next %s does not" % symbol, fits.get((at_b, at_s)), False)
    # The locals Hugging Face's code keeps (the NB at LOCALS): the same weights, no `del`.
    for module in model.modules():
        if isinstance(module, Attention):
            module.keep_locals = True
    B, S = LOCALS[0]
    T = next(t for b, s, t in CASES if (b, s) == (B, S))
    kept = generate_oracle.measure(model, B, S, 1, VOCAB)["prefill"] - measured[(B, S, T)]["prefill"]
    checks.check("B=%d S=%d prefill with Hugging Face's locals: bytes above" % (B, S), kept, LOCALS[1])
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
