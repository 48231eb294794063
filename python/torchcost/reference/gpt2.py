"""GPT-2 in plain torch, as torchcost's `gpt2` family builds it (src/builder/gpt2.cc).

The model of tools/make_fixtures.py's "gpt2_tiny" fixture, against which tests/python/test_builder.py
checks the family, and the module `python3 -m torchcost.calibrate gpt2 --config ...` runs: GPT-2 as Hugging
Face writes it (Conv1D projections as addmm, torch.where causal mask, GELU tanh, tied head).
"""

import math

import torch
from torch import nn


class GPT2Attention(nn.Module):
    """GPT-2's attention as Hugging Face writes it: Conv1D projections (addmm with a
    [in, out] weight), causal mask applied with torch.where on a bool tril buffer."""

    def __init__(self, d_model, n_head, context, dropout):
        super().__init__()
        self.n_head = n_head
        self.d_model = d_model
        self.c_attn_weight = nn.Parameter(torch.randn(d_model, 3 * d_model) * 0.02)
        self.c_attn_bias = nn.Parameter(torch.zeros(3 * d_model))
        self.c_proj_weight = nn.Parameter(torch.randn(d_model, d_model) * 0.02)
        self.c_proj_bias = nn.Parameter(torch.zeros(d_model))
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.register_buffer("bias", torch.tril(torch.ones(context, context, dtype=torch.bool))
                             .view(1, 1, context, context))

    def forward(self, x):
        B, T, C = x.size()
        qkv = self.conv1d("c_attn", x.view(-1, C)).view(B, T, 3 * C)
        q, k, v = qkv.split(self.d_model, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).permute(0, 2, 1, 3)
        k = k.view(B, T, self.n_head, hd).permute(0, 2, 1, 3)
        v = v.view(B, T, self.n_head, hd).permute(0, 2, 1, 3)
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd)
        causal = self.bias[:, :, :T, :T]
        mask_value = torch.full([], torch.finfo(att.dtype).min, dtype=att.dtype, device=att.device)
        att = torch.where(causal, att, mask_value)
        att = self.attn_dropout(nn.functional.softmax(att, dim=-1))
        y = torch.matmul(att, v).permute(0, 2, 1, 3).contiguous().view(B, T, C)
        y = self.conv1d("c_proj", y.view(-1, C)).view(B, T, C)
        return self.resid_dropout(y)

    def conv1d(self, name, x):
        """transformers' Conv1D on <name>_weight [in, out]: addmm(<name>_bias, x, <name>_weight); with
        tools/peft_torch.py's adapter attached as the child module <name>, the adapted result."""
        y = torch.addmm(getattr(self, name + "_bias"), x, getattr(self, name + "_weight"))
        adapter = self._modules.get(name)
        return y if adapter is None else adapter(x, y)


class GPT2Block(nn.Module):
    """Pre-LN block with GELU (tanh approximation) MLP, as GPT-2."""

    def __init__(self, d_model, n_head, context, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = GPT2Attention(d_model, n_head, context, dropout)
        self.ln_2 = nn.LayerNorm(d_model)
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d_model, d_model)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.drop(self.c_proj(self.act(self.c_fc(self.ln_2(x)))))


class GPT2(nn.Module):
    """GPT-2 in plain torch: learned positions, LayerNorm, GELU-tanh MLP, tied head."""

    def __init__(self, vocab=512, d_model=128, n_head=4, n_layer=2, context=128, dropout=0.1):
        super().__init__()
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList([GPT2Block(d_model, n_head, context, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # Tied.

    def forward(self, idx):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))
