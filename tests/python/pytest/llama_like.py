"""A LLaMA-like decoder in plain torch (RMSNorm, rotary-free attention, SwiGLU MLP), for tests and measurements.

Built with device="meta" it holds no weights: a 7B configuration costs nothing to make.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, device=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim, device=device))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, dim, heads, device=None):
        super().__init__()
        self.heads = heads
        self.q_proj = nn.Linear(dim, dim, bias=False, device=device)
        self.k_proj = nn.Linear(dim, dim, bias=False, device=device)
        self.v_proj = nn.Linear(dim, dim, bias=False, device=device)
        self.o_proj = nn.Linear(dim, dim, bias=False, device=device)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q = self.q_proj(x).view(b, s, h, d // h).transpose(1, 2)
        k = self.k_proj(x).view(b, s, h, d // h).transpose(1, 2)
        v = self.v_proj(x).view(b, s, h, d // h).transpose(1, 2)
        a = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d // h)
        a = F.softmax(a, dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(b, s, d)
        return self.o_proj(o)


class MLP(nn.Module):
    def __init__(self, dim, hidden, device=None):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False, device=device)
        self.up_proj = nn.Linear(dim, hidden, bias=False, device=device)
        self.down_proj = nn.Linear(hidden, dim, bias=False, device=device)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden, device=None):
        super().__init__()
        self.input_layernorm = RMSNorm(dim, device=device)
        self.self_attn = Attention(dim, heads, device=device)
        self.post_attention_layernorm = RMSNorm(dim, device=device)
        self.mlp = MLP(dim, hidden, device=device)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaLike(nn.Module):
    def __init__(self, vocab=32000, dim=4096, layers=32, heads=32, hidden=11008, device=None):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim, device=device)
        self.layers = nn.ModuleList([Block(dim, heads, hidden, device=device) for _ in range(layers)])
        self.norm = RMSNorm(dim, device=device)
        self.lm_head = nn.Linear(dim, vocab, bias=False, device=device)

    def forward(self, idx):
        x = self.embed_tokens(idx)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))
