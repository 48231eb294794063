#!/usr/bin/python3
"""Checks `torchcost --model config.json` (Hugging Face configs) against plain-torch
re-implementations of the same architectures built from the same file.

Usage: /usr/bin/python3 tests/python/test_hf_config.py --torchcost PATH --fixtures DIR

For each tiny config below (llama, mistral with a sliding window, qwen2 with its
q/k/v biases, qwen3 with its per-head q/k norms, with and without biases, gemma3_text
with its window pattern and local RoPE base, gemma with head_dim != hidden / heads, gemma2 with its soft-caps, sandwich
norms and alternating windows, phi3 with fused projections,
gpt_neox with partial rotary, parallel and sequential residuals, mixtral,
qwen2_moe and qwen3_moe with balanced routing)
the config is written to FIXTURES/hf_<type>_tiny.json, python/torchcost/reference/hf_decoders.py
builds the model from the same dict, and torch.jit.trace records it at [2, 64]
tokens. Parameters counted by PyTorch, then params, forward and backward FLOPs,
saved bytes and the training peak (--device cpu --optimizer adam, out.sum()) of the
trace and of `--model FILE --config attn=eager` must be IDENTICAL, and again in
bfloat16 (model.to(torch.bfloat16) against dtype=bf16) for gemma, gemma2, gemma3_text,
qwen2, qwen3 and gpt_neox. Then the
bundled examples/configs must build with their published parameter counts, and
bad files must be one stderr line with exit code 2.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import json
import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

from test_builder import quantities, runner_from_argv  # noqa: E402
from torchcost_cli import run_json  # noqa: E402

COMMON = ["--device", "cpu", "--optimizer", "adam"]
BATCH, SEQ = 2, 64

BASE = {"hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "vocab_size": 128, "rms_norm_eps": 1e-05, "rope_theta": 10000.0,
        "max_position_embeddings": 256, "bos_token_id": 1}

TINY = {
    "llama": dict(BASE, model_type="llama", tie_word_embeddings=False, attention_bias=False),
    "llama_biased": dict(BASE, model_type="llama", attention_bias=True, mlp_bias=True),
    "mistral": dict(BASE, model_type="mistral", sliding_window=8),
    "qwen2": dict(BASE, model_type="qwen2", use_sliding_window=False, tie_word_embeddings=False),
    "gemma": dict(BASE, model_type="gemma", head_dim=32, hidden_activation="gelu_pytorch_tanh",
                  num_key_value_heads=4),
    # Gemma-2 (modeling_gemma2.py at 006e86931247d7bacf94ad00ada1fb6baf11e94b): window 8 on layers 0 and 2
    # only, scores * 24**-0.5 (query_pre_attn_scalar != head_dim), both soft-caps, four norms per layer.
    "gemma2": dict(BASE, model_type="gemma2", num_hidden_layers=3, head_dim=32, hidden_activation="gelu_pytorch_tanh",
                   sliding_window=8, query_pre_attn_scalar=24, attn_logit_softcapping=50.0,
                   final_logit_softcapping=30.0),
    # Gemma-3 (modeling_gemma3.py at f14d0cbc824e447ef294d8cdc0f8ad4222f3dfee): 4 layers, window 8 on all but
    # layer 2 (sliding_window_pattern 3), whose RoPE base differs from the local layers'; per-head q/k norms;
    # no soft-caps; the embed_scale buffer; tied.
    "gemma3_text": dict(BASE, model_type="gemma3_text", num_hidden_layers=4, head_dim=32,
                        hidden_activation="gelu_pytorch_tanh", sliding_window=8, sliding_window_pattern=3,
                        query_pre_attn_scalar=24, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                        attn_logit_softcapping=None, final_logit_softcapping=None),
    # Granite (modeling_granite.py at b6dd89b47daad100034ac4e3b7beb2101f07d7f1): the four multipliers, each a
    # new tensor; biased attention and MLP.
    "granite": dict(BASE, model_type="granite", embedding_multiplier=12.0, attention_multiplier=0.0078125,
                    residual_multiplier=0.22, logits_scaling=16.0, attention_bias=True, mlp_bias=True,
                    tie_word_embeddings=True),
    # OLMo-2 (modeling_olmo2.py at 7264638d7b0ab5841670813ebed806189b8f7b71): whole-projection q/k norms,
    # post-norms only.
    "olmo2": dict(BASE, model_type="olmo2", tie_word_embeddings=False),
    "phi3": dict(BASE, model_type="phi3", sliding_window=2047, resid_pdrop=0.0, embd_pdrop=0.0,
                 num_key_value_heads=4),
    # Mixture of experts (balanced routing in both; python/torchcost/reference/hf_decoders.py's SparseMoeBlock):
    # 2 * 64 tokens, top 2 of 4 experts: 64 tokens each.
    # Phi-4-mini's partial rotary (modeling_phi3.py at 00d4b3d2142cb4ced2f51b90614b5d26bc045015): 12 of each
    # head's 16 dims rotated.
    "phi3_partial_rotary": dict(BASE, model_type="phi3", partial_rotary_factor=0.75, resid_pdrop=0.0,
                                embd_pdrop=0.0, tie_word_embeddings=True),
    "mixtral": dict(BASE, model_type="mixtral", num_local_experts=4, num_experts_per_tok=2, sliding_window=None),
    "qwen2_moe": dict(BASE, model_type="qwen2_moe", num_experts=4, num_experts_per_tok=2, moe_intermediate_size=48,
                      shared_expert_intermediate_size=96, norm_topk_prob=False, use_sliding_window=False),
    # Qwen3: per-head q_norm and k_norm, head_dim 32 != hidden / heads; Qwen3-MoE without a shared expert.
    "qwen3": dict(BASE, model_type="qwen3", head_dim=32, use_sliding_window=False, tie_word_embeddings=False),
    "qwen3_biased": dict(BASE, model_type="qwen3", head_dim=32, attention_bias=True, tie_word_embeddings=True),
    "qwen3_moe": dict(BASE, model_type="qwen3_moe", head_dim=16, num_experts=4, num_experts_per_tok=2,
                      moe_intermediate_size=48, norm_topk_prob=True, use_sliding_window=False),
    # GPT-NeoX: head_size 16, rotary on int(16 * 0.25) = 4 dims; parallel and sequential residuals.
    "gpt_neox": {"model_type": "gpt_neox", "hidden_size": 64, "intermediate_size": 256, "num_hidden_layers": 2,
                 "num_attention_heads": 4, "vocab_size": 128, "max_position_embeddings": 128, "rotary_pct": 0.25,
                 "rotary_emb_base": 10000, "layer_norm_eps": 1e-05, "use_parallel_residual": True,
                 "hidden_act": "gelu", "tie_word_embeddings": False},
    "gpt_neox_sequential": {"model_type": "gpt_neox", "hidden_size": 64, "intermediate_size": 256,
                            "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 128,
                            "max_position_embeddings": 128, "rotary_pct": 0.5, "use_parallel_residual": False,
                            "attention_bias": False},
}

# examples/configs: (file, published parameter count, its derivation from the file's keys).
# llama kind: embed V*h + L * (h*H*d + 2*h*K*d + H*d*h (+ biases) + 3*h*I + 2h) + h + head V*h unless tied.


def decoder_params(V, h, L, H, K, d, I, tied=False, qkv_bias=False):
    attn = h * H * d + 2 * h * K * d + H * d * h + ((H * d + 2 * K * d) if qkv_bias else 0)
    return V * h + L * (attn + 3 * h * I + 2 * h) + h + (0 if tied else V * h)


# Active parameters of the mixtures of experts: params less (experts - top_k) experts per layer.
ACTIVE = {
    "Mixtral-8x7B-v0.1.json": 46702792704 - 32 * (8 - 2) * 3 * 4096 * 14336,   # 12.9B
    "Qwen1.5-MoE-A2.7B.json": 14315784192 - 24 * (60 - 4) * 3 * 2048 * 1408,   # 2.7B
    "Qwen3-30B-A3B.json": 30532122624 - 48 * (128 - 8) * 3 * 2048 * 768,       # 3.3B
}

EXAMPLES = [
    ("Llama-2-7b-hf.json", 6738415616, decoder_params(32000, 4096, 32, 32, 32, 128, 11008)),
    ("Mistral-7B-v0.1.json", 7241732096, decoder_params(32000, 4096, 32, 32, 8, 128, 14336)),
    ("Qwen2-7B.json", 7615616512, decoder_params(152064, 3584, 28, 28, 4, 128, 18944, qkv_bias=True)),
    ("gemma-7b.json", 8537680896, decoder_params(256000, 3072, 28, 16, 16, 256, 24576, tied=True)),
    # gemma2: as gemma, plus pre_feedforward_layernorm and post_feedforward_layernorm (2h per layer).
    ("gemma-2-9b.json", 9241705984, decoder_params(256000, 3584, 42, 16, 8, 256, 14336, tied=True) + 42 * 2 * 3584),
    # gemma3_text: as gemma2 plus q_norm and k_norm [head_dim] per layer (model card: 1B).
    ("gemma-3-1b-it.json", 999885952, decoder_params(262144, 1152, 26, 4, 1, 256, 6912, tied=True)
     + 26 * (2 * 1152 + 2 * 256)),
    ("Phi-3-mini-4k-instruct.json", 3821079552, decoder_params(32064, 3072, 32, 32, 32, 96, 8192)),
    # gpt2: wte V*h + wpe n_positions*h + L * (12h^2 + 13h) + ln_f 2h, tied head.
    ("Mixtral-8x7B-v0.1.json", 46702792704, 2 * 32000 * 4096 + 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 8 * 4096
                                                                     + 8 * 3 * 4096 * 14336 + 2 * 4096) + 4096),
    ("Qwen1.5-MoE-A2.7B.json", 14315784192, 2 * 151936 * 2048 + 24 * (4 * 2048 * 2048 + 3 * 2048 + 60 * 2048
                                                                      + 60 * 3 * 2048 * 1408 + 3 * 2048 * 5632
                                                                      + 2048 + 2 * 2048) + 2048),
    # qwen3: the llama kind plus q_norm and k_norm [head_dim] per layer (model card: 8.2B).
    ("Qwen3-8B.json", 8190735360, decoder_params(151936, 4096, 36, 32, 8, 128, 12288) + 36 * 2 * 128),
    # qwen3_moe: attention with q_norm and k_norm, a router [128, h] and 128 experts of 3 * h * 768 per
    # layer, no shared expert (model card: 30.5B).
    ("Qwen3-30B-A3B.json", 30532122624, 2 * 151936 * 2048 + 48 * (2048 * 4096 + 2 * 2048 * 512 + 4096 * 2048
                                                                  + 2 * 128 + 128 * 2048 + 128 * 3 * 2048 * 768
                                                                  + 2 * 2048) + 2048),
    ("gpt2.json", 124439808, 50257 * 768 + 1024 * 768 + 12 * (12 * 768 * 768 + 13 * 768) + 2 * 768),
    # gpt_neox: embed_in V*h + L * (LayerNorms 4h + qkv 3h^2 + 3h + dense h^2 + h + MLP 2hI + I + h)
    # + final LayerNorm 2h + embed_out V*h.
    ("pythia-1b.json", 1011781632, 2 * 50304 * 2048 + 16 * (4 * 2048 + 4 * 2048 * 2048 + 4 * 2048
                                                            + 2 * 2048 * 8192 + 8192 + 2048) + 2 * 2048),
    ("gpt-neox-20b.json", 20554567680, 2 * 50432 * 6144 + 44 * (4 * 6144 + 4 * 6144 * 6144 + 4 * 6144
                                                                 + 2 * 6144 * 24576 + 24576 + 6144) + 2 * 6144),
]


def reference(config):
    """The plain-torch model of a config: hf_encoders for encoders, hf_decoders for decoders."""
    from torchcost.reference import hf_decoders, hf_encoders

    if config["model_type"] == "t5":
        return hf_encoders.build_t5(config)
    return (hf_encoders if config["model_type"] == "bert" else hf_decoders).build(config)


# The decoder length of encoder-decoders (symbol T), unlike the encoder's S so that a mix-up shows.
DEC_SEQ = 48


class WithLoss:
    """The reference model and its task's loss in one module, forward(*inputs, labels) -> (loss, logits):
    BertForMaskedLM.forward's CrossEntropyLoss()(prediction_scores.view(-1, V), labels.view(-1))
    (modeling_bert.py at 004ad5f50b627b59bf0d581c31bc0052b6cfd40b), as T5ForConditionalGeneration.forward's
    CrossEntropyLoss(ignore_index=-100)(lm_logits.view(-1, lm_logits.size(-1)), labels.view(-1))
    (modeling_t5.py at 6b8b757dfcb582379a64f013cdce46c43629f2b0)."""

    @staticmethod
    def build(config, model):
        import torch

        class Loss(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *inputs):
                labels = inputs[-1]
                scores = self.model(*inputs[:-1])
                loss = torch.nn.CrossEntropyLoss()(scores.view(-1, config["vocab_size"]), labels.view(-1))
                return loss, scores  # MaskedLMOutput(loss, logits): the caller holds both.

        return Loss()


def check_tiny(r, fixtures, name, config, bf16=False, mode=None, loss=False):
    """Trace against config; `mode` "infer" compares inference, `loss` the task's loss traced in the
    reference (--loss none) against the builder's default loss."""
    import torch

    label = "hf_%s%s%s%s_vs_trace" % (name, "_bf16" if bf16 else "", "_" + mode if mode else "",
                                      "_loss" if loss else "")
    path = os.path.join(fixtures, "hf_%s_tiny.json" % name)
    with open(path, "w") as f:
        json.dump(config, f, indent=2)
    try:
        torch.manual_seed(0)
        module = reference(config).eval()
        if loss:
            module = WithLoss.build(config, module)
        if bf16:
            module = module.to(torch.bfloat16)  # model.to(dtype): parameters and float buffers.
        torch_params = sum(p.numel() for p in module.parameters())  # Tied weights once.
        ids = torch.randint(0, config["vocab_size"], (BATCH, SEQ))
        t5 = config["model_type"] == "t5"
        out_len = DEC_SEQ if t5 else SEQ  # Logits and labels follow the decoder's length.
        example = (ids, torch.randint(0, config["vocab_size"], (BATCH, DEC_SEQ))) if t5 else (ids,)
        if loss:
            example = example + (torch.randint(0, config["vocab_size"], (BATCH, out_len)),)
        pt = os.path.join(fixtures, label[:-len("_vs_trace")] + "_tiny.pt")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            torch.jit.save(torch.jit.trace(module, example, check_trace=False), pt)
    except Exception as e:
        r.record(label, ["cannot build the reference: %s" % e])
        return
    common = COMMON + (["--mode", mode] if mode else [])
    tokens = []
    for x in example:
        tokens += ["--input", "%d,%d:int64" % tuple(x.shape)]
    traced, err = run_json(r.torchcost, [pt] + tokens + (["--loss", "none"] if loss else []) + common)
    if err:
        r.record(label, [err])
        return
    built, err = run_json(r.torchcost, ["--model", path, "--config", "attn=eager" + (",dtype=bf16" if bf16 else ""),
                                        "--set", "B=%d" % BATCH, "--set", "S=%d" % SEQ]
                           + (["--set", "T=%d" % DEC_SEQ] if t5 else [])
                           + ([] if loss else ["--loss", "sum"]) + common)
    if err:
        r.record(label, [err])
        return
    problems = []
    for doc, who in ((traced, "trace"), (built, "config")):
        if doc["unknown_ops"]:
            problems.append("%s has ops without rules: %s" % (who, [u["op"] for u in doc["unknown_ops"]]))
    if built["totals"]["params"] != torch_params:
        problems.append("params: torch %d, config %d" % (torch_params, built["totals"]["params"]))
    a, b = quantities(traced), quantities(built)
    if loss:
        # NB: with --loss none a trace's step keeps only its first output (the loss); the builder's
        # appended loss keeps the logits the caller holds too (MaskedLMOutput.logits), float32
        # [B, S, V] live at the peak (both in cross_entropy_loss's backward).
        a["peak"] += BATCH * out_len * config["vocab_size"] * 4
    if a["forward FLOPs"] is None:
        problems.append("forward FLOPs of the trace do not evaluate")
    for key in a:
        if a[key] != b[key]:
            problems.append("%s: trace %s, config %s" % (key, a[key], b[key]))
    r.record(label, problems)


def check_example(r, name, published, derived):
    problems = []
    if derived != published:
        problems.append("the derivation gives %d, the model card %d" % (derived, published))
    with open(os.path.join(REPO, "examples", "configs", name)) as f:
        t5 = json.load(f)["model_type"] == "t5"
    doc, err = run_json(r.torchcost, ["--model", os.path.join(REPO, "examples", "configs", name),
                                      "--set", "B=1", "--set", "S=128"] + (["--set", "T=32"] if t5 else []))
    if err:
        r.record("example_" + name, [err])
        return
    if doc["totals"]["params"] != published:
        problems.append("params %d, published %d" % (doc["totals"]["params"], published))
    active = ACTIVE.get(name, published)
    if doc["totals"]["active_params"] != active:
        problems.append("active_params %d, expected %d" % (doc["totals"]["active_params"], active))
    if doc["unknown_ops"]:
        problems.append("ops without rules: %s" % [u["op"] for u in doc["unknown_ops"]])
    r.record("example_" + name, problems)


def main(argv):
    r, fixtures = runner_from_argv(argv, __doc__)
    for name, config in TINY.items():
        check_tiny(r, fixtures, name, config)
    # bfloat16: Gemma's float32 norm island, Qwen2's biases, Qwen3's per-head norms and GPT-NeoX's bf16 buffers.
    for name in ("gemma", "gemma2", "gemma3_text", "granite", "olmo2", "qwen2", "qwen3", "gpt_neox"):
        check_tiny(r, fixtures, name, TINY[name], bf16=True)
    for name, published, derived in EXAMPLES:
        check_example(r, name, published, derived)
    bad = os.path.join(fixtures, "hf_bad_tiny.json")
    with open(bad, "w") as f:
        json.dump({"model_type": "mamba", "hidden_size": 64}, f)
    r.expect_error("unsupported_model_type", ["--model", bad], ["hf_bad_tiny.json", "model_type", "mamba"])
    r.expect_error("missing_key", ["--model", os.path.join(fixtures, "hf_llama_tiny.json"),
                                   "--config", "num_hidden_layers=null"],
                   ["hf_llama_tiny.json", "num_hidden_layers", "missing"])
    r.expect_error("unknown_override", ["--model", os.path.join(fixtures, "hf_llama_tiny.json"),
                                        "--config", "frobnicate=1"], ["--config", "frobnicate"])
    return r.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
