"""Hugging Face's LlamaForCausalLM and GPT2LMHeadModel re-implemented in plain torch.

The oracle models of torchcost's half-precision families (tests/python/test_halfprec.py,
tests/python/test_builder.py): each forward follows the reference code line by line,
including where it computes in float32 under a bfloat16 or float16 model
(model.to(dtype)), so that a trace of these classes, PyTorch's own measurement of
them, and `torchcost --model llama|gpt2 --config ...,dtype=bf16` describe one model.

References (Hugging Face transformers, read at these commits):

  Llama   src/transformers/models/llama/modeling_llama.py,
          commit 002272831fba584eb30dca9729c1be456836960a (v4.39/v4.40 era), eager
          attention (LlamaAttention), config.pretraining_tp = 1, no KV cache; its attention
          and MLP are decoder_layers.py's, which hf_decoders.py's config.json decoders share; the
          RoPE tables are made once per forward and passed to every layer, as LlamaModel.forward
          does at 5dd4a63548857797727ae73eeb6a6e886ea02a3e (decoder_layers.RotaryEmbedding).
  GPT2    src/transformers/models/gpt2/modeling_gpt2.py,
          commit 0010f60284ab4b9d14b7df9c6525b1a2ad44e640, eager GPT2Attention._attn,
          reorder_and_upcast_attn = False (the default).

Where these classes depart from the reference, the departure changes no saved
tensor, gradient or optimizer state (each is named in the class's docstring).

Usage: `from torchcost.reference import hf_reference; hf_reference.build("llama_hf_tiny", torch.bfloat16)`.
"""

import math

import torch
from torch import nn

# repeat_kv and rotate_half are imported from here too (tests/python/test_generate.py).
from .decoder_layers import MLP, Attention, LlamaRMSNorm, RotaryEmbedding, repeat_kv, rotate_half  # noqa: F401


class LlamaDecoderLayer(nn.Module):
    """modeling_llama.LlamaDecoderLayer.forward: residual = hidden_states, taken before each norm."""

    def __init__(self, hidden_size, num_heads, num_key_value_heads, intermediate_size, eps):
        super().__init__()
        # The config.json keys of decoder_layers' Attention and MLP (LlamaConfig's defaults otherwise).
        c = {"model_type": "llama", "hidden_size": hidden_size, "num_attention_heads": num_heads,
             "num_key_value_heads": num_key_value_heads, "intermediate_size": intermediate_size}
        self.input_layernorm = LlamaRMSNorm(hidden_size, eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = LlamaRMSNorm(hidden_size, eps)
        self.mlp = MLP(c)

    def forward(self, hidden_states, position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        return residual + hidden_states


class Llama(nn.Module):
    """LlamaForCausalLM's forward without labels: embed, decoder layers, norm, lm_head.

    Departures: the decoder's modules sit at the root (embed_tokens, layers, norm, rotary_emb)
    instead of under `model.` (names only); the logits are returned as lm_head makes
    them, in the model's dtype: v4.40's `logits = logits.float()` belongs to the loss
    (torchcost's --loss causal_lm); the step here is out.sum().
    """

    def __init__(self, vocab=512, hidden=128, heads=4, kv_heads=2, layers=2, intermediate=352, eps=1e-6,
                 tie=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(hidden, heads, kv_heads, intermediate, eps) for _ in range(layers)])
        self.norm = LlamaRMSNorm(hidden, eps)
        self.rotary_emb = RotaryEmbedding({"hidden_size": hidden, "num_attention_heads": heads})
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        if tie:
            self.lm_head.weight = self.embed_tokens.weight  # tie_word_embeddings.

    def config(self):
        """The torchcost --config of this model (without dtype)."""
        attn = self.layers[0].self_attn
        return ("layers=%d,hidden=%d,heads=%d,kv_heads=%d,intermediate=%d,vocab=%d,eps=%r,rope_base=%r,tie=%s" % (
            len(self.layers), attn.hidden_size, attn.num_heads, attn.num_key_value_heads,
            self.layers[0].mlp.gate_proj.out_features, self.embed_tokens.num_embeddings,
            self.norm.variance_epsilon, self.rotary_emb.rope_theta,
            "true" if self.lm_head.weight is self.embed_tokens.weight else "false"))

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        position_embeddings = self.rotary_emb(hidden_states)
        for decoder_layer in self.layers:
            hidden_states = decoder_layer(hidden_states, position_embeddings)
        hidden_states = self.norm(hidden_states)
        return self.lm_head(hidden_states)


class Conv1D(nn.Module):
    """transformers' pytorch_utils.Conv1D: weight [nx, nf]; addmm(bias, x.view(-1, nx), weight).view(..., nf)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    """transformers' activations.NewGELUActivation (ACT2FN["gelu_new"], GPT-2's default)."""

    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class GPT2Attention(nn.Module):
    """modeling_gpt2.GPT2Attention (self-attention, eager _attn, scale_attn_weights, no
    layer-idx scaling, reorder_and_upcast_attn False). The masked_bias buffer is left out
    (unused by the forward)."""

    def __init__(self, embed_dim, num_heads, max_positions, attn_pdrop, resid_pdrop):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
            1, 1, max_positions, max_positions))
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.split_size = embed_dim
        self.c_attn = Conv1D(3 * embed_dim, embed_dim)
        self.c_proj = Conv1D(embed_dim, embed_dim)
        self.attn_dropout = nn.Dropout(attn_pdrop)
        self.resid_dropout = nn.Dropout(resid_pdrop)

    def _attn(self, query, key, value):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full(
            [], value.size(-1) ** 0.5, dtype=attn_weights.dtype, device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        # Downcast (if necessary) back to V's dtype (if in mixed-precision) -- No-Op otherwise
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value)

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output = self._attn(query, key, value)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        return self.resid_dropout(attn_output)


class GPT2MLP(nn.Module):
    """modeling_gpt2.GPT2MLP: Conv1D c_fc, activation, Conv1D c_proj, dropout."""

    def __init__(self, intermediate_size, embed_dim, act, resid_pdrop):
        super().__init__()
        self.c_fc = Conv1D(intermediate_size, embed_dim)
        self.c_proj = Conv1D(embed_dim, intermediate_size)
        self.act = NewGELUActivation() if act == "gelu_new" else nn.GELU(approximate="tanh")
        self.dropout = nn.Dropout(resid_pdrop)

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return self.dropout(hidden_states)


class GPT2Block(nn.Module):
    """modeling_gpt2.GPT2Block (no cross-attention): residual + attn(ln_1), residual + mlp(ln_2)."""

    def __init__(self, hidden_size, num_heads, max_positions, eps, act, pdrop):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden_size, eps=eps)
        self.attn = GPT2Attention(hidden_size, num_heads, max_positions, pdrop, pdrop)
        self.ln_2 = nn.LayerNorm(hidden_size, eps=eps)
        self.mlp = GPT2MLP(4 * hidden_size, hidden_size, act, pdrop)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        return residual + feed_forward_hidden_states


class GPT2(nn.Module):
    """GPT2LMHeadModel's forward without labels: wte + wpe (position_ids from arange),
    drop, blocks, ln_f, the tied lm_head. Departures: the transformer's modules sit at
    the root instead of under `transformer.` (names only)."""

    def __init__(self, vocab=512, hidden=128, heads=4, layers=2, n_positions=128, eps=1e-5, act="gelu_new",
                 pdrop=0.0):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(n_positions, hidden)
        self.drop = nn.Dropout(pdrop)
        self.h = nn.ModuleList([GPT2Block(hidden, heads, n_positions, eps, act, pdrop) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(hidden, eps=eps)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tie_word_embeddings.

    def forward(self, input_ids):
        input_shape = input_ids.size()
        position_ids = torch.arange(0, input_shape[-1], dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0)
        inputs_embeds = self.wte(input_ids)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        hidden_states = self.drop(hidden_states)
        output_shape = (-1,) + input_shape[1:] + (hidden_states.size(-1),)
        for block in self.h:
            hidden_states = block(hidden_states)
        hidden_states = self.ln_f(hidden_states)
        hidden_states = hidden_states.view(output_shape)
        return self.lm_head(hidden_states)


# name -> (class, constructor arguments); inputs int64 token ids [2, 64].
MODELS = {
    "llama_hf_tiny": (Llama, {}),
    "llama_hf_tiny_tied": (Llama, {"tie": True, "kv_heads": 4}),
    "gpt2_hf_tiny": (GPT2, {}),
}
VOCAB = 512
INPUT_SHAPE = [2, 64]


def build(name, dtype=torch.float32):
    """Returns the model (weights drawn under torch.manual_seed(0), then .to(dtype)), in eval mode."""
    cls, kwargs = MODELS[name]
    torch.manual_seed(0)
    return cls(**kwargs).to(dtype).eval()


def example_input(batch=None):
    """Token ids [B, 64] drawn under torch.manual_seed(0)."""
    torch.manual_seed(0)
    shape = list(INPUT_SHAPE)
    if batch is not None:
        shape[0] = batch
    return torch.randint(0, VOCAB, shape)
