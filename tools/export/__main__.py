"""Command: writes a model as a torchcost JSON graph.

Run from the repository root with Debian's python:

    /usr/bin/python3 -m tools.export MODEL_SPEC OUT.json [--method fx|aten|export]
        [--input SHAPE[:DTYPE]]... [--symbolic NAME=D0,D1,...]... [--meta] [--no-traced-shapes]

MODEL_SPEC is one of:
  fixtures:NAME        tools/make_fixtures.py's build_model(NAME) (lenet5, resnet18, gpt_tiny, ...);
                       its example input shapes are the default --input
  torchvision:NAME     torchvision.models.NAME(weights=None), input 1,3,224,224 by default
  MODULE:FUNCTION      an importable function returning a module, or (module, [input shapes])

--input 2,64:int64 gives one input's shape and dtype (repeat for several inputs).
--symbolic idx=B,S names dims of input `idx` (its forward argument name, or its
position) as symbols; "_" keeps a dim concrete: --symbolic x=B,_,_,_.
--meta moves the model to the meta device before exporting (no weights in memory).
"""

import argparse
import importlib
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if REPO not in sys.path:
    sys.path.insert(0, REPO)


from tools.export import ExportError, InputSpec, METHODS, export  # noqa: E402


def load_model(spec):
    """Returns (module, [input shapes] or None, [dtypes] or None) for a MODEL_SPEC."""
    kind, _, name = spec.partition(":")
    if not name:
        raise ExportError("model spec %r: expected fixtures:NAME, torchvision:NAME or MODULE:FUNCTION" % spec)
    if kind == "fixtures":
        sys.path.insert(0, os.path.join(REPO, "tools"))
        import make_fixtures

        model, shapes = make_fixtures.build_model(name)
        return model, shapes, make_fixtures.input_dtypes(name)
    if kind == "torchvision":
        import torchvision

        return getattr(torchvision.models, name)(weights=None).eval(), [[1, 3, 224, 224]], None
    made = getattr(importlib.import_module(kind), name)()
    if isinstance(made, tuple):
        return made[0], made[1], None
    return made, None, None


def parse_input(text):
    shape, _, dtype = text.partition(":")
    return [int(d) for d in shape.split(",")], dtype or "float32"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tools.export", description=__doc__.split("\n")[0])
    parser.add_argument("model")
    parser.add_argument("out")
    parser.add_argument("--method", default="fx", choices=METHODS)
    parser.add_argument("--input", action="append", default=[])
    parser.add_argument("--symbolic", action="append", default=[])
    parser.add_argument("--meta", action="store_true")
    parser.add_argument("--no-traced-shapes", action="store_true")
    args = parser.parse_args(argv)
    try:
        model, shapes, dtypes = load_model(args.model)
        if args.input:
            pairs = [parse_input(t) for t in args.input]
        elif shapes:
            pairs = [(s, (dtypes or ["float32"] * len(shapes))[i]) for i, s in enumerate(shapes)]
        else:
            raise ExportError("no input shapes: give --input SHAPE[:DTYPE]")
        if args.meta:
            model = model.to("meta")
        symbolic = {}
        for text in args.symbolic:
            key, _, dims = text.partition("=")
            key = int(key) if key.isdigit() else key
            symbolic[key] = [None if d in ("_", "") else d for d in dims.split(",")]
        specs = [InputSpec(s, d) for s, d in pairs]
        doc = export(model, specs, args.out, method=args.method, symbolic_dims=symbolic,
                     traced_shapes=not args.no_traced_shapes)
    except (ExportError, ValueError, ImportError, AttributeError) as e:
        print("tools.export: %s" % e, file=sys.stderr)
        return 2
    print("%s: %d nodes, %d params, %d buffers (method %s)" % (args.out, len(doc["nodes"]), len(doc["params"]),
                                                               len(doc["buffers"]), args.method))
    return 0


if __name__ == "__main__":
    sys.exit(main())
