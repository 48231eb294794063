#!/usr/bin/python3
"""Checks `torchcost --model config.json` for the encoder model_types (bert, t5) against plain-torch
re-implementations of the same architectures built from the same file (python/torchcost/reference/hf_encoders.py).

Usage: /usr/bin/python3 tests/python/test_hf_encoders.py --torchcost PATH --fixtures DIR

As tests/python/test_hf_config.py does for the decoders: each tiny config is written to
FIXTURES/hf_<name>_tiny.json, the reference built from the same dict is traced at [2, 64]
tokens (T5: and [2, 48] decoder tokens, --set T=48), and params, forward and backward FLOPs, saved bytes and the training peak (--device cpu
--optimizer adam, out.sum()) of the trace and of `--model FILE` must be IDENTICAL, in float32
and bfloat16; then inference (--mode infer); then the task's loss: the reference with
CrossEntropyLoss traced in (--loss none) against the builder's default loss. The bundled
examples/configs must build with their published parameter counts.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_builder import runner_from_argv  # noqa: E402
from test_hf_config import check_example, check_tiny  # noqa: E402

# BertForMaskedLM (tied decoder + its bias) and BertModel (pooler), dropouts 0.1 (eval: identities).
BERT = {"model_type": "bert", "architectures": ["BertForMaskedLM"], "hidden_size": 64, "intermediate_size": 256,
        "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 128, "max_position_embeddings": 128,
        "type_vocab_size": 2, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
        "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute"}

# T5 (encoder 2 blocks, decoder 3; the decoder's T = 48 against the encoder's S = 64): v1.0 (ReLU, tied
# with the d_model**-0.5 rescale) and v1.1 / FLAN (gated-gelu, untied).
T5 = {"model_type": "t5", "architectures": ["T5ForConditionalGeneration"], "d_model": 64, "d_ff": 128, "d_kv": 16,
      "num_heads": 4, "num_layers": 2, "num_decoder_layers": 3, "vocab_size": 128, "feed_forward_proj": "relu",
      "tie_word_embeddings": True, "dropout_rate": 0.1, "relative_attention_num_buckets": 32,
      "relative_attention_max_distance": 128, "layer_norm_epsilon": 1e-6}

TINY = {
    "bert": BERT,
    "bert_model": dict(BERT, architectures=["BertModel"]),
    "t5": T5,
    "t5_gated": dict(T5, feed_forward_proj="gated-gelu", tie_word_embeddings=False),
}

# examples/configs: (file, published parameter count, its derivation from the file's keys).
EXAMPLES = [
    # bert (BertForMaskedLM, its architectures): embeddings (V + P + 2) * h + 2h, per layer 4(h^2 + h) + 4h
    # + 2hI + I + h, the MLM transform h^2 + h + 2h and the decoder's bias V (weight tied).
    ("bert-base-uncased.json", 109514298, (30522 + 512 + 2) * 768 + 2 * 768
     + 12 * (4 * (768 * 768 + 768) + 4 * 768 + 2 * 768 * 3072 + 3072 + 768) + 768 * 768 + 768 + 2 * 768 + 30522),
    # t5: shared V*d (lm_head tied unless untied: + V*d); encoder L * (attention 4*d*inner + norm d + MLP
    # (2 or 3)*d*d_ff + norm d) + relative bias 32*H + final norm d; decoder as much plus a cross-attention
    # 4*d*inner + norm d per block. t5-small: d 512, inner 8*64, d_ff 2048, 6 + 6 blocks, ReLU, tied.
    ("t5-small.json", 60506624, 32128 * 512 + 6 * (4 * 512 * 512 + 512 + 2 * 512 * 2048 + 512) + 32 * 8 + 512
     + 6 * (2 * (4 * 512 * 512 + 512) + 2 * 512 * 2048 + 512) + 32 * 8 + 512),
    # flan-t5-base: d 768, inner 12*64, d_ff 2048 gated (wi_0, wi_1, wo), 12 + 12 blocks, untied.
    ("flan-t5-base.json", 247577856, 2 * 32128 * 768 + 12 * (4 * 768 * 768 + 768 + 3 * 768 * 2048 + 768) + 32 * 12 + 768
     + 12 * (2 * (4 * 768 * 768 + 768) + 3 * 768 * 2048 + 768) + 32 * 12 + 768),
]


def main(argv):
    r, fixtures = runner_from_argv(argv, __doc__)
    for name, config in TINY.items():
        check_tiny(r, fixtures, name, config)
        check_tiny(r, fixtures, name, config, mode="infer")
    check_tiny(r, fixtures, "bert", BERT, bf16=True)
    check_tiny(r, fixtures, "t5_gated", TINY["t5_gated"], bf16=True)
    # The tasks' losses: the builder's default (lm) against CrossEntropyLoss traced in the reference.
    check_tiny(r, fixtures, "bert", BERT, loss=True)
    check_tiny(r, fixtures, "t5", T5, loss=True)
    for name, published, derived in EXAMPLES:
        check_example(r, name, published, derived)
    return r.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
