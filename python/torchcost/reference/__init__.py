"""torchcost's model families in plain torch: the modules `python3 -m torchcost.calibrate` runs for a family
name or a config.json, and the oracle tests trace against the families (tests/python/test_builder.py,
test_hf_config.py).

  gpt2.py         the `gpt2` family (GPT-2 as Hugging Face writes it; tools/make_fixtures.py's gpt2_tiny)
  hf_reference.py Hugging Face's LlamaForCausalLM (the `llama` family's base) and GPT2LMHeadModel
  hf_decoders.py  config.json decoders: llama, mistral, mixtral, qwen2, qwen2_moe, gemma, gemma2, phi3, gpt_neox
  decoder_layers.py  the attention, MLP and RMSNorm that hf_reference.py's Llama and hf_decoders.py share
  hf_encoders.py  config.json encoders: bert, t5
  resnet, vit     torchvision's (torchvision.models.resnetN, VisionTransformer)

Each module here is checked against torchcost's graph of the same config by those oracle tests
(params, saved tensors, FLOPs), with eager attention: torch 1.13 has no scaled_dot_product_attention.
"""

from typing import Any, Dict, Mapping, Tuple

from .._options import TorchcostError

# Per family: the keys a plain-torch module here follows; every other key must keep the family's default.
# attn must be eager (the modules here compute attention with matmul and softmax).
FAMILY_KEYS = {
    "gpt2": ("layers", "hidden", "heads", "vocab", "context", "dropout", "dtype", "attn"),
    "llama": ("layers", "hidden", "heads", "kv_heads", "intermediate", "vocab", "eps", "tie", "dtype", "attn"),
    "resnet": ("depth", "classes", "image_size", "dtype"),
    "vit": ("image_size", "patch", "layers", "hidden", "heads", "mlp", "classes", "dropout", "dtype", "attn"),
}
# config.json model_types with a module here (the others: an error).
HF_TYPES = ("llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "gemma", "gemma2", "phi3", "gpt_neox", "bert",
            "t5", "gpt2")
RESNET_DEPTHS = (18, 34, 50, 101, 152)


def torch_dtype(name: str) -> Any:
    """torch's dtype for a torchcost dtype name (float32, bfloat16, float16; fp32, bf16, fp16)."""
    import torch

    table = {"float32": torch.float32, "fp32": torch.float32, "bfloat16": torch.bfloat16, "bf16": torch.bfloat16,
             "float16": torch.float16, "fp16": torch.float16}
    if name not in table:
        raise TorchcostError("config dtype=%s: not a dtype calibrate runs (fp32, bf16, fp16)" % name)
    return table[name]


def check_family(family: str, values: Mapping[str, str], defaults: Mapping[str, str]) -> None:
    """Raises unless a module here builds `family` at `values` (keys not in FAMILY_KEYS at their defaults)."""
    if family not in FAMILY_KEYS:
        raise TorchcostError("model: family %s has no plain-torch module for calibrate to run (families: %s; "
                             "or give a config.json of model_type %s)"
                             % (family, ", ".join(FAMILY_KEYS), ", ".join(HF_TYPES)))
    for key, value in values.items():
        if key not in FAMILY_KEYS[family] and value != defaults.get(key):
            raise TorchcostError("config %s=%s: calibrate's %s module has no such setting (it follows %s)"
                                 % (key, value, family, ", ".join(FAMILY_KEYS[family])))
    if values.get("attn", "eager") != "eager":
        raise TorchcostError("config attn=%s: calibrate runs eager attention (matmul and softmax); set attn=eager"
                             % values["attn"])


def build_family(family: str, values: Mapping[str, str]) -> Any:
    """The nn.Module of torchcost's `family` at `values` ({key: value text}, every key), in float32 or its dtype.

    Weights are drawn under torch.manual_seed(0).
    """
    import torch

    v = dict(values)
    i = lambda k: int(v[k])  # noqa: E731
    torch.manual_seed(0)
    if family == "gpt2":
        from .gpt2 import GPT2

        model = GPT2(vocab=i("vocab"), d_model=i("hidden"), n_head=i("heads"), n_layer=i("layers"),
                     context=i("context"), dropout=float(v["dropout"]))
    elif family == "llama":
        from .hf_reference import Llama

        model = Llama(vocab=i("vocab"), hidden=i("hidden"), heads=i("heads"), kv_heads=i("kv_heads"),
                      layers=i("layers"), intermediate=i("intermediate"), eps=float(v["eps"]), tie=v["tie"] == "true")
    elif family == "resnet":
        import torchvision

        if i("depth") not in RESNET_DEPTHS:
            raise TorchcostError("config depth=%s: torchvision has resnet%s" % (v["depth"], RESNET_DEPTHS))
        model = getattr(torchvision.models, "resnet%d" % i("depth"))(num_classes=i("classes"))
    elif family == "vit":
        from torchvision.models.vision_transformer import VisionTransformer

        model = VisionTransformer(image_size=i("image_size"), patch_size=i("patch"), num_layers=i("layers"),
                                  num_heads=i("heads"), hidden_dim=i("hidden"), mlp_dim=i("mlp"),
                                  dropout=float(v["dropout"]), num_classes=i("classes"))
    else:
        check_family(family, v, {})
    return model.to(torch_dtype(v.get("dtype", "float32")))


def build_hf_config(config: Mapping[str, Any], dtype: str = "float32") -> Any:
    """The nn.Module of a Hugging Face config.json dict (by its model_type), weights under torch.manual_seed(0)."""
    import torch

    kind = config.get("model_type")
    if kind not in HF_TYPES:
        raise TorchcostError("model: model_type %r has no plain-torch module for calibrate to run (%s)"
                             % (kind, ", ".join(HF_TYPES)))
    torch.manual_seed(0)
    if kind == "gpt2":
        from .gpt2 import GPT2

        # The keys torchcost's gpt2 family reads from a gpt2 config.json (src/builder/hf_architectures.cc).
        model = GPT2(vocab=config["vocab_size"], d_model=config["n_embd"], n_head=config["n_head"],
                     n_layer=config["n_layer"], context=config["n_positions"],
                     dropout=config.get("resid_pdrop", 0.1))
    elif kind == "bert":
        from . import hf_encoders

        model = hf_encoders.build(dict(config))
    elif kind == "t5":
        from . import hf_encoders

        model = hf_encoders.build_t5(dict(config))
    else:
        from . import hf_decoders

        model = hf_decoders.build(dict(config))
    return model.to(torch_dtype(dtype))


def parse_overrides(text: str) -> Tuple[Dict[str, Any], Dict[str, str]]:
    """A config.json's overrides "key=value,...": (its own keys with JSON values, torchcost's settings as text).

    The settings are the ones torchcost reads beside a file's keys (dtype, attn, tp, ...: src/builder/hf_config.cc).
    """
    import json

    settings = ("dtype", "attn", "tp", "sp", "make_vocab_size_divisible_by", "phase", "cache_dtype",
                "capacity_factor", "pad_to_capacity", "ep")
    keys: Dict[str, Any] = {}
    own: Dict[str, str] = {}
    for item in (text or "").split(","):
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise TorchcostError("config '%s': expected KEY=VALUE" % item)
        if key in settings:
            own[key] = value
            continue
        try:
            keys[key] = json.loads(value)
        except ValueError:
            keys[key] = value
    return keys, own
