#!/usr/bin/python3
"""Checks `torchcost --model gpt_neox --mode generate` against a real generation with a KV cache.

Usage: /usr/bin/python3 tests/python/test_generate_neox.py --torchcost PATH

The oracle is a tiny GPT-NeoX in plain torch (parallel residual, partial
rotary: rotary_pct 0.25 of head_dim 16, so 4 dims rotate and 12 pass; eval,
float32), op for op as Hugging Face's GPTNeoXAttention and GPTNeoXLayer are
written in transformers src/transformers/models/gpt_neox/modeling_gpt_neox.py
at 006bd23dd0ce18d54e1cf260b09b15fa943a731d (and src/builder/gpt_neox.cc): the
fused query_key_value viewed [B, T, heads, 3 head_dim] and sliced per head;
rotary_emb's cos_cached[:seq_len] and sin_cached[:seq_len] gathered by
position_ids and unsqueezed; q_rot * cos + rotate_half(q_rot) * sin, then
cat with the pass-through dims; _attn's zeros + baddbmm(alpha=head_dim^-0.5),
torch.where on the bool `bias` buffer's causal slice with a 0-dim
finfo.min, softmax, matmul; _merge_heads' permute + contiguous; x + attn(ln1(x))
+ mlp(ln2(x)) computed as (mlp + attn) + x; embed_out on the last position only
(generate()'s logits_to_keep=1). The KV cache: that file's GPTNeoXAttention
keeps the past keys and values and grows them with torch.cat((past_key, key),
dim=-2) after the rotary embedding, as later versions do through
layer_past.update (a DynamicCache: generate_oracle.Cache, which cats the
prompt's keys and values onto an empty tensor, a copy). Measured and compared
by generate_oracle.check_cases: params, kv bytes per token, the prefill's and
the last decode step's peaks, exact.

Departures from Hugging Face, none of which changes a byte: the decode step's
position is 0 (one gathered cos row either way, as the builder does); the
decode step adds no mask (one query sees every cached key; the mask's row is
all true); rotary_emb slices by the new tokens' count. One that would, not
modelled: the tuple cache of that commit keeps the prompt's value as a view of
qkv (no copy), so qkv stays alive with the cache; a DynamicCache copies it. As
in test_generate.py, locals are `del`eted where the graph's liveness ends.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import generate_oracle  # noqa: E402  (first: it puts tools/ and python/ on the path)
import torch  # noqa: E402
from torch import nn  # noqa: E402

from torchcost.reference.hf_reference import rotate_half  # noqa: E402

H, HEADS, LAYERS, INTER, VOCAB, CTX, ROTARY_PCT = 64, 4, 2, 256, 256, 128, 0.25
HD = H // HEADS
RD = int(HD * ROTARY_PCT)  # GPTNeoXAttention.rotary_ndims.
BUILDER = ("layers=%d,hidden=%d,heads=%d,intermediate=%d,vocab=%d,context=%d,rotary_pct=%s,parallel_residual=true,"
           "attn=eager" % (LAYERS, H, HEADS, INTER, VOCAB, CTX, ROTARY_PCT))
CASES = [(1, 16, 4), (2, 40, 9), (3, 7, 2)]
# NB: Hugging Face's GPTNeoXAttention hands the new keys and values to the cache in one call
# (layer_past.update(key, value, ...), or the tuple's two cats), so the new keys (a cat's output after the
# rotary embedding, [B, heads, T, head_dim]) stay alive through the values' cat; a traced graph, and torchcost,
# free them after the keys' cat. The oracle frees them as the graph does (Cache.update_list), and the peaks
# are exact. Held as Hugging Face holds them, the last decode step of HELD[0] = (B, S, T) peaks at the last
# layer's values cat with those keys alive: HELD[1] = B x heads x 1 x head_dim x 4 bytes above, measured
# below. torchcost does not model this (src/builder/generation_phase.cc frees them).
HELD = ((2, 40, 9), 2 * HEADS * 1 * HD * 4)


class Attention(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.i = i
        self.hold_key = False  # True: the new keys live through the values' cat, as Hugging Face's (HELD).
        self.register_buffer("bias", torch.tril(torch.ones((CTX, CTX), dtype=torch.bool)).view(1, 1, CTX, CTX))
        self.register_buffer("masked_bias", torch.tensor(-1e9))
        # GPTNeoXRotaryEmbedding's buffers: inv_freq and the [CTX, RD] cos and sin caches.
        inv_freq = 1.0 / (10000 ** (torch.arange(0, RD, 2).float() / RD))
        freqs = torch.outer(torch.arange(CTX, dtype=torch.float32), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("inv_freq", inv_freq)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())
        self.query_key_value = nn.Linear(H, 3 * H)
        self.dense = nn.Linear(H, H)

    def forward(self, x, position_ids, cache):
        B, T, _ = x.size()
        qkv = self.query_key_value(x).view(B, T, HEADS, 3 * HD)
        q = qkv[..., :HD].permute(0, 2, 1, 3)
        k = qkv[..., HD:2 * HD].permute(0, 2, 1, 3)
        v = qkv[..., 2 * HD:].permute(0, 2, 1, 3)
        del qkv
        q_rot, q_pass = q[..., :RD], q[..., RD:]
        k_rot, k_pass = k[..., :RD], k[..., RD:]
        del q, k
        seq = k_rot.shape[-2]
        cos = self.cos_cached[:seq][position_ids].unsqueeze(1)
        sin = self.sin_cached[:seq][position_ids].unsqueeze(1)
        q_emb = q_rot * cos + rotate_half(q_rot) * sin
        del q_rot
        a = k_rot * cos
        del cos
        b = rotate_half(k_rot) * sin
        del sin, k_rot
        k_emb = a + b
        del a, b
        q = torch.cat((q_emb, q_pass), dim=-1)
        del q_emb, q_pass
        k = torch.cat((k_emb, k_pass), dim=-1)
        del k_emb, k_pass
        if self.hold_key:
            k, v = cache.update(k, v, self.i)
        else:
            kv = [k, v]
            del k, v
            k, v = cache.update_list(kv, self.i)
        # _attn.
        ql, kl = q.size(2), k.size(2)
        q = q.view(B * HEADS, ql, HD)
        scores = torch.zeros(B * HEADS, ql, kl, dtype=q.dtype)
        scores = torch.baddbmm(scores, q, k.view(B * HEADS, kl, HD).transpose(1, 2), beta=1.0,
                               alpha=HD ** -0.5)
        del q, k
        scores = scores.view(B, HEADS, ql, kl)
        if ql > 1:
            mask_value = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
            scores = torch.where(self.bias[:, :, kl - ql:kl, :kl], scores, mask_value)
            del mask_value
        att = nn.functional.softmax(scores, dim=-1).to(v.dtype)
        del scores
        y = torch.matmul(att, v)
        del att, v
        y = y.permute(0, 2, 1, 3).contiguous()
        y = y.view(B, T, H)
        return self.dense(y)


class Mlp(nn.Module):
    """GPTNeoXMLP: a module of its own, so its caller holds its input (ln2(x)) until it returns."""

    def __init__(self):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(H, INTER)
        self.dense_4h_to_h = nn.Linear(INTER, H)

    def forward(self, x):
        return self.dense_4h_to_h(nn.functional.gelu(self.dense_h_to_4h(x)))


class Layer(nn.Module):
    def __init__(self, i):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(H)
        self.post_attention_layernorm = nn.LayerNorm(H)
        self.attention = Attention(i)
        self.mlp = Mlp()

    def forward(self, x, position_ids, cache):
        attn = self.attention(self.input_layernorm(x), position_ids, cache)
        mlp = self.mlp(self.post_attention_layernorm(x))
        return mlp + attn + x


class Neox(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_in = nn.Embedding(VOCAB, H)
        self.layers = nn.ModuleList([Layer(i) for i in range(LAYERS)])
        self.final_layer_norm = nn.LayerNorm(H)
        self.embed_out = nn.Linear(H, VOCAB, bias=False)  # Untied (tie_word_embeddings false).

    def forward(self, ids, cache):
        position_ids = torch.arange(0, ids.size(1), dtype=torch.long).unsqueeze(0)
        x = self.embed_in(ids)
        for layer in self.layers:
            x = layer(x, position_ids, cache)
        return self.embed_out(self.final_layer_norm(x)[:, -1:, :])


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", help="unused: the oracle model is built here")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = Neox().eval()
    checks = generate_oracle.Checks()
    # Parameters: embed_in and embed_out V h each; per layer two LayerNorms 4 h, query_key_value 3 h^2 + 3 h,
    # dense h^2 + h, the MLP 2 h I + I + h; final_layer_norm 2 h.
    per_layer = 4 * H + 3 * H * H + 3 * H + H * H + H + 2 * H * INTER + INTER + H
    checks.check("params (derived)", sum(p.numel() for p in model.parameters()),
                 2 * VOCAB * H + LAYERS * per_layer + 2 * H)
    # 2 (keys, values) x layers x heads x head_dim x 4 bytes per token and sequence (no GQA in GPT-NeoX).
    measured = generate_oracle.check_cases(checks, args.torchcost, "gpt_neox", BUILDER, model, CASES, VOCAB,
                                           2 * LAYERS * HEADS * HD * 4, label="gpt_neox")
    for module in model.modules():
        if isinstance(module, Attention):
            module.hold_key = True
    B, S, T = HELD[0]
    held = generate_oracle.measure(model, B, S, T, VOCAB)["decode"] - measured[HELD[0]]["decode"]
    checks.check("gpt_neox B=%d S=%d T=%d decode with Hugging Face's held keys: bytes above" % HELD[0], held,
                 HELD[1])
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
