#!/usr/bin/python3
"""Builds and saves the TorchScript fixtures torchcost's tests read.

Usage (Debian's system python3, which has torch 1.13 and torchvision 0.14):

    /usr/bin/python3 tools/make_fixtures.py OUTDIR [--models a,b,...] [--batch N]

For every model it writes OUTDIR/<name>.pt (OUTDIR/<name>_b<N>.pt when
--batch N is not 1) and OUTDIR/<name>.meta.json (<name>_b<N>.meta.json), e.g.
{"input_shapes": [[1, 3, 224, 224]], "input_dtypes": ["float32"]}.
Files that already exist are skipped, so a second run is fast.

Other scripts import this module: build_model(name) returns the module (in
eval mode, weights drawn under torch.manual_seed(0)) and its example input
shapes. write_corrupt_fixtures(outdir) writes the broken archives tests use.

NB: Debian's torch uses a slow reference BLAS. The trace runs one forward
(check_trace=False, so only one); nothing here runs any further forward.
"""

import argparse
import json
import os
import sys
import warnings
import zipfile

import torch
from torch import nn

# torchvision models traced at 1x3x224x224, with the constructor arguments used.
_TORCHVISION = {
    "alexnet": {},
    "vgg16": {},
    "resnet18": {},
    "resnet50": {},
    "mobilenet_v2": {},
    "mobilenet_v3_large": {},
    "efficientnet_b0": {},
    "squeezenet1_0": {},
    "googlenet": {"aux_logits": False, "init_weights": False},
    "regnet_y_400mf": {},
    "vit_b_16": {},
}


class LeNet5(nn.Module):
    """LeNet5 exactly as in DeepSpeed's flops profiler documentation."""

    def __init__(self, n_classes=10):
        super().__init__()
        self.feature_extractor = nn.Sequential(
            nn.Conv2d(in_channels=1, out_channels=6, kernel_size=5, stride=1),
            nn.Tanh(),
            nn.AvgPool2d(kernel_size=2),
            nn.Conv2d(in_channels=6, out_channels=16, kernel_size=5, stride=1),
            nn.Tanh(),
            nn.AvgPool2d(kernel_size=2),
            nn.Conv2d(in_channels=16, out_channels=120, kernel_size=5, stride=1),
            nn.Tanh(),
        )
        self.classifier = nn.Sequential(
            nn.Linear(in_features=120, out_features=84),
            nn.Tanh(),
            nn.Linear(in_features=84, out_features=n_classes),
        )

    def forward(self, x):
        x = self.feature_extractor(x)
        x = torch.flatten(x, 1)
        logits = self.classifier(x)
        probs = nn.functional.softmax(logits, dim=1)
        return logits, probs


class Tiny(nn.Module):
    """conv -> bn -> relu -> flatten (x.view(x.size(0), -1)) -> linear, at 1x3x8x8."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4 * 8 * 8, 10)

    def forward(self, x):
        x = self.relu(self.bn(self.conv(x)))
        x = x.view(x.size(0), -1)
        return self.fc(x)


class ScriptedBlock(nn.Module):
    """A residual block whose forward has control flow, to be scripted."""

    def __init__(self, channels):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.use_residual = True

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        if self.use_residual:
            y = y + x
        return torch.relu(y)


class ScriptedNet(nn.Module):
    """A small conv net saved with torch.jit.script (not traced), at 1x3x16x16."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = ScriptedBlock(8)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        x = torch.relu(self.stem(x))
        x = self.block(x)
        x = self.pool(x)
        x = torch.flatten(x, 1)
        return self.head(x)


class ScriptedControlFlow(nn.Module):
    """Data-dependent control flow that stays in the scripted graph (prim::If, prim::Loop)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        if bool(x.sum() > 0):
            y = self.fc(x)
        else:
            y = torch.relu(x)
        for _ in range(x.size(0)):
            y = y + 1.0
        return y


class Tied(nn.Module):
    """An embedding and an output projection sharing one weight, at int64 1x6."""

    def __init__(self, vocab=16, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)
        self.decoder = nn.Linear(dim, vocab, bias=False)
        self.decoder.weight = self.embed.weight  # Tied: one storage, two names.

    def forward(self, tokens):
        return self.decoder(torch.relu(self.proj(self.embed(tokens))))


def model_names():
    """Returns every model name build_model accepts."""
    return ["lenet5", "tiny", "scripted", "scripted_if", "tied"] + list(_TORCHVISION)


def input_dtypes(name):
    """Returns the dtypes of the example inputs, as torch attribute names."""
    return ["int64"] if name == "tied" else ["float32"]


def example_inputs(name, shapes):
    """Returns example tensors of these shapes and the model's input dtypes, drawn under seed 0."""
    torch.manual_seed(0)
    if name == "tied":
        return tuple(torch.randint(0, 16, s) for s in shapes)
    return tuple(torch.randn(s, dtype=getattr(torch, d)) for s, d in zip(shapes, input_dtypes(name)))


def is_scripted(name):
    """Returns True if the fixture is saved with torch.jit.script instead of trace."""
    return name in ("scripted", "scripted_if")


def build_model(name):
    """Returns (module in eval mode, [example input shapes]) for a model name."""
    torch.manual_seed(0)
    if name == "lenet5":
        return LeNet5().eval(), [[1, 1, 32, 32]]
    if name == "tiny":
        return Tiny().eval(), [[1, 3, 8, 8]]
    if name == "scripted":
        return ScriptedNet().eval(), [[1, 3, 16, 16]]
    if name == "scripted_if":
        return ScriptedControlFlow().eval(), [[2, 4]]
    if name == "tied":
        return Tied().eval(), [[1, 6]]
    if name in _TORCHVISION:
        import torchvision  # Imported lazily: it is slow to import.

        ctor = getattr(torchvision.models, name)
        return ctor(weights=None, **_TORCHVISION[name]).eval(), [[1, 3, 224, 224]]
    raise ValueError("unknown model %r; known: %s" % (name, ", ".join(model_names())))


def fixture_stem(name, batch=1):
    """Returns the file name without extension: "resnet18" or "resnet18_b8"."""
    return name if batch == 1 else "%s_b%d" % (name, batch)


def make_fixture(name, outdir, batch=1):
    """Writes OUTDIR/<stem>.pt and .meta.json unless both exist; returns the .pt path."""
    stem = fixture_stem(name, batch)
    pt = os.path.join(outdir, stem + ".pt")
    meta = os.path.join(outdir, stem + ".meta.json")
    if os.path.exists(pt) and os.path.exists(meta):
        return pt
    model, shapes = build_model(name)
    shapes = [[batch] + list(s[1:]) for s in shapes]
    # NB: traced with autograd enabled, as for training: under torch.no_grad()
    # an eval-mode nn.MultiheadAttention takes its fast path and the trace holds
    # one aten::_native_multi_head_attention instead of the linear/bmm/softmax ops.
    if is_scripted(name):
        module = torch.jit.script(model)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            module = torch.jit.trace(model, example_inputs(name, shapes), check_trace=False)
    # Write to a temporary name first, so an interrupted run leaves no half file.
    # The process id keeps concurrent runs on one directory from colliding.
    tmp = "%s.%d.tmp" % (pt, os.getpid())
    torch.jit.save(module, tmp)
    os.replace(tmp, pt)
    tmp = "%s.%d.tmp" % (meta, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"input_shapes": shapes, "input_dtypes": input_dtypes(name)}, f)
        f.write("\n")
    os.replace(tmp, meta)
    return pt


def write_corrupt_fixtures(outdir):
    """Writes corrupt.pt (random bytes) and not_torchscript.pt (a zip of text); returns both paths."""
    os.makedirs(outdir, exist_ok=True)
    corrupt = os.path.join(outdir, "corrupt.pt")
    if not os.path.exists(corrupt):
        import random

        rnd = random.Random(301)
        with open(corrupt, "wb") as f:
            f.write(bytes(rnd.randrange(256) for _ in range(4096)))
    not_ts = os.path.join(outdir, "not_torchscript.pt")
    if not os.path.exists(not_ts):
        with zipfile.ZipFile(not_ts, "w") as z:
            z.writestr("archive/readme.txt", "a zip file, but not a TorchScript archive\n")
    return corrupt, not_ts


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--models", default=",".join(model_names()),
                        help="comma-separated names (default: all): " + ", ".join(model_names()))
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args(argv)
    if args.batch < 1:
        parser.error("--batch must be positive")
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in model_names()]
    if unknown:
        parser.error("unknown models: %s; known: %s" % (", ".join(unknown), ", ".join(model_names())))
    os.makedirs(args.outdir, exist_ok=True)
    write_corrupt_fixtures(args.outdir)
    for name in names:
        make_fixture(name, args.outdir, args.batch)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
