#!/usr/bin/python3
"""Builds and saves the TorchScript fixtures torchcost's tests read.

Usage (Debian's system python3, which has torch 1.13 and torchvision 0.14):

    /usr/bin/python3 tools/make_fixtures.py OUTDIR [--models a,b,...] [--batch N] [--train]

For every model it writes OUTDIR/<name>.pt (OUTDIR/<name>_b<N>.pt when
--batch N is not the model's example batch: 1, or 2 for the GPT models) and OUTDIR/<name>.meta.json (<name>_b<N>.meta.json), e.g.
{"input_shapes": [[1, 3, 224, 224]], "input_dtypes": ["float32"]}.
Files that already exist are skipped, so a second run is fast.

Traces are made in eval mode. With --train the model is traced in train mode
instead (model.train(): dropout is traced as aten::dropout(..., train=True),
batch norm with training=True and its num_batches_tracked.add_(1)), written
as <stem>_train.pt and <stem>_train.meta.json (same meta). Scripted models
are scripted, not traced: their _train archive only differs in the module's
training flag.

Besides torchvision's models and the small test nets, "gpt_tiny" is a
GPT-style decoder written in plain torch (see GPT below; vocab 512, d_model
128, 4 heads, 2 layers, context 128, input int64 token ids [2, 64]) whose LM
head shares the token embedding's weight; "gpt_tiny_untied" has its own head.
"gpt2_tiny" is GPT-2 as Hugging Face writes it (Conv1D projections as addmm,
torch.where causal mask, GELU tanh, tied head) and "llama_tiny" a LLaMA-style
decoder (RMSNorm, RoPE via rotate_half with tables computed from arange,
SwiGLU, grouped-query attention with repeat_interleave, full(-inf).triu(1)
causal mask, untied head), both at the GPT sizes (4 heads, llama 2 KV heads),
input int64 token ids [2, 64].

Other scripts import this module: build_model(name) returns the module (in
eval mode, weights drawn under torch.manual_seed(0)) and its example input
shapes. write_corrupt_fixtures(outdir) writes the broken archives tests use.

NB: Debian's torch uses a slow reference BLAS. The trace runs one forward
(check_trace=False, so only one); nothing here runs any further forward.
"""

import argparse
import io
import json
import math
import os
import shutil
import sys
import warnings
import zipfile

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
from torchcost.reference.decoder_layers import MLP as DecoderMLP, rotate_half  # noqa: E402
from torchcost.reference.gpt2 import GPT2, GPT2Attention, GPT2Block  # noqa: E402,F401

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


class CausalSelfAttention(nn.Module):
    """Causal self-attention from plain ops, as in nanoGPT (no F.scaled_dot_product_attention).

    Fused qkv linear -> split -> view/transpose to [B, nh, T, hd] -> q @ k^T,
    times 1/sqrt(hd) -> masked_fill(bias[:, :, :T, :T] == 0, -inf) with the
    causal mask a registered buffer (torch.tril, float32, [1, 1, ctx, ctx]) ->
    softmax -> dropout -> @ v -> transpose/contiguous/view -> projection -> dropout.
    """

    def __init__(self, d_model, n_head, context, dropout):
        super().__init__()
        assert d_model % n_head == 0
        self.c_attn = nn.Linear(d_model, 3 * d_model)
        self.c_proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)
        self.n_head = n_head
        self.d_model = d_model
        self.register_buffer("bias", torch.tril(torch.ones(context, context)).view(1, 1, context, context))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.d_model, dim=2)
        hd = C // self.n_head
        q = q.view(B, T, self.n_head, hd).transpose(1, 2)
        k = k.view(B, T, self.n_head, hd).transpose(1, 2)
        v = v.view(B, T, self.n_head, hd).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = nn.functional.softmax(att, dim=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Linear(d, 4d) -> GELU (exact, erf) -> Linear(4d, d) -> dropout."""

    def __init__(self, d_model, dropout):
        super().__init__()
        self.c_fc = nn.Linear(d_model, 4 * d_model)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    """Pre-LN transformer block: x + attn(ln_1(x)), then x + mlp(ln_2(x))."""

    def __init__(self, d_model, n_head, context, dropout):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = CausalSelfAttention(d_model, n_head, context, dropout)
        self.ln_2 = nn.LayerNorm(d_model)
        self.mlp = MLP(d_model, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT(nn.Module):
    """A GPT-style decoder in plain torch (nanoGPT's structure), input int64 token ids [B, T].

    Token embedding + learned position embedding (positions from torch.arange),
    dropout, n_layer pre-LN blocks, final LayerNorm, LM head without bias whose
    weight is the token embedding's (tied=True: one parameter, two names) or
    its own (tied=False). Returns the logits [B, T, vocab].
    """

    def __init__(self, vocab=512, d_model=128, n_head=4, n_layer=2, context=128, dropout=0.1,
                 tied=True):
        super().__init__()
        self.context = context
        self.wte = nn.Embedding(vocab, d_model)
        self.wpe = nn.Embedding(context, d_model)
        self.drop = nn.Dropout(dropout)
        self.h = nn.ModuleList([Block(d_model, n_head, context, dropout) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.wte.weight  # Tied: one storage, two names.

    def forward(self, idx):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class LlamaRMSNorm(nn.Module):
    """RMSNorm as Hugging Face's LLaMA writes it (float32 statistics, then weight *)."""

    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        variance = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(variance + self.eps)
        return self.weight * x.to(dtype)


class LlamaAttention(nn.Module):
    """Grouped-query attention with rotary embeddings (decoder_layers' rotate_half); K/V heads repeated with
    repeat_interleave; additive causal mask from torch.full(...).triu(1).

    NB: not decoder_layers' Attention on purpose: the fixture traces repeat_interleave and a float32 -inf
    mask, where Hugging Face's repeat_kv is expand + reshape and its mask finfo(dtype).min in the model's
    dtype; llama_tiny.pt keeps these ops for the frontends' tests (test_export.py, test_tsreader.py).
    """

    def __init__(self, d_model, n_head, n_kv_head, base=10000.0):
        super().__init__()
        self.n_head = n_head
        self.n_kv_head = n_kv_head
        self.hd = d_model // n_head
        self.base = base
        self.q_proj = nn.Linear(d_model, n_head * self.hd, bias=False)
        self.k_proj = nn.Linear(d_model, n_kv_head * self.hd, bias=False)
        self.v_proj = nn.Linear(d_model, n_kv_head * self.hd, bias=False)
        self.o_proj = nn.Linear(n_head * self.hd, d_model, bias=False)

    def rope(self, T, device, dtype):
        """cos and sin tables [T, hd], computed from arange (pow, outer, cat, cos, sin)."""
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.hd, 2, device=device).float() / self.hd))
        t = torch.arange(T, device=device, dtype=torch.float32)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype), emb.sin().to(dtype)

    def forward(self, x):
        B, T, _ = x.size()
        q = self.q_proj(x).view(B, T, self.n_head, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.n_kv_head, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.n_kv_head, self.hd).transpose(1, 2)
        cos, sin = self.rope(T, x.device, x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.n_head // self.n_kv_head
        k = torch.repeat_interleave(k, rep, dim=1)
        v = torch.repeat_interleave(v, rep, dim=1)
        att = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd)
        mask = torch.full((T, T), float("-inf"), device=x.device).triu(1)
        att = att + mask
        att = nn.functional.softmax(att, dim=-1, dtype=torch.float32).to(q.dtype)
        y = torch.matmul(att, v).transpose(1, 2).contiguous().reshape(B, T, self.n_head * self.hd)
        return self.o_proj(y)


class LlamaMLP(DecoderMLP):
    """SwiGLU: down(silu(gate(x)) * up(x)), decoder_layers' MLP of a LLaMA config (named LlamaMLP in the
    trace)."""

    def __init__(self, d_model, hidden):
        super().__init__({"model_type": "llama", "hidden_size": d_model, "intermediate_size": hidden})


class LlamaBlock(nn.Module):
    def __init__(self, d_model, n_head, n_kv_head, hidden):
        super().__init__()
        self.input_layernorm = LlamaRMSNorm(d_model)
        self.self_attn = LlamaAttention(d_model, n_head, n_kv_head)
        self.post_attention_layernorm = LlamaRMSNorm(d_model)
        self.mlp = LlamaMLP(d_model, hidden)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """A LLaMA-style decoder in plain torch (Hugging Face's structure), input int64 token ids [B, T].

    Token embedding (no positions: RoPE in attention), n_layer blocks of RMSNorm ->
    grouped-query attention (n_kv_head K/V heads) -> residual, RMSNorm -> SwiGLU ->
    residual; final RMSNorm; untied LM head without bias. No dropout.
    """

    def __init__(self, vocab=512, d_model=128, n_head=4, n_kv_head=2, n_layer=2, hidden=352):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([LlamaBlock(d_model, n_head, n_kv_head, hidden) for _ in range(n_layer)])
        self.norm = LlamaRMSNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)

    def forward(self, idx):
        x = self.embed_tokens(idx)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


# Decoder variants: (class, constructor arguments); example input token ids [B, T].
_GPT = {
    "gpt_tiny": (GPT, {"tied": True}),
    "gpt_tiny_untied": (GPT, {"tied": False}),
    "gpt2_tiny": (GPT2, {}),
    "llama_tiny": (Llama, {}),
}
GPT_VOCAB = 512
GPT_INPUT_SHAPE = [2, 64]


def model_names():
    """Returns every model name build_model accepts."""
    return ["lenet5", "tiny", "scripted", "scripted_if", "tied"] + list(_TORCHVISION) + list(_GPT)


def _base(name):
    """Returns the base model of a name: "gpt_tiny" of "gpt_tiny+lora" (a peft_torch preset)."""
    return name.split("+", 1)[0]


def input_dtypes(name):
    """Returns the dtypes of the example inputs, as torch attribute names."""
    name = _base(name)
    return ["int64"] if name == "tied" or name in _GPT else ["float32"]


def example_inputs(name, shapes):
    """Returns example tensors of these shapes and the model's input dtypes, drawn under seed 0."""
    torch.manual_seed(0)
    name = _base(name)
    if name == "tied":
        return tuple(torch.randint(0, 16, s) for s in shapes)
    if name in _GPT:
        return tuple(torch.randint(0, GPT_VOCAB, s) for s in shapes)
    return tuple(torch.randn(s, dtype=getattr(torch, d)) for s, d in zip(shapes, input_dtypes(name)))


def is_scripted(name):
    """Returns True if the fixture is saved with torch.jit.script instead of trace."""
    return name in ("scripted", "scripted_if")


def build_model(name):
    """Returns (module in eval mode, [example input shapes]) for a model name.

    "<base>+<variant>" is the base model wrapped by tools/peft_torch.py's preset
    (LoRA or DoRA following peft's math, the base frozen).
    """
    if "+" in name:
        import peft_torch

        base, variant = name.split("+", 1)
        model, shapes = build_model(base)
        return peft_torch.build(model, base, variant).eval(), shapes
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
    if name in _GPT:
        cls, kwargs = _GPT[name]
        return cls(**kwargs).eval(), [list(GPT_INPUT_SHAPE)]
    if name in _TORCHVISION:
        import torchvision  # Imported lazily: it is slow to import.

        ctor = getattr(torchvision.models, name)
        return ctor(weights=None, **_TORCHVISION[name]).eval(), [[1, 3, 224, 224]]
    raise ValueError("unknown model %r; known: %s" % (name, ", ".join(model_names())))


def default_batch(name):
    """Returns the batch of the model's example input (1, or 2 for the GPT models)."""
    return build_shapes(name)[0][0]


def build_shapes(name):
    """Returns the example input shapes of a model without building it."""
    name = _base(name)
    if name in _GPT:
        return [list(GPT_INPUT_SHAPE)]
    if name in _TORCHVISION:
        return [[1, 3, 224, 224]]
    return {"lenet5": [[1, 1, 32, 32]], "tiny": [[1, 3, 8, 8]], "scripted": [[1, 3, 16, 16]],
            "scripted_if": [[2, 4]], "tied": [[1, 6]]}[name]


def fixture_stem(name, batch=None, train=False):
    """Returns the file name without extension: "resnet18", "resnet18_b8", "gpt_tiny_train".

    No _b<N> suffix at the model's example batch (default_batch: 1, or 2 for GPT).
    """
    batch = default_batch(name) if batch is None else batch
    stem = name if batch == default_batch(name) else "%s_b%d" % (name, batch)
    return stem + "_train" if train else stem


def make_fixture(name, outdir, batch=None, train=False):
    """Writes OUTDIR/<stem>.pt and .meta.json unless both exist; returns the .pt path.

    batch replaces the first dimension of the example input (default: the
    model's own, default_batch). train=True traces the model in train mode
    (model.train()) and writes <stem>_train.pt.
    """
    batch = default_batch(name) if batch is None else batch
    stem = fixture_stem(name, batch, train)
    pt = os.path.join(outdir, stem + ".pt")
    meta = os.path.join(outdir, stem + ".meta.json")
    if os.path.exists(pt) and os.path.exists(meta):
        return pt
    model, shapes = build_model(name)
    if train:
        model.train()
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
    # NB: saved to memory, then written by Python: torch.jit.save to a path aborts the
    # process when the disk fills, where a Python write raises an OSError we can report.
    archive = io.BytesIO()
    torch.jit.save(module, archive)
    _write_whole(pt, archive.getbuffer())
    meta_text = json.dumps({"input_shapes": shapes, "input_dtypes": input_dtypes(name)}) + "\n"
    _write_whole(meta, meta_text.encode())
    return pt


def _write_whole(path, data):
    """Writes bytes `data` to `path` under a temporary name first, then renames it.

    An interrupted run leaves no half file, and runs side by side on one directory
    (tools/make_test_fixtures.sh) do not collide: the process id names the temporary.
    """
    tmp = "%s.%d.tmp" % (path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            f.write(data)
    except OSError:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    os.replace(tmp, path)


def write_corrupt_fixtures(outdir):
    """Writes corrupt.pt (random bytes) and not_torchscript.pt (a zip of text); returns both paths."""
    os.makedirs(outdir, exist_ok=True)
    corrupt = os.path.join(outdir, "corrupt.pt")
    if not os.path.exists(corrupt):
        import random

        rnd = random.Random(301)
        _write_whole(corrupt, bytes(rnd.randrange(256) for _ in range(4096)))
    not_ts = os.path.join(outdir, "not_torchscript.pt")
    if not os.path.exists(not_ts):
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("archive/readme.txt", "a zip file, but not a TorchScript archive\n")
        _write_whole(not_ts, archive.getbuffer())
    return corrupt, not_ts


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--models", default=",".join(model_names()),
                        help="comma-separated names (default: all): " + ", ".join(model_names()))
    parser.add_argument("--batch", type=int, default=None,
                        help="first input dimension (default: 1; 2 for the GPT models)")
    parser.add_argument("--train", action="store_true",
                        help="trace in train mode and write <stem>_train.pt instead")
    args = parser.parse_args(argv)
    if args.batch is not None and args.batch < 1:
        parser.error("--batch must be positive")
    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if _base(n) not in model_names()]
    if unknown:
        parser.error("unknown models: %s; known: %s" % (", ".join(unknown), ", ".join(model_names())))
    os.makedirs(args.outdir, exist_ok=True)
    write_corrupt_fixtures(args.outdir)
    for name in names:
        try:
            make_fixture(name, args.outdir, args.batch, args.train)
        except OSError as e:
            # NB: the three batches of fixtures take about 4 GB (VGG16 and ViT-B/16 weights, thrice):
            # a full disk is the usual cause, so say how much room there was.
            free_gib = shutil.disk_usage(args.outdir).free / 2**30
            print("make_fixtures: %s: writing %s failed: %s (%.1f GiB free; all fixtures need about 4 GiB)"
                  % (args.outdir, fixture_stem(name, args.batch, args.train), e, free_gib), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
