"""What a model argument becomes for the analysis: a file, a family, or an exported nn.Module.

An nn.Module is exported in this process to a JSON graph (torchcost.exporter,
docs/graph-schema.md) on the meta device, so nothing is computed and no
weight is copied; a ScriptModule is saved as a TorchScript archive. Both go to
a temporary directory that is removed once the analysis has read them.
"""

import os
import re
import shutil
import sys
import tempfile
from typing import Any, List, Mapping, Optional, Sequence, Tuple, Union

from ._options import TorchcostError, value_text

Dim = Union[int, str]
Shape = List[Dim]
# One input: its shape and dtype name (None: the model's or --dtype's default).
Input = Tuple[Shape, Optional[str]]

_MODEL_FILE = re.compile(r".*\.(pt|pth|json|jit|torchscript)$", re.IGNORECASE)


def _is_dim(x: Any) -> bool:
    if isinstance(x, bool):
        return False
    if isinstance(x, int):
        return True
    if isinstance(x, str):
        return "," not in x and ":" not in x
    return type(x).__name__ == "SymInt"


def _dtype_name(d: Any) -> Optional[str]:
    if d is None:
        return None
    return value_text(d)


def _parse_shape_text(text: str) -> Input:
    shape, _, dtype = text.partition(":")
    dims: Shape = []
    for d in shape.split(","):
        d = d.strip()
        if d == "":
            raise TorchcostError("input_shapes: %r has an empty dim" % text)
        dims.append(int(d) if re.fullmatch(r"-?\d+", d) else d)
    return dims, (dtype.strip() or None)


def _one_input(x: Any) -> Input:
    torch = sys.modules.get("torch")  # NB: not imported here: a tensor or dtype means it is loaded.
    if isinstance(x, str):
        return _parse_shape_text(x)
    if torch is not None and isinstance(x, torch.Tensor):
        return list(x.shape), _dtype_name(x.dtype)
    if type(x).__name__ == "InputSpec":
        return list(x.shape), _dtype_name(x.dtype)
    if isinstance(x, (tuple, list)) and len(x) == 2 and isinstance(x[0], (tuple, list)) and \
            (isinstance(x[1], str) or (torch is not None and isinstance(x[1], torch.dtype))):
        return [int(d) if not isinstance(d, str) else d for d in x[0]], _dtype_name(x[1])
    if isinstance(x, Sequence) or (torch is not None and isinstance(x, torch.Size)):
        if not all(_is_dim(d) for d in x):
            raise TorchcostError("input_shapes: %r is not a shape (ints and symbol names)" % (x,))
        return [d if isinstance(d, str) else int(d) for d in x], None
    raise TorchcostError("input_shapes: expected a shape, a 'B,3,224,224[:dtype]' string or a tensor, got %s"
                         % type(x).__name__)


def normalize_inputs(input_shapes: Any, input_dtypes: Optional[Sequence[Any]] = None) -> List[Input]:
    """Returns [(shape, dtype)] for every spelling input_shapes accepts.

    One input: (1, 3, 224, 224), ("B", 3, 224, 224), torch.Size, "B,3,224,224:float16", a tensor
    (its shape and dtype: meta tensors cost nothing) or ((B, S), torch.int64). Several: a list of those.
    """
    if input_shapes is None:
        inputs: List[Input] = []
    elif isinstance(input_shapes, (str,)) or not isinstance(input_shapes, (Sequence,)) or \
            (all(_is_dim(d) for d in input_shapes) and len(input_shapes) > 0):
        inputs = [_one_input(input_shapes)]
    else:
        inputs = [_one_input(x) for x in input_shapes]
    if input_dtypes is not None:
        dts = [input_dtypes] if isinstance(input_dtypes, str) or not isinstance(input_dtypes, Sequence) \
            else list(input_dtypes)
        if len(dts) != len(inputs):
            raise TorchcostError("input_dtypes: %d dtypes for %d inputs" % (len(dts), len(inputs)))
        inputs = [(s, _dtype_name(d) or old) for (s, old), d in zip(inputs, dts)]
    return inputs


def input_args(inputs: List[Input]) -> List[str]:
    """Returns the --input arguments of `inputs`."""
    args: List[str] = []
    for shape, dtype in inputs:
        args += ["--input", ",".join(str(d) for d in shape) + (":" + dtype if dtype else "")]
    return args


class Source:
    """A model made ready for the analysis: the arguments naming it, and a temporary directory to remove."""

    def __init__(self, args: List[str], name: str, tmp: Optional[str] = None):
        self.args = args
        self.name = name
        self.tmp = tmp

    def close(self) -> None:
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self) -> "Source":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _is_hf_config(path: str) -> bool:
    """True if `path` is a JSON object with a model_type and no graph (a Hugging Face config.json)."""
    import json

    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and "model_type" in doc and "nodes" not in doc


def _json_graph_inputs(path: str) -> List[Input]:
    """The inputs table of a JSON graph (docs/graph-schema.md): symbolic shapes as the exporter wrote them.

    NB: the command reads shapes from --input only; the package defaults them to the file's own.
    """
    import json

    try:
        with open(path) as f:
            doc = json.load(f)
        return [(list(i["shape"]), i.get("dtype")) for i in doc.get("inputs", [])
                if isinstance(i, dict) and isinstance(i.get("shape"), list)]
    except (OSError, ValueError, KeyError, TypeError):
        return []  # The analysis reports what is wrong with the file.


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "model"


def prepare(model: Any, inputs: List[Input], *, config: Any = None, method: str = "fx",
            examples: Optional[Mapping[str, int]] = None, bindings: Optional[Mapping[str, int]] = None) -> Source:
    """Returns the Source of `model`: a path, a family name, an nn.Module or a ScriptModule."""
    if isinstance(model, os.PathLike):
        model = os.fspath(model)
    if isinstance(model, str):
        if model.lower().endswith(".json") and _is_hf_config(model):
            # A Hugging Face config.json: the model its model_type builds (docs/hf-config.md), `config`
            # overriding its keys ({"num_hidden_layers": 2}) or run settings.
            args = ["--model", model]
            if config is not None:
                from ._options import spec_text

                args += ["--config", spec_text(config)]
            return Source(args + input_args(inputs), os.path.basename(model))
        if os.path.exists(model) or _MODEL_FILE.match(model) or os.sep in model:
            if config is not None:
                raise TorchcostError("config: only for a family or preset name, not a model file")
            if not inputs and model.lower().endswith(".json") and os.path.isfile(model):
                inputs = _json_graph_inputs(model)
            return Source([model] + input_args(inputs), os.path.basename(model))
        args = ["--model", model]
        if config is not None:
            from ._options import spec_text

            args += ["--config", spec_text(config)]
        return Source(args + input_args(inputs), model)
    if config is not None:
        raise TorchcostError("config: only for a family or preset name")
    torch = sys.modules.get("torch")  # An nn.Module means torch is loaded.
    if torch is None:
        raise TorchcostError("model: expected an nn.Module, a ScriptModule, a .pt or .json path or a family "
                             "name, got %s" % type(model).__name__)
    if isinstance(model, torch.jit.ScriptModule):
        if not inputs:
            raise TorchcostError("input_shapes: a ScriptModule keeps no input shapes; give them")
        tmp = tempfile.mkdtemp(prefix="torchcost-")
        name = _safe_name(getattr(model, "original_name", None) or "model")
        path = os.path.join(tmp, name + ".pt")
        try:
            torch.jit.save(model, path)
        except Exception:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return Source([path] + input_args(inputs), name, tmp)
    if isinstance(model, torch.nn.Module):
        if not inputs:
            raise TorchcostError("input_shapes: give the shape of every forward() input")
        from . import exporter

        examples = dict(examples or {})
        symbolic = sorted({d for shape, _ in inputs for d in shape if isinstance(d, str)})
        if symbolic and method != "fx":
            # NB: make_fx (and torch.export on 1.13's successors) record sizes as constants: a graph
            # traced at B=2 is B=2's only, and analysing it for every B would be silently wrong.
            raise TorchcostError("method=%r records sizes at the examples; give concrete input_shapes "
                                 "(not %s) or use method='fx', whose sizes stay symbolic"
                                 % (method, ", ".join(symbolic)))
        specs = []
        for shape, dtype in inputs:
            example = []
            for d in shape:
                if isinstance(d, str):
                    # NB: 1 is a poor example (broadcasting and squeezes specialize on it): 2 unless given.
                    v = examples.get(d) or max(int((bindings or {}).get(d, 2)), 2)
                    example.append(int(v))
                else:
                    example.append(d)
            specs.append(exporter.InputSpec(shape, dtype or "float32", example=example))
        name = _safe_name(type(model).__name__)
        try:
            doc = exporter.export_graph(model, specs, method=method)
        except exporter.ExportError as e:
            raise TorchcostError("model: %s" % e) from None
        except Exception as e:  # noqa: BLE001 - the model's own Python failed under the tracer.
            hint = ("; method='aten' (make_fx, concrete input_shapes) traces what torch.fx cannot "
                    "(nn.MultiheadAttention, data-dependent Python)" if method == "fx" else "")
            first = (str(e).strip().splitlines() or [""])[0]
            raise TorchcostError("model: exporting %s with method=%r failed: %s: %s%s"
                                 % (name, method, type(e).__name__, first, hint)) from e
        tmp = tempfile.mkdtemp(prefix="torchcost-")
        path = os.path.join(tmp, name + ".json")
        import json

        with open(path, "w") as f:
            json.dump(doc, f, separators=(",", ":"), allow_nan=False)
        del doc
        return Source([path] + input_args([(s, d or "float32") for s, d in inputs]), name, tmp)
    raise TorchcostError("model: expected an nn.Module, a ScriptModule, a .pt or .json path or a family name, "
                         "got %s" % type(model).__name__)
