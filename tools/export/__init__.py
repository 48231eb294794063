"""Exports PyTorch models as torchcost JSON graphs ("torchcost.graph", version 1).

The exporter is the torchcost package's (python/torchcost/exporter.py); this is its command and old name.

The format is documented in docs/graph-schema.md. From Python:

    import sys; sys.path.insert(0, "/path/to/torchcost")
    from tools.export import export, InputSpec
    export(model, [InputSpec([2, 64], "int64", name="idx")], "gpt.json",
           method="fx", symbolic_dims={"idx": ["B", "S"]})

From a shell (run from the repository root):

    /usr/bin/python3 -m tools.export fixtures:gpt_tiny gpt.json --method fx \\
        --input 2,64:int64 --symbolic idx=B,S

See tools/export/__main__.py for the model specs the command accepts.

For TorchScript: save_traced(traced, model, "m.pt") saves a trace with the
module attributes it would lose (module_attrs.py), so that torchcost can put
back what an eval-mode trace left out (nn.MultiheadAttention's dropout).
"""

from .exporter import ExportError, InputSpec, METHODS, export, export_graph, meta_init  # noqa: F401
from .module_attrs import module_attributes, save_traced  # noqa: F401,E402
