#!/usr/bin/python3
"""LoRA and DoRA in plain torch, following huggingface peft's math: torchcost's oracle.

peft itself is not packaged for Debian; these modules compute what peft's
LoraLayer / DoraLinearLayer forwards compute (peft >= 0.12), op for op:

  LoRA Linear / Conv2d (peft's lora.Linear, lora.Conv2d):
      result = base_layer(x); x = x.to(lora_A.weight.dtype)
      result = result + lora_B(lora_A(dropout(x))) * scaling; result.to(result_dtype)
  DoRA Linear (peft's DoraLinearLayer.forward, use_dora=True):
      lora_weight = lora_B(lora_A(eye(in))).T
      weight_norm = linalg.norm(W + scaling * lora_weight.detach(), dim=1).detach()
      mag_norm_scale = (magnitude / weight_norm).view(1, -1)
      base = result - bias (dropout an identity) or F.linear(dropout(x), W)
      result = result + (mag_norm_scale - 1) * base + mag_norm_scale * lora_B(lora_A(dropout(x))) * scaling

  LoRA / DoRA on transformers' Conv1D (peft's lora.Linear with fan_in_fan_out=True;
  huggingface/peft at 5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40, src/peft/tuners/lora/layer.py
  LoraLayer.__init__: in_features, out_features = Conv1D weight.shape; forward as lora.Linear's;
  src/peft/tuners/lora/dora.py DoraLinearLayer: get_weight_norm and the dropout path read
  transpose(weight, fan_in_fan_out) = weight.T): the same math on a weight stored [in, out].

apply(model, method, r, alpha, dropout, targets) wraps every nn.Linear (and,
for LoRA, nn.Conv2d) whose attribute name matches `targets` (a regex, full
match), and every Conv1D-style projection (make_fixtures' GPT2Attention:
parameters <name>_weight [in, out] and <name>_bias read by its conv1d(name, x))
whose <name> matches, and freezes every other parameter, as peft's
get_peft_model does.
PRESETS names the configurations the oracle tests use, with the torchcost
--lora spec that says the same.
"""

import math
import re

import torch
from torch import nn
import torch.nn.functional as F

# (base model, method) -> peft arguments; the fixtures "<base>+<method>" use them.
PRESETS = {
    ("gpt_tiny", "lora"): dict(r=4, alpha=8, dropout=0.05, targets="c_attn|c_fc"),
    ("gpt_tiny", "dora"): dict(r=4, alpha=8, dropout=0.0, targets="c_attn|c_fc"),
    ("gpt_tiny", "dora_dropout"): dict(r=4, alpha=8, dropout=0.1, targets="c_proj", method="dora"),
    ("gpt2_tiny", "lora"): dict(r=4, alpha=8, dropout=0.05, targets="c_attn|c_proj"),
    ("gpt2_tiny", "dora"): dict(r=4, alpha=8, dropout=0.0, targets="c_attn|c_proj"),
    ("gpt2_tiny", "dora_dropout"): dict(r=2, alpha=4, dropout=0.1, targets="c_attn", method="dora"),
    ("resnet18", "lora"): dict(r=4, alpha=4, dropout=0.0, targets="conv2|fc"),
    ("resnet18", "dora"): dict(r=4, alpha=8, dropout=0.0, targets="fc"),
}


def preset(base, variant):
    """Returns the peft arguments of a preset: r, alpha, dropout, targets, method."""
    p = dict(PRESETS[(base, variant)])
    p.setdefault("method", variant)
    return p


def cli_spec(base, variant):
    """Returns the torchcost --lora spec of a preset."""
    p = preset(base, variant)
    spec = "r=%d,alpha=%d,dropout=%g,targets=%s" % (p["r"], p["alpha"], p["dropout"], p["targets"])
    return spec + (",dora=true" if p["method"] == "dora" else "")


class LoraLinear(nn.Module):
    """peft's lora.Linear (and its DoRA variant) around a frozen nn.Linear."""

    def __init__(self, base, r, alpha, dropout, use_dora):
        super().__init__()
        self.base_layer = base
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.normal_(self.lora_B.weight, std=0.02)  # peft zeros it; nonzero keeps the math honest
        self.scaling = alpha / r
        self.use_dora = use_dora
        if use_dora:
            self.lora_magnitude_vector = DoraLinearLayer(self)

    def forward(self, x):
        result = self.base_layer(x)
        result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        if not self.use_dora:
            result = result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling
        else:
            if isinstance(self.lora_dropout, nn.Identity) or not self.training:
                base_result = result
            else:
                x = self.lora_dropout(x)
                base_result = None
            result = result + self.lora_magnitude_vector(x, self.lora_A, self.lora_B, self.scaling,
                                                         self.base_layer, base_result)
        return result.to(result_dtype)


class DoraLinearLayer(nn.Module):
    """peft's DoraLinearLayer: the magnitude vector (`weight`) and DoRA's forward."""

    def __init__(self, lora, fan_in_fan_out=False):
        super().__init__()
        base = lora.base_layer
        self.fan_in_fan_out = fan_in_fan_out
        with torch.no_grad():
            w = base.weight.T if fan_in_fan_out else base.weight
            norm = torch.linalg.norm(w + lora.scaling * (lora.lora_B.weight @ lora.lora_A.weight), dim=1)
        self.weight = nn.Parameter(norm.clone())

    def forward(self, x, lora_A, lora_B, scaling, base_layer, base_result=None):
        x_eye = torch.eye(lora_A.weight.shape[1], device=lora_A.weight.device, dtype=x.dtype)
        lora_weight = lora_B(lora_A(x_eye)).T
        magnitude = self.weight
        weight = base_layer.weight.to(x.dtype)
        # get_weight_norm: weight = transpose(weight, fan_in_fan_out)
        oriented = weight.T if self.fan_in_fan_out else weight
        weight_norm = torch.linalg.norm(oriented + scaling * lora_weight.detach(), dim=1).to(weight.dtype)
        weight_norm = weight_norm.detach()
        mag_norm_scale = (magnitude / weight_norm).view(1, -1)
        lora_result = lora_B(lora_A(x))
        if base_result is not None:
            if base_layer.bias is not None:
                base_result = base_result - base_layer.bias
        else:
            base_result = F.linear(x, weight.T if self.fan_in_fan_out else weight)
        return (mag_norm_scale - 1) * base_result + mag_norm_scale * lora_result * scaling


class Conv1DBase:
    """A Conv1D's weight [in, out] and bias, as DoraLinearLayer reads base_layer."""

    def __init__(self, weight, bias):
        self.weight = weight
        self.bias = bias


class LoraConv1D(nn.Module):
    """peft's lora.Linear (fan_in_fan_out=True) around a Conv1D: called by the owning module's
    conv1d(name, x) with the base result; its weight [in, out] stays the owner's parameter."""

    def __init__(self, owner, name, r, alpha, dropout, use_dora):
        super().__init__()
        self._base = (owner, name)  # A tuple: not registered as a submodule.
        weight = getattr(owner, name + "_weight")
        in_features, out_features = weight.shape
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.lora_A = nn.Linear(in_features, r, bias=False)
        self.lora_B = nn.Linear(r, out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = alpha / r
        self.use_dora = use_dora
        if use_dora:
            self.lora_magnitude_vector = DoraLinearLayer(self, fan_in_fan_out=True)

    @property
    def base_layer(self):
        owner, name = self._base
        return Conv1DBase(getattr(owner, name + "_weight"), getattr(owner, name + "_bias"))

    def forward(self, x, result):
        result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        if not self.use_dora:
            result = result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling
        else:
            if isinstance(self.lora_dropout, nn.Identity) or not self.training:
                base_result = result
            else:
                x = self.lora_dropout(x)
                base_result = None
            result = result + self.lora_magnitude_vector(x, self.lora_A, self.lora_B, self.scaling,
                                                         self.base_layer, base_result)
        return result.to(result_dtype)


class LoraConv2d(nn.Module):
    """peft's lora.Conv2d: lora_A a conv with the base's kernel, stride and padding; lora_B 1x1."""

    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base_layer = base
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.lora_A = nn.Conv2d(base.in_channels, r, base.kernel_size, base.stride, base.padding, bias=False)
        self.lora_B = nn.Conv2d(r, base.out_channels, (1, 1), (1, 1), bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = alpha / r

    def forward(self, x):
        result = self.base_layer(x)
        result_dtype = result.dtype
        x = x.to(self.lora_A.weight.dtype)
        result = result + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling
        return result.to(result_dtype)


def apply(model, method, r, alpha, dropout, targets):
    """Wraps the matching layers of `model` in place and freezes the rest; returns the model."""
    pattern = re.compile(targets)
    for p in model.parameters():
        p.requires_grad_(False)
    wrapped = 0
    for _, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if not pattern.fullmatch(child_name):
                continue
            if isinstance(child, nn.Linear):
                new = LoraLinear(child, r, alpha, dropout, method == "dora")
            elif isinstance(child, nn.Conv2d) and method == "lora":
                new = LoraConv2d(child, r, alpha, dropout)
            else:
                continue
            setattr(module, child_name, new)
            wrapped += 1
        if hasattr(module, "conv1d"):
            for pname, p in list(module.named_parameters(recurse=False)):
                name = pname[:-len("_weight")]
                if pname.endswith("_weight") and p.dim() == 2 and pattern.fullmatch(name):
                    module.add_module(name, LoraConv1D(module, name, r, alpha, dropout, method == "dora"))
                    wrapped += 1
    assert wrapped, "no layer matches %r" % targets
    return model


def build(base_model, base, variant):
    """Applies the preset (base, variant) to a freshly built base model."""
    p = preset(base, variant)
    torch.manual_seed(1)
    return apply(base_model, p["method"], p["r"], p["alpha"], p["dropout"], p["targets"])
