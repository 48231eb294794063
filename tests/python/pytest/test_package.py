"""torchcost's Python package: its results equal the torchcost command's JSON and PyTorch's own numbers.

Models are tiny (the suite runs in seconds); the 7B check runs on the meta device.
"""

import json
import os
import resource
import subprocess
import sys

import pytest
import torch
from torch import nn

import torchcost
from conftest import REPO, same_report

HERE = os.path.dirname(os.path.abspath(__file__))
TINY_LLAMA = {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "intermediate": 160, "vocab": 256}


def test_hf_config_equals_cli(cli):
    # A Hugging Face config.json goes through the same library call as `--model FILE`.
    path = os.path.join(REPO, "examples", "configs", "Qwen2-7B.json")
    a = torchcost.analyze(path, config={"num_hidden_layers": 2}, set={"B": 1, "S": 64})
    doc = cli("--model", path, "--config", "num_hidden_layers=2", "--set", "B=1", "--set", "S=64")
    same_report(a.to_dict(), doc)
    # embed + head 2 * 152064 * 3584, final norm 3584, 2 layers of (q 3584^2 + 3584, k and v 3584 * 512 + 512 each,
    # o 3584^2, MLP 3 * 3584 * 18944, norms 2 * 3584).
    layer = 2 * 3584 * 3584 + 3584 + 2 * (3584 * 512 + 512) + 3 * 3584 * 18944 + 2 * 3584
    assert a.params == 2 * 152064 * 3584 + 3584 + 2 * layer
    assert a.active_params == a.params == doc["totals"]["active_params"]  # Dense: every parameter is active.


def test_qlora_counts_parameters_as_peft_does(cli):
    # peft's get_nb_trainable_parameters counts a Params4bit as numel x 2 (uint8 codes, two weights a byte) and
    # bitsandbytes keeps absmax and the code table in a quant_state, no parameter (huggingface/peft@5d602fd,
    # src/peft/peft_model.py, lines 937-956): LLaMA-7B's 6,738,415,616 (its nn.Module's own count,
    # test_meta_7b_module_in_little_memory) plus the adapters. The bytes stay the stored ones.
    a = torchcost.analyze("llama-7b-like", peft="qlora:r=16", set={"B": 1, "S": 8})
    dense = torchcost.analyze("llama-7b-like", set={"B": 1, "S": 8})
    assert dense.params == 6738415616 and dense.quantized_params == 0
    assert a.params == 6738415616 + a.trainable_params
    # Every Linear of the 32 layers but the head: q, k, v, o 4096 x 4096; gate, up, down 4096 x 11008.
    assert a.quantized_params == 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    assert a.param_bytes < dense.param_bytes / 3
    doc = cli("--model", "llama-7b-like", "--peft", "qlora:r=16", "--set", "B=1", "--set", "S=8")
    assert (doc["totals"]["params"], doc["totals"]["quantized_params"]) == (a.params, a.quantized_params)


class TinyCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


def test_family_equals_cli(cli):
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}, optimizer="adam")
    doc = cli("--model", "llama", "--config", ",".join("%s=%s" % kv for kv in TINY_LLAMA.items()),
              "--set", "B=2", "--set", "S=16", "--optimizer", "adam")
    same_report(a.to_dict(), doc)
    assert a.params == doc["totals"]["params"]
    assert a.peak_bytes == doc["training"]["memory"]["peak"]["value"]
    assert a.memory == {c: v["value"] for c, v in doc["training"]["memory"]["at_peak"].items()}
    assert sum(a.memory.values()) == a.peak_bytes
    # The attributes are evaluated in C++ without the JSON report: each equals the command's number.
    t = doc["training"]
    for attr, key in (("flops_forward", "forward"), ("flops_backward", "backward"),
                      ("flops_optimizer", "optimizer"), ("flops_step", "step")):
        assert getattr(a, attr) == t["flops"][key]["value"], attr
    assert a.macs == doc["totals"]["macs"]["value"] and a.flops == doc["totals"]["flops"]["value"]
    assert a.saved_bytes == t["memory"]["saved_bytes"]["value"]
    assert a.peak_phase == t["memory"]["peak_phase"]
    assert a.trainable_params == t["grad_params"] and a.param_bytes == doc["totals"]["param_bytes"]


def test_cuda_allocator_equals_cli(cli):
    # allocator="cuda" is --allocator cuda: the peak becomes the allocated blocks' (docs/allocator.md).
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}, allocator="cuda",
                          expandable_segments=True, cuda_context="300MiB")
    doc = cli("--model", "llama", "--config", ",".join("%s=%s" % kv for kv in TINY_LLAMA.items()),
              "--set", "B=2", "--set", "S=16", "--allocator", "cuda", "--expandable-segments",
              "--cuda-context", "300MiB")
    same_report(a.to_dict(), doc)
    mem = doc["training"]["memory"]
    assert a.peak_bytes == mem["peak"]["value"] == a.allocator["allocated_peak"]
    assert a.memory == {c: v["value"] for c, v in mem["at_peak"].items()}
    assert sum(a.memory.values()) == a.peak_bytes
    assert a.allocator["reserved_peak"] == mem["reserved_peak"]["value"]
    assert a.allocator["context_bytes"] == 300 << 20
    assert a.allocator["device_peak"] == a.allocator["reserved_peak"] + (300 << 20)
    # Blocks are rounded up: never below the exact tensor bytes.
    assert a.allocator["tensor_peak"] <= a.peak_bytes <= a.allocator["reserved_peak"]
    assert torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}).allocator is None


def test_deepspeed_config_equals_cli(cli, tmp_path):
    # deepspeed=FILE is --deepspeed FILE; "auto" reduce_bucket_size is hidden^2, "auto" persistence 10 hidden
    # (Hugging Face's Trainer).
    path = tmp_path / "ds_config.json"
    path.write_text(json.dumps({"bf16": {"enabled": True}, "zero_optimization": {
        "stage": 3, "reduce_bucket_size": "auto", "stage3_param_persistence_threshold": "auto"}}))
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}, world=2, deepspeed=str(path))
    doc = cli("--model", "llama", "--config", ",".join("%s=%s" % kv for kv in TINY_LLAMA.items()),
              "--set", "B=2", "--set", "S=16", "--world", "2", "--deepspeed", str(path))
    same_report(a.to_dict(), doc)
    sharding = a.to_dict()["sharding"]
    assert sharding["strategy"] == "zero3" and sharding["master_weights"]
    assert sharding["gradient_buffers"]["reduce_bucket_elements"] == TINY_LLAMA["hidden"] ** 2
    assert sharding["zero3"]["persistence_threshold"] == 10 * TINY_LLAMA["hidden"]  # "auto": 10 h
    with pytest.raises(torchcost.TorchcostError, match="^shard zero2 disagrees with .*zero_optimization.stage"):
        torchcost.analyze("llama", config=TINY_LLAMA, shard="zero2", world=2, deepspeed=str(path))
    # A dict is the config itself, as Hugging Face's TrainingArguments(deepspeed=...) takes one.
    as_dict = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}, world=2,
                                deepspeed=json.loads(path.read_text()))
    assert as_dict.to_dict()["sharding"] == sharding


@pytest.mark.parametrize("allocator", [None, "cuda"])
def test_budget_equals_cli_and_bounds_the_batch(cli, allocator):
    # budget= is --budget: the report says whether the step fits and the largest B that does; evaluating at
    # that B fits and one more does not, and the sweep marks the same points.
    opts = {"allocator": allocator, "cuda_context": "8MiB" if allocator else None}
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}, budget="40MiB", **opts)
    flags = ["--allocator", "cuda", "--cuda-context", "8MiB"] if allocator else []
    doc = cli("--model", "llama", "--config", ",".join("%s=%s" % kv for kv in TINY_LLAMA.items()),
              "--set", "B=2", "--set", "S=16", "--budget", "40MiB", *flags)
    same_report(a.to_dict(), doc)
    b = a.budget
    assert b == doc["training"]["memory"]["budget"]
    assert b["bytes"] == 40 << 20 and b["at"] == {"B": 2}
    assert b["decided_by"] == ("cuda_allocator" if allocator else "tensor_peak")
    needed = a.allocator["device_peak"] if allocator else a.peak_bytes
    assert b["needed_bytes"] == needed and b["fits"] == (needed <= 40 << 20)
    n = b["largest"]["value"]
    assert b["largest"]["symbol"] == "B" and 2 < n < 1000 and not b["largest"]["search_stopped"]
    assert a.evaluate(B=n).budget["fits"] and not a.evaluate(B=n + 1).budget["fits"]
    assert a.evaluate(B=n + 1).budget["largest"]["value"] == n
    points = a.sweep(B=[n, n + 1])
    assert [p["fits"] for p in points] == [True, False]
    if allocator:
        assert points[0]["device_peak"] == a.evaluate(B=n).allocator["device_peak"]
    # The sweep's peak and breakdown are the report's at that point (the allocated blocks' with the allocator).
    assert points[0]["peak"] == a.evaluate(B=n).peak_bytes
    assert points[0]["at_peak"] == a.evaluate(B=n).memory
    assert torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 2, "S": 16}).budget is None
    # B unbound: the allocator's own figures need it, the budget is decided at B = 1 all the same.
    free = torchcost.analyze("llama", config=TINY_LLAMA, set={"S": 16}, budget="40MiB", **opts).budget
    assert free["at"] == {"B": 1} and free["largest"]["value"] == n
    with pytest.raises(torchcost.TorchcostError, match="budget: '40 apples'"):
        torchcost.analyze("llama", config=TINY_LLAMA, budget="40 apples")


def test_unbound_figures_are_expressions(cli):
    a = torchcost.analyze("llama", config=TINY_LLAMA)
    doc = cli("--model", "llama", "--config", ",".join("%s=%s" % kv for kv in TINY_LLAMA.items()))
    assert a.flops_backward == doc["training"]["flops"]["backward"]["expr"]
    assert a.peak_bytes == doc["training"]["memory"]["peak"]["expr"]
    assert a.memory == {}  # the peak's moment depends on B and S


def test_families_do_not_import_torch():
    code = ("import sys, torchcost\n"
            "a = torchcost.analyze('llama', 'B,S:int64', config=%r, set={'B': 1, 'S': 8}, param_dtype='bf16')\n"
            "assert a.peak_bytes > 0\n"
            "print('torch' in sys.modules)\n" % (TINY_LLAMA,))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_family_params_closed_form():
    # LLaMA: embed V*d, per layer q,o d*d + k,v d*(kv*hd) + 3*d*I MLP + 2 norms d, final norm d, lm_head V*d.
    c = TINY_LLAMA
    d, hd = c["hidden"], c["hidden"] // c["heads"]
    per_layer = 2 * d * d + 2 * d * c["kv_heads"] * hd + 3 * d * c["intermediate"] + 2 * d
    expected = 2 * c["vocab"] * d + c["layers"] * per_layer + d
    a = torchcost.analyze("llama", config=TINY_LLAMA)
    assert a.params == expected
    assert a.symbols == ["B", "S"]


def test_module_matches_pytorch():
    m = TinyCNN()
    m.conv.weight.requires_grad_(False)
    a = torchcost.analyze(m, ("B", 3, 8, 8), set={"B": 4})
    assert a.params == sum(p.numel() for p in m.parameters())
    assert a.trainable_params == sum(p.numel() for p in m.parameters() if p.requires_grad)
    assert a.buffers == sum(b.numel() for n, b in m.named_buffers() if not n.endswith("num_batches_tracked")) + 1
    # MACs: conv B*Cout*H*W*Cin*k*k, linear B*in*out.
    assert a.macs == 4 * 8 * 8 * 8 * 3 * 9 + 4 * 512 * 10
    assert a.module("conv").macs == 4 * 8 * 8 * 8 * 3 * 9
    assert a.module("fc").params == 512 * 10 + 10
    assert [r.path for r in a.modules] == ["", "conv", "bn", "fc"]
    assert a.module("fc").output_shapes == [[4, 10]]


# The torch a live module runs on (analyze() models it; a file gets the default unless told).
THIS_TORCH = "1.13" if torch.__version__.startswith("1.") else "2"


def test_module_equals_cli_on_its_export(cli, tmp_path):
    m = TinyCNN()
    path = str(tmp_path / "cnn.json")
    torchcost.export_graph(m, ("B", 3, 8, 8), path)
    a = torchcost.analyze(m, ("B", 3, 8, 8), set={"B": 4}, optimizer="sgd_momentum", freeze="^conv")
    doc = cli(path, "--input", "B,3,8,8:float32", "--set", "B=4", "--optimizer", "sgd_momentum",
              "--freeze", "^conv", "--torch-version", THIS_TORCH)
    same_report(a.to_dict(), doc)
    # A .json path defaults its inputs to the file's table (symbolic B).
    same_report(torchcost.analyze(path, set={"B": 4}, optimizer="sgd_momentum", freeze="^conv",
                                  torch_version=THIS_TORCH).to_dict(), doc)
    pt = str(tmp_path / "cnn.pt")
    torch.jit.save(torch.jit.trace(m.eval(), torch.randn(1, 3, 8, 8)), pt)
    with pytest.raises(torchcost.TorchcostError, match="input_shapes=SHAPE"):  # no sidecar: say what to give
        torchcost.analyze(pt)


def test_scriptmodule_equals_cli(cli, tmp_path):
    m = TinyCNN().eval()
    s = torch.jit.trace(m, torch.randn(1, 3, 8, 8))
    path = str(tmp_path / "cnn.pt")
    torch.jit.save(s, path)
    a = torchcost.analyze(s, "B,3,8,8", set={"B": 2}, mode="infer")
    same_report(a.to_dict(), cli(path, "--input", "B,3,8,8", "--set", "B=2", "--mode", "infer",
                                 "--torch-version", THIS_TORCH))
    b = torchcost.analyze(path, "B,3,8,8", set={"B": 2}, mode="infer", torch_version=THIS_TORCH)
    same_report(b.to_dict(), a.to_dict() | {"model": "x"})


def test_evaluate_equals_fresh_analysis():
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"S": 16})
    assert isinstance(a.flops_forward, str) and "B" in a.flops_forward  # symbolic in B
    e = a.evaluate(B=3)
    fresh = torchcost.analyze("llama", config=TINY_LLAMA, set={"S": 16, "B": 3})
    assert e.to_dict() == fresh.to_dict()
    assert e.peak_bytes == fresh.peak_bytes and isinstance(e.peak_bytes, int)
    rows = a.sweep(B=[1, 3])
    assert [r["peak"] for r in rows] == [a.evaluate(B=1).peak_bytes, fresh.peak_bytes]
    assert rows[1]["flops"]["backward"] == fresh.flops_backward
    assert rows[1]["at_peak"] == fresh.memory
    with pytest.raises(torchcost.TorchcostError, match="unknown symbol"):
        a.evaluate(Q=1)


def _state_bytes(opt):
    return sum(t.numel() * t.element_size() for st in opt.state.values() for t in st.values()
               if isinstance(t, torch.Tensor))


@pytest.mark.parametrize("make,name", [
    (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), "sgd_momentum"),
    (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True), "sgd_nesterov"),
    (lambda ps: torch.optim.Adam(ps), "adam"),
    (lambda ps: torch.optim.AdamW(ps), "adamw"),
    (lambda ps: torch.optim.Adagrad(ps), "adagrad"),
    (lambda ps: torch.optim.RMSprop(ps), "rmsprop"),
])
def test_profiler_reads_the_optimizer(make, name):
    torch.manual_seed(0)
    m = TinyCNN()
    m.conv.requires_grad_(False)
    opt = make([p for p in m.parameters() if p.requires_grad])
    x = torch.randn(2, 3, 8, 8)
    # PyTorch's own numbers: one real step, then the optimizer state it keeps.
    m(x).sum().backward()
    opt.step()
    r = torchcost.Profiler(m, opt).profile(x)
    assert r.to_dict()["training"]["optimizer"] == name
    assert r.trainable_params == sum(p.numel() for p in m.parameters() if p.requires_grad)
    assert r.memory["opt"] == _state_bytes(opt)
    grads = sum(p.grad.numel() * p.grad.element_size() for p in m.parameters() if p.grad is not None)
    assert r.category_max["grad"] == grads


def test_profiler_reads_the_optimizer_impl():
    # torch 2.x's fused=True (torch 1.13 builds it on CUDA only: set in the group as 2.x keeps it) is the
    # fused step, in place: no optimizer temporaries, where the single-tensor loop has Adam's sqrt and denom.
    from torchcost.profiler import optimizer_options
    m = TinyCNN()
    opt = torch.optim.Adam(m.parameters())
    assert optimizer_options(opt) == {"optimizer": "adam"}
    opt.param_groups[0]["fused"] = True
    assert optimizer_options(opt) == {"optimizer": "adam", "optimizer_impl": "fused"}
    temp = {impl: torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 1, "S": 8}, optimizer="adam",
                                    optimizer_impl=impl).to_dict()["training"]
            for impl in ("single", "fused")}
    assert temp["fused"]["optimizer_impl"] == "fused"

    def optimizer_temps(training):
        timeline = training["timeline"]
        at = 2 + timeline["categories"].index("temp")  # After the phase and node columns.
        return [point[at] for point in timeline["points"] if point[0] == "optimizer"]
    assert max(optimizer_temps(temp["single"])) > 0
    # NB: points equal to the one before are dropped, so the fused step may leave none.
    assert max(optimizer_temps(temp["fused"]), default=0) == 0


def test_profiler_warns_of_weight_decay():
    m = TinyCNN()
    with pytest.warns(UserWarning, match="weight_decay"):
        torchcost.Profiler(m, torch.optim.SGD(m.parameters(), lr=0.1, weight_decay=1e-4))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torchcost.Profiler(m, torch.optim.AdamW(m.parameters(), weight_decay=0.01))  # in place: modelled


def test_profiler_refuses_what_is_not_modelled():
    m = TinyCNN()
    with pytest.raises(torchcost.TorchcostError, match="amsgrad"):
        torchcost.Profiler(m, torch.optim.Adam(m.parameters(), amsgrad=True))
    with pytest.raises(torchcost.TorchcostError, match="Adadelta"):
        torchcost.Profiler(m, torch.optim.Adadelta(m.parameters()))


def test_options_are_keywords_and_errors_name_them():
    with pytest.raises(torchcost.TorchcostError, match="^param_dtype: unknown dtype 'foo'"):
        torchcost.analyze("llama", config=TINY_LLAMA, param_dtype="foo")
    with pytest.raises(torchcost.TorchcostError, match="unknown option 'optimiser'"):
        torchcost.analyze("llama", config=TINY_LLAMA, optimiser="adam")
    with pytest.raises(torchcost.TorchcostError, match="input_shapes"):
        torchcost.analyze(TinyCNN())
    # The library's StepConfig names become keywords too.
    with pytest.raises(torchcost.TorchcostError, match="^galore wraps optimizer adamw .*got 'sgd'"):
        torchcost.analyze("llama", config=TINY_LLAMA, galore={"r": 8}, optimizer="sgd")
    with pytest.raises(torchcost.TorchcostError, match="^world 4 needs shard"):
        torchcost.analyze("llama", config=TINY_LLAMA, world=4)
    with pytest.raises(torchcost.TorchcostError, match="^offload optimizer .*needs shard zero2 or zero3"):
        torchcost.analyze("llama", config=TINY_LLAMA, offload="optimizer")
    with pytest.raises(torchcost.TorchcostError, match="^overlap_comm is DeepSpeed's: it needs shard zero1"):
        torchcost.analyze("llama", config=TINY_LLAMA, overlap_comm=True)
    with pytest.raises(torchcost.TorchcostError, match="^contiguous_gradients=False: DeepSpeed turns"):
        torchcost.analyze("llama", config=TINY_LLAMA, shard="zero2", offload="optimizer", optimizer="adam",
                          contiguous_gradients=False)
    with pytest.raises(torchcost.TorchcostError, match="^batch_symbol 'N' is not a symbol of the inputs"):
        torchcost.analyze("llama", config=TINY_LLAMA, budget="1GiB", batch_symbol="N")
    with pytest.raises(torchcost.TorchcostError, match="^batch_symbol S .*it needs budget$"):
        torchcost.analyze("llama", config=TINY_LLAMA, batch_symbol="S")
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 1, "S": 8}, param_dtype=torch.bfloat16,
                          peft={"method": "lora", "r": 4, "targets": "q_proj|v_proj"}, checkpoint="blocks",
                          prefetch=False, mode="train", loss="causal_lm")
    t = a.to_dict()["training"]
    assert t["checkpoint"]["pattern"] == "blocks"
    # LoRA r=4 on q (d->d) and v (d->kv*hd): r*(in+out) per adapter per layer, in float32 (peft's default)
    # on a bfloat16 base (2 bytes per element).
    d, kv = 64, 2 * 16
    lora = 2 * (4 * (d + d) + 4 * (d + kv))
    assert a.trainable_params == lora
    assert a.param_bytes == 2 * (a.params - lora) + 4 * lora


def test_aten_export_is_concrete_or_refused():
    # make_fx records sizes as constants: symbolic dims would be silently wrong, so they are refused.
    with pytest.raises(torchcost.TorchcostError, match="method='aten' records sizes"):
        torchcost.analyze(TinyCNN(), ("B", 3, 8, 8), method="aten")
    a = torchcost.analyze(TinyCNN(), (4, 3, 8, 8), method="aten")
    b = torchcost.analyze(TinyCNN(), ("B", 3, 8, 8), set={"B": 4})
    assert a.macs == b.macs == 4 * 8 * 8 * 8 * 3 * 9 + 4 * 512 * 10
    assert a.params == b.params


def test_what_fx_cannot_trace_names_aten():
    # nn.MultiheadAttention branches on tensor attributes: torch.fx cannot trace it, make_fx can.
    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.mha = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            torch._assert(x.shape[-1] == 8, "width")  # a check: no op
            return self.mha(x, x, x, need_weights=False)[0]

    m = Attn()
    with pytest.raises(torchcost.TorchcostError, match="method='aten'"):
        torchcost.analyze(m, ("B", 5, 8))
    a = torchcost.analyze(m, (2, 5, 8), method="aten")
    assert a.params == sum(p.numel() for p in m.parameters()) and not a.unknown_ops


def test_strict_is_its_own_error(tmp_path):
    class Odd(nn.Module):
        def forward(self, x):
            return torch.special.i0(x) + 1

    with pytest.raises(torchcost.StrictError, match="without rules"):
        torchcost.analyze(Odd(), (2, 3), strict=True)
    a = torchcost.analyze(Odd(), (2, 3))
    assert a.unknown_ops and a.lower_bound


def test_arch_symbols_equal_cli_and_closed_form(cli):
    # config values in a symbol, its sample range a keyword: the library's AnalyzeArchConfig, as --arch-symbol.
    config = {"layers": 2, "hidden": "H*64", "heads": "H", "kv_heads": "H", "intermediate": 160, "vocab": 256}
    text = "layers=2,hidden=H*64,heads=H,kv_heads=H,intermediate=160,vocab=256"
    a = torchcost.analyze("llama", config=config, arch_symbols={"H": (1, 8)}, set={"H": 3})
    assert a == cli("--model", "llama", "--config", text, "--arch-symbol", "H=1:8", "--set", "H=3")
    assert a["schema"] == "torchcost.arch_config"
    assert a["arch_symbols"][0]["lo"] == 1 and a["arch_symbols"][0]["hi"] == 8 and a["arch_symbols"][0]["step"] == 1
    # h = 64 H, V = 256, I = 160, untied: embed and lm_head 2 V h, final norm h, per layer q, k, v, o 4 h^2
    # (kv_heads = heads), MLP 3 h I, norms 2 h.
    h = 64 * 3
    assert a["totals"]["params"]["value"] == 2 * 256 * h + h + 2 * (4 * h * h + 3 * h * 160 + 2 * h)
    # A range (its last value is HI), a (lo, hi, step) tuple and the command's text are the same keyword.
    b = torchcost.arch_config("llama", config=config, arch_symbols={"H": range(2, 17, 2)})
    assert b == torchcost.arch_config("llama", config=config, arch_symbols={"H": (2, 16, 2)})
    assert b == torchcost.arch_config("llama", config=config, arch_symbols={"H": "2:16:2"})
    assert b["arch_symbols"][0]["hi"] == 16 and b["arch_symbols"][0]["step"] == 2
    with pytest.raises(torchcost.TorchcostError, match="arch_symbols 'H=64:8'"):
        torchcost.analyze("llama", config=config, arch_symbols={"H": (64, 8)})
    with pytest.raises(torchcost.TorchcostError, match=r"arch_symbols: expected \(lo, hi\[, step\]\)"):
        torchcost.analyze("llama", config=config, arch_symbols={"H": 5})


def test_compare_equals_cli(cli):
    c = torchcost.compare("llama", ["full", "lora:r=4,targets=q_proj|v_proj"], config=TINY_LLAMA,
                          set={"S": 16}, budget="1GiB")
    exe_doc = cli("compare", "--model", "llama", "--config", ",".join("%s=%s" % kv for kv in TINY_LLAMA.items()),
                  "--set", "S=16", "--budget", "1GiB", "full", "lora:r=4,targets=q_proj|v_proj")
    assert c.to_dict()["rows"] == exe_doc["rows"]
    assert c["full"]["fits"] and c["full"]["max_batch"] > 0
    assert "lora:r=4" in c.table()


def test_gpu_times_each_sweep_point_and_compare_row(cli):
    # An analysis with a GPU and B free is timed per sweep point; each point equals an analysis with that B
    # set (timed by the library at its bindings), and the command's sweep and compare agree.
    a = torchcost.analyze("llama", config=TINY_LLAMA, set={"S": 16}, gpu="h100-sxm")
    points = a.sweep(B=[1, 4])
    for p in points:
        one = torchcost.analyze("llama", config=TINY_LLAMA, set={"S": 16, "B": p["bindings"]["B"]}, gpu="h100-sxm")
        t = one.to_dict()["time"]
        assert p["time"]["step_seconds"] == t["step_seconds"]
        assert p["time"]["unit"] == "tokens"
        assert p["time"]["items_per_second"] == pytest.approx(t["throughput"]["per_second"])
    config = ",".join("%s=%s" % kv for kv in TINY_LLAMA.items())
    exe = cli("--model", "llama", "--config", config, "--set", "S=16", "--sweep", "B=1,4", "--gpu", "h100-sxm")
    assert [p["time"] for p in exe["points"]] == [p["time"] for p in points]
    c = torchcost.compare("llama", ["full"], config=TINY_LLAMA, set={"S": 16, "B": 4}, gpu="h100-sxm")
    assert c["full"]["time"]["step_seconds"] == points[1]["time"]["step_seconds"]


def test_compare_generate_equals_cli(cli, tmp_path):
    # Two settings of the command's compare --mode generate: B searched under a budget (S, T set), with weight
    # formats and a cache dtype; then B set and S searched, on a config.json.
    text = ",".join("%s=%s" % kv for kv in TINY_LLAMA.items())
    rows = ["full", "int8", "int4:cache=fp8", "nf4"]
    c = torchcost.compare("llama", rows, config=TINY_LLAMA, mode="generate", set={"S": 32, "T": 8},
                          budget="4MiB", chart=str(tmp_path / "g.svg"))
    doc = cli("compare", "--model", "llama", "--config", text, "--mode", "generate", "--set", "S=32", "--set", "T=8",
              "--budget", "4MiB", *rows)
    assert c.to_dict()["rows"] == doc["rows"] and c.generation and c.to_dict()["batch_symbol"] == "B"
    # 2 (keys, values) x 2 layers x 2 KV heads x head_dim 16 x (S + T) x B=1 x 4 bytes (fp32), fp8 1 byte.
    assert c["full"]["kv_cache_bytes"] == 2 * 2 * 2 * 16 * (32 + 8) * 4
    assert c["int4:cache=fp8"]["kv_cache_bytes"] == 2 * 2 * 2 * 16 * (32 + 8) * 1
    assert c["full"]["max_batch"] > 0 and "kv_cache" in c["full"]["at_peak"]
    assert "kv_cache" in open(tmp_path / "g.svg").read()
    assert "decode peak" in c.table() and "int4:cache=fp8" in c.table()
    config_json = str(tmp_path / "config.json")
    with open(config_json, "w") as f:
        json.dump({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
                   "intermediate_size": 160, "vocab_size": 256, "num_hidden_layers": 2}, f)
    s = torchcost.compare(config_json, ["full", "fp8:cache=bf16"], mode="generate", set={"B": 2, "T": 4},
                          budget="2MiB", param_dtype="bf16")
    doc = cli("compare", "--model", config_json, "--mode", "generate", "--set", "B=2", "--set", "T=4",
              "--budget", "2MiB", "--param-dtype", "bf16", "full", "fp8:cache=bf16")
    assert s.rows == doc["rows"] and s.to_dict()["batch_symbol"] == "S" and s["full"]["max_batch"] > 0
    # A sweep of the context: a row per configuration and point, as the command's.
    w = torchcost.compare("llama", ["full", "int8"], config=TINY_LLAMA, mode="generate", set={"T": 8},
                          sweep={"S": [32, 64]}, budget="4MiB")
    doc = cli("compare", "--model", "llama", "--config", text, "--mode", "generate", "--set", "T=8",
              "--sweep", "S=32,64", "--budget", "4MiB", "full", "int8")
    assert w.rows == doc["rows"] and [(r["config"], r["at"]["S"]) for r in w.rows] == [
        ("full", 32), ("full", 64), ("int8", 32), ("int8", 64)]
    assert w.rows[0]["max_batch"] > w.rows[1]["max_batch"] > 0


def test_compare_generate_errors():
    with pytest.raises(torchcost.TorchcostError, match=r"^compare int3: 'int3' is not a serving configuration"):
        torchcost.compare("llama", ["full", "int3"], config=TINY_LLAMA, mode="generate", set={"S": 8, "T": 2})
    with pytest.raises(torchcost.TorchcostError, match=r"^batch_symbol H: "):
        torchcost.compare("llama", ["full"], config=TINY_LLAMA, mode="generate", set={"S": 8, "T": 2},
                          batch_symbol="H")
    with pytest.raises(torchcost.TorchcostError, match=r"^input_shapes: mode='generate'"):
        torchcost.compare("llama", ["full"], ("B", "S"), config=TINY_LLAMA, mode="generate")
    with pytest.raises(torchcost.TorchcostError, match=r"^configs: mode='generate' takes serving"):
        torchcost.compare("llama", [("lora", {"r": 8})], config=TINY_LLAMA, mode="generate")
    with pytest.raises(torchcost.TorchcostError, match=r"^unknown option 'budjet'"):
        torchcost.compare("llama", ["full"], config=TINY_LLAMA, mode="generate", budjet="1GiB")


def test_compare_on_a_module_equals_cli(cli, tmp_path):
    m = TinyCNN()
    path = str(tmp_path / "cnn.json")
    torchcost.export_graph(m, ("B", 3, 8, 8), path)
    c = torchcost.compare(m, ["full", "lora:r=2,targets=fc"], ("B", 3, 8, 8), set={"B": 2}, optimizer="adam")
    doc = cli("compare", path, "--input", "B,3,8,8", "--set", "B=2", "--optimizer", "adam", "full",
              "lora:r=2,targets=fc", "--torch-version", THIS_TORCH)
    assert c.rows == doc["rows"]
    full = torchcost.analyze(m, ("B", 3, 8, 8), set={"B": 2}, optimizer="adam")
    assert c["full"]["peak"] == full.peak_bytes and c["full"]["at_peak"] == full.memory
    # LoRA on fc (512 -> 10), r=2: A is 2x512, B is 10x2; the rest frozen.
    assert c["lora:r=2,targets=fc"]["trainable_params"] == 2 * 512 + 10 * 2


def test_renderings(tmp_path):
    a = torchcost.analyze(TinyCNN(), (2, 3, 8, 8))
    points = a.timeline
    assert max(sum(p[c] for c in a.memory) for p in points) == a.peak_bytes
    assert {p["phase"] for p in points} == {"setup", "forward", "backward", "optimizer"}
    svg = a.timeline_svg(str(tmp_path / "t.svg"))
    assert svg.startswith("<svg") and open(tmp_path / "t.svg").read() == svg
    s = a.summary()
    assert "Total params: %s" % format(a.params, ",") in s and "opt" in s
    tree = a.tree(depth=1)
    assert "Module tree" in tree and "TinyCNN" in tree
    assert torchcost.analyze(TinyCNN(), (2, 3, 8, 8), depth=1, top=0).tree() == a.tree(depth=1, top=0)
    assert "(conv): Conv2d" in a.tree(depth=1) and "(conv)" not in a.tree(depth=0)
    sym = torchcost.analyze(TinyCNN(), ("B", 3, 8, 8))
    with pytest.raises(torchcost.TorchcostError, match="B"):
        sym.timeline_svg()


def test_meta_7b_module_in_little_memory():
    # A LLaMA-7B-like nn.Module built on the meta device: exported and analysed without its 27 GB of weights.
    code = (
        "import resource, sys; sys.path.insert(0, %r)\n"
        "import torchcost\n"
        "from llama_like import LlamaLike\n"
        "m = LlamaLike(device='meta')\n"
        "a = torchcost.analyze(m, 'B,S:int64', set={'B': 1, 'S': 2048}, examples={'S': 8})\n"
        "n = sum(p.numel() for p in m.parameters())\n"
        "print(a.params, n, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n" % HERE)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.returncode == 0, out.stderr
    params, n, rss_kib = map(int, out.stdout.split())
    assert params == n == 6738415616
    assert rss_kib < 2 * 1024 * 1024, "RSS %d MiB" % (rss_kib // 1024)


@pytest.mark.parametrize("optimizer", ["adam", "sgd_momentum"])
def test_step_memory_equals_pytorch_measurement(tmp_path, optimizer):
    # PyTorch measures one real CPU training step of LeNet-5 (tools/measure_step.py, docs/measuring.md):
    # parameter, gradient and optimizer-state storages, what autograd saves, and the allocator's peak.
    sys.path.insert(0, os.path.join(REPO, "tools"))
    sys.path.insert(0, os.path.join(REPO, "tests", "python"))
    import make_fixtures
    import measure_step
    import torchcost_cli

    ref = measure_step.measure("lenet5", 2, optimizer, "train", fixtures=str(tmp_path))
    model, shapes = make_fixtures.build_model("lenet5")
    a = torchcost.analyze(model, [2] + list(shapes[0][1:]), optimizer=optimizer, device="cpu")
    assert a.param_bytes == ref["param_bytes"]
    assert a.category_max["grad"] == ref["grad_bytes"]
    assert a.category_max["opt"] == ref["opt_bytes"]
    assert a.saved_bytes == ref["act_bytes"]
    # NB: rules/conv.yaml follows oneDNN's AVX-512 layouts; its AVX2 kernels pad LeNet-5's 6 channels to 8, not
    # 16 (tests/python/test_training.py): on an AVX2-only AMD EPYC the peak came out 12,800 bytes (1.28%) over.
    bound = 0.01 if torchcost_cli.oracle_has_avx512() else 0.02
    assert abs(a.peak_bytes - ref["peak_bytes"]) <= bound * ref["peak_bytes"], (a.peak_bytes, ref["peak_bytes"])


def test_generate_replays_the_whole_generation_on_the_allocator(cli):
    # generate(allocator="cuda", gpu=...) is the command's --mode generate --allocator cuda --gpu: the same JSON,
    # with the whole generate() replayed under the GPU's memory (80 GiB less the default context: an H200's
    # measured 787283968 bytes outside the allocator and 69206016 of cuBLAS's workspaces, cuda_context.cc).
    g = torchcost.generate("llama", config=TINY_LLAMA, set={"B": 2, "S": 32, "T": 8}, allocator="cuda", gpu="h100")
    text = ",".join("%s=%s" % kv for kv in TINY_LLAMA.items())
    doc = cli("--model", "llama", "--config", text, "--mode", "generate", "--set", "B=2,S=32,T=8",
              "--allocator", "cuda", "--gpu", "h100")
    whole = g["generation"]["allocator"]["generate"]
    assert whole == doc["generation"]["allocator"]["generate"]
    assert whole["memory_limit"] == 80 * 2 ** 30 - (787283968 + 69206016) and whole["out_of_memory_step"] is None
    assert 0 <= whole["allocated_peak_step"] <= 7 and whole["allocated_peak"] > 0


def test_profiler_reads_distributed_data_parallel(tmp_path):
    # A DistributedDataParallel model is one rank of it: its bucket_cap_mb, gradient_as_bucket_view and
    # process group size become shard="ddp" and its options (a one-process gloo group here).
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("gloo", init_method="file://" + str(tmp_path / "store"), rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        m = TinyCNN()
        ddp = DistributedDataParallel(m, bucket_cap_mb=0.5, gradient_as_bucket_view=True)
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        x = torch.randn(2, 3, 8, 8)
        got = torchcost.Profiler(ddp, opt).profile(x).to_dict()
        want = torchcost.analyze(m, [x], optimizer="sgd", shard="ddp", world=1, ddp_bucket=0.5,
                                 ddp_bucket_view=True).to_dict()
        assert got["sharding"] == want["sharding"]
        assert got["sharding"]["strategy"] == "ddp"
        assert got["training"]["memory"]["peak"] == want["training"]["memory"]["peak"]
        with pytest.raises(torchcost.TorchcostError, match="^shard: given twice"):
            torchcost.Profiler(ddp, opt, shard="zero2")
    finally:
        dist.destroy_process_group()


def test_a_live_module_is_modelled_on_its_own_torch():
    # An nn.Module trains on the torch that holds it: analyze() models that torch's autograd (Debian's 1.13 here:
    # mean.dim keeps its input, x.pow(2), [1, 16, 64] float32 = 4096 bytes); a family or a file has no torch of
    # its own and gets the default, 2.x; the keyword wins over both.
    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(64))

        def forward(self, x):
            return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6))

    here = THIS_TORCH
    mine = torchcost.analyze(Norm(), (1, 16, 64), inputs_require_grad=True)
    assert mine.to_dict()["training"]["torch_version"] == here
    other = torchcost.analyze(Norm(), (1, 16, 64), inputs_require_grad=True,
                              torch_version="2" if here == "1.13" else "1.13")
    kept = 1 * 16 * 64 * 4  # x^2, saved by 1.13's MeanBackward1 only.
    assert mine.saved_bytes - other.saved_bytes == (kept if here == "1.13" else -kept)
    family = torchcost.analyze("llama", config=TINY_LLAMA, set={"B": 1, "S": 16})
    assert family.to_dict()["training"]["torch_version"] == "2"
