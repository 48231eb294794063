"""The result of torchcost.analyze(): plain attributes over the JSON report (docs/json-schema.md).

Every number comes from the C++ analysis, evaluated at the result's bindings
(the ``set=`` values, or those given to evaluate()). A figure that depends on
an unbound symbol is its exact expression as a string (``"1819066368*B"``);
evaluate(B=8) turns it into an int without analysing again.
"""

import json
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

from ._options import TorchcostError, bindings_of, translate_message

# An exact integer, or the expression text of a figure with unbound symbols.
Value = Union[int, str]

CATEGORIES = ("param", "buffer", "grad", "act", "temp", "opt", "oth")


def _num(x: Any) -> Value:
    """A JSON integer (an int, or a decimal string past int64) or a SYM object, as a Value."""
    if isinstance(x, dict):
        v = x.get("value")
        return _num(v) if v is not None else x.get("expr")
    if isinstance(x, str) and x.lstrip("-").isdigit():
        return int(x)
    return x


class ModuleRecord:
    """One nn.Module instance of the analysed model; costs include its descendants. Read-only.

    NB: a plain class, not a frozen dataclass: importing dataclasses (inspect,
    ast, dis, tokenize) cost more than the rest of ``import torchcost``.
    """

    path: str                  # "" for the root, "layer1.0.conv1"
    name: str                  # last path component; the root's is the model's type name
    type: str                  # class name ("Conv2d")
    depth: int                 # 0 for the root
    parent: Optional[str]      # the parent's path; None for the root
    params: int
    trainable_params: int
    macs: Value                # forward multiply-accumulates
    flops: Value               # forward FLOPs (1 MAC = 2 FLOPs, plus elementwise work)
    flops_backward: Value      # backward FLOPs of the subtree (0 in inference)
    act_bytes: Value           # bytes autograd saves for the subtree's backward
    output_shapes: List[List[Any]]
    lower_bound: bool          # an op without a rule: the costs are lower bounds

    __slots__ = ("path", "name", "type", "depth", "parent", "params", "trainable_params", "macs", "flops",
                 "flops_backward", "act_bytes", "output_shapes", "lower_bound")

    def __init__(self, path: str, name: str, type: str, depth: int, parent: Optional[str], params: int,
                 trainable_params: int, macs: Value, flops: Value, flops_backward: Value, act_bytes: Value,
                 output_shapes: Optional[List[List[Any]]] = None, lower_bound: bool = False):
        values = (path, name, type, depth, parent, params, trainable_params, macs, flops, flops_backward, act_bytes,
                  [] if output_shapes is None else output_shapes, lower_bound)
        for key, value in zip(ModuleRecord.__slots__, values):
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("ModuleRecord is read-only: cannot assign to %r" % key)

    def __delattr__(self, key: str) -> None:
        raise AttributeError("ModuleRecord is read-only: cannot delete %r" % key)

    def _values(self) -> tuple:
        return tuple(getattr(self, key) for key in ModuleRecord.__slots__)

    def __eq__(self, other: Any) -> bool:
        return self._values() == other._values() if type(other) is ModuleRecord else NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "ModuleRecord(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in ModuleRecord.__slots__)

    @staticmethod
    def from_json(m: Mapping[str, Any]) -> "ModuleRecord":
        return ModuleRecord(path=m["path"], name=m["name"], type=m["type"], depth=m["depth"], parent=m["parent"],
                            params=m["params"], trainable_params=m["trainable_params"], macs=_num(m["macs"]),
                            flops=_num(m["flops"]), flops_backward=_num(m.get("bwd_flops", 0)),
                            act_bytes=_num(m.get("act_bytes", 0)), output_shapes=m.get("output_shapes") or [],
                            lower_bound=bool(m.get("lower_bound", False)))


def human(n: Value, unit: str = "", base: int = 1000) -> str:
    """Returns 11.69 M style text for an int (binary prefixes with base=1024); expressions unchanged."""
    if not isinstance(n, int):
        return str(n)
    prefixes = ["", "K", "M", "G", "T", "P", "E"] if base == 1000 else ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    v, i = float(n), 0
    while abs(v) >= base and i < len(prefixes) - 1:
        v /= base
        i += 1
    if i == 0:
        return "%d %s" % (n, unit) if unit else "%d" % n
    return ("%.2f %s%s" % (v, prefixes[i], unit)).rstrip()


class Analysis:
    """What a model's training step (or inference) costs: the result of torchcost.analyze().

    Attributes (ints, or expression strings where a symbol is unbound):
      params, trainable_params, buffers, param_bytes, buffer_bytes: the model's tensors.
      macs, flops_forward, flops_backward, flops_optimizer, flops_step: per step
        (flops_backward includes recomputation under checkpointing).
      peak_bytes: the step's peak memory; memory: its breakdown by category at the
        peak ({"param", "buffer", "grad", "act", "temp", "opt", "oth"}: bytes).
      modules: ModuleRecord per nn.Module, the root first.
    """

    def __init__(self, core: Any, name: str, bindings: Optional[Mapping[str, int]] = None,
                 tree: Optional[Mapping[str, int]] = None):
        self._core = core
        self._tree = dict(tree or {})
        self._name = name
        self._extra = dict(bindings or {})
        self._doc: Optional[Dict[str, Any]] = None
        self._fig: Optional[Dict[str, Any]] = None
        self._modules: Optional[List[ModuleRecord]] = None

    # --- the document --------------------------------------------------------

    def to_dict(self) -> Dict[str, Any]:
        """Returns the JSON report ("torchcost.report" version 1, docs/json-schema.md) as a dict.

        It is the document `torchcost MODEL --json` prints, with `model` the model's name.
        """
        if self._doc is None:
            self._doc = json.loads(self._core.json(self._extra))
            self._doc["model"] = self._name
        return self._doc

    def to_json(self, indent: Optional[int] = 2) -> str:
        """Returns to_dict() as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    @property
    def model(self) -> str:
        """The model's name (its class, file or family)."""
        return self._name

    @property
    def symbols(self) -> List[str]:
        """Free symbols of the input shapes, sorted (["B", "S"])."""
        return list(self._core.symbols)

    @property
    def bindings(self) -> Dict[str, int]:
        """The symbol values the figures are evaluated at."""
        out = dict(self._core.bindings)
        out.update(self._extra)
        return dict(sorted(out.items()))

    # --- totals --------------------------------------------------------------

    def _figures(self) -> Dict[str, Any]:
        """The headline figures at the bindings, evaluated in C++ without the JSON report (fast)."""
        if self._fig is None:
            self._fig = self._core.figures(self._extra)
        return self._fig

    def _totals(self) -> Dict[str, Any]:
        return self.to_dict()["totals"]

    def _training(self) -> Dict[str, Any]:
        return self.to_dict()["training"]

    @property
    def params(self) -> int:
        """Parameter elements, each storage once (tied weights once); a quantized weight counts the weight it
        stores (out x in), as peft counts a 4-bit one, its scales none."""
        return self._figures()["params"]

    @property
    def quantized_params(self) -> int:
        """Of params: the elements of weights stored quantized (NF4, int8, int4, fp8); param_bytes has their
        stored bytes."""
        return self._figures()["quantized_params"]

    @property
    def active_params(self) -> int:
        """Parameters one token uses: params less a mixture of experts' unrouted experts."""
        return self._figures()["active_params"]

    @property
    def trainable_params(self) -> int:
        """Elements of parameters that get a gradient (requires_grad, not frozen, not a PEFT base)."""
        return self._figures()["trainable_params"]

    @property
    def buffers(self) -> int:
        """Buffer elements."""
        return self._figures()["buffers"]

    @property
    def param_bytes(self) -> int:
        """Bytes of the parameters at their dtypes."""
        return self._figures()["param_bytes"]

    @property
    def buffer_bytes(self) -> int:
        """Bytes of the buffers."""
        return self._figures()["buffer_bytes"]

    @property
    def macs(self) -> Value:
        """Multiply-accumulates of the forward pass."""
        return self._figures()["macs"]

    @property
    def flops(self) -> Value:
        """FLOPs of the forward pass (1 MAC = 2 FLOPs, plus elementwise work); as flops_forward."""
        return self._figures()["flops"]

    @property
    def flops_forward(self) -> Value:
        """FLOPs of the step's forward pass (the loss included in training)."""
        return self._figures()["flops_forward"]

    @property
    def flops_backward(self) -> Value:
        """FLOPs of the backward pass (recomputation included; 0 in inference)."""
        return self._figures()["flops_backward"]

    @property
    def flops_optimizer(self) -> Value:
        """FLOPs of the optimizer step."""
        return self._figures()["flops_optimizer"]

    @property
    def flops_step(self) -> Value:
        """forward + backward + optimizer FLOPs (the forward alone in inference)."""
        return self._figures()["flops_step"]

    @property
    def peak_bytes(self) -> Value:
        """The step's peak memory in bytes (one rank's when sharded)."""
        f = self._figures()
        if "error" in f:
            raise TorchcostError(f["error"])
        return f["peak_bytes"]

    @property
    def memory(self) -> Dict[str, Value]:
        """Bytes by category at the peak: param, buffer, grad, act, temp, opt, oth (they sum to peak_bytes).

        Empty if the moment of the peak depends on unbound symbols (evaluate() them).
        """
        f = self._figures()
        if "error" in f:
            raise TorchcostError(f["error"])
        return dict(f["memory"])

    @property
    def allocator(self) -> Optional[Dict[str, Value]]:
        """allocator="cuda": the caching allocator model's figures (docs/allocator.md), else None.

        Keys: tensor_peak (exact tensor bytes), allocated_peak (= peak_bytes), reserved_peak,
        fragmentation (reserved - allocated at the allocated peak), context_bytes, device_peak
        (reserved_peak + context_bytes), segments.
        """
        f = self._figures()
        if "error" in f:
            raise TorchcostError(f["error"])
        return dict(f["allocator"]) if "allocator" in f else None

    @property
    def budget(self) -> Optional[Dict[str, Any]]:
        """budget="24GiB": whether the step fits it and the largest B that does, else None.

        Keys: bytes, fits, needed_bytes (the tensor peak, or with allocator="cuda" the reserved
        peak plus the context), decided_by ("tensor_peak" or "cuda_allocator"), releases (times
        the allocator released its cached segments to stay within the budget), at ({"B": value}
        where fits was decided) and largest ({"symbol": "B", "value": n, "search_stopped"}; n = 0:
        not even 1), or error. Evaluated at this analysis's bindings (evaluate(B=...) too).
        """
        return self._training()["memory"].get("budget")

    @property
    def category_max(self) -> Dict[str, Value]:
        """Each category's own maximum over the step (these need not occur together)."""
        mem = self._training()["memory"]
        return {c: _num(mem["category_max"][c]) for c in CATEGORIES}

    @property
    def saved_bytes(self) -> Value:
        """Bytes autograd saves in the forward (parameters and buffers excluded)."""
        return self._figures()["saved_bytes"]

    @property
    def peak_phase(self) -> Optional[str]:
        """"setup", "forward", "backward" or "optimizer"; None if the peak's moment is undecided."""
        return self._figures().get("peak_phase")

    @property
    def lower_bound(self) -> bool:
        """True if an op without a rule makes FLOPs or memory lower bounds (see unknown_ops)."""
        t = self._training()
        return bool(self._totals().get("lower_bound") or t["flops"].get("lower_bound") or
                    t["memory"].get("lower_bound"))

    @property
    def unknown_ops(self) -> Dict[str, int]:
        """Ops no rule covers: {op: count}."""
        return {u["op"]: u["count"] for u in self.to_dict()["unknown_ops"]}

    @property
    def diagnostics(self) -> List[str]:
        """Notes and warnings about the model ("warning: ...")."""
        return ["%s: %s" % (d["severity"], d["message"]) for d in self.to_dict()["diagnostics"]]

    @property
    def ops(self) -> List[Dict[str, Any]]:
        """Per op type: {"op", "count", "macs", "flops"} (forward)."""
        return [{"op": o["op"], "count": o["count"], "macs": _num(o["macs"]), "flops": _num(o["flops"])}
                for o in self.to_dict()["ops"]]

    @property
    def modules(self) -> List[ModuleRecord]:
        """Every module, the root first, in scope order."""
        if self._modules is None:
            self._modules = [ModuleRecord.from_json(m) for m in self.to_dict()["modules"]]
        return self._modules

    def __iter__(self) -> Iterator[ModuleRecord]:
        return iter(self.modules)

    def module(self, path: str) -> ModuleRecord:
        """The module at `path` ("" is the root)."""
        for m in self.modules:
            if m.path == path:
                return m
        raise KeyError(path)

    @property
    def timeline(self) -> List[Dict[str, Any]]:
        """Live bytes by category after each event of the step (what timeline_svg draws):
        [{"phase", "node" (graph node index, -1 for none), "param", ..., "oth"}]."""
        t = self.to_dict()["training"]["timeline"]
        cats = t["categories"]
        return [dict(zip(["phase", "node"] + cats, p[:2] + [_num(v) for v in p[2:]])) for p in t["points"]]

    # --- re-evaluation ---------------------------------------------------------

    def evaluate(self, bindings: Optional[Mapping[str, int]] = None, **symbols: int) -> "Analysis":
        """Returns this analysis evaluated at other symbol values (B=8, S=2048), without analysing again."""
        merged = dict(self._extra)
        merged.update(bindings_of(bindings, "evaluate"))
        merged.update(bindings_of(symbols, "evaluate"))
        unknown = [s for s in merged if s not in self._core.symbols]
        if unknown:
            raise TorchcostError("evaluate: unknown symbol %s; symbols: %s" %
                                 (", ".join(repr(s) for s in unknown), ", ".join(self._core.symbols) or "none"))
        return Analysis(self._core, self._name, merged, self._tree)

    def sweep(self, *specs: str, **ranges: Any) -> List[Dict[str, Any]]:
        """FLOPs and peak at every point of a grid, from this one analysis.

        sweep(B=[1, 2, 4]), sweep(S=range(512, 4097, 512)), sweep(B="1:64:x2") or sweep("B=1:64:x2").
        Returns a list of {"bindings", "flops": {"forward", "backward", "step"}, "peak", "at_peak", "peak_phase"},
        with allocator="cuda" "device_peak" (reserved + context), with budget= "fits", and with gpu= "time":
        {"step_seconds", "items_per_second", "unit", "mfu", "communication_untimed"} at each point (the last: why
        a collective counts 0, making the time a lower bound, or None).
        """
        texts = list(specs)
        for sym_name, r in ranges.items():
            if isinstance(r, str):
                texts.append("%s=%s" % (sym_name, r))
            elif isinstance(r, int) and not isinstance(r, bool):
                texts.append("%s=%d" % (sym_name, r))
            else:
                texts.append("%s=%s" % (sym_name, ",".join(str(int(v)) for v in r)))
        if not texts:
            raise TorchcostError("sweep: give at least one symbol's values (B=[1, 2, 4])")
        try:
            doc = json.loads(self._core.sweep_json(texts, self._extra))
        except ValueError as e:
            raise TorchcostError(translate_message(str(e))) from None
        out = []
        for p in doc["points"]:
            point = {"bindings": p["bindings"], "flops": {k: _num(v) for k, v in p["flops"].items()},
                     "peak": _num(p["peak"]), "at_peak": {k: _num(v) for k, v in p["at_peak"].items()},
                     "peak_phase": p["peak_phase"]}
            for key in ("device_peak", "fits", "time"):
                if key in p:
                    point[key] = p[key]
            out.append(point)
        return out

    # --- renderings -----------------------------------------------------------

    def tree(self, depth: Optional[int] = None, top: Optional[int] = None, top_depth: Optional[int] = None) -> str:
        """The command's text report: a DeepSpeed-style module tree to `depth` (-1: all), the top `top`
        module types at `top_depth` (-1: the deepest), the operator table, totals and memory at the peak.

        Defaults: analyze()'s depth, top and top_depth keywords, else -1, 3, -1.
        """
        t = self._tree
        return self._core.text(t.get("depth", -1) if depth is None else depth, t.get("top", 3) if top is None else top,
                               t.get("top_depth", -1) if top_depth is None else top_depth, self._extra)

    def timeline_svg(self, path: Optional[str] = None) -> str:
        """Returns the memory timeline (live bytes per category over the step) as SVG; writes it to `path` if given."""
        try:
            svg = self._core.timeline_svg(self._extra)
        except ValueError as e:
            raise TorchcostError(translate_message(str(e)) + " (evaluate() them first)") from None
        if path is not None:
            with open(path, "w") as f:
                f.write(svg)
        return svg

    def summary(self, depth: int = 3) -> str:
        """A torchinfo-style table: modules to `depth` with output shape, params and MACs, then totals and
        the memory at the peak by category."""
        return _summary(self, depth)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return "<torchcost.Analysis %s: params=%s macs=%s peak_bytes=%s%s>" % (
            self._name, self.params, self.macs, self.peak_bytes,
            "" if not self.bindings else " at " + ",".join("%s=%d" % kv for kv in self.bindings.items()))


def _summary(a: Analysis, depth: int) -> str:
    rows = [m for m in a.modules if 0 < m.depth <= depth]
    header = ("Layer (name (type): depth)", "Output Shape", "Param #", "Mult-Adds")

    def shape_text(m: ModuleRecord) -> str:
        if not m.output_shapes:
            return "--"
        return ", ".join("[" + ", ".join(str(d) for d in s) + "]" if s is not None else "?"
                         for s in m.output_shapes)

    def fmt_int(v: Value) -> str:
        return "{:,}".format(v) if isinstance(v, int) else str(v)

    root = a.modules[0] if a.modules else None
    body = [("%s (%s)" % (a.model, root.type) if root and root.type != a.model else a.model, "", "", "")]
    for m in rows:
        name = "%s├─%s (%s): %d" % ("│    " * (m.depth - 1), m.name, m.type, m.depth)
        body.append((name, shape_text(m), fmt_int(m.params) if m.params else "--",
                     fmt_int(m.macs) if m.macs != 0 else "--"))
    widths = [max(len(r[i]) for r in [header] + body) for i in range(4)]
    widths = [max(w, 12) for w in widths]
    line = "=" * (sum(widths) + 6)

    def row(r: Sequence[str]) -> str:
        return "  ".join(r[i].ljust(widths[i]) if i == 0 else r[i].rjust(widths[i]) for i in range(4))

    out = [line, row(header), line] + [row(r) for r in body] + [line]
    t = a.to_dict()["training"]
    out.append("Total params: %s" % fmt_int(a.params))
    out.append("Trainable params: %s" % fmt_int(a.trainable_params))
    out.append("Non-trainable params: %s" % fmt_int(a.params - a.trainable_params))
    out.append("Total mult-adds (forward): %s" % human(a.macs))
    out.append("FLOPs: forward %s, backward %s, optimizer %s (1 MAC = 2 FLOPs)" % (
        human(a.flops_forward), human(a.flops_backward), human(a.flops_optimizer)))
    out.append(line)
    setting = "%s, %s" % (t["mode"], t["optimizer"] if t["mode"] == "train" else "no_grad")
    mem = a.memory
    out.append("Peak memory (%s): %s%s" % (setting, human(a.peak_bytes, "B", 1024),
                                           " in %s" % a.peak_phase if a.peak_phase else ""))
    if mem:
        for c in CATEGORIES:
            out.append("  %-7s %s" % (c, human(mem[c], "B", 1024)))
    else:
        out.append("  (the moment of the peak depends on %s: evaluate() them for the breakdown)"
                   % ", ".join(s for s in a.symbols if s not in a.bindings))
    out.append("Saved for backward: %s" % human(a.saved_bytes, "B", 1024))
    if a.unknown_ops:
        out.append("Ops without rules (their costs count 0: lower bounds): " +
                   ", ".join("%s x%d" % kv for kv in a.unknown_ops.items()))
    out.append(line)
    return "\n".join(out)
