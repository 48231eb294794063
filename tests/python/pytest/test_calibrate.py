"""torchcost.calibrate on CPU: a tiny MLP's real Adam step measured by PyTorch beside torchcost's prediction.

The model: Linear(32, 64) -> ReLU -> Linear(64, 10), float32, batch B = 4, Adam.
The expected bytes are derived here from the model's shapes (not taken from either side):
  params  = 4 * (32*64 + 64 + 64*10 + 10) = 11048        (float32)
  grads   = params                                       (every parameter trains)
  opt     = 2 * params + 4 * 4 = 22112                   (exp_avg, exp_avg_sq; torch 1.13's `step`: a
                                                          float32 0-dim tensor per parameter, 4 parameters)
  act     = 4 * B*32 + 4 * B*64 = 1536                   (addmm saves the input and the ReLU's output;
                                                          the ReLU saves its output: the same storage)
  input   = 4 * B*32 = 512
  forward peak = params + opt + input (the state before the step) + the first Linear's output and the
          ReLU's output, both alive as the ReLU returns: 2 * 4 * B*64 = 2048 -> 35720
  backward peak = params + opt + input + grads (all of them, as the first Linear's backward returns)
          + the gradient of the first Linear's output (4 * B*64) + the output (4 * B*10) and the loss (4),
          which the step holds, + the loss's gradient (4: torch.autograd.backward holds it until it
          returns) -> 45912
"""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from torchcost import calibrate  # noqa: E402

B = 4
PARAMS = 4 * (32 * 64 + 64 + 64 * 10 + 10)
EXPECTED = {"param": PARAMS, "buffer": 0, "grad": PARAMS, "opt": 2 * PARAMS + 4 * 4, "act": 4 * B * 32 + 4 * B * 64}
FORWARD_PEAK = PARAMS + EXPECTED["opt"] + 4 * B * 32 + 2 * 4 * B * 64
BACKWARD_PEAK = 2 * PARAMS + EXPECTED["opt"] + 4 * B * 32 + 4 * B * 64 + 4 * B * 10 + 4 + 4
# NB: test_training.py's tolerance for the whole step's peak; the categories and the forward are exact.
PEAK_TOLERANCE = 0.05

MODEL_PY = """
import torch
from torch import nn


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
"""


def _run(tmp_path, *args):
    (tmp_path / "tiny_mlp.py").write_text(MODEL_PY)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-m", "torchcost.calibrate", *args], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=120)


def test_cpu_mlp_adam(tmp_path):
    out = tmp_path / "calib.json"
    proc = _run(tmp_path, "tiny_mlp:mlp", "--input", "B,32", "--set", "B=%d" % B, "--optimizer", "adam",
                "--device", "cpu", "--warmup", "1", "--steps", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "torchcost.calibration" and doc["version"] == 1
    assert doc["device"]["type"] == "cpu" and doc["device"]["torch"] == torch.__version__
    pred, meas = doc["predicted"], doc["measured"]
    for k, v in EXPECTED.items():
        assert meas["category_bytes"][k] == v, k
        assert pred["category_bytes"][k] == v, k
    assert meas["input_bytes"] == 4 * B * 32
    assert meas["phase_peak_bytes"]["forward"] == FORWARD_PEAK
    assert pred["phase_peak_bytes"]["forward"] == FORWARD_PEAK
    assert meas["phase_peak_bytes"]["backward"] == BACKWARD_PEAK
    assert pred["phase_peak_bytes"]["backward"] == BACKWARD_PEAK
    # The whole step: at least the state plus the gradients, and torchcost within the oracle's tolerance.
    assert meas["peak_bytes"] >= PARAMS + EXPECTED["opt"] + EXPECTED["grad"] + 4 * B * 32
    assert abs(pred["peak_bytes"] - meas["peak_bytes"]) <= PEAK_TOLERANCE * meas["peak_bytes"]
    assert meas["peak_bytes"] == max(meas["phase_peak_bytes"].values())
    assert meas["steps"] == 3 and meas["step_seconds"] > 0
    assert set(meas["phase_seconds"]) == {"forward", "backward", "optimizer"}
    assert 0 < meas["step_seconds_min"] <= meas["step_seconds"]
    # Per operator, the outermost ranges of one profiled step: two Linear modules, one Adam step.
    ops = meas["op_seconds"]
    assert ops["aten::linear"]["count"] == 2 and ops["Optimizer.step#Adam.step"]["count"] == 1
    assert ops["autograd::engine::evaluate_function: AddmmBackward0"]["count"] == 2
    assert all(e["seconds"] > 0 for e in ops.values())
    # The side-by-side table: one row per category and phase, the ratio beside.
    assert "category act" in proc.stdout and "phase backward" in proc.stdout and "ratio" in proc.stdout
    assert "aten::linear" in proc.stdout


def test_module_in_process_sgd():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    doc = calibrate.calibrate(model, ["B,32"], optimizer="sgd", bindings={"B": B}, warmup=1, steps=1)
    assert doc["model"] == "Sequential"
    assert doc["measured"]["category_bytes"] == dict(EXPECTED, opt=0)
    assert doc["predicted"]["category_bytes"] == dict(EXPECTED, opt=0)


def test_torchscript_file_sgd_momentum(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    path = str(tmp_path / "mlp.pt")
    torch.jit.save(torch.jit.trace(model, torch.randn(B, 32)), path)
    doc = calibrate.calibrate(path, ["%d,32" % B], optimizer="sgd_momentum", warmup=1, steps=1)
    expected = dict(EXPECTED, opt=PARAMS)  # momentum_buffer: one per parameter, its size.
    assert doc["measured"]["category_bytes"] == expected
    assert doc["predicted"]["category_bytes"] == expected


# Families run as torchcost.reference's plain-torch modules. GPT-2 (layers L=1, hidden h=32, heads 2, vocab V=64,
# context 16), its parameters derived from the architecture: wte V*h + wpe 16*h; per layer ln_1 and ln_2 2*2h,
# c_attn h*3h + 3h, c_proj h*h + h, c_fc h*4h + 4h, mlp c_proj 4h*h + h; ln_f 2h; the head tied to wte.
H, V, CTX = 32, 64, 16
GPT2_PARAMS = V * H + CTX * H + (4 * H + H * 3 * H + 3 * H + H * H + H + H * 4 * H + 4 * H + 4 * H * H + H) + 2 * H
# LLaMA (layers 1, hidden 32, heads 4, kv_heads 2, intermediate 64, vocab 64, untied): embed V*h; per layer
# q h*h, k and v h*(h/2) each (two KV heads of 8), o h*h, gate and up h*64 each, down 64*h, two RMSNorms 2h;
# the final norm h; lm_head h*V.
LLAMA_PARAMS = V * H + (H * H + 2 * H * (H // 2) + H * H + 3 * H * 64 + 2 * H) + H + H * V
# torchvision's resnet18 at 10 classes: resnet18's 11,689,512 parameters (torchvision's model card) less
# its 1000-class fc (512 * 1000 + 1000) plus a 10-class one (512 * 10 + 10).
RESNET18_10 = 11689512 - (512 * 1000 + 1000) + (512 * 10 + 10)


@pytest.mark.parametrize("spec, config, bindings, params", [
    ("gpt2", "layers=1,hidden=%d,heads=2,vocab=%d,context=%d" % (H, V, CTX), {"B": 2, "S": 8}, GPT2_PARAMS),
    ("llama", "layers=1,hidden=%d,heads=4,kv_heads=2,intermediate=64,vocab=%d,tie=false" % (H, V),
     {"B": 2, "S": 8}, LLAMA_PARAMS),
    ("resnet", {"depth": 18, "classes": 10, "image_size": 32}, {"B": 2}, RESNET18_10),
])
def test_family(spec, config, bindings, params):
    doc = calibrate.calibrate(spec, config=config, optimizer="adam", bindings=bindings, warmup=1, steps=1)
    pred, meas = doc["predicted"], doc["measured"]
    assert meas["category_bytes"]["param"] == 4 * params and pred["category_bytes"]["param"] == 4 * params
    for k in ("param", "buffer", "grad", "opt", "act"):
        assert pred["category_bytes"][k] == meas["category_bytes"][k], k
    assert abs(pred["peak_bytes"] - meas["peak_bytes"]) <= PEAK_TOLERANCE * meas["peak_bytes"]
    assert doc["loss"] == "sum" and ("attn=eager" in doc["config"]) == (spec != "resnet")


def test_hf_config_json(tmp_path):
    """A Mistral config.json (sliding window 4 < S = 8), run as torchcost.reference.hf_decoders' module."""
    cfg = {"model_type": "mistral", "hidden_size": H, "intermediate_size": 64, "num_hidden_layers": 1,
           "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": V, "sliding_window": 4,
           "rms_norm_eps": 1e-6, "tie_word_embeddings": False}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    doc = calibrate.calibrate(str(path), config="num_hidden_layers=2", bindings={"B": 2, "S": 8}, warmup=1, steps=1)
    two_layers = LLAMA_PARAMS + (LLAMA_PARAMS - 2 * V * H - H)  # Mistral's layers are LLaMA's.
    assert doc["measured"]["category_bytes"]["param"] == 4 * two_layers
    assert doc["predicted"]["category_bytes"] == doc["measured"]["category_bytes"]
    assert doc["inputs"] == [{"shape": [2, 8], "dtype": "int64"}]


@pytest.mark.parametrize("args, message", [
    (["bert"], "model: family bert has no plain-torch module for calibrate to run"),
    (["gpt2", "--config", "layers=1,attn=sdpa"], "config attn=sdpa: calibrate runs eager attention"),
    (["llama", "--config", "layers=1,experts=4"], "config experts=4: calibrate's llama module has no such setting"),
    (["gpt2", "--input", "2,8"], "input_shapes: gpt2 builds its own inputs"),
    (["tiny_mlp:mlp", "--input", "2,32", "--config", "layers=1"], "config: only for a family"),
    (["nope", "--set", "B=1"], "unknown family or preset"),
    (["gpt2", "--config", "layers=1", "--set", "B=1"], "set: gpt2's inputs need a value of every symbol: unbound "
                                                       "symbol 'S'"),
    (["no_such_module:f", "--input", "2,8"], "model: cannot import no_such_module:f"),
    (["tiny_mlp:mlp", "--input", "B,32"], "set: the input's symbol B needs a value"),
    (["tiny_mlp:mlp", "--input", "2,32", "--device", "tpu"], "device: expected cpu or cuda"),
    (["tiny_mlp:mlp", "--input", "2,32", "--set", "B"], "set: expected NAME=INT"),
] + ([] if torch.cuda.is_available() else
     [(["tiny_mlp:mlp", "--input", "2,32", "--device", "cuda"], "device: cuda is not available")]))
def test_errors(tmp_path, monkeypatch, capsys, args, message):
    (tmp_path / "tiny_mlp.py").write_text(MODEL_PY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert calibrate.main([*args, "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "x.json").exists()


def test_cuda_counters_per_phase(monkeypatch):
    """The CUDA path's bookkeeping, with torch.cuda's counters faked (no GPU here): peaks reset per phase."""
    from torchcost import _measure

    state = {"alloc": 0, "peak": 0, "reserved": 0, "resets": 0}

    def alloc(n):
        state["alloc"] += n
        state["peak"] = max(state["peak"], state["alloc"])
        state["reserved"] = max(state["reserved"], -(-state["alloc"] // 1000) * 1000)  # 1000-byte segments

    def reset(_dev):
        state["resets"] += 1
        state["peak"] = state["alloc"]

    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", reset)
    monkeypatch.setattr(torch.cuda, "max_memory_allocated", lambda _d: state["peak"])
    monkeypatch.setattr(torch.cuda, "max_memory_reserved", lambda _d: state["reserved"])
    monkeypatch.setattr(torch.cuda, "memory_stats", lambda _d: {"num_alloc_retries": 0, "x": 1.5})
    run = [("forward", lambda s: (alloc(700), alloc(-200))),   # 500 live, peak 700
           ("backward", lambda s: (alloc(900), alloc(-1000))),  # 400 live, peak 1400
           ("optimizer", lambda s: alloc(50))]                  # 450 live, peak 450 after the reset
    m = _measure._cuda_memory(run, "cuda")
    assert state["resets"] == 3
    assert m["phase_peak_bytes"] == {"forward": 700, "backward": 1400, "optimizer": 450}
    assert m["peak_bytes"] == 1400 and m["reserved_peak_bytes"] == 2000
    assert m["memory_stats"] == {"num_alloc_retries": 0}


def test_one_thread_pins_openblas():
    """_measure.one_thread sets OpenBLAS's own pool to one thread, which torch.set_num_threads does not reach,
    and gives it back after. Skipped where torch's BLAS is not an OpenBLAS library this process loaded."""
    from torchcost import _measure

    torch.mm(torch.randn(4, 4), torch.randn(4, 4))  # Loads the BLAS, if torch defers it.
    setters = _measure.openblas_thread_setters()
    if not setters:
        pytest.skip("no OpenBLAS library in this process")
    _, get_threads = setters[0]
    before = get_threads()
    with _measure.one_thread():
        assert torch.get_num_threads() == 1
        assert [get() for _, get in setters] == [1] * len(setters)
    assert get_threads() == before


def test_hold_freed_memory_keeps_pages_for_the_next_step():
    """After hold_freed_memory, a repeated training step faults few pages in once warm: glibc kept its memory.

    The step: Conv2d(3, 16) and Conv2d(16, 3) on 4 x 3 x 384 x 384, Adam; its activation is 4 * 16 * 384^2 * 4 B
    = 36 MiB (9,216 pages of 4 KiB), above glibc's largest dynamic mmap threshold (32 MiB), so without the
    setting every step maps it afresh: measured 114,028 faults a step, run after run. With it, steps 4 to 6 (after
    3 warm steps) faulted none in most runs and one tensor's 9,216 pages in some (measured; with 9 MiB activations
    instead, the default itself faulted in some runs and not others, as the fit test's CNN did). The bound: the
    three held steps together fault less than a quarter of one default step. Run in fresh interpreters: the
    setting lasts for the process. Skipped off glibc.
    """
    import resource

    if not hasattr(resource, "RUSAGE_THREAD"):
        pytest.skip("no per-thread rusage")
    script = (
        "import resource, sys, torch\n"
        "from torch import nn\n"
        "from torchcost import _measure\n"
        "held = _measure.hold_freed_memory() if sys.argv[1] == 'hold' else None\n"
        "torch.manual_seed(0)\n"
        "torch.set_num_threads(1)\n"
        "m = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1))\n"
        "run = _measure.phase_runner(m, [torch.randn(4, 3, 384, 384)], torch.optim.Adam(m.parameters()))\n"
        "faults = []\n"
        "for _ in range(6):\n"
        "    f = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt\n"
        "    s = {}\n"
        "    for _, fn in run:\n"
        "        fn(s)\n"
        "    del s\n"
        "    faults.append(resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - f)\n"
        "print(held, *faults[3:])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = {}
    for mode in ("hold", "default"):
        proc = subprocess.run([sys.executable, "-c", script, mode], env=env, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        out[mode] = proc.stdout.split()
    if out["hold"][0] != "True":
        pytest.skip("mallopt is not glibc's here")
    activation_pages = 4 * 16 * 384 * 384 * 4 // resource.getpagesize()
    held, default = list(map(int, out["hold"][1:])), list(map(int, out["default"][1:]))
    # The faults this guards against, seen without the setting: the activation's pages each step. NB: where
    # transparent huge pages are always on, a fault maps 2 MiB (512 pages of 4 KiB) at once.
    assert min(default) >= activation_pages // 512, out
    assert sum(held) < min(default) / 4, out
