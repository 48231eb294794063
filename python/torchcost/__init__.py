"""torchcost: what a PyTorch model costs, without running it and without a GPU.

    import torchcost
    a = torchcost.analyze(model, ("B", 3, 224, 224), optimizer="adam", set={"B": 32})
    a.params, a.macs, a.flops_forward, a.flops_backward, a.peak_bytes, a.memory
    print(a.summary()); print(a.tree(depth=2))
    a.evaluate(B=64).peak_bytes           # the same analysis at another batch
    a.sweep(B=[1, 2, 4, 8])

    torchcost.analyze("llama-7b-like", set={"B": 1, "S": 2048}, param_dtype="bf16", peft="lora:r=8")
    torchcost.Profiler(model, optimizer).profile(torch.randn(8, 3, 224, 224, device="meta"))
    torchcost.compare("llama-7b-like", ["full", "lora:r=8", "qlora:r=16"], budget="24GiB")

The analysis is torchcost's C++ library (the `torchcost` command's, with the
same options as keywords: docs/python.md). An nn.Module is exported in this
process through torch.fx on the meta device (nothing is computed; a model
built on torch.device("meta") has no weights at all).
"""

from typing import Any, List, Mapping, Optional, Sequence

from ._options import StrictError, TorchcostError
from .result import Analysis, ModuleRecord, human

__version__ = "0.1.0"
__all__ = ["analyze", "generate", "arch_config", "compare", "Profiler", "Analysis", "Comparison", "ModuleRecord", "TorchcostError",
           "StrictError", "human", "export_graph", "__version__"]


def _load_core() -> Any:
    """The extension, imported on first use (importing torchcost stays cheap)."""
    from . import _core as core  # noqa: PLC0415

    return core


def _call(fn: Any, *args: Any) -> Any:
    from ._options import translate_message

    core = _load_core()
    try:
        return fn(core)(*args)
    except core.StrictError as e:
        raise StrictError(translate_message(str(e))) from None
    except core.UsageError as e:
        raise TorchcostError(translate_message(str(e))) from None


def analyze(model: Any, input_shapes: Any = None, *, input_dtypes: Optional[Sequence[Any]] = None,
            config: Any = None, method: str = "fx", examples: Optional[Mapping[str, int]] = None,
            timeline_svg: Optional[str] = None, **options: Any) -> Analysis:
    """Analyses a model's training step (or inference with mode="infer").

    model: an nn.Module (exported here through torch.fx, or make_fx with
      method="aten" for concrete shapes; meta-device models cost no memory), a ScriptModule, a path
      to a TorchScript archive (.pt), a JSON graph (.json) or a Hugging Face config.json
      (its model_type built, `config` overriding its keys), or a family or preset
      name ("gpt2", "llama", "llama-7b-like", "vit-b-16", "resnet50", ...) with
      its `config` ({"layers": 2, "hidden": 128} or "layers=2,hidden=128").
    input_shapes: one shape per forward() input: (1, 3, 224, 224),
      ("B", 3, 224, 224) (symbols stay symbolic), "B,S:int64", a tensor, or a
      list of those. Families and .json graphs have their own.
    input_dtypes: a dtype per input, where the shapes do not carry one.
    examples: sizes to trace an nn.Module's symbolic dims at ({"S": 128});
      default: the `set` value if above 1, else 2.
    timeline_svg: also write the memory timeline there.
    options: every option of the `torchcost` command as a keyword (docs/python.md):
      set={"B": 8}, mode="infer", optimizer="adam", freeze=["^conv1"],
      param_dtype="bf16", autocast="bf16", loss="cross_entropy", checkpoint="blocks",
      peft="lora:r=8,targets=q_proj|v_proj", galore={"r": 128}, shard="zero3",
      world=8, strict=True, device="cpu", ...

    Raises TorchcostError for a bad option or model (the message names the
    keyword), StrictError when strict=True and an op has no rule.
    """
    from . import _model
    from ._options import bindings_of, to_args, with_running_torch

    if options.get("mode") == "generate":
        if input_shapes is not None:
            raise TorchcostError("input_shapes: mode='generate' takes the inputs its phases declare")
        return generate(model, config=config, **{k: v for k, v in options.items() if k != "mode"})
    if options.get("arch_symbols"):
        if input_shapes is not None:
            raise TorchcostError("input_shapes: arch_symbols analyses a family or config.json with its own inputs")
        return arch_config(model, config=config, **options)
    # NB: the text report's flags (--depth, --top, --top-depth) are tree()'s defaults.
    tree = {k: options.pop(k) for k in ("depth", "top", "top_depth") if k in options}
    options = with_running_torch(model, options)
    inputs = _model.normalize_inputs(input_shapes, input_dtypes)
    args = to_args(options)
    source = _model.prepare(model, inputs, config=config, method=method, examples=examples,
                            bindings=bindings_of(options.get("set")))
    with source:
        core = _call(lambda c: c.analyze, source.args + args, source.name)
    result = Analysis(core, source.name, tree=tree)
    if timeline_svg is not None:
        result.timeline_svg(timeline_svg)
    return result


def generate(model: str, *, config: Any = None, **options: Any) -> dict:
    """Analyses a built model's generation with a KV cache (docs/generation.md).

    model: a family or preset name, or a Hugging Face config.json (llama family);
    options as analyze()'s (set={"B": 8, "S": 4096, "T": 512}, param_dtype="bf16",
    cache_dtype="fp8", weight_quant="int4", ...). Returns the JSON report as a
    dict: the prefill's report with its "generation" object (docs/json-schema.md).
    analyze(model, mode="generate", ...) returns the same.
    """
    import json

    from . import _model
    from ._options import to_args

    source = _model.prepare(model, [], config=config)
    with source:
        text = _call(lambda c: c.generate, source.args + to_args(options))
    return json.loads(text)


def arch_config(model: str, *, arch_symbols: Mapping[str, Any], config: Any = None, **options: Any) -> dict:
    """Analyses a built model whose `config` values use symbols (docs/nas.md, `--arch-symbol`).

    model: a family or preset name, or a Hugging Face config.json; config: its keys,
    with symbols in values ({"hidden": "H*128", "heads": "H"}); arch_symbols: each
    symbol's sample range, {"H": (lo, hi)} or (lo, hi, step) (hi included), a
    range, or "LO:HI[:STEP]"; options as analyze()'s (set={"H": 28, "B": 1} evaluates).
    Returns the totals as closed forms in the symbols, B and S: the
    "torchcost.arch_config" JSON as a dict (docs/json-schema.md).
    analyze(model, arch_symbols=..., ...) returns the same.
    """
    import json

    from . import _model
    from ._options import to_args

    source = _model.prepare(model, [], config=config)
    with source:
        text = _call(lambda c: c.arch_config, source.args + to_args(dict(options, arch_symbols=arch_symbols)))
    return json.loads(text)


def export_graph(model: Any, input_shapes: Any, path: Optional[str] = None, *, method: str = "fx",
                 input_dtypes: Optional[Sequence[Any]] = None,
                 examples: Optional[Mapping[str, int]] = None) -> dict:
    """Exports an nn.Module as a torchcost JSON graph (docs/graph-schema.md); writes it to `path` if given."""
    from . import _model, exporter

    specs = []
    for shape, dtype in _model.normalize_inputs(input_shapes, input_dtypes):
        example = [(examples or {}).get(d, 2) if isinstance(d, str) else d for d in shape]
        specs.append(exporter.InputSpec(shape, dtype or "float32", example=example))
    if path is not None:
        return exporter.export(model, specs, path, method=method)
    return exporter.export_graph(model, specs, method=method)


from .compare import Comparison, compare  # noqa: E402
from .profiler import Profiler  # noqa: E402
