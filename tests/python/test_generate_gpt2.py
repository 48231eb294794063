#!/usr/bin/python3
"""Checks `torchcost --model gpt2 --mode generate` against a real generation with a KV cache.

Usage: /usr/bin/python3 tests/python/test_generate_gpt2.py --torchcost PATH

The oracle is a tiny GPT-2 in plain torch, op for op as the builder's
(src/builder/gpt2.cc: Conv1D addmm, the bool causal-mask buffer and where,
eager attention, GELU tanh; eval, float32), generating greedily on CPU with
generate_oracle.py's DynamicCache (keys and values torch.cat onto an empty tensor
after the head split) and lm_head on the last position only. Measured and
compared by generate_oracle.check_cases: params, kv bytes per token, the
prefill's and the last decode step's peaks, exact. As in test_generate.py, locals are
`del`eted where the graph's liveness ends, and the decode step adds no mask
(one query sees every cached key).
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate_oracle  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

H, HEADS, LAYERS, CTX, VOCAB = 64, 4, 2, 512, 256
BUILDER = "layers=%d,hidden=%d,heads=%d,vocab=%d,context=%d,attn=eager,dropout=0,make_vocab_size_divisible_by=1" % (
    LAYERS, H, HEADS, VOCAB, CTX)
CASES = [(1, 16, 4), (2, 40, 9), (3, 7, 2)]


class Attention(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.i = i
        self.c_attn_weight = nn.Parameter(torch.randn(H, 3 * H) * 0.02)  # Conv1D: [in, out].
        self.c_attn_bias = nn.Parameter(torch.zeros(3 * H))
        self.c_proj_weight = nn.Parameter(torch.randn(H, H) * 0.02)
        self.c_proj_bias = nn.Parameter(torch.zeros(H))
        self.register_buffer("bias", torch.tril(torch.ones(CTX, CTX, dtype=torch.bool)).view(1, 1, CTX, CTX))

    def forward(self, x, cache):
        B, T, C = x.size()
        qkv = torch.addmm(self.c_attn_bias, x.view(-1, C), self.c_attn_weight).view(B, T, 3 * C)
        q, k, v = qkv.split(C, dim=2)
        del qkv
        hd = C // HEADS
        q = q.view(B, T, HEADS, hd).permute(0, 2, 1, 3)
        k = k.view(B, T, HEADS, hd).permute(0, 2, 1, 3)
        v = v.view(B, T, HEADS, hd).permute(0, 2, 1, 3)
        k, v = cache.update(k, v, self.i)
        att = torch.matmul(q, k.transpose(-1, -2))
        del q, k
        att = att / torch.tensor(math.sqrt(hd))
        if T > 1:
            mask_value = torch.full([], torch.finfo(att.dtype).min, dtype=att.dtype)
            att = torch.where(self.bias[:, :, :T, :T], att, mask_value)
        att = torch.softmax(att, -1)
        y = torch.matmul(att, v)
        del att, v
        y = y.permute(0, 2, 1, 3).contiguous().view(B, T, C)
        return torch.addmm(self.c_proj_bias, y.view(-1, C), self.c_proj_weight).view(B, T, C)


class Block(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.ln_1 = nn.LayerNorm(H)
        self.attn = Attention(i)
        self.ln_2 = nn.LayerNorm(H)
        self.c_fc = nn.Linear(H, 4 * H)
        self.c_proj = nn.Linear(4 * H, H)

    def forward(self, x, cache):
        x = x + self.attn(self.ln_1(x), cache)
        h = self.c_fc(self.ln_2(x))
        h = nn.functional.gelu(h, approximate="tanh")
        return x + self.c_proj(h)


class Gpt2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, H)
        self.wpe = nn.Embedding(CTX, H)
        self.h = nn.ModuleList([Block(i) for i in range(LAYERS)])
        self.ln_f = nn.LayerNorm(H)

    def forward(self, idx, cache):
        # NB: the decode step's position is arange(0, 1) in the builder too (one wpe row either way).
        pos = torch.arange(0, idx.size(1), dtype=torch.long).unsqueeze(0)
        x = self.wte(idx) + self.wpe(pos)
        del pos
        for block in self.h:
            x = block(x, cache)
        x = self.ln_f(x)[:, -1:, :]
        return nn.functional.linear(x, self.wte.weight)  # Tied lm_head.


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", help="unused: the oracle model is built here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Gpt2().eval()
    checks = generate_oracle.Checks()
    # NB: the causal-mask buffers (bool [1, 1, CTX, CTX] per layer) are live throughout, as torchcost's BUFFER;
    # check_cases adds them to the measured peaks. At these sizes the last decode step peaks at the last layer's
    # values cat, where torch.cat holds the past values (S + T - 2 tokens) and the new ones (S + T - 1) at once.
    # 2 (keys, values) x layers x heads x head_dim x 4 bytes per token and sequence.
    generate_oracle.check_cases(checks, args.torchcost, "gpt2", BUILDER, model, CASES, VOCAB, 2 * LAYERS * H * 4)
    return checks.finish()

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
