"""The Llama family's decoder pieces in plain torch, shared by hf_reference.py's Llama and hf_decoders.py's
config.json decoders: LlamaRMSNorm, the rotary tables, rotate_half, repeat_kv, the eager attention and the
gated MLP.

References (huggingface/transformers):

  llama    src/transformers/models/llama/modeling_llama.py, 002272831fba584eb30dca9729c1be456836960a
           (v4.39/v4.40 era): LlamaRMSNorm, rotate_half, repeat_kv, LlamaAttention (eager,
           config.pretraining_tp = 1, no KV cache), LlamaMLP (hidden_act silu)
  llama    the same file at 5dd4a63548857797727ae73eeb6a6e886ea02a3e: LlamaRotaryEmbedding, called once per
           forward by LlamaModel.forward, its (cos, sin) passed to every layer's attention
           (position_embeddings)
  the others: hf_decoders.py's docstring (qwen2's biases, qwen3's per-head q_norm and k_norm, phi3's fused
           projections, gemma's GeGLU and head_dim, gemma2's scaling, soft-capping and alternating sliding
           window, mistral's sliding window)
"""

import math

import torch
from torch import nn


class LlamaRMSNorm(nn.Module):
    """modeling_llama.LlamaRMSNorm: statistics in float32, cast back before the weight."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class GemmaRMSNorm(nn.Module):
    """modeling_gemma.GemmaRMSNorm: the weight applied as (1 + w) in float32, then cast back."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


def rotate_half(x):
    """modeling_llama.rotate_half (x.shape[-1] // 2 read once: the same slices)."""
    half = x.shape[-1] // 2
    x1 = x[..., :half]
    x2 = x[..., half:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(hidden_states, n_rep):
    """modeling_llama.repeat_kv: expand + reshape (a copy), or the input itself when n_rep is 1."""
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class RotaryEmbedding(nn.Module):
    """LlamaRotaryEmbedding (rope_type "default"): cos, sin [T, head_dim] for the T tokens of x [B, T, ...].

    Departures: computed from arange (LlamaRotaryEmbedding.forward's float32 math:
    inv_freq = 1 / base^(arange(0, d, 2) / d), freqs = positions x inv_freq, cat, cos, sin,
    then .to(dtype=x.dtype)) instead of from an inv_freq buffer and position_ids [1, T]
    (no gradient flows through them; the buffer is hd/2 floats; [T, hd] holds the bytes of
    [1, T, hd]), and without the multiplication by attention_scaling (1.0 for "default").
    """

    def __init__(self, c):
        super().__init__()
        h, H = c["hidden_size"], c["num_attention_heads"]
        self.head_dim = c.get("head_dim") or (128 if c.get("model_type") == "qwen3" else h // H)
        # Phi3RotaryEmbedding: dim = int(head_dim * partial_rotary_factor).
        self.head_dim = int(self.head_dim * c.get("partial_rotary_factor", 1.0))
        self.rope_theta = c.get("rope_theta", 10000.0)

    def forward(self, x):
        dims = torch.arange(0, self.head_dim, 2, device=x.device).float()
        inv_freq = 1.0 / (self.rope_theta ** (dims / self.head_dim))
        t = torch.arange(x.shape[1], dtype=torch.float32, device=x.device)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


class Attention(nn.Module):
    """LlamaAttention / MistralAttention / Qwen2Attention / Qwen3Attention / GemmaAttention / Gemma2Attention /
    Gemma3Attention / GraniteAttention / Phi3Attention (eager, attention_dropout = 0), of a config.json dict.

    forward(x, position_embeddings) takes the model's (cos, sin) (RotaryEmbedding, made once per forward).

    Departures: the additive causal mask (LlamaModel._update_causal_mask:
    finfo(dtype).min above the diagonal, in the model's dtype) is made per layer as
    [T, T] instead of once per forward; F.dropout(p=0.0) returns its input and is left out.
    """

    def __init__(self, c, layer_idx=0):
        super().__init__()
        self.c = c
        h, H, K = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hidden_size = h
        self.gemma2 = c["model_type"] == "gemma2"
        self.gemma3 = c["model_type"] == "gemma3_text"
        self.granite = c["model_type"] == "granite"
        self.olmo2 = c["model_type"] == "olmo2"
        self.num_heads, self.num_key_value_heads = H, K
        self.qwen3 = c["model_type"] in ("qwen3", "qwen3_moe")
        self.head_dim = c.get("head_dim") or (128 if c.get("model_type") == "qwen3" else h // H)
        self.groups = H // K
        self.window = c.get("sliding_window") or 0
        if self.gemma2:
            # Gemma2Attention: sliding_window if not bool(layer_idx % 2) else None.
            self.window = c.get("sliding_window", 4096) if not bool(layer_idx % 2) else 0
            self.scaling = c.get("query_pre_attn_scalar", 256) ** -0.5
            self.attn_logit_softcapping = c.get("attn_logit_softcapping", 50.0)
        if self.gemma3:
            # Gemma3Attention: is_sliding unless (layer_idx + 1) % sliding_window_pattern == 0
            # (Gemma3TextConfig's layer_types); scaling query_pre_attn_scalar**-0.5; no soft-cap by default.
            self.is_sliding = bool((layer_idx + 1) % c.get("sliding_window_pattern", 6))
            self.window = c.get("sliding_window", 4096) if self.is_sliding else 0
            self.scaling = c.get("query_pre_attn_scalar", 256) ** -0.5
            self.attn_logit_softcapping = c.get("attn_logit_softcapping")
        if self.granite:  # GraniteAttention: self.scaling = config.attention_multiplier
            self.scaling = c.get("attention_multiplier", 1.0)
            self.attn_logit_softcapping = None
        d = self.head_dim
        if c["model_type"] == "phi3":
            self.o_proj = nn.Linear(H * d, h, bias=False)
            self.qkv_proj = nn.Linear(h, H * d + 2 * K * d, bias=False)
        else:
            qwen2 = c["model_type"] in ("qwen2", "qwen2_moe")
            qkv_bias = qwen2 or c.get("attention_bias", False)
            o_bias = not qwen2 and c.get("attention_bias", False)
            self.q_proj = nn.Linear(h, H * d, bias=qkv_bias)
            self.k_proj = nn.Linear(h, K * d, bias=qkv_bias)
            self.v_proj = nn.Linear(h, K * d, bias=qkv_bias)
            self.o_proj = nn.Linear(H * d, h, bias=o_bias)
        if self.qwen3 or self.gemma3:
            # Qwen3Attention and Gemma3Attention: RMSNorms over each head's head_dim, registered after o_proj.
            eps = c.get("rms_norm_eps", 1e-6)
            norm = GemmaRMSNorm if self.gemma3 else LlamaRMSNorm
            self.q_norm = norm(d, eps)
            self.k_norm = norm(d, eps)
        if self.olmo2:
            # Olmo2Attention: RMSNorms over the whole q and k projections, registered after o_proj.
            eps = c.get("rms_norm_eps", 1e-6)
            self.q_norm = LlamaRMSNorm(H * d, eps)
            self.k_norm = LlamaRMSNorm(K * d, eps)

    def forward(self, x, position_embeddings):
        bsz, q_len, _ = x.size()
        H, K, d = self.num_heads, self.num_key_value_heads, self.head_dim
        if self.c["model_type"] == "phi3":
            qkv = self.qkv_proj(x)
            query_pos = H * d
            q = qkv[..., :query_pos]
            k = qkv[..., query_pos: query_pos + K * d]
            v = qkv[..., query_pos + K * d:]
        else:
            q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.olmo2:  # q_norm(q_proj(x)), then the view
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.view(bsz, q_len, H, d)
        k = k.view(bsz, q_len, K, d)
        if self.qwen3:  # q_norm(q_proj(x).view(hidden_shape)).transpose(1, 2)
            q, k = self.q_norm(q), self.k_norm(k)
        q = q.transpose(1, 2)
        k = k.transpose(1, 2)
        if self.gemma3:  # Gemma3Attention: q_norm(q_proj(x).view(hidden_shape).transpose(1, 2))
            q, k = self.q_norm(q), self.k_norm(k)
        v = v.view(bsz, q_len, K, d).transpose(1, 2)
        cos, sin = position_embeddings
        rotary_dim = cos.shape[-1]
        if rotary_dim < d:
            # Phi-3's apply_rotary_pos_emb: the first rotary_dim dims rotated, the rest passed through.
            q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
            k_rot, k_pass = k[..., :rotary_dim], k[..., rotary_dim:]
            q = torch.cat([(q_rot * cos) + (rotate_half(q_rot) * sin), q_pass], dim=-1)
            k = torch.cat([(k_rot * cos) + (rotate_half(k_rot) * sin), k_pass], dim=-1)
        else:
            q = (q * cos) + (rotate_half(q) * sin)
            k = (k * cos) + (rotate_half(k) * sin)
        k = repeat_kv(k, self.groups)
        v = repeat_kv(v, self.groups)
        if self.gemma2 or self.gemma3 or self.granite:
            attn = torch.matmul(q, k.transpose(2, 3)) * self.scaling
            if self.attn_logit_softcapping is not None:
                attn = attn / self.attn_logit_softcapping
                attn = torch.tanh(attn)
                attn = attn * self.attn_logit_softcapping
        else:
            attn = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(d)
        dtype = x.dtype
        mask = torch.full((q_len, q_len), torch.finfo(dtype).min, dtype=dtype, device=x.device).triu(1)
        if self.window:
            # The sliding window: keys at or before q - window are masked too.
            mask = mask + torch.full((q_len, q_len), torch.finfo(dtype).min, dtype=dtype,
                                     device=x.device).tril(-self.window)
        attn = attn + mask
        attn = nn.functional.softmax(attn, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(attn, v).transpose(1, 2).contiguous()
        out = out.reshape(bsz, q_len, H * d)
        return self.o_proj(out)


class MLP(nn.Module):
    """The gated MLP: separate gate_proj / up_proj, or Phi-3's fused gate_up_proj."""

    def __init__(self, c):
        super().__init__()
        h, inter = c["hidden_size"], c["intermediate_size"]
        self.fused = c["model_type"] == "phi3"
        if self.fused:
            self.gate_up_proj = nn.Linear(h, 2 * inter, bias=False)
        else:
            bias = c.get("mlp_bias", False)
            self.gate_proj = nn.Linear(h, inter, bias=bias)
            self.up_proj = nn.Linear(h, inter, bias=bias)
        self.down_proj = nn.Linear(inter, h, bias=c.get("mlp_bias", False) and not self.fused)
        if c["model_type"] in ("gemma", "gemma2", "gemma3_text"):
            self.act = lambda t: nn.functional.gelu(t, approximate="tanh")  # gelu_pytorch_tanh
        else:
            self.act = nn.functional.silu

    def forward(self, x):
        if self.fused:
            up_states = self.gate_up_proj(x)
            gate, up_states = up_states.chunk(2, dim=-1)
            return self.down_proj(up_states * self.act(gate))
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))
