"""Turns a PyTorch model into a torchcost JSON graph (docs/graph-schema.md).

Three ways to get the graph (the `method` argument of export()):

* "fx": torch.fx tracing with a tracer of our own (_AtenTracer) that lowers as
  it goes. Every proxy carries the value it would have on the meta device, so
  `x.size()` stays a node (the batch stays symbolic) while Python control flow,
  `int(...)`, `math.sqrt(hd)` specialize on the example shapes, as
  torch.jit.trace does. Leaf modules (nn.Linear, nn.Conv2d, nn.LayerNorm, ...)
  become the aten op that torch.jit.trace records for them (aten::linear,
  aten::_convolution, aten::layer_norm, ...); other modules are traced
  through, their module path kept for every node. torch functions, tensor
  methods and operators become aten ops whose arguments are named after the
  schema (torch._C._jit_get_schemas_for_operator), every argument written, with
  the schema's default where the call left it out.
* "aten": torch.fx.experimental.proxy_tensor.make_fx, which records aten
  OpOverloads (aten.addmm.default, ...). Module paths come from forward hooks
  that are active while make_fx runs the model; parameters are matched to the
  model's by identity.
* "export": torch.export on torch 2.x; on torch 1.13 it raises ExportError
  with a message that says so.

Models may live on the meta device (torch.device("meta"), or
torch.nn.utils.skip_init): nothing is computed on real data, so a 7B model
exports with no memory for its weights.
"""

import builtins
import inspect
import json
import math
import operator
import os

import torch
import torch.fx
from torch import nn
from torch.nn import functional as F

FORMAT = "torchcost.graph"
VERSION = 1
METHODS = ("fx", "aten", "export")
INT64_MAX = 9223372036854775807
# The constructors themselves: while the fx tracer runs, torch.empty and friends are patched.
_EMPTY = torch.empty
_TENSOR = torch.tensor


class ExportError(Exception):
    """Raised when a model cannot be exported; the message says why and where."""


class InputSpec:
    """A model input described by shape and dtype (no data): shape may mix ints and symbol names."""

    def __init__(self, shape, dtype="float32", name=None, example=None):
        self.shape = list(shape)
        self.dtype = dtype if isinstance(dtype, torch.dtype) else getattr(torch, str(dtype).replace("torch.", ""))
        self.name = name
        # Concrete sizes for tracing: `example` or the ints of `shape` (a symbol needs `example`).
        self.example = list(example) if example is not None else None

    def concrete_shape(self):
        if self.example is not None:
            return self.example
        if any(not isinstance(d, int) for d in self.shape):
            raise ExportError("input %r: shape %r has symbolic dims; give example sizes" % (self.name, self.shape))
        return self.shape


# --- dtypes -------------------------------------------------------------------

_DTYPE_NAMES = {
    torch.uint8: "uint8", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32", torch.int64: "int64",
    torch.float16: "float16", torch.float32: "float32", torch.float64: "float64", torch.bool: "bool",
    torch.bfloat16: "bfloat16", torch.complex64: "complex64", torch.complex128: "complex128",
}
_MEMORY_FORMATS = {torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
                   torch.channels_last_3d: 3}


def dtype_name(dtype):
    """Returns the schema's name of a torch dtype ("float32")."""
    return _DTYPE_NAMES.get(dtype, str(dtype).replace("torch.", ""))


# --- schemas ------------------------------------------------------------------

_SCHEMAS = {}


def _schemas(name):
    """Returns the usable schemas of aten::<name>: no out= variants, no Dimname overloads."""
    if name not in _SCHEMAS:
        found = []
        for s in torch._C._jit_get_schemas_for_operator("aten::" + name):
            if any(a.is_out for a in s.arguments) or s.overload_name.endswith("out"):
                continue
            if any("Dimname" in str(a.type) or str(a.type) in ("Generator", "Optional[Generator]", "Storage")
                   for a in s.arguments if not a.has_default_value()):
                continue
            found.append(s)
        _SCHEMAS[name] = found
    return _SCHEMAS[name]


def _overload(schema):
    """Returns the OpOverload of a schema: torch.ops.aten.<name>.<overload or default>."""
    packet = getattr(torch.ops.aten, schema.name.split("::")[1])
    return getattr(packet, schema.overload_name or "default")


def _op_of(name, overload=""):
    return getattr(getattr(torch.ops.aten, name), overload or "default")


# --- values carried by proxies ---------------------------------------------------

def _val(x):
    """Returns the meta value of a proxy (or x itself)."""
    if isinstance(x, torch.fx.Proxy):
        return x.node.meta.get("tc_val")
    if isinstance(x, (list, tuple)):
        return type(x)(_val(e) for e in x) if not isinstance(x, torch.Size) else x
    return x


def _is_tensor(x):
    return isinstance(_val(x), torch.Tensor)


def _is_int(x):
    v = _val(x)
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(x):
    v = _val(x)
    return isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, bool)


def _matches(t, x):
    """Returns True if the argument value x may be passed as schema type t (its str())."""
    v = _val(x)
    if t.startswith("Optional["):
        return v is None or _matches(t[len("Optional["):-1], x)
    if t == "Tensor":
        return isinstance(v, torch.Tensor)
    if t == "int":
        return (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, (torch.dtype, torch.layout,
                                                                                 torch.memory_format))
    if t == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    if t == "number":
        return isinstance(v, (int, float, bool))
    if t == "bool":
        return isinstance(v, bool)
    if t == "str":
        return isinstance(v, str)
    if t == "Device":
        return isinstance(v, (torch.device, str))
    if t.startswith("List["):
        inner = t[len("List["):-1]
        if not isinstance(x, (list, tuple, torch.Size)) and not (isinstance(x, torch.fx.Proxy) and
                                                                 isinstance(v, (list, tuple))):
            return False
        elems = x if isinstance(x, (list, tuple)) else v
        return all(_matches(inner, e) for e in elems)
    return False


def _list_type(t):
    """Returns the list type "List[X]" of t, unwrapping Optional[List[X]]; None if t is no list."""
    if t.startswith("Optional[List["):
        t = t[len("Optional["):-1]
    return t if t.startswith("List[") else None


def _bind(schema, args, kwargs):
    """Binds a call to a schema; returns [(name, value)] for every argument, or None."""
    params = schema.arguments
    out = {}
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional):
        return None
    for a, x in zip(positional, args):
        t = str(a.type)
        if not _matches(t, x):
            # int[N] takes a single int; float lists take a single float (int[1]? dim too).
            lt = _list_type(t)
            if lt and a.N and _matches(lt[len("List["):-1], x):
                x = [x] * a.N
            else:
                return None
        out[a.name] = x
    for k, x in kwargs.items():
        match = [a for a in params if a.name == k]
        if not match or k in out:
            return None
        t = str(match[0].type)
        if not _matches(t, x):
            lt = _list_type(t)
            if lt and match[0].N and _matches(lt[len("List["):-1], x):
                x = [x] * match[0].N
            else:
                return None
        out[k] = x
    bound = []
    for a in params:
        if a.name in out:
            bound.append((a.name, out[a.name]))
        elif a.has_default_value():
            bound.append((a.name, a.default_value))
        else:
            return None
    return bound


# Ops for which Python passes a number in a Tensor position as a 0-dim tensor
# (torch.jit.trace records aten::mul.Tensor with a constant tensor).
_WRAPS_NUMBERS = {"add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "rsub", "where", "pow",
                  "atan2", "fmod", "maximum", "minimum", "add_", "sub_", "mul_", "div_"}


class _Scalar:
    """A Python number passed where a schema wants a Tensor (written as a 0-dim constant tensor)."""

    def __init__(self, value):
        self.value = value
        self.dtype = torch.float64 if isinstance(value, float) else torch.int64 if not isinstance(
            value, bool) else torch.bool

    def meta(self):
        return _TENSOR(self.value, dtype=self.dtype, device="meta")


def _resolve(name, args, kwargs):
    """Returns (OpOverload, [(arg name, value)]) for aten::<name> called with args and kwargs."""
    schemas = _schemas(name)
    if not schemas:
        raise ExportError("no aten op named aten::%s" % name)
    tensor_args = any(_is_tensor(a) for a in list(args) + list(kwargs.values()))
    if name in _WRAPS_NUMBERS and args and _is_tensor(args[0]) and any(
            isinstance(a, (int, float)) and not isinstance(a, bool) for a in args[1:]):
        # Python passes the number as a 0-dim tensor: x * 0.5 is aten::mul.Tensor.
        wrapped = [args[0]] + [(_Scalar(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a)
                               for a in args[1:]]
        for s in schemas:
            if s.overload_name in ("Tensor", ""):
                bound = _bind_wrapped(s, wrapped, kwargs)
                if bound is not None:
                    return _overload(s), bound
    for s in schemas:
        # Int arithmetic (aten::add.int) only when no tensor is involved.
        bound = _bind(s, args, kwargs)
        if bound is not None:
            if tensor_args and not any(str(a.type).endswith("Tensor") or "Tensor" in str(a.type)
                                       for a in s.arguments):
                continue
            return _overload(s), bound
    if name in _WRAPS_NUMBERS:
        wrapped = [(_Scalar(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a) for a in args]
        for s in schemas:
            bound = _bind_wrapped(s, wrapped, kwargs)
            if bound is not None:
                return _overload(s), bound
    raise ExportError("no overload of aten::%s takes (%s)" % (name, ", ".join(
        [_describe(a) for a in args] + ["%s=%s" % (k, _describe(v)) for k, v in kwargs.items()])))


def _bind_wrapped(schema, args, kwargs):
    """Like _bind, with _Scalar accepted (only) for Tensor arguments."""
    metas = [(a.meta() if isinstance(a, _Scalar) else a) for a in args]
    bound = _bind(schema, metas, kwargs)
    if bound is None:
        return None
    originals = dict(zip([a.name for a in schema.arguments if not a.kwarg_only], args))
    return [(n, originals.get(n, v) if isinstance(originals.get(n), _Scalar) else v) for n, v in bound]


def _describe(x):
    v = _val(x)
    if isinstance(v, torch.Tensor):
        return "Tensor%s" % list(v.shape)
    return type(v).__name__


# --- module attribution ------------------------------------------------------------

class _ModuleStack:
    """The module paths being called, innermost last; nodes created meanwhile record the top."""

    def __init__(self):
        self.paths = [""]
        self.types = {}

    def top(self):
        return self.paths[-1]


_ACTIVE_STACK = []  # The _ModuleStack of the export running now (create_node reads it).
_ORIG_CREATE_NODE = torch.fx.Graph.create_node


def _create_node_with_module(self, *args, **kwargs):
    node = _ORIG_CREATE_NODE(self, *args, **kwargs)
    if _ACTIVE_STACK:
        node.meta["tc_module"] = _ACTIVE_STACK[-1].top()
    return node


class _Attribution:
    """Context: every fx node created inside records the current module path."""

    def __init__(self, stack):
        self.stack = stack

    def __enter__(self):
        _ACTIVE_STACK.append(self.stack)
        torch.fx.Graph.create_node = _create_node_with_module
        return self

    def __exit__(self, *exc):
        _ACTIVE_STACK.pop()
        if not _ACTIVE_STACK:
            torch.fx.Graph.create_node = _ORIG_CREATE_NODE


# --- the fx tracer ------------------------------------------------------------------

class _Proxy(torch.fx.Proxy):
    """An fx proxy that knows its meta value: Python conversions specialize on it."""

    def __bool__(self):
        return bool(_val(self))

    def __int__(self):
        return int(_val(self))

    def __index__(self):
        return int(_val(self))

    def __float__(self):
        return float(_val(self))

    def __len__(self):
        v = _val(self)
        return v.shape[0] if isinstance(v, torch.Tensor) else len(v)

    def __iter__(self):
        return iter([self[i] for i in range(len(self))])

    def __getattr__(self, k):
        if k in ("node", "tracer"):
            raise AttributeError(k)
        v = self.node.meta.get("tc_val")
        if isinstance(v, torch.Tensor):
            if k == "shape":
                return self.tracer.create_proxy("call_method", "size", (self,), {})
            if k in ("dtype", "device", "ndim", "is_cuda", "layout", "requires_grad", "is_sparse", "is_quantized"):
                return getattr(v, k)
            if k == "T":
                return self.tracer.create_proxy("call_method", "permute", (self, list(range(v.dim() - 1, -1, -1))),
                                                {})
        return super().__getattr__(k)


def _list_item(seq, index):
    """Stands for element `index` of a list or tuple a node returned."""
    return seq[index]


_CONSTRUCTORS = ["arange", "zeros", "ones", "full", "empty", "rand", "randn", "eye", "tensor", "zeros_like",
                 "ones_like", "full_like", "empty_like", "rand_like", "randn_like"]


def _pair(x, n):
    return list(x) if isinstance(x, (list, tuple)) else [x] * n


class _AtenTracer(torch.fx.Tracer):
    """fx tracer that lowers every call to an aten OpOverload with named arguments (see the file comment)."""

    def __init__(self, root, input_vals, stack):
        super().__init__(autowrap_modules=())
        self.proxy_buffer_attributes = True
        self._input_vals = list(input_vals)
        self._stack = stack
        self._tensor_names = {}  # id(tensor) -> qualified name, params first.
        for name, t in root.named_parameters():
            self._tensor_names.setdefault(id(t), name)
        for name, t in root.named_buffers():
            self._tensor_names.setdefault(id(t), name)
        self._attr_proxies = {}
        self._metas = {}
        self._originals = {}  # name -> torch.<name> itself, while trace_model patches it.

    def proxy(self, node):
        return _Proxy(node, self)

    # Parameters and buffers read as attributes become get_attr proxies.
    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if isinstance(attr_val, torch.Tensor) and id(attr_val) in self._tensor_names:
            return self._attr(attr_val)
        return attr_val

    def _attr(self, t):
        if isinstance(t, torch.fx.Proxy):
            return t
        name = self._tensor_names[id(t)]
        if name not in self._attr_proxies:
            p = self.create_proxy("get_attr", name, (), {})
            p.node.meta["tc_val"] = self._meta(t)
            self._attr_proxies[name] = p
        return self._attr_proxies[name]

    def _meta(self, t):
        if t.device.type == "meta":
            return t
        key = id(t)
        if key not in self._metas:
            self._metas[key] = (t, _EMPTY(t.shape, dtype=t.dtype, device="meta"))
        return self._metas[key][1]

    def create_arg(self, a):
        if isinstance(a, _Scalar):
            return a
        if isinstance(a, torch.Tensor) and id(a) in self._tensor_names:
            return self._attr(a).node
        return super().create_arg(a)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None):
        if kind in ("call_function", "call_method") and not isinstance(target, torch._ops.OpOverload) \
                and target is not _list_item:
            return self._lower(kind, target, tuple(args), dict(kwargs))
        p = super().create_proxy(kind, target, args, kwargs, name, type_expr, proxy_factory_fn)
        if kind == "placeholder":
            p.node.meta["tc_val"] = self._input_vals.pop(0)
        elif kind == "call_function" and target is _list_item:
            p.node.meta["tc_val"] = _val(args[0])[args[1]]
        return p

    def call_module(self, m, forward, args, kwargs):
        path = self.path_of_module(m)
        self._stack.paths.append(path)
        try:
            lowered = _lower_module(self, m, args, kwargs)
            if lowered is not NotImplemented:
                return lowered
            return forward(*args, **kwargs)
        finally:
            self._stack.paths.pop()

    # --- emitting aten ops ---

    def emit(self, op, bound):
        """Adds a call of OpOverload `op` with [(name, value)] in schema order; returns its proxy."""
        values = []
        for _, v in bound:
            values.append(v)
        node_args = tuple(self.create_arg(v) for v in values)
        node = self.graph.create_node("call_function", op, node_args, {})
        node.meta["tc_names"] = [n for n, _ in bound]
        proxy = self.proxy(node)
        node.meta["tc_val"] = self._run_meta(op, bound)
        return proxy

    def _run_meta(self, op, bound):
        schema = op._schema
        pos, kw = [], {}
        for a, (_, v) in zip(schema.arguments, bound):
            m = _meta_of(v)
            if a.kwarg_only:
                kw[a.name] = m
            else:
                pos.append(m)
        if "device" in kw and kw["device"] is not None:
            kw["device"] = torch.device("meta")
        if op._schema.name in ("aten::arange", "aten::zeros", "aten::ones", "aten::full", "aten::empty",
                               "aten::rand", "aten::randn", "aten::eye") and "device" in kw:
            kw["device"] = torch.device("meta")
        # NB: torch's own constructors are back while the meta kernel runs: some
        # Python meta kernels call them (aten.full's calls torch.empty), and the
        # patched ones would trace that call into the graph instead.
        patched = {name: getattr(torch, name) for name in self._originals}
        try:
            for name, orig in self._originals.items():
                setattr(torch, name, orig)
            if op in _META_OVERRIDES:
                return _META_OVERRIDES[op](*pos, **kw)
            return op(*pos, **kw)
        except Exception as e:  # noqa: BLE001 - any kernel error is an export error.
            raise ExportError("%s on meta tensors failed: %s" % (op, str(e).splitlines()[0] if str(e) else e))
        finally:
            for name, fn in patched.items():
                setattr(torch, name, fn)

    def aten(this, name, *args, **kwargs):  # noqa: N805 - `self` may be an argument name.
        op, bound = _resolve(name, args, kwargs)
        return this.emit(op, bound)

    def aten_named(this, name, overload, **named):  # noqa: N805 - `self` is an argument name.
        """Emits aten::name.overload with arguments given by schema name (defaults filled)."""
        op = _op_of(name, overload)
        bound = []
        for a in op._schema.arguments:
            if a.name in named:
                bound.append((a.name, named.pop(a.name)))
            elif a.has_default_value():
                bound.append((a.name, a.default_value))
            else:
                raise ExportError("aten::%s.%s: missing argument %r" % (name, overload, a.name))
        if named:
            raise ExportError("aten::%s.%s has no argument %s" % (name, overload, sorted(named)))
        return this.emit(op, bound)

    def _lower(self, kind, target, args, kwargs):
        if kind == "call_method":
            return _lower_method(self, target, args, kwargs)
        return _lower_function(self, target, args, kwargs)

    def trace_model(self, root, concrete_args=None):
        patched = self._originals
        tracer = self

        def wrap(name, orig):
            def wrapper(*args, **kwargs):
                return _lower_function(tracer, orig, args, kwargs, name=name)
            return wrapper

        for name in _CONSTRUCTORS:
            if hasattr(torch, name):
                patched[name] = getattr(torch, name)
                setattr(torch, name, wrap(name, patched[name]))
        try:
            return self.trace(root, concrete_args)
        finally:
            for name, orig in patched.items():
                setattr(torch, name, orig)
            patched.clear()


# Ops without a meta kernel in torch 1.13, and a call with the same output.
_META_OVERRIDES = {
    torch.ops.aten._convolution.default:
        lambda x, w, b, stride, padding, dilation, transposed, output_padding, groups, *rest:
        torch.ops.aten.convolution.default(x, w, b, stride, padding, dilation, transposed, output_padding, groups),
    # The meta kernel needs output_size (it cannot read the repeats); the output has
    # shape[dim] * repeats rows along dim (numel * repeats, flattened, when dim is None).
    torch.ops.aten.repeat_interleave.self_int:
        lambda x, repeats, dim=None, output_size=None:
        torch.ops.aten.repeat_interleave.self_int(
            x, repeats, dim, output_size=(x.numel() if dim is None else x.shape[dim]) * repeats),
}


def _meta_of(v):
    if isinstance(v, torch.fx.Proxy):
        return _val(v)
    if isinstance(v, _Scalar):
        return v.value
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return type(v)(_meta_of(e) for e in v)
    if isinstance(v, torch.Tensor) and v.device.type != "meta":
        return _EMPTY(v.shape, dtype=v.dtype, device="meta")
    if isinstance(v, torch.device):
        return torch.device("meta")
    return v


# Operators of the `operator` module and the aten op they call.
_OPERATORS = {
    operator.add: "add", operator.sub: "sub", operator.mul: "mul", operator.truediv: "div",
    operator.floordiv: "floordiv", operator.mod: "remainder", operator.matmul: "matmul", operator.pow: "pow",
    operator.neg: "neg", operator.eq: "eq", operator.ne: "ne", operator.lt: "lt", operator.le: "le",
    operator.gt: "gt", operator.ge: "ge", operator.and_: "bitwise_and", operator.or_: "bitwise_or",
    operator.invert: "bitwise_not", operator.iadd: "add_", operator.imul: "mul_", operator.isub: "sub_",
    operator.itruediv: "div_",
}

# Tensor methods that take their sizes as varargs (x.view(B, T, C)).
_VARARG_SIZES = {"view": "size", "reshape": "shape", "expand": "size", "permute": "dims", "repeat": "repeats",
                 "new_zeros": "size", "new_ones": "size", "new_empty": "size", "flip": "dims", "tile": "dims"}

_DTYPE_METHODS = {"float": torch.float32, "double": torch.float64, "half": torch.float16, "bfloat16": torch.bfloat16,
                  "long": torch.int64, "int": torch.int32, "bool": torch.bool, "short": torch.int16,
                  "byte": torch.uint8}


def _lower_getitem(tr, seq, index):
    v = _val(seq)
    if isinstance(v, torch.Tensor):
        return _lower_index(tr, seq, index)
    node = seq.node
    if node.op == "call_function" and node.target is torch.ops.aten.size.default and _is_int(index):
        return tr.aten_named("size", "int", self=tr.proxy(node.args[0]), dim=index)
    if isinstance(index, slice):
        raise ExportError("slicing a list value is not supported")
    p = tr.create_proxy("call_function", _list_item, (seq, int(index)), {})
    return p


def _lower_index(tr, x, index):
    """x[index] on a tensor: slice / select / unsqueeze, as torch.jit.trace records them."""
    if not isinstance(index, tuple):
        index = (index,)
    ndim = _val(x).dim()
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    dim = 0
    out = x
    for i in index:
        if i is None:
            out = tr.aten_named("unsqueeze", "", self=out, dim=dim)
            dim += 1
        elif i is Ellipsis:
            dim += ndim - used
        elif isinstance(i, slice):
            out = tr.aten_named("slice", "Tensor", self=out, dim=dim,
                                start=0 if i.start is None else i.start,
                                end=INT64_MAX if i.stop is None else i.stop,
                                step=1 if i.step is None else i.step)
            dim += 1
        elif _is_int(i):
            out = tr.aten_named("select", "int", self=out, dim=dim, index=i)
        elif _is_tensor(i):
            raise ExportError("indexing with a tensor (x[idx]) is not supported by the fx exporter; use "
                              "index_select or method='aten'")
        else:
            raise ExportError("unsupported index %r" % (i,))
    return out


def _lower_method(tr, name, args, kwargs):
    self_ = args[0]
    rest = args[1:]
    v = _val(self_)
    if not isinstance(v, torch.Tensor):
        raise ExportError("method %s on a %s value" % (name, type(v).__name__))
    if name == "size":
        if rest or "dim" in kwargs:
            return tr.aten_named("size", "int", self=self_, dim=rest[0] if rest else kwargs["dim"])
        return tr.aten_named("size", "", self=self_)
    if name == "dim":
        return v.dim()
    if name == "numel":
        return tr.aten_named("numel", "", self=self_)
    if name in _VARARG_SIZES and rest and not isinstance(rest[0], (list, tuple)) and not (
            isinstance(rest[0], torch.fx.Proxy) and isinstance(_val(rest[0]), (list, tuple))):
        return tr.aten(name, self_, list(rest), **kwargs)
    if name in _DTYPE_METHODS:
        return tr.aten_named("to", "dtype", self=self_, dtype=_DTYPE_METHODS[name])
    if name == "type_as":
        return tr.aten_named("to", "dtype", self=self_, dtype=_val(rest[0]).dtype)
    if name == "to":
        dtype = None
        for a in list(rest) + list(kwargs.values()):
            if isinstance(a, torch.dtype):
                dtype = a
            elif _is_tensor(a):
                dtype = _val(a).dtype
        if dtype is None:
            return self_  # A device move: free in a cost model.
        return tr.aten_named("to", "dtype", self=self_, dtype=dtype)
    if name in ("cuda", "cpu", "detach_"):
        return self_
    return tr.aten(name, *args, **kwargs)


def _f_bind(fn, args, kwargs):
    sig = inspect.signature(fn)
    b = sig.bind(*args, **kwargs)
    b.apply_defaults()
    return b.arguments


def _lower_function(tr, target, args, kwargs, name=None):
    if target is operator.getitem:
        return _lower_getitem(tr, args[0], args[1])
    if target is builtins.getattr:
        obj, attr = args[0], args[1]
        if attr == "shape":
            return tr.aten_named("size", "", self=obj)
        return getattr(_val(obj), attr)
    if target in _OPERATORS:
        op = _OPERATORS[target]
        a = list(args)
        if all(not _is_tensor(x) for x in a):
            return tr.aten(op, *a)  # Int arithmetic on sizes: aten::floordiv.int, ...
        if op == "floordiv":
            op = "floor_divide"
        if len(a) == 2 and not _is_tensor(a[0]):
            # Reflected: 2 * x, 1 - x, 1 / x.
            if op in ("add", "mul", "eq", "ne", "bitwise_and", "bitwise_or"):
                a = [a[1], a[0]]
            elif op == "sub":
                return tr.aten_named("rsub", "Scalar", self=a[1], other=a[0])
            elif op == "div":
                recip = tr.aten_named("reciprocal", "", self=a[1])
                return tr.aten("mul", recip, a[0])
            elif op == "pow":
                return tr.aten_named("pow", "Scalar", self=a[0], exponent=a[1])
        return tr.aten(op, *a)
    if target in _FUNCTIONAL:
        return _FUNCTIONAL[target](tr, **_f_bind(target, args, kwargs))
    if target is torch._assert:
        # NB: torch.jit.trace records nothing for torch._assert (torchvision's ViT checks the image size
        # with it): a check, not work.
        return None
    fname = name or getattr(target, "__name__", None)
    if fname is None:
        raise ExportError("cannot export a call of %r" % (target,))
    if fname in ("conv1d", "conv2d", "conv3d") and isinstance(kwargs.get("padding", args[4] if len(args) > 4
                                                                       else 0), (int, list, tuple)):
        n = int(fname[4])
        b = _f_bind_builtin(["input", "weight", "bias", "stride", "padding", "dilation", "groups"],
                            [None, None, None, 1, 0, 1, 1], args, kwargs)
        return _convolution(tr, b["input"], b["weight"], b["bias"], _pair(b["stride"], n), _pair(b["padding"], n),
                            _pair(b["dilation"], n), b["groups"])
    if fname in ("arange", "zeros", "ones", "full", "empty", "rand", "randn", "eye") and "device" in kwargs:
        kwargs = dict(kwargs)
        kwargs["device"] = None
    if fname == "tensor":
        raise ExportError("torch.tensor(...) inside forward is not supported by the fx exporter")
    return tr.aten(fname, *args, **kwargs)


def _f_bind_builtin(names, defaults, args, kwargs):
    out = dict(zip(names, defaults))
    out.update(zip(names, args))
    out.update(kwargs)
    return out


def _convolution(tr, x, w, b, stride, padding, dilation, groups, transposed=False, output_padding=None):
    n = len(stride)
    return tr.aten_named("_convolution", "", input=x, weight=w, bias=b, stride=stride, padding=padding,
                         dilation=dilation, transposed=transposed,
                         output_padding=output_padding if output_padding is not None else [0] * n, groups=groups,
                         benchmark=False, deterministic=False, cudnn_enabled=True, allow_tf32=True)


def _inplace(name, inplace):
    return name + "_" if inplace else name


# torch.nn.functional functions written in Python, lowered by their Python signature.
_FUNCTIONAL = {
    F.softmax: lambda tr, input, dim, _stacklevel, dtype: tr.aten_named(
        "softmax", "int", self=input, dim=dim if dim is not None else -1, dtype=dtype),
    F.log_softmax: lambda tr, input, dim, _stacklevel, dtype: tr.aten_named(
        "log_softmax", "int", self=input, dim=dim if dim is not None else -1, dtype=dtype),
    F.dropout: lambda tr, input, p, training, inplace: tr.aten_named(
        _inplace("dropout", inplace), "", input=input, p=float(p), train=training),
    F.layer_norm: lambda tr, input, normalized_shape, weight, bias, eps: tr.aten_named(
        "layer_norm", "", input=input, normalized_shape=list(normalized_shape), weight=weight, bias=bias, eps=eps),
    F.embedding: lambda tr, input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse:
        tr.aten_named("embedding", "", weight=weight, indices=input,
                      padding_idx=-1 if padding_idx is None else padding_idx,
                      scale_grad_by_freq=scale_grad_by_freq, sparse=sparse),
    F.relu: lambda tr, input, inplace: tr.aten_named(_inplace("relu", inplace), "", self=input),
    F.silu: lambda tr, input, inplace: tr.aten_named(_inplace("silu", inplace), "", self=input),
    F.hardswish: lambda tr, input, inplace: tr.aten_named(_inplace("hardswish", inplace), "", self=input),
    F.batch_norm: lambda tr, input, running_mean, running_var, weight, bias, training, momentum, eps:
        tr.aten_named("batch_norm", "", input=input, weight=weight, bias=bias, running_mean=running_mean,
                      running_var=running_var, training=training, momentum=momentum, eps=eps, cudnn_enabled=True),
    F.adaptive_avg_pool2d: lambda tr, input, output_size: tr.aten_named(
        "adaptive_avg_pool2d", "", self=input, output_size=_pair(output_size, 2)),
}


def _max_pool(tr, m, x, n):
    k, s = _pair(m.kernel_size, n), _pair(m.stride if m.stride is not None else m.kernel_size, n)
    name = "max_pool%dd%s" % (n, "_with_indices" if m.return_indices else "")
    return tr.aten_named(name, "", self=x, kernel_size=k, stride=s, padding=_pair(m.padding, n),
                         dilation=_pair(m.dilation, n), ceil_mode=m.ceil_mode)


def _lower_module(tr, m, args, kwargs):
    """Lowers a leaf module to the aten op torch.jit.trace records for it; NotImplemented to trace through."""
    t = type(m)
    if kwargs or len(args) != 1:
        return NotImplemented
    x = args[0]
    if t is nn.Linear:
        return tr.aten_named("linear", "", input=x, weight=tr._attr(m.weight),
                             bias=tr._attr(m.bias) if m.bias is not None else None)
    if t in (nn.Conv1d, nn.Conv2d, nn.Conv3d) and m.padding_mode == "zeros" and not isinstance(m.padding, str):
        return _convolution(tr, x, tr._attr(m.weight), tr._attr(m.bias) if m.bias is not None else None,
                            list(m.stride), list(m.padding), list(m.dilation), m.groups)
    if t in (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d):
        training = m.training or m.running_mean is None
        opt = lambda name: tr._attr(getattr(m, name)) if getattr(m, name) is not None else None  # noqa: E731
        return tr.aten_named("batch_norm", "", input=x, weight=opt("weight"), bias=opt("bias"),
                             running_mean=opt("running_mean"), running_var=opt("running_var"), training=training,
                             momentum=0.0 if m.momentum is None else m.momentum, eps=m.eps, cudnn_enabled=True)
    if t is nn.LayerNorm:
        return tr.aten_named("layer_norm", "", input=x, normalized_shape=list(m.normalized_shape),
                             weight=tr._attr(m.weight) if m.weight is not None else None,
                             bias=tr._attr(m.bias) if m.bias is not None else None, eps=m.eps)
    if t is nn.Embedding and m.max_norm is None:
        return tr.aten_named("embedding", "", weight=tr._attr(m.weight), indices=x,
                             padding_idx=-1 if m.padding_idx is None else m.padding_idx,
                             scale_grad_by_freq=m.scale_grad_by_freq, sparse=m.sparse)
    if t is nn.Dropout:
        return tr.aten_named(_inplace("dropout", m.inplace), "", input=x, p=float(m.p), train=m.training)
    if t in (nn.Dropout2d, nn.Dropout3d):
        return tr.aten_named(_inplace("feature_dropout", m.inplace), "", input=x, p=float(m.p), train=m.training)
    if t is nn.ReLU:
        return tr.aten_named(_inplace("relu", m.inplace), "", self=x)
    if t is nn.GELU:
        return tr.aten_named("gelu", "", self=x, approximate=m.approximate)
    if t in (nn.Tanh, nn.Sigmoid):
        return tr.aten_named(t.__name__.lower(), "", self=x)
    if t in (nn.SiLU, nn.Hardswish, nn.Hardsigmoid, nn.Mish):
        return tr.aten_named(_inplace(t.__name__.lower(), m.inplace), "", self=x)
    if t is nn.ReLU6:
        return tr.aten_named(_inplace("hardtanh", m.inplace), "", self=x, min_val=0.0, max_val=6.0)
    if t is nn.LeakyReLU:
        return tr.aten_named(_inplace("leaky_relu", m.inplace), "", self=x, negative_slope=m.negative_slope)
    if t in (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d):
        return _max_pool(tr, m, x, int(t.__name__[-2]))
    if t in (nn.AvgPool1d, nn.AvgPool2d, nn.AvgPool3d):
        n = int(t.__name__[-2])
        named = dict(self=x, kernel_size=_pair(m.kernel_size, n),
                     stride=_pair(m.stride if m.stride is not None else m.kernel_size, n),
                     padding=_pair(m.padding, n), ceil_mode=m.ceil_mode, count_include_pad=m.count_include_pad)
        if n > 1:
            named["divisor_override"] = m.divisor_override
        return tr.aten_named("avg_pool%dd" % n, "", **named)
    if t in (nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d):
        n = int(t.__name__[-2])
        size = _pair(m.output_size, n)
        if any(s is None for s in size):
            return NotImplemented
        return tr.aten_named("adaptive_avg_pool%dd" % n, "", self=x, output_size=size)
    if t is nn.Flatten:
        return tr.aten_named("flatten", "using_ints", self=x, start_dim=m.start_dim, end_dim=m.end_dim)
    if t is nn.Softmax:
        return tr.aten_named("softmax", "int", self=x, dim=m.dim if m.dim is not None else -1, dtype=None)
    if t is nn.LogSoftmax:
        return tr.aten_named("log_softmax", "int", self=x, dim=m.dim if m.dim is not None else -1, dtype=None)
    if t is nn.Identity:
        return x
    return NotImplemented


# --- graph -> JSON -------------------------------------------------------------------

def _type_name(t):
    t = str(t)
    if t.startswith("Optional["):
        t = t[len("Optional["):-1]
    if t.startswith("List["):
        inner = _type_name(t[len("List["):-1])
        return inner + "[]"
    return {"Tensor": "Tensor", "int": "int", "float": "float", "bool": "bool", "str": "str",
            "number": "float", "Device": "Device"}.get(t, "other")


def _rename_reshape_alias(names, args, node=None):
    given = dict(zip(names, args))
    return "aten::reshape", "", ["self", "shape"], [given["self"], given["size"]]


def _rename_convolution(names, args, node=None):
    return ("aten::_convolution", "", list(names) + ["benchmark", "deterministic", "cudnn_enabled", "allow_tf32"],
            list(args) + [False, False, True, True])


def _rename_to_copy(names, args, node=None):
    # x.float(), x.to(dtype): torch.jit.trace records aten::to.dtype; make_fx records
    # _to_copy only when the dtype (or device) changes. A device move (dtype None)
    # keeps the dtype of its output.
    given = dict(zip(names, args))
    dtype = given.get("dtype")
    if dtype is None:
        val = node.meta.get("val") if node is not None else None
        dtype = val.dtype if isinstance(val, torch.Tensor) else torch.float32
    return ("aten::to", "dtype", ["self", "dtype", "non_blocking", "copy", "memory_format"],
            [given["self"], dtype, bool(given.get("non_blocking", False)), False, given.get("memory_format")])


# aten-level ops written as the op torchcost's rules know under the same
# semantics: _reshape_alias(self, size, stride) is reshape(self, shape=size);
# convolution(...) is _convolution(...) with the backend flags at their defaults;
# _to_copy(self, dtype=...) is to.dtype(self, dtype).
_ATEN_RENAMES = {
    torch.ops.aten._to_copy.default: _rename_to_copy,
    torch.ops.aten._reshape_alias.default: _rename_reshape_alias,
    torch.ops.aten.convolution.default: _rename_convolution,
}


class _Writer:
    """Converts an fx graph of aten OpOverload calls into the JSON document."""

    def __init__(self, graph_module, model, input_specs, symbolic_dims, tensor_names, traced_shapes):
        self.gm = graph_module
        self.model = model
        self.specs = input_specs
        self.symbolic = symbolic_dims or {}
        self.tensor_names = tensor_names  # id(tensor) -> ("param"|"buffer", name)
        self.traced_shapes = traced_shapes
        self.refs = {}  # fx node -> JSON argument (reference)
        self.nodes = []
        self.placeholders = 0
        self.constants = 0
        # repeat_interleave.Tensor node -> the output_size the model itself passed (see _trace_aten).
        self.given_output_sizes = getattr(graph_module, "given_output_sizes", {})

    def _fuse_dropout(self):
        """Finds CPU dropout as make_fx records it and marks it to be written as aten::dropout.

        F.dropout(x, p, training=True) on a CPU or meta tensor runs
        _dropout_impl: noise = empty_like(x).bernoulli_(1 - p); noise.div_(1 - p);
        x * noise. Written as the one aten::dropout(x, p, train=True) the model
        called, its rule follows --mode and --device like torch.jit.trace's.
        """
        aten = torch.ops.aten
        self.skip, self.dropouts = set(), {}
        for node in self.gm.graph.nodes:
            if node.op != "call_function" or node.target is not aten.mul.Tensor or len(node.args) != 2:
                continue
            x, div = node.args
            if not (isinstance(div, torch.fx.Node) and div.target is aten.div_.Scalar and len(div.users) == 1):
                continue
            bern = div.args[0]
            if not (isinstance(bern, torch.fx.Node) and bern.target is aten.bernoulli_.float):
                continue
            empty = bern.args[0]
            if not (isinstance(empty, torch.fx.Node) and empty.target is aten.empty_like.default and
                    empty.args[0] is x):
                continue
            keep = bern.args[1] if len(bern.args) > 1 else bern.kwargs.get("p", 0.5)
            self.skip.update([empty, bern, div])
            self.dropouts[node] = (x, 1.0 - float(keep))

    def _fuse_repeat_interleave(self):
        """Finds repeat_interleave(x, int repeats, dim) as make_fx records it; writes it as that one op.

        aten::repeat_interleave.self_int is CompositeImplicitAutograd: make_fx
        records its decomposition, repeats = empty([1]).fill_(r) viewed and
        expanded to x.size(dim); idx = repeat_interleave.Tensor(repeats,
        output_size); index_select(x, dim, idx). Written as the
        aten::repeat_interleave.self_int(x, r, dim) the model called (and
        torch.jit.trace records), with output_size as the model gave it (None:
        _trace_aten supplies it only so that the meta kernel can run).
        """
        aten = torch.ops.aten
        views = (aten.expand.default, aten._reshape_alias.default, aten.view.default, aten.unsqueeze.default,
                 aten.reshape.default, aten.clone.default)
        self.repeat_interleaves = {}
        for node in self.gm.graph.nodes:
            if node.op != "call_function" or node.target is not aten.index_select.default:
                continue
            x, dim, idx = node.args[:3]
            if not (isinstance(idx, torch.fx.Node) and idx.target is aten.repeat_interleave.Tensor and
                    len(idx.users) == 1):
                continue
            chain = [idx]
            rep = idx.args[0]
            while isinstance(rep, torch.fx.Node) and rep.target in views and len(rep.users) == 1:
                chain.append(rep)
                rep = rep.args[0]
            if not (isinstance(rep, torch.fx.Node) and rep.target is aten.fill_.Scalar and len(rep.users) == 1):
                continue
            empty = rep.args[0]
            if not (isinstance(empty, torch.fx.Node) and empty.target is aten.empty.memory_format and
                    len(empty.users) == 1 and list(empty.args[0]) == [1]):
                continue
            repeats = rep.args[1]
            if not isinstance(repeats, int) or isinstance(repeats, bool):
                continue
            self.skip.update(chain + [rep, empty])
            self.repeat_interleaves[node] = (x, repeats, dim, self.given_output_sizes.get(idx))

    def run(self, method):
        doc = {"format": FORMAT, "version": VERSION, "model": type(self.model).__name__,
               "producer": "tools/export method=%s torch=%s" % (method, torch.__version__)}
        doc["inputs"] = self._inputs()
        doc["params"], doc["buffers"] = self._tables()
        doc["modules"] = [{"path": p, "type": type(m).__name__} for p, m in self.model.named_modules()]
        self._fuse_dropout()
        self._fuse_repeat_interleave()
        for node in self.gm.graph.nodes:
            if node in self.skip:
                continue
            if node in self.repeat_interleaves:
                x, repeats, dim, output_size = self.repeat_interleaves[node]
                self.nodes.append({"op": "aten::repeat_interleave", "overload": "self_int",
                                   "args": {"self": self._arg(x), "repeats": repeats, "dim": dim,
                                            "output_size": output_size},
                                   "outputs": [self._output_entry(node.name, "Tensor", node.meta.get("val"))],
                                   "module": node.meta.get("tc_module", "")})
                self.refs[node] = {"ref": node.name}
                continue
            if node in self.dropouts:
                x, p = self.dropouts[node]
                self.nodes.append({"op": "aten::dropout", "overload": "",
                                   "args": {"input": self._arg(x), "p": p, "train": True},
                                   "outputs": [self._output_entry(node.name, "Tensor", node.meta.get("val"))],
                                   "module": node.meta.get("tc_module", "")})
                self.refs[node] = {"ref": node.name}
                continue
            self._node(node)
        doc["nodes"] = self.nodes
        doc["outputs"] = self.outputs
        return doc

    def _inputs(self):
        out = []
        for i, spec in enumerate(self.specs):
            name = spec.name or "input%d" % i
            shape = list(spec.shape)
            dims = self.symbolic.get(name, self.symbolic.get(i))
            if dims is not None:
                if len(dims) != len(shape):
                    raise ExportError("symbolic_dims[%r] = %r has %d dims but the input has %d" %
                                      (name, dims, len(dims), len(shape)))
                shape = [d if d is not None else s for d, s in zip(dims, shape)]
            entry = {"name": name, "shape": shape, "dtype": dtype_name(spec.dtype)}
            if any(isinstance(d, str) for d in shape):
                entry["traced_shape"] = spec.concrete_shape()
            out.append(entry)
        return out

    def _tables(self):
        params, buffers = [], []
        seen = {}
        aliases = {}
        for mod_name, mod in self.model.named_modules(remove_duplicate=False):
            for kind, table in (("param", mod._parameters), ("buffer", mod._buffers)):
                for n, t in table.items():
                    if t is None:
                        continue
                    full = mod_name + "." + n if mod_name else n
                    if id(t) in seen:
                        if full != seen[id(t)][1] and full not in aliases[id(t)]:
                            aliases[id(t)].append(full)
                        continue
                    seen[id(t)] = (kind, full)
                    aliases[id(t)] = []
                    entry = {"name": full, "aliases": aliases[id(t)], "shape": list(t.shape),
                             "dtype": dtype_name(t.dtype)}
                    if kind == "param":
                        entry["requires_grad"] = bool(t.requires_grad)
                        params.append(entry)
                    else:
                        buffers.append(entry)
                    self.tensor_names[id(t)] = (kind, full)
        return params, buffers

    def _arg(self, a):
        if isinstance(a, torch.fx.Node):
            if a not in self.refs:
                raise ExportError("node %s uses %s before it is defined" % (a, a))
            return self.refs[a]
        if isinstance(a, _Scalar):
            return {"tensor": {"shape": [], "dtype": dtype_name(a.dtype), "value": a.value}}
        if isinstance(a, (list, tuple)) and not isinstance(a, torch.Size):
            items = [self._arg(e) for e in a]
            if any(isinstance(e, dict) or e is None for e in items):
                return {"list": items}
            return items
        if isinstance(a, torch.Size):
            return list(a)
        if isinstance(a, torch.dtype):
            return {"dtype": dtype_name(a)}
        if isinstance(a, torch.memory_format):
            return _MEMORY_FORMATS.get(a, 0)
        if isinstance(a, torch.layout):
            return 0
        if isinstance(a, torch.device):
            return None
        if isinstance(a, float) and (math.isinf(a) or math.isnan(a)):
            return {"float": "nan" if math.isnan(a) else ("inf" if a > 0 else "-inf")}
        if isinstance(a, torch.Tensor):
            entry = {"shape": list(a.shape), "dtype": dtype_name(a.dtype)}
            if a.dim() == 0 and a.device.type != "meta":
                entry["value"] = a.item()
            return {"tensor": entry}
        if a is None or isinstance(a, (bool, int, float, str)):
            return a
        raise ExportError("cannot write argument %r" % (a,))

    def _output_entry(self, name, type_name, val):
        entry = {"name": name, "type": type_name}
        if self.traced_shapes and isinstance(val, torch.Tensor):
            entry["shape"] = list(val.shape)
            entry["dtype"] = dtype_name(val.dtype)
        return entry

    def _node(self, node):
        if node.op == "placeholder":
            self.refs[node] = {"input": self.placeholders}
            self.placeholders += 1
            return
        if node.op == "get_attr":
            t = self.gm.root
            for atom in node.target.split("."):
                t = getattr(t, atom)
            hit = self.tensor_names.get(self.gm.twins.get(id(t), id(t)))
            if hit is None and isinstance(t, torch.Tensor):
                self.refs[node] = self._arg(t)
                return
            kind, name = hit
            self.refs[node] = {kind: name}
            return
        if node.op == "output":
            self.outputs = []
            self._flatten_outputs(node.args[0])
            return
        if node.op != "call_function":
            raise ExportError("unexpected fx node %s (%s %s)" % (node.name, node.op, node.target))
        if node.target is _list_item or node.target is operator.getitem:
            parent, index = node.args
            self.refs[node] = self.refs[(parent, index)] if (parent, index) in self.refs else \
                self._unpacked(parent, index)
            return
        op = node.target
        if not isinstance(op, torch._ops.OpOverload):
            raise ExportError("node %s calls %s, not an aten op" % (node.name, op))
        if op is torch.ops.aten.detach.default and not node.users:
            return
        schema = op._schema
        names = node.meta.get("tc_names")
        args = list(node.args)
        if names is None:
            names = []
            positional = [a for a in schema.arguments if not a.kwarg_only]
            for a, v in zip(positional, args):
                names.append(a.name)
            given = dict(zip(names, args))
            given.update(node.kwargs)
            names, args = [], []
            for a in schema.arguments:
                if a.name in given:
                    names.append(a.name)
                    args.append(given[a.name])
                elif a.has_default_value():
                    names.append(a.name)
                    args.append(a.default_value)
        op_name, overload = schema.name, schema.overload_name
        types = {a.name: str(a.type) for a in schema.arguments}
        # A Python number in a Tensor argument is a wrapped 0-dim tensor (aten.mul.Tensor(x, 0.5)).
        args = [(_Scalar(v) if types.get(n) == "Tensor" and isinstance(v, (int, float)) and not isinstance(v, bool)
                 else v) for n, v in zip(names, args)]
        if op in _ATEN_RENAMES:
            op_name, overload, names, args = _ATEN_RENAMES[op](names, args, node)
        entry = {"op": op_name, "overload": overload,
                 "args": {n: self._arg(v) for n, v in zip(names, args)}}
        val = node.meta.get("tc_val", node.meta.get("val"))
        returns = schema.returns
        if op is torch.ops.aten.native_dropout.default:
            # F.dropout as the model called it: aten::dropout(input, p, train),
            # whose rule follows --mode and --device (see _trace_aten). The mask,
            # output 1, is never used in a forward graph.
            entry["op"], entry["overload"] = "aten::dropout", ""
            entry["args"]["train"] = True
            entry["outputs"] = [self._output_entry(node.name, "Tensor", val[0] if isinstance(val, (list, tuple))
                                                   else None)]
            entry["module"] = node.meta.get("tc_module", "")
            self.refs[(node, 0)] = {"ref": node.name}
            self.nodes.append(entry)
            return
        outputs = []
        if len(returns) == 1:
            type_name = _type_name(returns[0].type)
            outputs.append(self._output_entry(node.name, type_name, val))
            self.refs[node] = {"ref": node.name}
        else:
            for i, r in enumerate(returns):
                name = "%s.%d" % (node.name, i)
                outputs.append(self._output_entry(name, _type_name(r.type),
                                                  val[i] if isinstance(val, (list, tuple)) else None))
                self.refs[(node, i)] = {"ref": name}
        entry["outputs"] = outputs
        entry["module"] = node.meta.get("tc_module", "")
        self.nodes.append(entry)
        if len(returns) == 1 and _type_name(returns[0].type) == "Tensor[]":
            self._list_unpack(node, val)

    def _list_unpack(self, node, val):
        count = len(val) if isinstance(val, (list, tuple)) else None
        if count is None:
            used = [u.args[1] for u in node.users if u.op == "call_function"]
            count = max(used) + 1 if used else 0
        names = ["%s.%d" % (node.name, i) for i in range(count)]
        self.nodes.append({"op": "prim::ListUnpack", "overload": "", "args": [{"ref": node.name}],
                           "outputs": [self._output_entry(n, "Tensor", val[i] if isinstance(val, (list, tuple))
                                                          else None) for i, n in enumerate(names)],
                           "module": node.meta.get("tc_module", "")})
        for i, n in enumerate(names):
            self.refs[(node, i)] = {"ref": n}

    def _unpacked(self, parent, index):
        raise ExportError("element %d of %s is not available" % (index, parent.name))

    def _flatten_outputs(self, out):
        if isinstance(out, (list, tuple)):
            for o in out:
                self._flatten_outputs(o)
        elif isinstance(out, dict):
            for o in out.values():
                self._flatten_outputs(o)
        elif isinstance(out, torch.fx.Node):
            self.outputs.append(self.refs[out])


# --- entry points ------------------------------------------------------------------

class meta_init:  # noqa: N801 - used like a function: `with meta_init(): model = GPT(...)`.
    """Context in which tensor constructors default to the meta device, so models build with no memory.

    torch 1.13 has no `with torch.device("meta")`; this patches torch.empty,
    zeros, ones, full, rand, randn, arange, tensor and eye to device="meta"
    unless a device is given.
    """

    _NAMES = ("empty", "zeros", "ones", "full", "rand", "randn", "arange", "eye", "tensor")

    def __enter__(self):
        self._saved = {n: getattr(torch, n) for n in self._NAMES}
        for n, fn in self._saved.items():
            setattr(torch, n, self._wrap(fn))
        return self

    @staticmethod
    def _wrap(fn):
        def wrapper(*args, **kwargs):
            if kwargs.get("device") is None:
                kwargs["device"] = "meta"
            return fn(*args, **kwargs)
        return wrapper

    def __exit__(self, *exc):
        for n, fn in self._saved.items():
            setattr(torch, n, fn)


def _specs_from(model, inputs, input_names):
    """Returns InputSpecs and example meta tensors for `inputs` (tensors or InputSpecs)."""
    if isinstance(inputs, (torch.Tensor, InputSpec)):
        inputs = [inputs]
    try:
        arg_names = [n for n, p in inspect.signature(model.forward).parameters.items()
                     if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        arg_names = []
    specs, metas = [], []
    for i, x in enumerate(inputs):
        name = (input_names[i] if input_names and i < len(input_names) else None) or \
            (arg_names[i] if i < len(arg_names) else "input%d" % i)
        if isinstance(x, torch.Tensor):
            spec = InputSpec(list(x.shape), x.dtype, name=name)
        elif isinstance(x, InputSpec):
            spec = x
            if spec.name is None:
                spec.name = name
        else:
            raise ExportError("input %d: expected a tensor or an InputSpec, got %s" % (i, type(x).__name__))
        specs.append(spec)
        metas.append(torch.empty(spec.concrete_shape(), dtype=spec.dtype, device="meta"))
    return specs, metas


def _trace_fx(model, metas):
    stack = _ModuleStack()
    tracer = _AtenTracer(model, metas, stack)
    with _Attribution(stack):
        graph = tracer.trace_model(model)
    # NB: no GraphModule: its generated code could not hold the 0-dim constants
    # (_Scalar) the graph carries, and nothing runs it.
    return _Traced(graph, model)


class _Traced:
    """An fx graph and the module its get_attr targets are read from."""

    def __init__(self, graph, root):
        self.graph = graph
        self.root = root
        self.twins = {}


def _trace_aten(model, metas):
    from torch.fx.experimental.proxy_tensor import make_fx

    stack = _ModuleStack()
    handles = []
    names = {m: n for n, m in model.named_modules()}

    def pre(m, _inputs):
        stack.paths.append(names.get(m, stack.top()))

    def post(m, _inputs, _output):
        stack.paths.pop()

    for m in names:
        handles.append(m.register_forward_pre_hook(pre))
        handles.append(m.register_forward_hook(post))
    # NB: the parameters and buffers are swapped for meta twins during the call
    # (functional_call), so make_fx computes nothing; the graph's constants are
    # those twins, mapped back to the model's names by identity.
    from torch.nn.utils import stateless

    twins, twin_names = {}, {}
    for mod_name, mod in model.named_modules(remove_duplicate=False):
        for kind, table in (("param", mod._parameters), ("buffer", mod._buffers)):
            for n, t in table.items():
                if t is None:
                    continue
                full = mod_name + "." + n if mod_name else n
                if id(t) not in twins:
                    twin = t if t.device.type == "meta" else _EMPTY(t.shape, dtype=t.dtype, device="meta")
                    if isinstance(t, nn.Parameter) and not isinstance(twin, nn.Parameter):
                        twin = nn.Parameter(twin, requires_grad=t.requires_grad)
                    twins[id(t)] = twin
                    twin_names[id(twin)] = id(t)
                twins.setdefault(full, twins[id(t)])
    swap = {k: v for k, v in twins.items() if isinstance(k, str)}
    # NB: in eval mode make_fx records no dropout at all (F.dropout returns its
    # input), so dropout modules trace in train mode: the graph holds
    # native_dropout(train=True), whose flag torchcost sets from --mode, as it
    # does for torch.jit.trace's aten::dropout(train=False).
    dropouts = [m for m in model.modules() if isinstance(m, nn.modules.dropout._DropoutNd) and not m.training]
    for m in dropouts:
        m.training = True
    # NB: repeat_interleave(x, int repeats, dim) decomposes to
    # repeat_interleave.Tensor, whose meta kernel needs output_size (it cannot
    # read the repeats off a meta tensor): while make_fx runs, the torch
    # function and the Tensor method pass output_size = x.size(dim) * repeats
    # when the model gave none. The writer drops it again (_fuse_repeat_interleave).
    given = []  # the output_size of each int-repeats call, as the model gave it (None: supplied here).
    restore = {torch: ("repeat_interleave", torch.repeat_interleave),
               torch.Tensor: ("repeat_interleave", torch.Tensor.__dict__.get("repeat_interleave"))}

    def with_output_size(orig):
        def repeat_interleave(*args, **kwargs):
            b = _f_bind_builtin(["input", "repeats", "dim"], [None, None, None], args, kwargs)
            x, repeats = b["input"], b["repeats"]
            if isinstance(x, torch.Tensor) and isinstance(repeats, int) and not isinstance(repeats, bool):
                given.append(kwargs.get("output_size"))
                if kwargs.get("output_size") is None:
                    kwargs = dict(kwargs)
                    kwargs["output_size"] = (x.numel() if b["dim"] is None else x.shape[b["dim"]]) * repeats
            return orig(*args, **kwargs)
        return repeat_interleave

    torch.repeat_interleave = with_output_size(restore[torch][1])
    torch.Tensor.repeat_interleave = with_output_size(torch.Tensor.repeat_interleave)
    try:
        with _Attribution(stack):
            gm = make_fx(lambda *xs: stateless.functional_call(model, swap, xs))(*metas)
    finally:
        for h in handles:
            h.remove()
        for m in dropouts:
            m.training = False
        torch.repeat_interleave = restore[torch][1]
        if restore[torch.Tensor][1] is None:
            del torch.Tensor.repeat_interleave
        else:
            torch.Tensor.repeat_interleave = restore[torch.Tensor][1]
    traced = _Traced(gm.graph, gm)
    traced.twins = twin_names  # id(twin) -> id(the model's tensor)
    # The calls and the repeat_interleave.Tensor nodes come in the same order.
    nodes = [n for n in gm.graph.nodes
             if n.op == "call_function" and n.target is torch.ops.aten.repeat_interleave.Tensor]
    traced.given_output_sizes = dict(zip(nodes, given)) if len(nodes) == len(given) else {}
    return traced


def _trace_export(model, metas):
    if not hasattr(torch, "export") or not hasattr(torch.export, "export"):
        raise ExportError("method 'export' needs torch.export (torch >= 2.1); this is torch %s: use method='fx' "
                          "or method='aten'" % torch.__version__)
    ep = torch.export.export(model, tuple(metas))
    gm = ep.module()
    return _Traced(gm.graph, gm)


def export_graph(model, inputs, method="fx", symbolic_dims=None, input_names=None, traced_shapes=True):
    """Returns the JSON document (a dict) of `model` called on `inputs` (tensors or InputSpecs)."""
    if method not in METHODS:
        raise ExportError("unknown method %r; use one of %s" % (method, ", ".join(METHODS)))
    specs, metas = _specs_from(model, inputs, input_names)
    tracer = {"fx": _trace_fx, "aten": _trace_aten, "export": _trace_export}[method]
    gm = tracer(model, metas)
    names = {}
    # NB: parameters are matched to the model's by identity (make_fx keeps the model's own tensors).
    writer = _Writer(gm, model, specs, symbolic_dims, names, traced_shapes)
    doc = writer.run(method)
    return doc


def export(model, inputs, path, method="fx", symbolic_dims=None, input_names=None, traced_shapes=True):
    """Writes `model` as a torchcost JSON graph to `path`; returns the document.

    inputs: example tensors (any device, meta included) or InputSpecs.
    method: "fx" (torch.fx tracing, ops as torch.jit.trace records them), "aten"
      (make_fx: aten-level decompositions) or "export" (torch.export, torch 2.x).
    symbolic_dims: {input name or position: [dim names or None]}, e.g.
      {"idx": ["B", "S"]}: those dims are written as symbols in the inputs table.
    traced_shapes: also write the example shapes of node outputs (a fallback;
      torchcost recomputes shapes from the inputs).
    """
    doc = export_graph(model, inputs, method, symbolic_dims, input_names, traced_shapes)
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(doc, f, separators=(",", ":"), allow_nan=False)
        f.write("\n")
    os.replace(tmp, path)
    return doc
