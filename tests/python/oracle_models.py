"""The models the oracle tests compare against PyTorch, and the path set-up they share.

Importing this module puts tools/ and python/ on sys.path, so `import make_fixtures` and
`from torchcost.reference import hf_reference` work.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
for _path in ("tools", "python"):  # tools/make_fixtures.py; the package's reference models (torchcost.reference)
    if os.path.join(REPO, _path) not in sys.path:
        sys.path.insert(0, os.path.join(REPO, _path))

# Issue 2, point 5: LeNet5 and the torchvision models, at their example inputs.
CNNS = [
    "lenet5", "alexnet", "vgg16", "resnet18", "resnet50", "mobilenet_v2",
    "mobilenet_v3_large", "efficientnet_b0", "squeezenet1_0", "googlenet",
    "regnet_y_400mf", "vit_b_16",
]
# Decoders written in plain torch (tools/make_fixtures.py), int64 tokens [2, 64].
GPTS = ["gpt_tiny", "gpt_tiny_untied", "gpt2_tiny", "llama_tiny"]
MODELS = CNNS + GPTS
