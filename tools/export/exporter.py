"""Moved to the torchcost package (python/torchcost/exporter.py); this name stays an alias of it."""

import os
import sys

_PY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "python")
if _PY not in sys.path:
    sys.path.insert(0, _PY)

import torchcost.exporter as _moved  # noqa: E402

sys.modules[__name__] = _moved
