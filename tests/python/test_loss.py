#!/usr/bin/python3
"""Oracle tests: the loss of the training step (--loss) against PyTorch's own (issue 9, point 3).

Usage (Debian's system python3, torch 1.13, CPU):

    /usr/bin/python3 tests/python/test_loss.py --torchcost BUILD/torchcost [--fixtures BUILD/fixtures]

Tiny models written here in plain torch (a language model whose vocabulary
is large enough that the loss dominates the step, in float32 and bfloat16,
and a classifier), each traced WITHOUT its loss and analysed by

    torchcost MODEL.pt --input ... --loss LOSS --optimizer adam --device cpu --json

while PyTorch runs the same model WITH the loss written as the reference
code writes it:

  causal_lm               Hugging Face transformers v4.40.0,
                          src/transformers/models/llama/modeling_llama.py,
                          LlamaForCausalLM.forward: logits = logits.float();
                          shift_logits = logits[..., :-1, :].contiguous();
                          shift_labels = labels[..., 1:].contiguous();
                          CrossEntropyLoss()(shift_logits.view(-1, V), shift_labels.view(-1));
                          the model returns (loss, logits) with the float32 logits.
  causal_lm:shift=labels  transformers' ForCausalLMLoss (src/transformers/loss/loss_utils.py,
                          commit 0114da07ec0e101b420a923dedeb6032b6ac3a44): the labels
                          padded with -100 and shifted, the float32 logits a local of the
                          loss; the model returns its own logits.
  causal_lm:chunks=4      torchtune's CEWithChunkedOutputLoss
                          (torchtune/modules/loss/ce_chunked_output_loss.py, commit
                          10ff7cd2e2415a9ebb462a10cf7ed149bf531054) on the output projection
                          run per chunk (TransformerDecoder.chunked_output,
                          torchtune/modules/transformer.py, commit
                          3e5b0408e636e20ca18e9c6c58c68b4da9339129), labels shifted by hstack
                          with -100 as its recipes do, the logits deleted before backward.
  vocab_parallel:world=1  Megatron-core's vocab_parallel_cross_entropy
                          (megatron/core/tensor_parallel/cross_entropy.py at NVIDIA/Megatron-LM
                          d98e8a64) on one rank holding the whole vocabulary, then the mean;
                          the model returns its logits (the softmax in their storage in float32).
  cross_entropy / mse     F.cross_entropy(out, target) / F.mse_loss(out, target), targets
                          int64 [B] / float [B, C]; the step keeps `out`.

The measured step (method of docs/measuring.md, tools/measure_step.py's
helpers): ACT from saved_tensors_hooks over one forward (storages once,
parameters excluded, inputs and targets included when saved), GRAD the .grad
tensors, OPT Adam's states after a real step, the peak from the CPU
allocator's events of zero_grad(set_to_none=True); out, loss = step;
loss.backward(); opt.step(); del out, loss, over params + states + inputs and
targets. Checks: act, grad, opt exact; peak within 3%. Also: the GPT-2 and
ResNet families default to causal_lm and cross_entropy (the same report as
with --loss given; --loss sum differs). Prints one line per
failed check and "N passed, M failed"; exits 0 only if nothing failed.
"""

import argparse
import gc
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402
import oracle_models  # noqa: E402,F401  (puts tools/ on sys.path)

import measure_step as ms  # noqa: E402

PEAK_TOLERANCE = 0.03
B, S, VOCAB, HIDDEN = 2, 64, 4096, 8
FEATURES, CLASSES = 64, 1000
IGNORE = -100


def models():
    import torch
    from torch import nn

    class TinyLM(nn.Module):
        """Embedding, one Linear block, an untied output head: logits [B, S, V]."""

        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(VOCAB, HIDDEN)
            self.fc = nn.Linear(HIDDEN, HIDDEN)
            self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
            self.num_output_chunks = 0  # torchtune's TransformerDecoder.chunked_output when > 0

        def forward(self, ids):
            h = torch.relu(self.fc(self.wte(ids)))
            if self.num_output_chunks > 0:
                return [self.lm_head(chunk) for chunk in h.chunk(self.num_output_chunks, dim=1)]
            return self.lm_head(h)

    class TinyClassifier(nn.Module):
        """Two Linear layers: logits [B, C]."""

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(FEATURES, 128)
            self.fc2 = nn.Linear(128, CLASSES)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    return TinyLM, TinyClassifier


# --- The losses as the reference code writes them: each returns (loss, what the caller keeps). ---

def llama_causal_lm(logits, labels):
    import torch.nn.functional as F

    logits = logits.float()
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    loss = F.cross_entropy(shift_logits.view(-1, VOCAB), shift_labels.view(-1))
    return loss, logits


def for_causal_lm_loss(logits, labels):
    import torch.nn.functional as F

    def loss_function(logits, labels):
        logits = logits.float()
        labels = F.pad(labels, (0, 1), value=IGNORE)
        shift_labels = labels[..., 1:].contiguous()
        logits = logits.view(-1, VOCAB)
        shift_labels = shift_labels.view(-1)
        return F.cross_entropy(logits, shift_labels, ignore_index=IGNORE, reduction="mean")

    return loss_function(logits, labels), logits


def torchtune_chunked(chunks):
    def loss(logits, labels):
        import torch
        import torch.nn.functional as F

        # The recipe: labels shifted with the ignore cache (a [B, 1] tensor it keeps).
        ignore_labels_cache = torch.full((B, 1), IGNORE, dtype=torch.long)
        labels = torch.hstack((labels[..., 1:], ignore_labels_cache[: labels.shape[0]]))

        def ce_with_chunked_output_loss(logits, labels):  # CEWithChunkedOutputLoss.forward
            total_elements = (labels != IGNORE).sum()
            labels = [target_chunk.reshape(-1) for target_chunk in labels.tensor_split(chunks, dim=1)]
            logits = [logit_chunk.reshape(-1, logit_chunk.size(-1)) for logit_chunk in logits]
            total_loss = 0.0
            for logits_chunk, labels_chunk in zip(logits, labels):
                total_loss += F.cross_entropy(logits_chunk.float(), labels_chunk, ignore_index=IGNORE,
                                              reduction="sum")
            return total_loss / total_elements

        loss = ce_with_chunked_output_loss(logits, labels)
        del logits  # The recipe's `del logits` before backward.
        return loss, None

    return loss


def megatron_vocab_parallel(logits, labels):
    """megatron/core/tensor_parallel/cross_entropy.py at NVIDIA/Megatron-LM d98e8a64:
    _VocabParallelCrossEntropy on one rank holding the whole vocabulary (world=1: the
    all-reduces are the identity, the slice starts at 0), then the mean over the tokens."""
    import torch

    class VocabParallelCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, vocab_parallel_logits, target):
            vocab_parallel_logits = vocab_parallel_logits.float()  # calculate_logits_max
            logits_max = torch.max(vocab_parallel_logits, dim=-1)[0]
            vocab_parallel_logits -= logits_max.unsqueeze(dim=-1)  # calculate_predicted_logits
            vocab_start_index, vocab_end_index = 0, vocab_parallel_logits.size(-1)
            target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
            masked_target = target.clone() - vocab_start_index
            masked_target[target_mask] = 0
            partition_vocab_size = vocab_parallel_logits.size()[-1]
            logits_2d = vocab_parallel_logits.view(-1, partition_vocab_size)
            masked_target_1d = masked_target.view(-1)
            arange_1d = torch.arange(start=0, end=logits_2d.size()[0], device=logits_2d.device)
            predicted_logits_1d = logits_2d[arange_1d, masked_target_1d]
            predicted_logits_1d = predicted_logits_1d.clone().contiguous()
            predicted_logits = predicted_logits_1d.view_as(target)
            predicted_logits[target_mask] = 0.0
            exp_logits = vocab_parallel_logits
            torch.exp(vocab_parallel_logits, out=exp_logits)
            sum_exp_logits = exp_logits.sum(dim=-1)
            loss = torch.log(sum_exp_logits) - predicted_logits  # calculate_cross_entropy_loss
            exp_logits.div_(sum_exp_logits.unsqueeze(dim=-1))
            ctx.save_for_backward(exp_logits, target_mask, masked_target_1d)
            return loss

        @staticmethod
        def backward(ctx, grad_output):
            softmax, target_mask, masked_target_1d = ctx.saved_tensors
            grad_input = softmax
            partition_vocab_size = softmax.size()[-1]
            grad_2d = grad_input.view(-1, partition_vocab_size)
            arange_1d = torch.arange(start=0, end=grad_2d.size()[0], device=grad_2d.device)
            softmax_update = 1.0 - target_mask.view(-1).float()
            grad_2d[arange_1d, masked_target_1d] -= softmax_update
            grad_input.mul_(grad_output.unsqueeze(dim=-1))
            return grad_input, None

    return VocabParallelCrossEntropy.apply(logits, labels).mean(), logits


def cross_entropy(out, target):
    import torch.nn.functional as F

    return F.cross_entropy(out, target), out


def mse(out, target):
    import torch.nn.functional as F

    return F.mse_loss(out, target), out


class Step:
    """The model and its loss as one module: forward(*inputs, *targets) -> (loss, kept)."""

    def __init__(self, model, loss_fn, n_inputs):
        import torch

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *args):
                return loss_fn(self.model(*args[:n_inputs]), *args[n_inputs:])

        self.module = Wrapped()


def measure(model, inputs, targets, loss_fn):
    """Measures one Adam training step of `model` with `loss_fn` (docstring at the top)."""
    import torch

    torch.set_num_threads(1)
    step = Step(model, loss_fn, len(inputs)).module
    args = list(inputs) + list(targets)
    params = list(model.parameters())
    param_bytes, param_ptrs = ms._unique_bytes(params)
    input_bytes, _ = ms._unique_bytes(args)
    loss, saved = ms.measure_saved(step, args, param_ptrs, set())
    loss.backward()
    del loss
    grads = [p.grad for p in params if p.grad is not None]
    grad_bytes = sum(g.numel() * g.element_size() for g in grads)
    opt = torch.optim.Adam(params)
    opt.step()  # Steady state: the states exist.
    opt_bytes, _ = ms._opt_state_bytes(opt)
    opt.zero_grad(set_to_none=True)
    gc.collect()
    with ms.Profile() as prof:
        prof.phase("forward")
        loss, kept = step(*args)
        prof.phase("backward")
        loss.backward()
        prof.phase("optimizer")
        opt.step()
        prof.phase("release")
        del loss, kept
        prof.phase("end")
    res = ms.analyse(prof.events(), param_bytes + opt_bytes + input_bytes)
    opt.zero_grad(set_to_none=True)
    return {"act": saved["act_bytes"], "grad": grad_bytes, "opt": opt_bytes, "peak": res["peak_bytes"]}


def cases():
    """(label, model class index, dtype, loss_fn, torchcost --loss, targets maker)."""
    import torch

    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (B, S))
    labels = torch.randint(0, VOCAB, (B, S))
    x = torch.randn(B, FEATURES)
    classes = torch.randint(0, CLASSES, (B,))
    out = []
    for dtype in (torch.float32, torch.bfloat16):
        name = "fp32" if dtype == torch.float32 else "bf16"
        out.append(("lm %s causal_lm" % name, 0, dtype, llama_causal_lm, "causal_lm", [ids], [labels]))
        out.append(("lm %s causal_lm:shift=labels" % name, 0, dtype, for_causal_lm_loss,
                    "causal_lm:shift=labels", [ids], [labels]))
        out.append(("lm %s causal_lm:chunks=4" % name, 0, dtype, torchtune_chunked(4), "causal_lm:chunks=4",
                    [ids], [labels]))
        out.append(("lm %s vocab_parallel" % name, 0, dtype, megatron_vocab_parallel, "vocab_parallel:world=1",
                    [ids], [labels]))
        out.append(("classifier %s cross_entropy" % name, 1, dtype, cross_entropy, "cross_entropy",
                    [x.to(dtype)], [classes]))
    out.append(("classifier fp32 mse", 1, torch.float32, mse, "mse", [x], [torch.randn(B, CLASSES)]))
    return out


def input_flag(t):
    import torch

    shape = ",".join(str(d) for d in t.shape)
    dtype = {torch.int64: "int64", torch.float32: "float32", torch.bfloat16: "bfloat16"}[t.dtype]
    return shape if dtype == "float32" else shape + ":" + dtype


def family_defaults(binary, results):
    """The families train with their task's loss unless --loss says otherwise; model files with out.sum()."""
    gpt2 = ["--model", "gpt2", "--config", "layers=1,hidden=64,heads=2,vocab=1024,context=64", "--set", "B=2,S=32"]
    resnet = ["--model", "resnet", "--config", "depth=18,classes=10,image_size=32", "--set", "B=2"]
    for label, base, loss in (("gpt2", gpt2, "causal_lm"), ("resnet", resnet, "cross_entropy")):
        default, err = torchcost_cli.run_json(binary, base)
        given, err2 = torchcost_cli.run_json(binary, base + ["--loss", loss])
        summed, err3 = torchcost_cli.run_json(binary, base + ["--loss", "sum"])
        if not results.check(not (err or err2 or err3), "%s default loss" % label, err or err2 or err3 or ""):
            continue
        results.check(default["training"]["loss"] == given["training"]["loss"] and
                      default["training"]["memory"] == given["training"]["memory"],
                      "%s default loss" % label, "default %r, --loss %s %r" % (
                          default["training"]["loss"], loss, given["training"]["loss"]))
        results.check(summed["training"]["memory"]["saved_bytes"] != default["training"]["memory"]["saved_bytes"],
                      "%s --loss sum differs" % label, "the same saved bytes with sum and %s" % loss)


def main(argv):
    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", default=None, help="unused (the models are traced to a temporary directory)")
    args = parser.parse_args(argv)
    results = torchcost_cli.Results()
    classes = models()
    with tempfile.TemporaryDirectory() as tmp:
        for label, which, dtype, loss_fn, loss_flag, inputs, targets in cases():
            torch.manual_seed(0)
            model = classes[which]().to(dtype)
            pt = os.path.join(tmp, "m%d_%s.pt" % (which, str(dtype).replace("torch.", "")))
            if not os.path.exists(pt):
                torch.jit.save(torch.jit.trace(model, tuple(inputs)), pt)  # Without chunks: torchcost splits the head.
            if ":chunks=" in loss_flag:
                model.num_output_chunks = int(loss_flag.split("=")[1])
            measured = measure(model, inputs, targets, loss_fn)
            cli = [pt]
            for t in inputs:
                cli += ["--input", input_flag(t)]
            cli += ["--loss", loss_flag, "--optimizer", "adam", "--device", "cpu"]
            report, err = torchcost_cli.run_json(args.torchcost, cli)
            if not results.check(err is None, label, err or ""):
                continue
            memory = report["training"]["memory"]
            got = {"act": memory["saved_bytes"]["value"], "grad": memory["category_max"]["grad"]["value"],
                   "opt": memory["category_max"]["opt"]["value"], "peak": memory["peak"]["value"]}
            for key in ("act", "grad", "opt"):
                results.check(int(got[key]) == measured[key], "%s %s" % (label, key),
                              "PyTorch %d, torchcost %s" % (measured[key], got[key]))
            rel = abs(int(got["peak"]) - measured["peak"]) / measured["peak"]
            results.check(rel <= PEAK_TOLERANCE, "%s peak" % label,
                          "PyTorch %d, torchcost %s (%.2f%%)" % (measured["peak"], got["peak"], 100 * rel))
            results.check(loss_flag.split(":")[0] in report["training"]["loss"], "%s loss named" % label,
                          report["training"]["loss"])
    family_defaults(args.torchcost, results)
    return results.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
