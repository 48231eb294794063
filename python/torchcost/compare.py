"""torchcost.compare(): one row per training configuration of one model (`torchcost compare`)."""

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Sequence

from .result import CATEGORIES, human


class Comparison:
    """Rows of `torchcost compare --json` ("torchcost.compare" version 1, docs/json-schema.md).

    rows: one dict per configuration, in the order given: config, params,
    trainable_params, param_bytes, at_peak {category: bytes}, peak, fits,
    max_batch, flops {forward, backward, step}, lower_bound, unknown_ops; or
    config and error where it could not be analysed. With mode="generate"
    (serving configurations), no trainable_params, but kv_cache_bytes,
    prefill_peak and decode_peak, at_peak with kv_cache, and flops {prefill,
    decode_token}.
    """

    def __init__(self, doc: Dict[str, Any]):
        self._doc = doc

    def to_dict(self) -> Dict[str, Any]:
        """The comparison's JSON document as a dict."""
        return self._doc

    @property
    def rows(self) -> List[Dict[str, Any]]:
        """One dict per configuration."""
        return self._doc["rows"]

    @property
    def setting(self) -> str:
        """What applies to every row, in words."""
        return self._doc["setting"]

    def __getitem__(self, config: str) -> Dict[str, Any]:
        for r in self.rows:
            if r["config"] == config:
                return r
        raise KeyError(config)

    @property
    def generation(self) -> bool:
        """True for serving configurations of a generation (mode="generate")."""
        return self._doc.get("mode") == "generate"

    def table(self) -> str:
        """The rows as a text table (bytes in binary units)."""
        searched = "max " + self._doc.get("batch_symbol", "B")
        if self.generation:
            head = ["config", "weights", "kv cache", "prefill peak", "decode peak", "peak", "fits", searched,
                    "decode FLOPs/token"]
        else:
            head = ["config", "trainable", "peak"] + list(CATEGORIES) + ["fits", searched, "step FLOPs"]
        body, errors = [], []
        for r in self.rows:
            if "error" in r:
                errors.append("%s: error: %s" % (r["config"], r["error"]))
                continue
            fits = ["yes" if r["fits"] else "no", "-" if r["max_batch"] is None else str(r["max_batch"])]
            if self.generation:
                name = " ".join([r["config"]] + ["%s=%d" % kv for kv in r.get("at", {}).items()])
                body.append([name] + [human(r[k], "B", 1024) for k in
                                             ("param_bytes", "kv_cache_bytes", "prefill_peak", "decode_peak", "peak")] +
                            fits + [human(r["flops"]["decode_token"])])
                continue
            body.append([r["config"], human(r["trainable_params"]), human(r["peak"], "B", 1024)] +
                        [human(r["at_peak"][c], "B", 1024) for c in CATEGORIES] + fits + [human(r["flops"]["step"])])
        widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
        lines = ["%s (%s)" % (self._doc["model"], self.setting)]
        for row in [head] + body:
            lines.append("  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in
                                   enumerate(zip(row, widths))).rstrip())
        return "\n".join(lines + errors)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return "<torchcost.Comparison %s: %s>" % (self._doc["model"], ", ".join(r["config"] for r in self.rows))


def compare(model: Any, configs: Sequence[str], input_shapes: Any = None, *, budget: Optional[str] = None,
            chart: Optional[str] = None, batch_symbol: Optional[str] = None, config: Any = None,
            input_dtypes: Optional[Sequence[Any]] = None, method: str = "fx",
            examples: Optional[Mapping[str, int]] = None, **options: Any) -> "Comparison":
    """Compares training configurations of one model: a row per config ("full", "lora:r=8", "dora:r=16",
    "qlora:r=16", "galore:r=128", ...), each analysed with the same options.

    model, input_shapes, config and options are analyze()'s; budget ("24GiB")
    marks what fits and finds the largest batch that does; chart writes an SVG
    bar chart there.

    mode="generate" compares serving configurations of a built model's
    generation (model a family, preset or config.json, as generate()'s): "full",
    "int8", "int4", "nf4" or "fp8" weights, each optionally ":cache=DTYPE"
    ("int4:cache=fp8"); set={"S": 4096, "T": 512} with budget finds the largest
    B that fits, set={"B": 8, "T": 512} the largest S (batch_symbol names it);
    sweep={"S": [1024, 4096, 16384]} (or the command's "S=1024:16384:x4", a list
    of them) gives a row per configuration and point, each with its "at".
    """
    from . import _call, _model
    from ._options import COMPARE_OPTIONS, TorchcostError, bindings_of, method_text, to_args, with_running_torch

    if isinstance(configs, str):
        configs = [configs]
    if not configs:
        raise TorchcostError("configs: give at least one configuration (full, lora:r=8, ...)")
    if options.get("mode") == "generate":
        if input_shapes is not None or input_dtypes is not None:
            raise TorchcostError("input_shapes: mode='generate' takes the inputs its phases declare")
        if not isinstance(model, (str, os.PathLike)):
            raise TorchcostError("model: mode='generate' builds a family, preset or config.json by name, got %s"
                                 % type(model).__name__)
        for c in configs:
            if not isinstance(c, str):
                raise TorchcostError("configs: mode='generate' takes serving configurations as text (full, int8, "
                                     "int4, nf4, fp8, then :cache=DTYPE), got %r" % (c,))
    sweep = options.pop("sweep", None)
    if isinstance(sweep, Mapping):
        sweep = ["%s=%s" % (k, v if isinstance(v, str) else ",".join(str(x) for x in v)) for k, v in sweep.items()]
    inputs = _model.normalize_inputs(input_shapes, input_dtypes)
    options = with_running_torch(model, options)
    args = to_args(dict(options, budget=budget, chart=chart, batch_symbol=batch_symbol, sweep=sweep),
                   COMPARE_OPTIONS)
    source = _model.prepare(model, inputs, config=config, method=method, examples=examples,
                            bindings=bindings_of(options.get("set")))
    with source:
        text = _call(lambda c: c.compare, source.args + [method_text(c) for c in configs] + args + ["--json"])
    doc = json.loads(text)
    doc["model"] = source.name
    return Comparison(doc)
