#!/usr/bin/python3
"""Corpus test: models no other test names, traced as a user would trace them.

Usage (Debian's system python3, torch 1.13 and torchvision 0.14):

    /usr/bin/python3 tests/python/test_corpus.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--full] [--models swin_t,lstm_bi2]

Every model is traced with torch.jit.trace at batch 1 and a small input, in
eval mode and in train mode (at batch 2 where batch norm in train mode would
see one value per channel), and torchcost analyses each
trace (eval: --mode infer; train: --mode train). Models with a fused fast path
(FASTPATH) are also traced in eval mode under torch.no_grad() ("nograd"), and
the trace must hold the fused op. PyTorch gives every reference at test time,
never torchcost:

  ran          torchcost exits 0 with a report.
  params       totals.params == sum(p.numel() for p in model.parameters()).
  unknown_ops  the report lists no op without a rule.
  macs         totals.macs == the multiply-accumulates of the forward counted at
               the ATen level by a TorchDispatchMode (torch.utils._python_dispatch)
               from the real shapes: convolution out.numel() * Cin/groups *
               prod(kernel); mm/addmm M*K*N; bmm/baddbmm B*M*K*N.
  grads        (train) the gradients at their largest are 4 bytes per parameter
               (every parameter requires a gradient) and activations are saved.
  saved_bytes  (train, recurrent layers, nn.Transformer*) training.memory.saved_bytes with CPU
               kernels == the distinct storages autograd packs in one forward
               (torch.autograd.graph.saved_tensors_hooks), parameters excluded.

The default set is a representative subset (CI); --full adds every
classification model of torchvision.models.list_models() and the other
segmentation and video models (minutes of CPU; see tests/python/README.md).
Traces and references are cached under FIXTURES/corpus/, keyed by the torch and
torchvision versions and this script's source.
"""

import argparse
import hashlib
import json
import math
import os
import sys
import weakref

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tools.export.module_attrs import save_traced  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torchvision  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402


class MacCounter(TorchDispatchMode):
    """Counts the MACs of the matmuls and convolutions that reach the dispatcher."""

    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in ("mm", "addmm"):
            a, b = (args[1], args[2]) if name == "addmm" else (args[0], args[1])
            self.macs += a.shape[0] * a.shape[1] * b.shape[1]          # M*K*N
        elif name in ("bmm", "baddbmm"):
            a, b = (args[1], args[2]) if name == "baddbmm" else (args[0], args[1])
            self.macs += a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]   # B*M*K*N
        elif name == "convolution":
            weight, transposed = args[1], args[6]
            if transposed:   # each input element meets Cout/groups * prod(kernel) weights
                self.macs += args[0].numel() * weight.shape[1] * math.prod(weight.shape[2:])
            else:            # each output element: Cin/groups * prod(kernel) FMAs
                self.macs += out.numel() * weight.shape[1] * math.prod(weight.shape[2:])
        return out


# ---- small models of torch.nn ---------------------------------------------------------

class Seq(nn.Module):
    """Runs an RNN, attention or transformer module and returns one tensor."""

    def __init__(self, module, kind):
        super().__init__()
        self.m = module
        self.kind = kind

    def forward(self, x):
        if self.kind == "rnn":
            return self.m(x)[0]
        if self.kind == "mha":
            return self.m(x, x, x)[0]
        if self.kind == "mha_kpm":   # the last two keys of every sequence are padding
            mask = torch.zeros(x.shape[0], x.shape[1], dtype=torch.bool)
            mask[:, -2:] = True
            return self.m(x, x, x, key_padding_mask=mask)[0]
        if self.kind == "seq2seq":
            return self.m(x, x)
        return self.m(x)


class Packed(nn.Module):
    """An RNN over padded sequences of fixed lengths: pack_padded_sequence, the RNN, pad_packed_sequence."""

    def __init__(self, rnn, lengths, enforce_sorted=False):
        super().__init__()
        self.rnn = rnn
        self.lengths = lengths
        self.enforce_sorted = enforce_sorted

    def forward(self, x):
        batch_first = self.rnn.batch_first
        packed = nn.utils.rnn.pack_padded_sequence(x, torch.tensor(self.lengths), batch_first=batch_first,
                                                   enforce_sorted=self.enforce_sorted)
        out, _ = self.rnn(packed)
        return nn.utils.rnn.pad_packed_sequence(out, batch_first=batch_first)[0]


class Residual(nn.Module):
    """x + StochasticDepth(conv(x)) (torchvision.ops), as in ConvNeXt, EfficientNet and Swin blocks."""

    def __init__(self, mode):
        super().__init__()
        from torchvision.ops import StochasticDepth
        self.conv = nn.Conv2d(4, 4, 3, padding=1)
        self.stochastic_depth = StochasticDepth(0.2, mode)

    def forward(self, x):
        return x + self.stochastic_depth(self.conv(x))


class Shuffle(nn.Module):
    """1x1 convolutions around nn.PixelShuffle(2) and nn.PixelUnshuffle(2) (sub-pixel upsampling)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Conv2d(2, 8, 1)
        self.b = nn.Conv2d(2, 2, 1)
        self.c = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return self.c(F.pixel_unshuffle(self.b(F.pixel_shuffle(self.a(x), 2)), 2))


class SliceAdd(nn.Module):
    """attn[:, :, 1:, 1:] += bias (torchvision's MViT v2 adds its relative positions so): add_ and copy_ on views."""

    def __init__(self):
        super().__init__()
        self.qk = nn.Linear(4, 5)
        self.rel = nn.Parameter(torch.randn(4, 4))
        self.out = nn.Linear(5, 3)

    def forward(self, x):
        attn = self.qk(x).unsqueeze(1)                  # [B, 1, 5, 5]
        attn[:, :, 1:, 1:] += self.rel * x[:, 1:, :4].unsqueeze(1)
        return self.out(attn.softmax(-1))


class Unpool(nn.Module):
    """nn.MaxPool{2,3}d(return_indices=True) then nn.MaxUnpool{2,3}d, between 1x1 convolutions."""

    def __init__(self, dims):
        super().__init__()
        conv = {2: nn.Conv2d, 3: nn.Conv3d}[dims]
        self.a, self.b = conv(2, 2, 1), conv(2, 2, 1)
        self.pool = {2: nn.MaxPool2d, 3: nn.MaxPool3d}[dims](2, return_indices=True)
        self.unpool = {2: nn.MaxUnpool2d, 3: nn.MaxUnpool3d}[dims](2)

    def forward(self, x):
        y, idx = self.pool(self.a(x))
        return self.b(self.unpool(y, idx))


class Bag(nn.Module):
    """nn.EmbeddingBag over [B, L] int64 indices (one bag per row), then a linear layer."""

    def __init__(self, mode):
        super().__init__()
        self.bag = nn.EmbeddingBag(10, 4, mode=mode)
        self.out = nn.Linear(4, 3)

    def forward(self, x):
        return self.out(self.bag(x))


class Interp(nn.Module):
    """1x1 convolutions around F.interpolate with fixed arguments (the second saves its input)."""

    def __init__(self, channels, **kwargs):
        super().__init__()
        conv = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}[kwargs.pop("dims")]
        self.conv = conv(channels, channels, 1)
        self.out = conv(channels, channels, 1)
        self.kwargs = kwargs

    def forward(self, x):
        return self.out(F.interpolate(self.conv(x), **self.kwargs))


def _nn_models():
    """name -> (constructor, input shape)."""
    s = {}
    s["lstm"] = (lambda: Seq(nn.LSTM(8, 16), "rnn"), (5, 1, 8))
    s["lstm_bi2_bf"] = (lambda: Seq(nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True), "rnn"),
                        (1, 5, 8))
    s["lstm_proj_nobias"] = (lambda: Seq(nn.LSTM(8, 16, proj_size=4, bias=False), "rnn"), (5, 1, 8))
    s["lstm_dropout3"] = (lambda: Seq(nn.LSTM(8, 16, num_layers=3, dropout=0.3), "rnn"), (5, 2, 8))
    s["gru_bi2"] = (lambda: Seq(nn.GRU(8, 16, num_layers=2, bidirectional=True), "rnn"), (5, 1, 8))
    s["gru_unbatched"] = (lambda: Seq(nn.GRU(8, 16), "rnn"), (5, 8))
    s["rnn_tanh2"] = (lambda: Seq(nn.RNN(8, 16, num_layers=2), "rnn"), (5, 1, 8))
    s["rnn_relu_bi_bf"] = (lambda: Seq(nn.RNN(8, 16, nonlinearity="relu", bidirectional=True, batch_first=True),
                                       "rnn"), (1, 5, 8))
    # Packed sequences: lengths unsorted (sorted by the trace) or sorted, some shorter than the input.
    s["lstm_packed"] = (lambda: Packed(nn.LSTM(8, 16), [5, 3, 4]), (5, 3, 8))
    s["lstm_packed_proj_bi"] = (lambda: Packed(nn.LSTM(8, 16, proj_size=4, bidirectional=True), [4, 2, 1], True),
                                (5, 3, 8))
    s["gru_packed_bi2"] = (lambda: Packed(nn.GRU(8, 16, num_layers=2, bidirectional=True), [5, 3, 4]), (5, 3, 8))
    s["rnn_tanh_packed_bi2_bf"] = (lambda: Packed(nn.RNN(8, 16, num_layers=2, bidirectional=True, batch_first=True),
                                                  [2, 5, 1, 5]), (4, 5, 8))
    s["gru_packed_dropout2"] = (lambda: Packed(nn.GRU(8, 16, num_layers=2, dropout=0.5), [5, 3, 4]), (5, 3, 8))
    s["rnn_relu_packed"] = (lambda: Packed(nn.RNN(8, 16, nonlinearity="relu"), [5, 4, 2], True), (5, 3, 8))
    s["stochastic_depth_row"] = (lambda: Residual("row"), (3, 4, 6, 6))
    s["stochastic_depth_batch"] = (lambda: Residual("batch"), (3, 4, 6, 6))
    s["mha"] = (lambda: Seq(nn.MultiheadAttention(16, 2), "mha"), (5, 1, 16))
    s["mha_bf"] = (lambda: Seq(nn.MultiheadAttention(16, 2, batch_first=True), "mha"), (1, 5, 16))
    s["mha_bf_kpm"] = (lambda: Seq(nn.MultiheadAttention(16, 2, batch_first=True), "mha_kpm"), (1, 5, 16))
    s["mha_dropout"] = (lambda: Seq(nn.MultiheadAttention(16, 2, dropout=0.1), "mha"), (5, 1, 16))
    s["transformer_encoder_bf"] = (lambda: Seq(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 2, 32, batch_first=True), 2, enable_nested_tensor=False), "x"), (1, 5, 16))
    s["transformer_encoder"] = (lambda: Seq(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 2, 32), 2), "x"), (5, 1, 16))
    s["transformer_encoder_bf_normfirst"] = (lambda: Seq(nn.TransformerEncoder(
        nn.TransformerEncoderLayer(16, 2, 32, batch_first=True, norm_first=True, activation="gelu"), 2,
        enable_nested_tensor=False), "x"), (1, 5, 16))
    s["transformer_decoder_layer"] = (lambda: Seq(nn.TransformerDecoderLayer(16, 2, 32), "seq2seq"), (5, 1, 16))
    s["transformer"] = (lambda: Seq(nn.Transformer(16, 2, 1, 1, 32), "seq2seq"), (5, 1, 16))
    s["interp_nearest1d"] = (lambda: Interp(2, dims=1, scale_factor=2, mode="nearest"), (1, 2, 5))
    s["interp_linear_ac"] = (lambda: Interp(2, dims=1, size=7, mode="linear", align_corners=True), (1, 2, 5))
    s["interp_bilinear"] = (lambda: Interp(2, dims=2, scale_factor=2, mode="bilinear"), (1, 2, 5, 6))
    s["interp_bicubic_ac"] = (lambda: Interp(2, dims=2, size=(3, 4), mode="bicubic", align_corners=True),
                              (1, 2, 5, 6))
    s["interp_nearest_exact"] = (lambda: Interp(2, dims=2, scale_factor=1.5, mode="nearest-exact"), (1, 2, 5, 6))
    s["interp_bilinear_aa"] = (lambda: Interp(2, dims=2, scale_factor=0.5, mode="bilinear", antialias=True),
                               (1, 2, 8, 6))
    s["interp_bicubic_aa"] = (lambda: Interp(2, dims=2, size=(3, 9), mode="bicubic", antialias=True), (1, 2, 6, 6))
    s["pixel_shuffle"] = (lambda: Shuffle(), (1, 2, 3, 3))
    s["act_more"] = (lambda: nn.Sequential(nn.Linear(8, 8), nn.CELU(0.5), nn.SELU(), nn.Hardshrink(0.3),
                                           nn.Softshrink(0.1), nn.Threshold(0.05, -1.0), nn.LogSigmoid(), nn.RReLU(),
                                           nn.Linear(8, 8), nn.GLU(), nn.Linear(4, 4)), (3, 8))
    s["inplace_slice_add"] = (lambda: SliceAdd(), (2, 5, 4))
    s["unpool_2d"] = (lambda: Unpool(2), (1, 2, 4, 6))
    s["unpool_3d"] = (lambda: Unpool(3), (1, 2, 4, 4, 2))
    s["fold_unfold"] = (lambda: nn.Sequential(nn.Conv2d(2, 2, 1), nn.Unfold(2, padding=1, stride=2), nn.Linear(9, 9),
                                              nn.Fold((5, 5), 2, padding=1, stride=2)), (1, 2, 5, 5))
    s["embedding_bag_mean"] = (lambda: Bag("mean"), (2, 3))
    s["embedding_bag_max"] = (lambda: Bag("max"), (3, 2))
    s["embedding_bag_sum"] = (lambda: Bag("sum"), (2, 4))
    s["shuffle_channels"] = (lambda: nn.Sequential(nn.Conv2d(4, 6, 1), nn.ChannelShuffle(3), nn.Conv2d(6, 2, 1)),
                             (1, 4, 3, 3))
    s["interp_trilinear"] = (lambda: Interp(2, dims=3, scale_factor=2, mode="trilinear"), (1, 2, 3, 4, 5))
    s["interp_nearest3d"] = (lambda: Interp(2, dims=3, size=(4, 4, 4), mode="nearest"), (1, 2, 3, 4, 5))
    return s


NN_MODELS = _nn_models()

# Models whose input is int64 indices below this bound (the others take randn).
INT_INPUTS = {"embedding_bag_mean": 10, "embedding_bag_max": 10, "embedding_bag_sum": 10}

# Models that PyTorch runs through a fused fast path in eval mode under
# torch.no_grad() (aten::_native_multi_head_attention,
# aten::_transformer_encoder_layer_fwd): they get a third trace, "nograd", whose
# reference MACs are the math path's (the same module in eval mode with
# gradients enabled: the fused kernels run the same GEMMs, and a dispatch
# count cannot see inside them).
FASTPATH = ("mha_bf", "mha_bf_kpm", "transformer_encoder_bf", "transformer_encoder_bf_normfirst")
FUSED_OPS = ("aten::_native_multi_head_attention", "aten::_transformer_encoder_layer_fwd")

# Inputs: the smallest each torchvision family accepts (batch 1).
_FIXED_224 = ("vit_", "maxvit_t")


def _vision_input(name):
    if name.startswith(_FIXED_224):
        return (1, 3, 224, 224)          # fixed image size (position embeddings, partition grids)
    if name == "inception_v3":
        return (1, 3, 75, 75)            # its minimum
    if name in ("r3d_18", "mc3_18", "r2plus1d_18"):
        return (1, 3, 4, 32, 32)
    if name == "s3d":
        return (1, 3, 16, 224, 224)      # its final 2x7x7 average pool (T/8 >= 2)
    if name.startswith("mvit"):
        return (1, 3, 16, 224, 224)      # fixed temporal and spatial size
    return (1, 3, 64, 64)


def _vision_ctor(name):
    from torchvision import models as M
    for mod in (M.segmentation, M.video, M):
        if hasattr(mod, name):
            kwargs = {}
            if mod is M.segmentation:
                kwargs = dict(weights_backbone=None, aux_loss=False)
            elif name in ("googlenet", "inception_v3"):
                kwargs = dict(aux_logits=False, init_weights=False)
            return lambda: getattr(mod, name)(weights=None, **kwargs)
    raise KeyError(name)


# The CI subset: one model of each family whose ops no other test covers.
SUBSET = [
    "swin_t", "swin_v2_t", "convnext_tiny", "efficientnet_v2_s", "regnet_y_400mf", "shufflenet_v2_x0_5",
    "mnasnet0_5", "densenet121", "inception_v3", "lraspp_mobilenet_v3_large", "fcn_resnet50",
    "r3d_18", "r2plus1d_18",
] + list(NN_MODELS)


def full_list():
    names = torchvision.models.list_models(module=torchvision.models)
    names += torchvision.models.list_models(module=torchvision.models.segmentation)
    names += torchvision.models.list_models(module=torchvision.models.video)
    return names + list(NN_MODELS)


def build(name):
    """Returns (model, input shape)."""
    torch.manual_seed(0)
    if name in NN_MODELS:
        ctor, shape = NN_MODELS[name]
        return ctor(), shape
    return _vision_ctor(name)(), _vision_input(name)


class _Held:
    """What a pack hook hands autograd: dies with the backward node that saved it."""
    __slots__ = ("t", "__weakref__")

    def __init__(self, t):
        self.t = t


def saved_bytes(model, x):
    """Bytes of the distinct storages autograd holds for backward after one forward.

    Parameters and buffers are excluded. NB: a tensor saved by a branch whose
    output the model drops (nn.MultiheadAttention averages its attention
    weights, saving num_heads as an int64 0-dim tensor, even when the caller
    keeps only the output) is freed with that branch's backward nodes before
    any backward runs, and a trace has no such branch: only what is still held
    when the forward returns counts.
    """
    excluded = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    held = []

    def pack(t):
        h = _Held(t)
        held.append(weakref.ref(h))
        return h

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda h: h.t):
        out = model(x)
    seen = {}
    for ref in held:
        h = ref()
        if h is not None and h.t.storage().data_ptr() not in excluded:
            seen[h.t.storage().data_ptr()] = h.t.storage().nbytes()
    del out
    return sum(seen.values())


# Models whose saved bytes are checked (train mode, CPU kernels): the recurrent
# layers, nn.MultiheadAttention, the nn.Transformer family, and the small
# models of activations, shuffles and interpolation.
SAVED_CHECKED = ("lstm", "gru", "rnn_", "mha", "transformer", "stochastic_depth", "act_", "shuffle_", "pixel_",
                 "interp_", "inplace_", "unpool_", "fold_", "embedding_bag")


# Models also traced in eval mode and saved with their module attributes
# (tools/export/module_attrs.py, "evalx"), then analysed as a training step: the
# attention dropout the eval trace lost is put back from the recorded
# `dropout`, so the saved bytes must equal the train-mode measurement.
# (nn.LSTM's inter-layer dropout needs no attribute: aten::lstm carries its p,
# and --mode train sets its `train` flag.)
EVALX = ("mha_dropout", "transformer", "lstm_dropout3")


def train_gaps(model):
    """What an eval-mode trace of `model` loses that a training step runs: the words torchcost's warning uses."""
    gaps = []
    if any(isinstance(m, nn.MultiheadAttention) and m.dropout > 0 for m in model.modules()):
        gaps.append("attention dropout")
    if any(type(m).__name__ == "StochasticDepth" and m.p > 0 for m in model.modules()):
        gaps.append("StochasticDepth")
    return gaps


def cache_key():
    h = hashlib.sha256()
    h.update(torch.__version__.encode())
    h.update(torchvision.__version__.encode())
    with open(os.path.abspath(__file__), "rb") as f:
        h.update(f.read())
    return h.hexdigest()[:16]


def reference(name, mode, cache_dir):
    """Traces `name` in `mode`; returns (trace path, ref dict) or (None, why it cannot be traced)."""
    stem = os.path.join(cache_dir, "%s_%s" % (name, mode))
    ref_path = stem + ".ref.json"
    key = cache_key()
    if os.path.exists(ref_path) and os.path.exists(stem + ".pt"):
        with open(ref_path) as f:
            ref = json.load(f)
        if ref.get("key") == key:
            return stem + ".pt", ref
    model, shape = build(name)
    model.train(mode == "train")   # evalx: an eval-mode trace, saved with its module attributes
    x = torch.randint(0, INT_INPUTS[name], shape) if name in INT_INPUTS else torch.randn(*shape)
    if mode == "nograd":
        with torch.no_grad():
            traced = torch.jit.trace(model, x, check_trace=False, strict=False)
        fused = [n.kind() for n in traced.inlined_graph.nodes() if n.kind() in FUSED_OPS]
    counter = MacCounter()
    try:
        with counter:
            model(x)
    except ValueError as e:
        # Batch norm in train mode needs more than one value per channel:
        # models that pool to 1x1 before one (inception_v3, deeplabv3) are
        # traced in train mode at batch 2, the smallest PyTorch allows.
        if mode != "train" or shape[0] != 1 or "more than 1 value per channel" not in str(e):
            return None, str(e).splitlines()[0]
        model, shape = build(name)
        model.train()
        shape = (2,) + tuple(shape[1:])
        x = torch.randn(*shape)
        counter = MacCounter()
        with counter:
            model(x)
    if mode != "nograd":
        traced = torch.jit.trace(model, x, check_trace=False, strict=False)
        fused = None
    if mode == "evalx":
        save_traced(traced, model, stem + ".pt")
    else:
        traced.save(stem + ".pt")
    ref = {"key": key, "shape": list(shape), "int_input": name in INT_INPUTS, "macs": counter.macs,
           "params": sum(p.numel() for p in model.parameters()),
           "train_gaps": train_gaps(model) if name in NN_MODELS else []}
    if fused is not None:
        ref["fused"] = fused
    if mode in ("train", "evalx") and name.startswith(SAVED_CHECKED):
        model.train()              # evalx: the training step's saved bytes, measured in train mode
        ref["saved_bytes"] = saved_bytes(model, x)
    with open(ref_path, "w") as f:
        json.dump(ref, f)
    return stem + ".pt", ref


def check_model(name, mode, path, ref, binary, results):
    label = "%s[%s]" % (name, mode)
    train = mode in ("train", "evalx")
    spec = ",".join(map(str, ref["shape"])) + (":int64" if ref.get("int_input") else "")
    args = [path, "--input", spec, "--mode", "train" if train else "infer",
            "--device", "cpu"]
    if mode == "nograd":  # else the check below would pass on the math path
        results.check(bool(ref.get("fused")), label + " fused", "the trace has no fused fast-path op")
    report, err = torchcost_cli.run_json(binary, args, timeout=300)
    if not results.check(report is not None, label + " ran", err or ""):
        return
    totals = report["totals"]
    results.check(totals["params"] == ref["params"], label + " params",
                  "expected %d, got %s" % (ref["params"], totals["params"]))
    unknown = report.get("unknown_ops") or []
    results.check(not unknown, label + " unknown_ops", "expected [], got %s" % json.dumps(unknown)[:300])
    macs = totals["macs"].get("value")
    results.check(macs == ref["macs"], label + " macs", "expected %d, got %s" % (ref["macs"], macs))
    if train:
        mem = report["training"]["memory"]["category_max"]
        grad = mem["grad"].get("value")
        results.check(grad == 4 * ref["params"], label + " grads",
                      "expected %d bytes, got %s" % (4 * ref["params"], grad))
        results.check((mem["act"].get("value") or 0) > 0, label + " activations", "no activations saved")
        if "saved_bytes" in ref:
            got = report["training"]["memory"]["saved_bytes"].get("value")
            results.check(got == ref["saved_bytes"], label + " saved_bytes",
                          "expected %d, got %s" % (ref["saved_bytes"], got))
        warned = [d["message"] for d in report.get("diagnostics", []) if "attention dropout" in d["message"]]
        results.check(not warned, label + " no_gap_warning", "got %s" % warned[:1])
    if mode == "eval" and ref.get("train_gaps"):
        # A plain eval-mode trace lost what only training runs: a training analysis says so.
        report, err = torchcost_cli.run_json(binary, args[:-3] + ["train", "--device", "cpu"], timeout=300)
        for gap in ref["train_gaps"]:
            warned = report and [d for d in report.get("diagnostics", []) if gap in d["message"]]
            results.check(bool(warned), label + " gap_warning", err or "no warning that the %s is missing" % gap)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--torchcost", required=True)
    p.add_argument("--fixtures", required=True)
    p.add_argument("--full", action="store_true", help="every model of torchvision (minutes of CPU)")
    p.add_argument("--models", help="comma-separated names instead of the default set")
    p.add_argument("--drop-traces", action="store_true",
                   help="delete each trace once checked (keeps the references; for --full on a small disk)")
    a = p.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    names = a.models.split(",") if a.models else (full_list() if a.full else SUBSET)
    cache_dir = os.path.join(a.fixtures, "corpus")
    os.makedirs(cache_dir, exist_ok=True)
    results = torchcost_cli.Results()
    for name in names:
        modes = ("eval", "train") + (("nograd",) if name in FASTPATH else ()) + \
            (("evalx",) if name.startswith(EVALX) else ())
        for mode in modes:
            path, ref = reference(name, mode, cache_dir)
            if path is None:
                print("skip %s[%s]: %s" % (name, mode, ref), flush=True)
                continue
            check_model(name, mode, path, ref, a.torchcost, results)
            if a.drop_traces:
                os.remove(path)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
