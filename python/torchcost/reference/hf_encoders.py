"""Hugging Face encoders re-implemented in plain torch from a config.json dict.

The oracle models of tests/python/test_hf_config.py for model_type bert: BertModel
(with its pooler) and BertForMaskedLM, eager attention, each module registered under
the name and with the shape its modeling file gives it, so that a trace of
build(config) and `torchcost --model config.json` describe one model.

Reference (huggingface/transformers):

  bert  src/transformers/models/bert/modeling_bert.py, 004ad5f50b627b59bf0d581c31bc0052b6cfd40b:
        BertEmbeddings, BertSelfAttention (eager), BertSelfOutput, BertIntermediate, BertOutput,
        BertLayer, BertEncoder, BertPooler, BertPredictionHeadTransform, BertLMPredictionHead,
        BertOnlyMLMHead, BertModel.forward without attention_mask or token_type_ids
        (ones and the token_type_ids buffer), get_extended_attention_mask
        (src/transformers/modeling_utils.py at that commit: mask[:, None, None, :].to(dtype),
        (1.0 - mask) * -10000.0)

Departures, none of which changes a parameter, a saved tensor or a FLOP count:
BertModel.forward's `self.embeddings.token_type_ids = ...[:, :seq_length]` (a buffer
reassigned in forward, which would save the expanded view as the buffer) is read into a
local instead; no head_mask, output_attentions or cross-attention branches (all off).
"""

import math

import torch
from torch import nn


def _act(name):
    """ACT2FN[hidden_act] for the names the translation accepts."""
    if name == "gelu":
        return nn.GELU()  # GELUActivation: nn.functional.gelu
    if name == "gelu_pytorch_tanh":
        return nn.GELU(approximate="tanh")
    return nn.ReLU()


class BertEmbeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, P = c["hidden_size"], c.get("max_position_embeddings", 512)
        self.word_embeddings = nn.Embedding(c["vocab_size"], h, padding_idx=c.get("pad_token_id", 0))
        self.position_embeddings = nn.Embedding(P, h)
        self.token_type_embeddings = nn.Embedding(c.get("type_vocab_size", 2), h)
        self.LayerNorm = nn.LayerNorm(h, eps=c.get("layer_norm_eps", 1e-12))
        self.dropout = nn.Dropout(c.get("hidden_dropout_prob", 0.1))
        self.register_buffer("position_ids", torch.arange(P).expand((1, -1)))
        self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids, token_type_ids):
        seq_length = input_ids.size()[1]
        position_ids = self.position_ids[:, 0: seq_length + 0]
        inputs_embeds = self.word_embeddings(input_ids)
        token_type_embeddings = self.token_type_embeddings(token_type_ids)
        embeddings = inputs_embeds + token_type_embeddings
        position_embeddings = self.position_embeddings(position_ids)
        embeddings += position_embeddings
        embeddings = self.LayerNorm(embeddings)
        return self.dropout(embeddings)


class BertSelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.num_attention_heads = c["num_attention_heads"]
        self.attention_head_size = int(c["hidden_size"] / c["num_attention_heads"])
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(c["hidden_size"], self.all_head_size)
        self.key = nn.Linear(c["hidden_size"], self.all_head_size)
        self.value = nn.Linear(c["hidden_size"], self.all_head_size)
        self.dropout = nn.Dropout(c.get("attention_probs_dropout_prob", 0.1))

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(*new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        attention_scores = attention_scores + attention_mask
        attention_probs = nn.Softmax(dim=-1)(attention_scores)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        return context_layer.view(*new_context_layer_shape)


class _BertResidualOutput(nn.Module):
    """dense, dropout, then LayerNorm of the sum with the block's input: BertSelfOutput and BertOutput,
    which differ only in dense's input width (subclasses, so that each keeps its own module type)."""

    def __init__(self, c, in_features):
        super().__init__()
        self.dense = nn.Linear(in_features, c["hidden_size"])
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c.get("layer_norm_eps", 1e-12))
        self.dropout = nn.Dropout(c.get("hidden_dropout_prob", 0.1))

    def forward(self, hidden_states, input_tensor):
        hidden_states = self.dense(hidden_states)
        hidden_states = self.dropout(hidden_states)
        return self.LayerNorm(hidden_states + input_tensor)


class BertSelfOutput(_BertResidualOutput):
    def __init__(self, c):
        super().__init__(c, c["hidden_size"])


class BertAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = BertSelfAttention(c)
        self.output = BertSelfOutput(c)

    def forward(self, hidden_states, attention_mask):
        return self.output(self.self(hidden_states, attention_mask), hidden_states)


class BertIntermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["intermediate_size"])
        self.intermediate_act_fn = _act(c.get("hidden_act", "gelu"))

    def forward(self, hidden_states):
        return self.intermediate_act_fn(self.dense(hidden_states))


class BertOutput(_BertResidualOutput):
    def __init__(self, c):
        super().__init__(c, c["intermediate_size"])


class BertLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = BertAttention(c)
        self.intermediate = BertIntermediate(c)
        self.output = BertOutput(c)

    def forward(self, hidden_states, attention_mask):
        attention_output = self.attention(hidden_states, attention_mask)
        return self.output(self.intermediate(attention_output), attention_output)


class BertEncoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(c) for _ in range(c["num_hidden_layers"])])

    def forward(self, hidden_states, attention_mask):
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, attention_mask)
        return hidden_states


class BertPooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.activation = nn.Tanh()

    def forward(self, hidden_states):
        first_token_tensor = hidden_states[:, 0]
        return self.activation(self.dense(first_token_tensor))


class BertModel(nn.Module):
    def __init__(self, c, add_pooling_layer=True):
        super().__init__()
        self.embeddings = BertEmbeddings(c)
        self.encoder = BertEncoder(c)
        self.pooler = BertPooler(c) if add_pooling_layer else None

    def forward(self, input_ids):
        input_shape = input_ids.size()
        batch_size, seq_length = input_shape
        attention_mask = torch.ones(((batch_size, seq_length + 0)), device=input_ids.device)
        buffered_token_type_ids = self.embeddings.token_type_ids[:, :seq_length]
        token_type_ids = buffered_token_type_ids.expand(batch_size, seq_length)
        # get_extended_attention_mask (a 2D mask, an encoder).
        extended_attention_mask = attention_mask[:, None, None, :]
        extended_attention_mask = extended_attention_mask.to(dtype=self.embeddings.word_embeddings.weight.dtype)
        extended_attention_mask = (1.0 - extended_attention_mask) * -10000.0
        embedding_output = self.embeddings(input_ids, token_type_ids)
        sequence_output = self.encoder(embedding_output, extended_attention_mask)
        if self.pooler is None:
            return sequence_output
        return sequence_output, self.pooler(sequence_output)


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c["hidden_size"], c["hidden_size"])
        self.transform_act_fn = _act(c.get("hidden_act", "gelu"))
        self.LayerNorm = nn.LayerNorm(c["hidden_size"], eps=c.get("layer_norm_eps", 1e-12))

    def forward(self, hidden_states):
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))


class BertLMPredictionHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transform = BertPredictionHeadTransform(c)
        self.decoder = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        self.bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        self.decoder.bias = self.bias

    def forward(self, hidden_states):
        return self.decoder(self.transform(hidden_states))


class BertOnlyMLMHead(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.predictions = BertLMPredictionHead(c)

    def forward(self, sequence_output):
        return self.predictions(sequence_output)


class BertForMaskedLM(nn.Module):
    """BertForMaskedLM's forward without labels; the decoder tied to the word embeddings (tie_weights)."""

    def __init__(self, c):
        super().__init__()
        self.bert = BertModel(c, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(c)
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def forward(self, input_ids):
        return self.cls(self.bert(input_ids))


def build(config):
    """BertModel when architectures names it, else BertForMaskedLM."""
    if (config.get("architectures") or ["BertForMaskedLM"])[0] == "BertModel":
        return BertModel(config)
    return BertForMaskedLM(config)


# --- T5: src/transformers/models/t5/modeling_t5.py at 6b8b757dfcb582379a64f013cdce46c43629f2b0
# (T5ForConditionalGeneration, eager attention, no cache), layer by layer. Departures, none of
# which changes a parameter or a FLOP of the layers: the decoder inputs are given
# (decoder_input_ids, not _shift_right(labels): integer bookkeeping); the masks are built as
# get_extended_attention_mask builds BERT's for the encoder and the cross-attention
# ((1.0 - ones[:, None, None, :]) * finfo.min) and, for the decoder's self-attention, as
# full((T, T), finfo.min).triu(1)[None, None] (_update_causal_mask's eager mask without the
# cache_position bookkeeping); no fp16 clamps (they apply in float16 only).


def _t5_act(name):
    """ACT2FN[dense_act_fn]: relu, or gelu_new as one F.gelu(approximate='tanh') (the same function)."""
    if name == "relu":
        return nn.ReLU()
    return nn.GELU(approximate="tanh")


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states


def t5_ff_config(c):
    """T5Config.__init__: feed_forward_proj 'relu' or 'gated-gelu' -> (dense_act_fn, is_gated_act)."""
    proj = c.get("feed_forward_proj", "relu")
    gated = proj.startswith("gated-")
    act = proj.split("-")[-1]
    return ("gelu_new" if act == "gelu" else act), gated


class T5DenseActDense(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wi = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        self.dropout = nn.Dropout(c.get("dropout_rate", 0.1))
        self.act = _t5_act(t5_ff_config(c)[0])

    def forward(self, hidden_states):
        hidden_states = self.act(self.wi(hidden_states))
        hidden_states = self.dropout(hidden_states)
        return self.wo(hidden_states)


class T5DenseGatedActDense(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wi_0 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wi_1 = nn.Linear(c["d_model"], c["d_ff"], bias=False)
        self.wo = nn.Linear(c["d_ff"], c["d_model"], bias=False)
        self.dropout = nn.Dropout(c.get("dropout_rate", 0.1))
        self.act = _t5_act(t5_ff_config(c)[0])

    def forward(self, hidden_states):
        hidden_gelu = self.act(self.wi_0(hidden_states))
        hidden_linear = self.wi_1(hidden_states)
        hidden_states = hidden_gelu * hidden_linear
        hidden_states = self.dropout(hidden_states)
        return self.wo(hidden_states)


class T5LayerFF(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.DenseReluDense = T5DenseGatedActDense(c) if t5_ff_config(c)[1] else T5DenseActDense(c)
        self.layer_norm = T5LayerNorm(c["d_model"], eps=c.get("layer_norm_epsilon", 1e-6))
        self.dropout = nn.Dropout(c.get("dropout_rate", 0.1))

    def forward(self, hidden_states):
        forwarded_states = self.DenseReluDense(self.layer_norm(hidden_states))
        return hidden_states + self.dropout(forwarded_states)


class T5Attention(nn.Module):
    def __init__(self, c, is_decoder, has_relative_attention_bias=False):
        super().__init__()
        self.is_decoder = is_decoder
        self.has_relative_attention_bias = has_relative_attention_bias
        self.relative_attention_num_buckets = c.get("relative_attention_num_buckets", 32)
        self.relative_attention_max_distance = c.get("relative_attention_max_distance", 128)
        self.n_heads = c["num_heads"]
        self.key_value_proj_dim = c["d_kv"]
        self.dropout = c.get("dropout_rate", 0.1)
        self.inner_dim = self.n_heads * self.key_value_proj_dim
        self.q = nn.Linear(c["d_model"], self.inner_dim, bias=False)
        self.k = nn.Linear(c["d_model"], self.inner_dim, bias=False)
        self.v = nn.Linear(c["d_model"], self.inner_dim, bias=False)
        self.o = nn.Linear(self.inner_dim, c["d_model"], bias=False)
        if self.has_relative_attention_bias:
            self.relative_attention_bias = nn.Embedding(self.relative_attention_num_buckets, self.n_heads)

    @staticmethod
    def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
        relative_buckets = 0
        if bidirectional:
            num_buckets //= 2
            relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
            relative_position = torch.abs(relative_position)
        else:
            relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
        max_exact = num_buckets // 2
        is_small = relative_position < max_exact
        relative_position_if_large = max_exact + (
            torch.log(relative_position.float() / max_exact)
            / math.log(max_distance / max_exact)
            * (num_buckets - max_exact)
        ).to(torch.long)
        relative_position_if_large = torch.min(
            relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
        )
        relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
        return relative_buckets

    def compute_bias(self, query_length, key_length):
        context_position = torch.arange(query_length, dtype=torch.long)[:, None]
        memory_position = torch.arange(key_length, dtype=torch.long)[None, :]
        relative_position = memory_position - context_position
        relative_position_bucket = self._relative_position_bucket(
            relative_position, bidirectional=(not self.is_decoder),
            num_buckets=self.relative_attention_num_buckets, max_distance=self.relative_attention_max_distance)
        values = self.relative_attention_bias(relative_position_bucket)
        return values.permute([2, 0, 1]).unsqueeze(0)

    def forward(self, hidden_states, mask, key_value_states=None, position_bias=None):
        batch_size, seq_length = hidden_states.shape[:2]
        query_states = self.q(hidden_states)
        query_states = query_states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)
        current_states = key_value_states if key_value_states is not None else hidden_states
        key_states = self.k(current_states)
        value_states = self.v(current_states)
        key_states = key_states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)
        value_states = value_states.view(batch_size, -1, self.n_heads, self.key_value_proj_dim).transpose(1, 2)
        scores = torch.matmul(query_states, key_states.transpose(3, 2))
        if position_bias is None:
            key_length = key_states.shape[-2]
            if not self.has_relative_attention_bias:
                position_bias = torch.zeros((1, self.n_heads, seq_length, key_length), dtype=scores.dtype)
            else:
                position_bias = self.compute_bias(seq_length, key_length)
                position_bias = position_bias[:, :, -seq_length:, :]
            causal_mask = mask[:, :, :, : key_states.shape[-2]]
            position_bias = position_bias + causal_mask
        scores += position_bias
        attn_weights = nn.functional.softmax(scores.float(), dim=-1).type_as(scores)
        attn_weights = nn.functional.dropout(attn_weights, p=self.dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.view(batch_size, -1, self.inner_dim)
        return self.o(attn_output), position_bias


class T5LayerSelfAttention(nn.Module):
    def __init__(self, c, is_decoder, has_relative_attention_bias):
        super().__init__()
        self.SelfAttention = T5Attention(c, is_decoder, has_relative_attention_bias)
        self.layer_norm = T5LayerNorm(c["d_model"], eps=c.get("layer_norm_epsilon", 1e-6))
        self.dropout = nn.Dropout(c.get("dropout_rate", 0.1))

    def forward(self, hidden_states, attention_mask, position_bias):
        attention_output, position_bias = self.SelfAttention(self.layer_norm(hidden_states), attention_mask,
                                                             position_bias=position_bias)
        return hidden_states + self.dropout(attention_output), position_bias


class T5LayerCrossAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.EncDecAttention = T5Attention(c, True, has_relative_attention_bias=False)
        self.layer_norm = T5LayerNorm(c["d_model"], eps=c.get("layer_norm_epsilon", 1e-6))
        self.dropout = nn.Dropout(c.get("dropout_rate", 0.1))

    def forward(self, hidden_states, key_value_states, attention_mask, position_bias):
        attention_output, position_bias = self.EncDecAttention(
            self.layer_norm(hidden_states), attention_mask, key_value_states=key_value_states,
            position_bias=position_bias)
        return hidden_states + self.dropout(attention_output), position_bias


class T5Block(nn.Module):
    def __init__(self, c, is_decoder, has_relative_attention_bias):
        super().__init__()
        self.is_decoder = is_decoder
        self.layer = nn.ModuleList([T5LayerSelfAttention(c, is_decoder, has_relative_attention_bias)])
        if is_decoder:
            self.layer.append(T5LayerCrossAttention(c))
        self.layer.append(T5LayerFF(c))

    def forward(self, hidden_states, mask, position_bias, encoder_hidden_states, encoder_mask, encoder_bias):
        hidden_states, position_bias = self.layer[0](hidden_states, mask, position_bias)
        if self.is_decoder:
            hidden_states, encoder_bias = self.layer[1](hidden_states, encoder_hidden_states, encoder_mask,
                                                        encoder_bias)
        return self.layer[-1](hidden_states), position_bias, encoder_bias


def extended_mask(ones, dtype):
    """get_extended_attention_mask / invert_attention_mask on a 2-D mask: (1.0 - m[:, None, None, :]) * min."""
    m = ones[:, None, None, :].to(dtype=dtype)
    return (1.0 - m) * torch.finfo(dtype).min


class T5Stack(nn.Module):
    def __init__(self, c, embed_tokens, is_decoder):
        super().__init__()
        self.embed_tokens = embed_tokens
        self.is_decoder = is_decoder
        layers = c.get("num_decoder_layers") or c["num_layers"] if is_decoder else c["num_layers"]
        self.block = nn.ModuleList([T5Block(c, is_decoder, bool(i == 0)) for i in range(layers)])
        self.final_layer_norm = T5LayerNorm(c["d_model"], eps=c.get("layer_norm_epsilon", 1e-6))
        self.dropout = nn.Dropout(c.get("dropout_rate", 0.1))

    def forward(self, input_ids, encoder_hidden_states=None):
        inputs_embeds = self.embed_tokens(input_ids)
        batch_size, seq_length = input_ids.size()
        dtype = inputs_embeds.dtype
        if self.is_decoder:
            mask = torch.full((seq_length, seq_length), torch.finfo(dtype).min, dtype=dtype).triu(1)[None, None]
            encoder_mask = extended_mask(torch.ones(batch_size, encoder_hidden_states.shape[1]), dtype)
        else:
            mask = extended_mask(torch.ones(batch_size, seq_length), dtype)
            encoder_mask = None
        position_bias = None
        encoder_bias = None
        hidden_states = self.dropout(inputs_embeds)
        for layer_module in self.block:
            hidden_states, position_bias, encoder_bias = layer_module(
                hidden_states, mask, position_bias, encoder_hidden_states, encoder_mask, encoder_bias)
        hidden_states = self.final_layer_norm(hidden_states)
        return self.dropout(hidden_states)


class T5ForConditionalGeneration(nn.Module):
    """forward(input_ids, decoder_input_ids) -> lm_logits (the tied head rescales by d_model**-0.5)."""

    def __init__(self, c):
        super().__init__()
        self.model_dim = c["d_model"]
        self.shared = nn.Embedding(c["vocab_size"], c["d_model"])
        self.encoder = T5Stack(c, self.shared, False)
        self.decoder = T5Stack(c, self.shared, True)
        self.lm_head = nn.Linear(c["d_model"], c["vocab_size"], bias=False)
        self.tie = c.get("tie_word_embeddings", True)
        if self.tie:
            self.lm_head.weight = self.shared.weight

    def forward(self, input_ids, decoder_input_ids):
        hidden_states = self.encoder(input_ids)
        sequence_output = self.decoder(decoder_input_ids, encoder_hidden_states=hidden_states)
        if self.tie:
            sequence_output = sequence_output * (self.model_dim ** -0.5)
        return self.lm_head(sequence_output)


def build_t5(config):
    return T5ForConditionalGeneration(config)
