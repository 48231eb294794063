"""The one place where Python keyword arguments become the analysis options.

Every option of the `torchcost` command is a keyword argument named after its
flag (``--param-dtype`` is ``param_dtype``); values may be Python values
(``True``, ``8``, ``torch.bfloat16``, ``{"r": 8, "targets": "q_proj|v_proj"}``,
a list for a repeatable flag). They are handed to the library as the command
line's arguments, so that the options, their defaults, their checks and their
messages are the command's; errors name the keyword, not the flag.
"""

import json
import re
import sys
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

# keyword -> (flag, kind). kind: "value" (one value), "flag" (a bool switch),
# "list" (repeatable), "spec" (a "k=v,..." spec: a dict, or the text itself).
OPTIONS: Dict[str, Tuple[str, str]] = {
    "config": ("--config", "spec"),
    "dtype": ("--dtype", "value"),
    "set": ("--set", "bindings"),
    "rules": ("--rules", "value"),
    "strict": ("--strict", "flag"),
    "mode": ("--mode", "value"),
    "optimizer": ("--optimizer", "value"),
    "freeze": ("--freeze", "list"),
    "device": ("--device", "value"),
    "param_dtype": ("--param-dtype", "value"),
    "autocast": ("--autocast", "value"),
    "attention_backend": ("--attention-backend", "value"),
    "torch_version": ("--torch-version", "value"),
    "loss": ("--loss", "value"),
    "accumulate": ("--accumulate", "value"),
    "checkpoint": ("--checkpoint", "value"),
    "checkpoint_group": ("--checkpoint-group", "value"),
    "zero_grad": ("--zero-grad", "value"),
    "lora": ("--lora", "spec"),
    "peft": ("--peft", "method"),
    "optimizer_impl": ("--optimizer-impl", "value"),
    "galore": ("--galore", "spec"),
    "shard": ("--shard", "value"),
    "world": ("--world", "value"),
    "ddp_bucket": ("--ddp-bucket", "value"),
    "ddp_bucket_view": ("--ddp-bucket-view", "flag"),
    "fsdp_unit": ("--fsdp-unit", "value"),
    "fsdp_sharding": ("--fsdp-sharding", "value"),
    "shard_group": ("--shard-group", "value"),
    "no_prefetch": ("--no-prefetch", "flag"),
    "offload": ("--offload", "value"),
    "deepspeed": ("--deepspeed", "value"),
    "reduce_bucket": ("--reduce-bucket", "value"),
    "zero3_prefetch_bucket": ("--zero3-prefetch-bucket", "value"),
    "zero3_max_live": ("--zero3-max-live", "value"),
    "zero3_max_reuse": ("--zero3-max-reuse", "value"),
    "zero3_persistence": ("--zero3-persistence", "value"),
    "overlap_comm": ("--overlap-comm", "flag"),
    "no_contiguous_gradients": ("--no-contiguous-gradients", "flag"),
    "master_weights": ("--master-weights", "flag"),
    "paged": ("--paged", "flag"),
    "state_dtype": ("--state-dtype", "value"),
    "inputs_require_grad": ("--inputs-require-grad", "flag"),
    "gpu": ("--gpu", "value"),
    "gpu_file": ("--gpu-file", "value"),
    "network": ("--network", "value"),
    "node_gpus": ("--node-gpus", "value"),
    "cache_dtype": ("--cache-dtype", "value"),
    "weight_quant": ("--weight-quant", "value"),
    "allocator": ("--allocator", "value"),
    "max_split_size_mb": ("--max-split-size-mb", "value"),
    "expandable_segments": ("--expandable-segments", "flag"),
    "cuda_context": ("--cuda-context", "value"),
    "budget": ("--budget", "value"),
    "batch_symbol": ("--batch-symbol", "value"),
    "arch_symbols": ("--arch-symbol", "arch"),
}
# `torchcost compare`'s own options.
COMPARE_OPTIONS: Dict[str, Tuple[str, str]] = {
    "chart": ("--chart", "value"),
    "sweep": ("--sweep", "list"),
}
# Flags that Python spells differently from the rule above (or handles itself).
_FLAG_TO_KEYWORD = {flag: kw for kw, (flag, _) in {**OPTIONS, **COMPARE_OPTIONS}.items()}
_FLAG_TO_KEYWORD.update({"--input": "input_shapes", "--model": "model", "--sweep": "sweep",
                         "--timeline": "timeline_svg", "--depth": "depth", "--top": "top",
                         "--top-depth": "top_depth", "--prefetch": "prefetch",
                         "--no-contiguous-gradients": "contiguous_gradients=False"})


class TorchcostError(ValueError):
    """A bad option, model or input: the message names the keyword or file."""


class StrictError(RuntimeError):
    """strict=True and an op has no rule (the command's exit code 1)."""


def torch_version_of(version: str) -> str:
    """The --torch-version for a torch.__version__ ("2.11.0+cu130" -> "2"; "1.13.1" -> "1.13")."""
    return "1.13" if version.startswith("1.") else "2"


def with_running_torch(model: Any, options: Dict[str, Any]) -> Dict[str, Any]:
    """options with the running torch's torch_version where model is a live nn.Module and none is given: it
    trains on this torch, whose autograd formulas and optimizer steps are the ones modelled."""
    torch = sys.modules.get("torch")  # NB: an nn.Module means torch is loaded.
    if "torch_version" in options or torch is None or not isinstance(model, torch.nn.Module):
        return options
    return dict(options, torch_version=torch_version_of(torch.__version__))


def value_text(value: Any) -> str:
    """Returns the command-line text of one option value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    torch = sys.modules.get("torch")  # NB: never imported here (a torch.dtype value means it is loaded).
    if torch is not None and isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else repr(value)
    return str(value)


def spec_text(value: Any) -> str:
    """Returns "k=v,k=v" for a dict (insertion order), or the text of anything else."""
    if isinstance(value, Mapping):
        return ",".join("%s=%s" % (k, value_text(v)) for k, v in value.items())
    return value_text(value)


def bindings_of(value: Optional[Mapping[str, int]], name: str = "set") -> Dict[str, int]:
    """Checks a {symbol: int} mapping."""
    out: Dict[str, int] = {}
    for k, v in (value or {}).items():
        if isinstance(v, bool) or not isinstance(v, int):
            try:
                import numbers

                if not isinstance(v, numbers.Integral):
                    raise TypeError
            except TypeError:
                raise TorchcostError("%s: %s=%r is not an integer" % (name, k, v)) from None
        out[str(k)] = int(v)
    return out


def to_args(options: Mapping[str, Any], table: Mapping[str, Tuple[str, str]] = OPTIONS) -> List[str]:
    """Returns the command-line arguments of `options` (keywords of analyze() or compare()).

    Unknown keywords are an error naming them; None leaves an option at its default.
    """
    args: List[str] = []
    for kw, value in options.items():
        if kw in ("prefetch", "contiguous_gradients"):  # Positive spellings of no_* flags.
            kw, value = "no_" + kw, (None if value is None else not value)
        entry = table.get(kw) or OPTIONS.get(kw)
        if entry is None:
            known = ", ".join(sorted(set(table) | set(OPTIONS)))
            raise TorchcostError("unknown option %r; options: %s" % (kw, known))
        if value is None:
            continue
        flag, kind = entry
        if kind == "flag":
            if value:
                args.append(flag)
        elif kind == "list":
            items: Iterable[Any] = [value] if isinstance(value, str) else value
            for item in items:
                args += [flag, value_text(item)]
        elif kind == "bindings":
            for k, v in bindings_of(value, kw).items():
                args += [flag, "%s=%d" % (k, v)]
        elif kind == "spec":
            args += [flag, spec_text(value)]
        elif kind == "method":
            args += [flag, method_text(value)]
        elif kind == "arch":
            if not isinstance(value, Mapping):
                raise TorchcostError("%s: expected {symbol: (lo, hi[, step])}, got %r" % (kw, value))
            for name, sample in value.items():
                args += [flag, "%s=%s" % (name, arch_range_text(sample, kw))]
        elif kw == "deepspeed" and isinstance(value, Mapping):
            args += [flag, json.dumps(value)]  # The JSON text itself (a dict, as Hugging Face's Trainer takes).
        else:
            if kw == "optimizer" and not isinstance(value, str):
                raise TorchcostError("optimizer: give its name ('adamw'), or use torchcost.Profiler(model, "
                                     "optimizer) for a torch.optim object")
            args += [flag, value_text(value)]
    return args


def arch_range_text(value: Any, name: str = "arch_symbols") -> str:
    """An architecture symbol's sample range as "LO:HI[:STEP]" (HI included, as the command's).

    value: (lo, hi) or (lo, hi, step); a range (range(64, 8193, 64): its last value is HI); or the text itself.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, range):
        if len(value) == 0 or value.step <= 0:
            raise TorchcostError("%s: %r is empty or decreasing" % (name, value))
        return "%d:%d:%d" % (value.start, value[-1], value.step)
    if isinstance(value, (tuple, list)) and len(value) in (2, 3):
        return ":".join(value_text(v) for v in value)
    raise TorchcostError("%s: expected (lo, hi[, step]), a range or 'LO:HI[:STEP]', got %r" % (name, value))


def method_text(value: Any) -> str:
    """A fine-tuning method: "lora:r=8", ("lora", {"r": 8}) or {"method": "lora", "r": 8}."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        settings = dict(value)
        name = settings.pop("method", None)
        if name is None:
            raise TorchcostError("peft: a dict needs a 'method' key (lora, dora, qlora, galore, full)")
        return name + (":" + spec_text(settings) if settings else "")
    if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str):
        return value[0] + (":" + spec_text(value[1]) if value[1] else "")
    raise TorchcostError("peft: expected 'lora:r=8', ('lora', {'r': 8}) or {'method': 'lora', 'r': 8}, got %r"
                         % (value,))


_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")
# The library's names (StepConfig's fields, include/torchcost/step.h) that are not the keyword's.
_FIELD_TO_KEYWORD = {"method": "peft", "set_to_none": "zero_grad",
                     "inputs": "input_shapes", "input_dtype": "dtype", "bindings": "set",
                     "symbol_bounds": "input_shapes", "ddp_bucket_mib": "ddp_bucket",
                     "cuda_context_bytes": "cuda_context", "budget_bytes": "budget",
                     "budget_symbol": "batch_symbol", "network_gbs": "network"}
_FIELD = re.compile(r"StepConfig\.([a-z_]+)")


def translate_message(message: str) -> str:
    """Returns a library message with the command's flags named as keywords (--param-dtype -> param_dtype)."""
    def keyword(m: "re.Match[str]") -> str:
        return _FLAG_TO_KEYWORD.get(m.group(0), m.group(0))
    text = re.sub(r"--input (?=\S)", "input_shapes=", message)  # "give --input SHAPE": a keyword's value.
    text = _FLAG.sub(keyword, text)
    text = text.replace("StepConfig.contiguous_gradients=false", "contiguous_gradients=False")
    text = _FIELD.sub(lambda m: _FIELD_TO_KEYWORD.get(m.group(1), m.group(1)), text)
    return text.replace(" (see torchcost --help)", "")


TorchcostError.__module__ = "torchcost"
StrictError.__module__ = "torchcost"
