#!/usr/bin/python3
"""Measures torch.autocast's per-op policy in this PyTorch (CPU, bfloat16): the oracle of the rules' `autocast:`.

Usage (Debian's system python3: torch 1.13, CPU only):

    /usr/bin/python3 tools/autocast_probe.py [--json]

For every op in PROBES, the eager call torch makes for a rule's op runs under
torch.autocast("cpu", dtype=torch.bfloat16) and the output dtype says what
autocast did:

  lower    float32 inputs give a bfloat16 output (the inputs were cast down);
  fp32     bfloat16 inputs give a float32 output (cast up);
  promote  neither, but the op has an AutocastCPU kernel (it casts its inputs
           to the widest floating type among them: cat, stack, index_copy);
  none     no AutocastCPU kernel: the op runs in its inputs' dtypes.

The dispatcher also says which ops have an AutocastCUDA kernel (CUDA autocast's
lists, whose kind is read from PyTorch's "Autocast Op Reference"): `cuda` is
true for them. Prints "OP[|WHEN] cpu-policy cuda-registered" lines, or JSON
{"OP[|WHEN]": {"cpu": policy, "cuda": bool, "dispatch": name}} with --json.
OP is the rule's op name; WHEN (after "|") names the rule's case the call
exercises (aten::_convolution's `transposed`).
"""

import argparse
import json
import sys


def _probes():
    """{key: (dispatch name, fn(dtype) -> output)}: inputs of the given floating dtype.

    The dispatch name is the op the eager call reaches first, where autocast
    acts; a pair (CPU's, CUDA's) where the devices' autocast acts on different ops.
    """
    import torch
    import torch.nn.functional as F

    def t(*shape, dtype):
        g = torch.Generator().manual_seed(0)
        return torch.rand(*shape, generator=g).to(dtype) + 0.5  # Positive: log, rsqrt, pow stay finite.

    def idx(*shape, high):
        return torch.zeros(*shape, dtype=torch.long) % high

    probes = {
        # Matmul family.
        "aten::linear": ("aten::linear", lambda d: F.linear(t(4, 8, dtype=d), t(6, 8, dtype=d), t(6, dtype=d))),
        "aten::matmul": ("aten::matmul", lambda d: torch.matmul(t(2, 4, 8, dtype=d), t(8, 3, dtype=d))),
        "aten::mm": ("aten::mm", lambda d: torch.mm(t(4, 8, dtype=d), t(8, 3, dtype=d))),
        "aten::bmm": ("aten::bmm", lambda d: torch.bmm(t(2, 4, 8, dtype=d), t(2, 8, 3, dtype=d))),
        "aten::addmm": ("aten::addmm", lambda d: torch.addmm(t(3, dtype=d), t(4, 8, dtype=d), t(8, 3, dtype=d))),
        "aten::baddbmm": ("aten::baddbmm",
                          lambda d: torch.baddbmm(t(2, 4, 3, dtype=d), t(2, 4, 8, dtype=d), t(2, 8, 3, dtype=d))),
        "aten::mv": ("aten::mv", lambda d: torch.mv(t(4, 8, dtype=d), t(8, dtype=d))),
        "aten::addmv": ("aten::addmv", lambda d: torch.addmv(t(4, dtype=d), t(4, 8, dtype=d), t(8, dtype=d))),
        "aten::dot": ("aten::dot", lambda d: torch.dot(t(8, dtype=d), t(8, dtype=d))),
        "aten::einsum": ("aten::einsum", lambda d: torch.einsum("ij,jk->ik", t(4, 8, dtype=d), t(8, 3, dtype=d))),
        # Convolutions: traces record aten::_convolution for both kinds.
        "aten::_convolution": ("aten::conv2d", lambda d: F.conv2d(t(1, 3, 8, 8, dtype=d), t(4, 3, 3, 3, dtype=d))),
        "aten::_convolution|transposed": (
            "aten::conv_transpose2d.input",
            lambda d: F.conv_transpose2d(t(1, 3, 8, 8, dtype=d), t(3, 4, 3, 3, dtype=d))),
        "aten::conv1d": ("aten::conv1d", lambda d: F.conv1d(t(1, 3, 8, dtype=d), t(4, 3, 3, dtype=d))),
        "aten::conv2d": ("aten::conv2d", lambda d: F.conv2d(t(1, 3, 8, 8, dtype=d), t(4, 3, 3, 3, dtype=d))),
        "aten::conv3d": ("aten::conv3d", lambda d: F.conv3d(t(1, 3, 4, 4, 4, dtype=d), t(4, 3, 3, 3, 3, dtype=d))),
        "aten::conv_transpose1d": ("aten::conv_transpose1d",
                                   lambda d: F.conv_transpose1d(t(1, 3, 8, dtype=d), t(3, 4, 3, dtype=d))),
        "aten::conv_transpose2d": ("aten::conv_transpose2d.input",
                                   lambda d: F.conv_transpose2d(t(1, 3, 8, 8, dtype=d), t(3, 4, 3, 3, dtype=d))),
        "aten::prelu": ("aten::prelu", lambda d: F.prelu(t(2, 3, dtype=d), t(1, dtype=d))),
        # Softmax and norms.
        "aten::softmax": ("aten::softmax.int", lambda d: F.softmax(t(4, 8, dtype=d), -1)),
        "aten::log_softmax": ("aten::log_softmax.int", lambda d: F.log_softmax(t(4, 8, dtype=d), -1)),
        "aten::_softmax": ("aten::softmax.int", lambda d: F.softmax(t(4, 8, dtype=d), -1)),
        "aten::_log_softmax": ("aten::log_softmax.int", lambda d: F.log_softmax(t(4, 8, dtype=d), -1)),
        "aten::softplus": ("aten::softplus", lambda d: F.softplus(t(4, 8, dtype=d))),
        "aten::layer_norm": ("aten::layer_norm", lambda d: F.layer_norm(t(4, 8, dtype=d), (8,))),
        "aten::native_layer_norm": ("aten::layer_norm", lambda d: F.layer_norm(t(4, 8, dtype=d), (8,))),
        "aten::group_norm": ("aten::group_norm", lambda d: F.group_norm(t(2, 4, 3, dtype=d), 2)),
        "aten::batch_norm": ("aten::batch_norm",
                             lambda d: F.batch_norm(t(2, 3, 4, dtype=d), None, None, training=True)),
        # Losses.
        # NB: on CUDA cross_entropy_loss has no autocast kernel of its own; its
        # log_softmax (float32) casts the input: the CUDA check reads that op.
        "aten::cross_entropy_loss": (("aten::cross_entropy_loss", "aten::log_softmax.int"),
                                     lambda d: F.cross_entropy(t(4, 8, dtype=d), idx(4, high=8))),
        "aten::nll_loss": ("aten::nll_loss", lambda d: F.nll_loss(t(4, 8, dtype=d), idx(4, high=8))),
        # Pointwise.
        "aten::exp": ("aten::exp", lambda d: torch.exp(t(4, dtype=d))),
        "aten::expm1": ("aten::expm1", lambda d: torch.expm1(t(4, dtype=d))),
        "aten::log": ("aten::log", lambda d: torch.log(t(4, dtype=d))),
        "aten::log2": ("aten::log2", lambda d: torch.log2(t(4, dtype=d))),
        "aten::log10": ("aten::log10", lambda d: torch.log10(t(4, dtype=d))),
        "aten::log1p": ("aten::log1p", lambda d: torch.log1p(t(4, dtype=d))),
        "aten::reciprocal": ("aten::reciprocal", lambda d: torch.reciprocal(t(4, dtype=d))),
        "aten::rsqrt": ("aten::rsqrt", lambda d: torch.rsqrt(t(4, dtype=d))),
        "aten::tan": ("aten::tan", lambda d: torch.tan(t(4, dtype=d))),
        "aten::sinh": ("aten::sinh", lambda d: torch.sinh(t(4, dtype=d))),
        "aten::cosh": ("aten::cosh", lambda d: torch.cosh(t(4, dtype=d))),
        "aten::sin": ("aten::sin", lambda d: torch.sin(t(4, dtype=d))),
        "aten::asin": ("aten::asin", lambda d: torch.asin(t(4, dtype=d) - 0.5)),
        "aten::acos": ("aten::acos", lambda d: torch.acos(t(4, dtype=d) - 0.5)),
        "aten::erf": ("aten::erf", lambda d: torch.erf(t(4, dtype=d))),
        "aten::erfinv": ("aten::erfinv", lambda d: torch.erfinv(t(4, dtype=d) - 0.5)),
        "aten::pow.Tensor_Scalar": ("aten::pow.Tensor_Scalar", lambda d: torch.pow(t(4, dtype=d), 2.5)),
        "aten::pow": ("aten::pow.Tensor_Tensor", lambda d: torch.pow(t(4, dtype=d), t(4, dtype=d))),
        "aten::pow.Scalar": ("aten::pow.Scalar", lambda d: torch.pow(2.0, t(4, dtype=d))),
        "aten::atan2": ("aten::atan2", lambda d: torch.atan2(t(4, dtype=d), t(4, dtype=d))),
        "aten::addcmul": ("aten::addcmul", lambda d: torch.addcmul(t(4, dtype=d), t(4, dtype=d), t(4, dtype=d))),
        "aten::addcdiv": ("aten::addcdiv", lambda d: torch.addcdiv(t(4, dtype=d), t(4, dtype=d), t(4, dtype=d))),
        "aten::add": ("aten::add.Tensor", lambda d: torch.add(t(4, dtype=d), t(4, dtype=d))),
        "aten::mul": ("aten::mul.Tensor", lambda d: torch.mul(t(4, dtype=d), t(4, dtype=d))),
        "aten::relu": ("aten::relu", lambda d: torch.relu(t(4, dtype=d))),
        "aten::gelu": ("aten::gelu", lambda d: F.gelu(t(4, dtype=d))),
        "aten::tanh": ("aten::tanh", lambda d: torch.tanh(t(4, dtype=d))),
        # Reductions.
        "aten::sum": ("aten::sum", lambda d: torch.sum(t(4, 8, dtype=d))),
        "aten::mean": ("aten::mean", lambda d: torch.mean(t(4, 8, dtype=d))),
        "aten::prod": ("aten::prod", lambda d: torch.prod(t(4, 8, dtype=d))),
        "aten::cumsum": ("aten::cumsum", lambda d: torch.cumsum(t(4, 8, dtype=d), 0)),
        "aten::cumprod": ("aten::cumprod", lambda d: torch.cumprod(t(4, 8, dtype=d), 0)),
        # Shape ops.
        "aten::cat": ("aten::cat", lambda d: torch.cat([t(4, dtype=d), t(4, dtype=d)])),
        "aten::stack": ("aten::stack", lambda d: torch.stack([t(4, dtype=d), t(4, dtype=d)])),
        "aten::embedding": ("aten::embedding", lambda d: F.embedding(idx(3, high=8), t(8, 4, dtype=d))),
        "aten::max_pool2d": ("aten::max_pool2d", lambda d: F.max_pool2d(t(1, 2, 4, 4, dtype=d), 2)),
        "aten::adaptive_avg_pool2d": ("aten::adaptive_avg_pool2d",
                                      lambda d: F.adaptive_avg_pool2d(t(1, 2, 4, 4, dtype=d), 1)),
    }
    return probes


def probe():
    """Returns {key: {"cpu": policy, "cuda": bool, "dispatch": name}}."""
    import torch

    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
    out = {}
    for key, (dispatch, fn) in _probes().items():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            from_fp32 = fn(torch.float32).dtype
            from_bf16 = fn(torch.bfloat16).dtype
        cpu_op, cuda_op = dispatch if isinstance(dispatch, tuple) else (dispatch, dispatch)
        cpu_kernel = has_kernel(cpu_op, "AutocastCPU")
        if from_fp32 == torch.bfloat16:
            policy = "lower"
        elif from_bf16 == torch.float32:
            policy = "fp32"
        elif cpu_kernel:
            policy = "promote"
        else:
            policy = "none"
        out[key] = {"cpu": policy, "cuda": bool(has_kernel(cuda_op, "AutocastCUDA")), "dispatch": cpu_op}
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    result = probe()
    if args.json:
        json.dump(result, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        for key in sorted(result):
            r = result[key]
            print("%-32s %-8s cuda=%s" % (key, r["cpu"], "yes" if r["cuda"] else "no"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
