"""Hugging Face decoders re-implemented in plain torch from a config.json dict.

The oracle models of tests/python/test_hf_config.py: LlamaForCausalLM,
MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GemmaForCausalLM and Phi3ForCausalLM with
eager attention, each module registered under the name and with the shape its
modeling file gives it, so that a trace of Decoder(config) and
`torchcost --model config.json` describe one model.

References (huggingface/transformers):

  llama    src/transformers/models/llama/modeling_llama.py, 002272831fba584eb30dca9729c1be456836960a
           (decoder_layers.py's attention and MLP, shared with hf_reference.py's Llama)
  mistral  src/transformers/models/mistral/modeling_mistral.py (Llama's layers; sliding_window masks
           the keys at or before q - window)
  qwen2    src/transformers/models/qwen2/modeling_qwen2.py, 00d4b3d2142cb4ced2f51b90614b5d26bc045015:
           q_proj, k_proj, v_proj with bias=True, o_proj bias=False
  qwen3    src/transformers/models/qwen3/modeling_qwen3.py, 9ee3f431c32e9e5f6c0888f6b2b0ca3f6c289dd6:
           q, k, v and o biased when attention_bias; Qwen3Attention's q_norm and k_norm
           (Qwen3RMSNorm(head_dim)) on q_proj(x).view(B, S, -1, head_dim) and k_proj's, before the
           transpose and RoPE; head_dim default 128 (Qwen3Config)
  qwen3_moe src/transformers/models/qwen3_moe/modeling_qwen3_moe.py,
           16b6c53c8ec3a720bd45c1c377bf94e1d01249c5: qwen3's attention; Qwen3MoeSparseMoeBlock is
           Qwen2MoeSparseMoeBlock without the shared expert (softmax in float32, top-k,
           norm_topk_prob)
  gemma    src/transformers/models/gemma/modeling_gemma.py, 0125ac68d92d1866341d531c52af7165af06f3e9:
           GemmaRMSNorm (x.float() normalized, * (1.0 + weight.float()), type_as(x)), head_dim from the
           config, embeddings * hidden_size**0.5, GeGLU (gelu_pytorch_tanh), tied lm_head
  phi3     src/transformers/models/phi3/modeling_phi3.py, 00d4b3d2142cb4ced2f51b90614b5d26bc045015:
           qkv_proj sliced into q, k, v; gate_up_proj chunked into gate, up; up * act(gate)
  gemma2   src/transformers/models/gemma2/modeling_gemma2.py, 006e86931247d7bacf94ad00ada1fb6baf11e94b:
           Gemma's layers; Gemma2DecoderLayer's post_attention_layernorm on the attention output
           and pre_feedforward_layernorm / post_feedforward_layernorm around the MLP;
           eager_attention_forward's scores * query_pre_attn_scalar**-0.5, then
           attn_logit_softcapping (/ cap, tanh, * cap); sliding_window on the layers with
           layer_idx % 2 == 0; Gemma2ForCausalLM's final_logit_softcapping on the logits
  gemma3_text src/transformers/models/gemma3/modeling_gemma3.py, f14d0cbc824e447ef294d8cdc0f8ad4222f3dfee:
           Gemma-2's layers and scaling without soft-caps by default; Gemma3Attention's q_norm and k_norm
           (Gemma3RMSNorm(head_dim)) after the transpose, before RoPE; sliding_window on every layer but
           each sliding_window_pattern-th ((layer_idx + 1) % pattern == 0 is global), whose RoPE tables
           come from rope_local_base_freq (rotary_emb_local); Gemma3TextScaledWordEmbedding's embed_scale
           buffer
  olmo2    src/transformers/models/olmo2/modeling_olmo2.py, 7264638d7b0ab5841670813ebed806189b8f7b71:
           q_norm and k_norm over the whole projections before the view; no input_layernorm, the
           post_attention_layernorm and post_feedforward_layernorm on each branch before its add
  granite  src/transformers/models/granite/modeling_granite.py, b6dd89b47daad100034ac4e3b7beb2101f07d7f1:
           Llama's layers with inputs_embeds * embedding_multiplier, scores * attention_multiplier,
           residual + branch * residual_multiplier (both residuals) and logits / logits_scaling

Departures, none of which changes a parameter, a saved tensor or a FLOP count: the
RoPE tables are computed from arange (decoder_layers.py's
RotaryEmbedding explains it), once per forward as the references' *Model.forward does; the scores are divided by sqrt(head_dim) where
Qwen2, Gemma and Phi-3 multiply by head_dim**-0.5; the causal mask is made per
layer as [T, T] (Gemma-2's model-wide [B, 1, T, T] mask and its torch.where for the
window likewise: masks are constants); dropouts with p = 0 are left out (F.dropout
returns its input); Gemma2ForCausalLM's hidden_states[:, -0:, :] before lm_head (a view)
is left out.
"""

import torch
from torch import nn

from .decoder_layers import MLP, Attention, GemmaRMSNorm, LlamaRMSNorm, RotaryEmbedding


class ExpertMLP(nn.Module):
    """MixtralBlockSparseTop2MLP (w1, w2, w3) or Qwen2MoeMLP (gate_proj, up_proj, down_proj): down(silu(gate(x)) * up(x))."""

    def __init__(self, hidden, inter, mixtral):
        super().__init__()
        self.mixtral = mixtral
        if mixtral:
            self.w1 = nn.Linear(hidden, inter, bias=False)
            self.w2 = nn.Linear(inter, hidden, bias=False)
            self.w3 = nn.Linear(hidden, inter, bias=False)
        else:
            self.gate_proj = nn.Linear(hidden, inter, bias=False)
            self.up_proj = nn.Linear(hidden, inter, bias=False)
            self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        if self.mixtral:
            return self.w2(nn.functional.silu(self.w1(x)) * self.w3(x))
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class SparseMoeBlock(nn.Module):
    """MixtralSparseMoeBlock (modeling_mixtral.py at 00d4b3d2142cb4ced2f51b90614b5d26bc045015) and
    Qwen2MoeSparseMoeBlock (a shared expert behind a sigmoid gate, norm_topk_prob) and
    Qwen3MoeSparseMoeBlock (Qwen2-MoE's without the shared expert).

    Departure: balanced routing. The reference computes each expert's tokens from the top-k
    choices (one_hot, torch.where: data-dependent shapes); here expert e takes tokens
    arange(n), n = tokens * top_k // num_experts, in slot 0, so the trace has the
    shapes balanced routing gives. Every other op is the reference's.
    """

    def __init__(self, c):
        super().__init__()
        self.mixtral = c["model_type"] == "mixtral"
        h = c["hidden_size"]
        self.hidden_dim = h
        qwen3 = c["model_type"] == "qwen3_moe"
        self.shared = c["model_type"] == "qwen2_moe"
        # The config classes' defaults: MixtralConfig, Qwen2MoeConfig, Qwen3MoeConfig.
        self.num_experts = (c.get("num_local_experts", 8) if self.mixtral
                            else c.get("num_experts", 128 if qwen3 else 60))
        self.top_k = c.get("num_experts_per_tok", 2 if self.mixtral else 8 if qwen3 else 4)
        self.norm_topk_prob = True if self.mixtral else c.get("norm_topk_prob", False)
        inter = (c["intermediate_size"] if self.mixtral
                 else c.get("moe_intermediate_size", 768 if qwen3 else 1408))
        self.gate = nn.Linear(h, self.num_experts, bias=False)
        self.experts = nn.ModuleList([ExpertMLP(h, inter, self.mixtral) for _ in range(self.num_experts)])
        if self.shared:
            self.shared_expert = ExpertMLP(h, c.get("shared_expert_intermediate_size", 5632), False)
            self.shared_expert_gate = nn.Linear(h, 1, bias=False)

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = nn.functional.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        if self.norm_topk_prob:
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros((batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
                                          device=hidden_states.device)
        n = hidden_states.size(0) * self.top_k // self.num_experts  # Balanced routing.
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            top_x = torch.arange(n, device=hidden_states.device)
            # The top-k slot of each token (values in [0, top_k)).
            idx = torch.zeros(n, dtype=torch.long, device=hidden_states.device)
            current_state = hidden_states.index_select(0, top_x)
            current_hidden_states = expert_layer(current_state) * routing_weights[top_x, idx].unsqueeze(-1)
            final_hidden_states.index_add_(0, top_x, current_hidden_states)
        if self.shared:
            shared_expert_output = self.shared_expert(hidden_states)
            shared_expert_output = torch.sigmoid(self.shared_expert_gate(hidden_states)) * shared_expert_output
            final_hidden_states = final_hidden_states + shared_expert_output
        return final_hidden_states.reshape(batch_size, sequence_length, hidden_dim)


class DecoderLayer(nn.Module):
    """*DecoderLayer.forward: residual taken before each norm (HF registers self_attn and mlp first)."""

    def __init__(self, c, norm, layer_idx=0):
        super().__init__()
        eps = c.get("rms_norm_eps", 1e-6)
        self.self_attn = Attention(c, layer_idx)
        self.moe_name = "block_sparse_moe" if c["model_type"] == "mixtral" else "mlp"
        if c["model_type"] in ("mixtral", "qwen2_moe", "qwen3_moe"):
            setattr(self, self.moe_name, SparseMoeBlock(c))
        else:
            self.mlp = MLP(c)
        # Olmo2DecoderLayer: no input_layernorm; its two norms after the MLP.
        self.post_norms = c["model_type"] == "olmo2"
        if not self.post_norms:
            self.input_layernorm = norm(c["hidden_size"], eps)
        self.post_attention_layernorm = norm(c["hidden_size"], eps)
        if self.post_norms:
            self.post_feedforward_layernorm = norm(c["hidden_size"], eps)
        self.sandwich = c["model_type"] in ("gemma2", "gemma3_text")
        # GraniteDecoderLayer: residual + hidden_states * residual_multiplier.
        self.residual_multiplier = c.get("residual_multiplier", 1.0) if c["model_type"] == "granite" else None
        if self.sandwich:
            self.pre_feedforward_layernorm = norm(c["hidden_size"], eps)
            self.post_feedforward_layernorm = norm(c["hidden_size"], eps)

    def forward(self, x, position_embeddings):
        if self.post_norms:  # Olmo2DecoderLayer.forward
            x = x + self.post_attention_layernorm(self.self_attn(x, position_embeddings))
            return x + self.post_feedforward_layernorm(self.mlp(x))
        if self.sandwich:  # Gemma2DecoderLayer.forward, Gemma3DecoderLayer.forward
            residual = x
            x = self.input_layernorm(x)
            x = self.self_attn(x, position_embeddings)
            x = self.post_attention_layernorm(x)
            x = residual + x
            residual = x
            x = self.pre_feedforward_layernorm(x)
            x = self.mlp(x)
            x = self.post_feedforward_layernorm(x)
            return residual + x
        residual = x
        x = self.self_attn(self.input_layernorm(x), position_embeddings)
        if self.residual_multiplier is not None:
            x = x * self.residual_multiplier
        x = residual + x
        residual = x
        x = getattr(self, self.moe_name)(self.post_attention_layernorm(x))
        if self.residual_multiplier is not None:
            x = x * self.residual_multiplier
        return residual + x


class ScaledWordEmbedding(nn.Embedding):
    """Gemma3TextScaledWordEmbedding: the embeddings times embed_scale, a 0-dim buffer (not persistent) cast to
    the weight's dtype."""

    def __init__(self, num_embeddings, embedding_dim, embed_scale):
        super().__init__(num_embeddings, embedding_dim)
        self.register_buffer("embed_scale", torch.tensor(embed_scale), persistent=False)

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale.to(self.weight.dtype)


class Model(nn.Module):
    """*Model: embed_tokens, layers, norm, rotary_emb (Gemma scales the embeddings by sqrt(hidden) after the
    RoPE tables are made; Gemma-3 inside embed_tokens, and makes a second pair of tables, rotary_emb_local,
    from rope_local_base_freq for its sliding layers)."""

    def __init__(self, c, norm):
        super().__init__()
        self.gemma = c["model_type"] in ("gemma", "gemma2")
        self.gemma3 = c["model_type"] == "gemma3_text"
        # GraniteModel.forward: inputs_embeds * embedding_multiplier.
        self.embedding_multiplier = c.get("embedding_multiplier", 1.0) if c["model_type"] == "granite" else None
        self.hidden_size = c["hidden_size"]
        if self.gemma3:
            self.embed_tokens = ScaledWordEmbedding(c["vocab_size"], c["hidden_size"], c["hidden_size"] ** 0.5)
        else:
            self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.layers = nn.ModuleList([DecoderLayer(c, norm, i) for i in range(c["num_hidden_layers"])])
        self.norm = norm(c["hidden_size"], c.get("rms_norm_eps", 1e-6))
        self.rotary_emb = RotaryEmbedding(c)
        if self.gemma3:
            self.rotary_emb_local = RotaryEmbedding(dict(c, rope_theta=c.get("rope_local_base_freq", 10000.0)))

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        if self.embedding_multiplier is not None:
            x = x * self.embedding_multiplier
        position_embeddings = self.rotary_emb(x)
        local = self.rotary_emb_local(x) if self.gemma3 else None
        if self.gemma:
            x = x * torch.tensor(self.hidden_size ** 0.5, dtype=x.dtype)
        for layer in self.layers:
            sliding = self.gemma3 and layer.self_attn.is_sliding
            x = layer(x, local if sliding else position_embeddings)
        return self.norm(x)


class Decoder(nn.Module):
    """*ForCausalLM's forward without labels: model, then lm_head (tied when the config says so)."""

    def __init__(self, c):
        super().__init__()
        c = dict(c)
        c.setdefault("num_key_value_heads", c["num_attention_heads"])
        gemma = c["model_type"] in ("gemma", "gemma2", "gemma3_text")
        norm = GemmaRMSNorm if gemma else LlamaRMSNorm
        self.model = Model(c, norm)
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings", gemma):
            self.lm_head.weight = self.model.embed_tokens.weight
        self.final_logit_softcapping = (c.get("final_logit_softcapping", 30.0) if c["model_type"] == "gemma2"
                                        else c.get("final_logit_softcapping"))
        # GraniteForCausalLM: logits / logits_scaling.
        self.logits_scaling = c.get("logits_scaling", 1.0) if c["model_type"] == "granite" else None

    def forward(self, input_ids):
        logits = self.lm_head(self.model(input_ids))
        if self.logits_scaling is not None:
            logits = logits / self.logits_scaling
        if self.final_logit_softcapping is not None:  # Gemma2ForCausalLM, Gemma3ForCausalLM
            logits = logits / self.final_logit_softcapping
            logits = torch.tanh(logits)
            logits = logits * self.final_logit_softcapping
        return logits


# --- GPT-NeoX: src/transformers/models/gpt_neox/modeling_gpt_neox.py at
# 006bd23dd0ce18d54e1cf260b09b15fa943a731d (GPTNeoXForCausalLM, eager attention), line by line.
# Departures: none in the forward; the rotary caches are built at max_position_embeddings rows
# as the reference's __init__ does (its regrowth for longer sequences is unreachable at S <= rows).


def neox_rotate_half(x):
    """modeling_gpt_neox.rotate_half (x.shape[-1] // 2 read for each slice)."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def neox_apply_rotary_pos_emb(q, k, cos, sin, position_ids, unsqueeze_dim=1):
    cos = cos[position_ids].unsqueeze(unsqueeze_dim)
    sin = sin[position_ids].unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (neox_rotate_half(q) * sin)
    k_embed = (k * cos) + (neox_rotate_half(k) * sin)
    return q_embed, k_embed


class GPTNeoXRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000):
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, dtype=torch.int64).float() / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.max_seq_len_cached = max_position_embeddings
        t = torch.arange(self.max_seq_len_cached, dtype=torch.int64).type_as(self.inv_freq)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, x, seq_len=None):
        return self.cos_cached[:seq_len], self.sin_cached[:seq_len]


class GPTNeoXAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c["num_attention_heads"]
        self.hidden_size = c["hidden_size"]
        self.head_size = self.hidden_size // self.num_attention_heads
        self.rotary_ndims = int(self.head_size * c.get("rotary_pct", 0.25))
        max_positions = c.get("max_position_embeddings", 2048)
        self.register_buffer("bias", torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
            1, 1, max_positions, max_positions), persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e9), persistent=False)
        self.rotary_emb = GPTNeoXRotaryEmbedding(self.rotary_ndims, max_positions, base=c.get("rotary_emb_base", 10000))
        self.norm_factor = self.head_size ** -0.5
        bias = c.get("attention_bias", True)
        self.query_key_value = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias=bias)
        self.dense = nn.Linear(self.hidden_size, self.hidden_size, bias=bias)
        self.attention_dropout = nn.Dropout(c.get("attention_dropout", 0.0))

    def forward(self, hidden_states, position_ids):
        qkv = self.query_key_value(hidden_states)
        new_qkv_shape = qkv.size()[:-1] + (self.num_attention_heads, 3 * self.head_size)
        qkv = qkv.view(*new_qkv_shape)
        query = qkv[..., : self.head_size].permute(0, 2, 1, 3)
        key = qkv[..., self.head_size: 2 * self.head_size].permute(0, 2, 1, 3)
        value = qkv[..., 2 * self.head_size:].permute(0, 2, 1, 3)
        query_rot = query[..., : self.rotary_ndims]
        query_pass = query[..., self.rotary_ndims:]
        key_rot = key[..., : self.rotary_ndims]
        key_pass = key[..., self.rotary_ndims:]
        seq_len = key.shape[-2]
        cos, sin = self.rotary_emb(value, seq_len=seq_len)
        query, key = neox_apply_rotary_pos_emb(query_rot, key_rot, cos, sin, position_ids)
        query = torch.cat((query, query_pass), dim=-1)
        key = torch.cat((key, key_pass), dim=-1)
        attn_output = self._attn(query, key, value)
        attn_output = attn_output.permute(0, 2, 1, 3).contiguous()
        attn_output = attn_output.view(attn_output.size(0), attn_output.size(1),
                                       self.num_attention_heads * self.head_size)
        return self.dense(attn_output)

    def _attn(self, query, key, value):
        batch_size, num_attention_heads, query_length, attn_head_size = query.size()
        key_length = key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        query = query.view(batch_size * num_attention_heads, query_length, attn_head_size)
        key = key.view(batch_size * num_attention_heads, key_length, attn_head_size)
        attn_scores = torch.zeros(batch_size * num_attention_heads, query_length, key_length,
                                  dtype=query.dtype, device=key.device)
        attn_scores = torch.baddbmm(attn_scores, query, key.transpose(1, 2), beta=1.0, alpha=self.norm_factor)
        attn_scores = attn_scores.view(batch_size, num_attention_heads, query_length, key_length)
        mask_value = torch.finfo(attn_scores.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_scores.dtype).to(attn_scores.device)
        attn_scores = torch.where(causal_mask, attn_scores, mask_value)
        attn_weights = nn.functional.softmax(attn_scores, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        attn_weights = self.attention_dropout(attn_weights)
        return torch.matmul(attn_weights, value)


class GPTNeoXMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_h_to_4h = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.dense_4h_to_h = nn.Linear(c["intermediate_size"], c["hidden_size"])
        self.act = nn.GELU()  # ACT2FN["gelu"]: GELUActivation, nn.functional.gelu

    def forward(self, hidden_states):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(hidden_states)))


class GPTNeoXLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        eps = c.get("layer_norm_eps", 1e-5)
        self.use_parallel_residual = c.get("use_parallel_residual", True)
        self.input_layernorm = nn.LayerNorm(c["hidden_size"], eps=eps)
        self.post_attention_layernorm = nn.LayerNorm(c["hidden_size"], eps=eps)
        self.post_attention_dropout = nn.Dropout(c.get("hidden_dropout", 0.0))
        self.post_mlp_dropout = nn.Dropout(c.get("hidden_dropout", 0.0))
        self.attention = GPTNeoXAttention(c)
        self.mlp = GPTNeoXMLP(c)

    def forward(self, hidden_states, position_ids):
        attn_output = self.attention(self.input_layernorm(hidden_states), position_ids)
        attn_output = self.post_attention_dropout(attn_output)
        if self.use_parallel_residual:
            mlp_output = self.mlp(self.post_attention_layernorm(hidden_states))
            mlp_output = self.post_mlp_dropout(mlp_output)
            return mlp_output + attn_output + hidden_states
        attn_output = attn_output + hidden_states
        mlp_output = self.mlp(self.post_attention_layernorm(attn_output))
        mlp_output = self.post_mlp_dropout(mlp_output)
        return mlp_output + attn_output


class GPTNeoXModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_in = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.emb_dropout = nn.Dropout(c.get("hidden_dropout", 0.0))
        self.layers = nn.ModuleList([GPTNeoXLayer(c) for _ in range(c["num_hidden_layers"])])
        self.final_layer_norm = nn.LayerNorm(c["hidden_size"], eps=c.get("layer_norm_eps", 1e-5))

    def forward(self, input_ids):
        batch_size, seq_length = input_ids.size()
        past_length = 0
        position_ids = torch.arange(past_length, seq_length + past_length, dtype=torch.long, device=input_ids.device)
        position_ids = position_ids.unsqueeze(0)
        hidden_states = self.emb_dropout(self.embed_in(input_ids))
        for layer in self.layers:
            hidden_states = layer(hidden_states, position_ids)
        return self.final_layer_norm(hidden_states)


class GPTNeoX(nn.Module):
    """GPTNeoXForCausalLM's forward without labels: gpt_neox, then embed_out (untied unless the config ties it)."""

    def __init__(self, c):
        super().__init__()
        self.gpt_neox = GPTNeoXModel(c)
        self.embed_out = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings", False):
            self.embed_out.weight = self.gpt_neox.embed_in.weight

    def forward(self, input_ids):
        return self.embed_out(self.gpt_neox(input_ids))


def build(config):
    """The reference model of a config dict, by its model_type."""
    return GPTNeoX(config) if config["model_type"] == "gpt_neox" else Decoder(config)
