#!/usr/bin/python3
"""Oracle test: the families in half precision as the reference code runs them (issue 9, point 1).

Usage (Debian's system python3, torch 1.13, CPU):

    /usr/bin/python3 tests/python/test_halfprec.py --torchcost BUILD/torchcost [--fixtures DIR]

Models, each in float32 and in bfloat16 (model.to(torch.bfloat16): torch 1.13 runs
bf16 on CPU):

  llama GQA, untied   python/torchcost/reference/hf_reference.py's Llama: Hugging Face transformers'
                      LlamaForCausalLM (src/transformers/models/llama/modeling_llama.py,
                      commit 002272831fba584eb30dca9729c1be456836960a) line by line:
                      LlamaRMSNorm's float32 statistics cast back to the input dtype,
                      RoPE tables in float32 cast to x's dtype, eager softmax with
                      dtype=float32 cast back to the query's, repeat_kv, SwiGLU;
                      4 heads, 2 KV heads.
  llama tied          the same with 4 KV heads and tie_word_embeddings.
  llama mqa           the same with 1 KV head (multi-query), 1 layer.
  gpt2 hf gelu_new    python/torchcost/reference/hf_reference.py's GPT2: GPT2LMHeadModel as modeling_gpt2.py writes
                      it (Conv1D, gelu_new, the scale a 0-dim tensor in att's dtype, tied
                      head), dropout 0; analysed as the trace only.
  gpt2 tied           tools/make_fixtures.py's GPT2 (dropout 0): Hugging Face's GPT-2
                      eager attention as modeling_gpt2.py writes it (commit
                      0010f60284ab4b9d14b7df9c6525b1a2ad44e640: mask value
                      finfo(att.dtype).min in att's dtype, softmax in the compute
                      dtype, LayerNorm in the compute dtype), Conv1D as addmm, tied head,
                      the MLP as nn.Linear with GELU-tanh (HF's gelu_pytorch_tanh).

Each model is traced (eval mode) and analysed by torchcost twice (the HF GPT-2
once), as the trace and as `--model llama|gpt2 --config ...,attn=eager,dtype=fp32|bf16`, both with --loss sum
--optimizer adam --device cpu; PyTorch measures the same model's step with
loss = out.sum() in the output's dtype (the method of docs/measuring.md:
saved_tensors_hooks for ACT, .grad for GRAD, Adam's states after a real step
for OPT, the CPU allocator's profiler events of forward, backward, step and
release for the peak, over params + buffers + states + input).
Checks: ACT, GRAD, OPT exact and peak within 5% of PyTorch for both torchcost
runs; the builder's FLOPs and saved bytes equal the trace's.
Prints one line per failed check and "N passed, M failed"; exits 0 only if nothing failed.
"""

import argparse
import gc
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "python"))

import torchcost_cli  # noqa: E402

PEAK_TOLERANCE = 0.05
COMMON = ["--loss", "sum", "--optimizer", "adam", "--device", "cpu"]
SETS = ["--set", "B=2", "--set", "S=64"]


def gpt2_model():
    import make_fixtures

    return make_fixtures.GPT2(dropout=0.0)


def gpt2_config(m):
    """The builder config of make_fixtures.GPT2, read off the module."""
    attn = m.h[0].attn
    return "layers=%d,hidden=%d,heads=%d,vocab=%d,context=%d,dropout=%r" % (
        len(m.h), m.wte.embedding_dim, attn.n_head, m.wte.num_embeddings, m.wpe.num_embeddings, m.drop.p)


def cases():
    """(label, family, model maker, config of the module)."""
    from torchcost.reference import hf_reference

    out = []
    for name, label in (("llama_hf_tiny", "llama gqa untied"), ("llama_hf_tiny_tied", "llama tied")):
        cls, kwargs = hf_reference.MODELS[name]
        out.append((label, "llama", lambda cls=cls, kwargs=kwargs: cls(**kwargs), lambda m: m.config()))
    # One KV head (multi-query): repeat_kv's reshape is a view with the heads at stride 0, so each of
    # matmul's reshapes to [B * heads, ...] copies K and V at B = 2 (bmm saves the copies); one layer.
    out.append(("llama mqa", "llama", lambda: hf_reference.Llama(kv_heads=1, layers=1), lambda m: m.config()))
    out.append(("gpt2 tied", "gpt2", gpt2_model, gpt2_config))
    # Hugging Face's own GPT-2 code (Conv1D MLP, gelu_new, the scale a 0-dim tensor in att's
    # dtype): the trace only; the gpt2 family mirrors make_fixtures' GPT2 (see docs/measuring.md).
    cls, kwargs = hf_reference.MODELS["gpt2_hf_tiny"]
    out.append(("gpt2 hf gelu_new", None, lambda: cls(**kwargs), None))
    return out


def measure(model, ids):
    """One Adam step of `model` with loss = out.sum(): ACT, GRAD, OPT and the allocator's peak."""
    import torch

    import measure_step as ms

    torch.set_num_threads(1)
    model.train()
    params = list(model.parameters())
    param_bytes, param_ptrs = ms._unique_bytes(params)
    buffer_bytes, buffer_ptrs = ms._unique_bytes(list(model.buffers()))
    input_bytes, _ = ms._unique_bytes([ids])
    loss, saved = ms.measure_saved(model, [ids], param_ptrs, buffer_ptrs)
    loss.backward()
    del loss
    grads = [p.grad for p in params if p.grad is not None]
    grad_bytes, _ = ms._unique_bytes(grads)
    opt = torch.optim.Adam(params)
    opt.step()  # Steady state: the states exist.
    opt_bytes, _ = ms._opt_state_bytes(opt)
    opt.zero_grad(set_to_none=True)
    gc.collect()
    events = ms.profile_step(lambda: model(ids), lambda out: out.sum(), opt)
    res = ms.analyse(events, param_bytes + buffer_bytes + opt_bytes + input_bytes)
    opt.zero_grad(set_to_none=True)
    return {"act": saved["act_bytes"], "grad": grad_bytes, "opt": opt_bytes, "peak": res["peak_bytes"]}


def quantities(report):
    t = report["training"]
    m = t["memory"]
    return {"act": int(m["saved_bytes"]["value"]), "grad": int(m["category_max"]["grad"]["value"]),
            "opt": int(m["category_max"]["opt"]["value"]), "peak": int(m["peak"]["value"]),
            "forward FLOPs": t["flops"]["forward"]["value"], "backward FLOPs": t["flops"]["backward"]["value"]}


def check_against(results, label, got, measured):
    for key in ("act", "grad", "opt"):
        results.check(got[key] == measured[key], "%s %s" % (label, key),
                      "PyTorch %d, torchcost %d" % (measured[key], got[key]))
    rel = (got["peak"] - measured["peak"]) / measured["peak"]
    results.check(abs(rel) <= PEAK_TOLERANCE, "%s peak" % label,
                  "PyTorch %d, torchcost %d (%+.2f%%)" % (measured["peak"], got["peak"], 100 * rel))
    print("%-40s ACT %9d  GRAD %8d  OPT %8d  peak %9d (PyTorch %9d, %+.2f%%)" % (
        label, got["act"], got["grad"], got["opt"], got["peak"], measured["peak"], 100 * rel), flush=True)


def main(argv):
    import torch

    from torchcost.reference import hf_reference

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", default=None, help="unused (the models are traced to a temporary directory)")
    args = parser.parse_args(argv)
    results = torchcost_cli.Results()
    ids = hf_reference.example_input()
    with tempfile.TemporaryDirectory() as tmp:
        for label, family, make, config_of in cases():
            for dtype, short in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
                name = "%s %s" % (label, short)
                torch.manual_seed(0)
                model = make().to(dtype).eval()
                pt = os.path.join(tmp, "%s_%s.pt" % (label.replace(" ", "_"), short))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", torch.jit.TracerWarning)
                    torch.jit.save(torch.jit.trace(model, (ids,), check_trace=False), pt)
                measured = measure(model, ids)
                traced, err = torchcost_cli.run_json(args.torchcost, [pt, "--input", "2,64:int64"] + COMMON)
                if not results.check(err is None, name + " trace", err or ""):
                    continue
                results.check(not traced["unknown_ops"], "%s trace unknown ops" % name,
                              str([u["op"] for u in traced["unknown_ops"]]))
                a = quantities(traced)
                check_against(results, name + " (trace)", a, measured)
                if family is None:
                    continue
                # attn=eager: the references' attention (the families default to sdpa).
                config = config_of(model) + ",attn=eager,dtype=" + short
                built, err = torchcost_cli.run_json(
                    args.torchcost, ["--model", family, "--config", config] + SETS + COMMON)
                if not results.check(err is None, name + " builder", err or ""):
                    continue
                results.check(not built["unknown_ops"], "%s builder unknown ops" % name,
                              str([u["op"] for u in built["unknown_ops"]]))
                b = quantities(built)
                check_against(results, name + " (builder)", b, measured)
                for key in ("forward FLOPs", "backward FLOPs", "act"):
                    results.check(a[key] == b[key], "%s builder %s" % (name, key),
                                  "trace %s, builder %s" % (a[key], b[key]))
                del model
                gc.collect()
    return results.summary()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
