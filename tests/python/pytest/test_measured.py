"""The GPU run's pipeline on CPU: tools/measure_device.py measures, `calibrate --measured` predicts and fits.

On a GPU the same two commands give the allocator's and the time's checks (docs/calibration.md, "On a GPU, in
one run"); here the measuring script runs on the CPU for tiny models, and the CUDA side of the comparison is fed
a document whose CUDA numbers are set by the test.

LeNet-5 (tools/make_fixtures.py), float32, Adam; bytes derived from its layers:
  conv 1->6 5x5: 6*25 + 6 = 156; conv 6->16 5x5: 16*6*25 + 16 = 2416; conv 16->120 5x5: 120*16*25 + 120 = 48120;
  linear 120->84: 120*84 + 84 = 10164; linear 84->10: 84*10 + 10 = 850; sum 61706 parameters, 10 tensors
  params = grads = 4 * 61706 = 246824; Adam's states = 2 * params + 10 * 4 (`step`, a float32 scalar each)
"""

import copy
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from torchcost import measured  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
LENET_PARAMS = 4 * (156 + 2416 + 48120 + 10164 + 850)
LENET_OPT = 2 * LENET_PARAMS + 10 * 4


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    """The measuring script's output on this CPU: gpt2 and llama (families; llama's module is hf_reference.py's,
    loaded with its decoder_layers.py by path) and LeNet-5 (a module), tiny, Adam single."""
    out = tmp_path_factory.mktemp("measured")
    proc = subprocess.run([sys.executable, os.path.join(REPO, "tools", "measure_device.py"), "--device", "cpu",
                           "--size", "tiny", "--models", "gpt2,llama,lenet5", "--impls", "single", "--warmup", "1",
                           "--steps", "2", "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    path = out / "measured-cpu.json"
    return path, json.loads(path.read_text())


def test_measure_script_on_cpu(raw):
    _, doc = raw
    assert doc["format"] == "torchcost.device_measurements"
    assert doc["device"]["type"] == "cpu" and doc["context"] is None
    runs = {r["name"]: r for r in doc["runs"]}
    assert sorted(runs) == ["gpt2-single", "lenet5-single", "llama-single"]
    assert all("error" not in r for r in runs.values()), [r.get("error") for r in runs.values()]
    m = runs["lenet5-single"]["measured"]
    assert (m["param_bytes"], m["grad_bytes"], m["opt_bytes"]) == (LENET_PARAMS, LENET_PARAMS, LENET_OPT)
    # The CUDA-only numbers are absent, and say so.
    assert m["peak_bytes"] is None and m["reserved_peak_bytes"] is None and "reserved_peak_bytes" in m["cuda_only"]
    for p in ("forward", "backward", "optimizer"):
        assert m["phase_seconds"][p] > 0
    assert m["op_self_seconds"]["forward"], "the profiler's per-operator times"


def test_calibrate_measured_on_cpu(raw, tmp_path):
    path, _ = raw
    fit = tmp_path / "fit.json"
    proc = subprocess.run([sys.executable, "-m", "torchcost.calibrate", "--measured", str(path), "--out", str(fit)],
                          cwd=REPO, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "max_memory_allocated / max_memory_reserved are CUDA's" in proc.stdout
    doc = json.loads(fit.read_text())
    runs = {r["model"]: r for r in doc["runs"]}
    rows = {name: (p, m) for name, p, m in runs["lenet5-single"]["memory"]}
    assert rows["category param"] == (LENET_PARAMS, LENET_PARAMS)
    assert rows["category opt"] == (LENET_OPT, LENET_OPT)
    assert [s["name"] for s in runs["gpt2-single"]["fit"]["samples"]] == [
        "gpt2-single forward", "gpt2-single backward", "gpt2-single optimizer"]
    assert len(doc["fit"]["samples"]) == 9 and doc["roofline"]["device"] == "cpu"
    # llama's parameters and Adam's states (exp_avg, exp_avg_sq and torch 1.13's float32 step per parameter),
    # measured on the module and predicted from the family's config.
    rows = {name: (p, m) for name, p, m in runs["llama-single"]["memory"]}
    assert rows["category param"][0] == rows["category param"][1] > 0
    assert rows["category opt"][0] == rows["category opt"][1] > 2 * rows["category param"][1]
    # The file is a calibration file the analysis reads.
    import torchcost

    a = torchcost.analyze("gpt2", config=runs["gpt2-single"]["config"], loss="sum", set={"B": 2, "S": 16},
                          device="cpu", gpu_file=str(fit))
    assert a.to_dict()["time"]["step_seconds"] > 0


def test_cuda_side_with_set_numbers(raw, tmp_path):
    """The CUDA rows: measured peaks less the resident bytes, the measured context given to the analysis, the
    allocator's settings followed, the GPU found by its name."""
    _, doc = raw
    doc = copy.deepcopy(doc)
    doc["device"] = {"type": "cuda", "name": "NVIDIA H100 80GB HBM3", "torch": "2.x", "cuda": "13.0",
                     "alloc_conf": "expandable_segments:True"}
    doc["context"] = {"used_bytes_at_init": 500 << 20, "total_bytes": 80 << 30}
    doc["runs"] = [r for r in doc["runs"] if r["model"] == "lenet5"]
    m = doc["runs"][0]["measured"]
    m.update(resident_allocated_bytes=32 << 20, resident_reserved_bytes=34 << 20, peak_bytes=(32 << 20) + 7000,
             reserved_peak_bytes=(34 << 20) + (2 << 20), outside_allocator_bytes=531 << 20,
             phase_peak_bytes={"forward": (32 << 20) + 1, "backward": (32 << 20) + 2, "optimizer": (32 << 20) + 3},
             warm_cache={"peak_bytes": (32 << 20) + 9000, "reserved_peak_bytes": (34 << 20) + (4 << 20)},
             kernels={"forward": 9, "backward": 12, "optimizer": 110}, resident_segments=1,
             memory_stats={"segment.all.current": 4, "num_alloc_retries": 0})
    path = tmp_path / "raw.json"
    path.write_text(json.dumps(doc))
    out = measured.compare(str(path), root=REPO)
    run = out["runs"][0]
    rows = {name: (p, v) for name, p, v in run["memory"]}
    alloc = run["predicted"]["allocator"]
    assert rows["allocated peak"] == (alloc["allocated_peak"], 7000)
    assert rows["reserved peak"] == (alloc["reserved_peak"], 2 << 20)
    assert rows["device (reserved + context)"] == (alloc["device_peak"], (2 << 20) + (531 << 20))
    assert rows["phase backward (exact / blocks)"][1] == 2
    assert rows["warm cache: reserved peak"][1] == 4 << 20
    assert rows["segments"] == (alloc["segments"], 3)
    assert alloc["context_bytes"] == 531 << 20 and alloc["expandable_segments"] is True
    assert out["roofline"] == {"device": "cuda", "gpu": "h100"}
    text = measured.table(out)
    assert "largest deviation of the allocated and reserved peaks" in text
    assert "measured (the device's kernels): forward 9, backward 12, optimizer 110" in text


def test_gpu_names():
    assert measured.gpu_of("NVIDIA H100 80GB HBM3") == "h100"
    assert measured.gpu_of("NVIDIA H100 PCIe") == "h100-pcie"
    assert measured.gpu_of("NVIDIA H200") == "h200"
    assert measured.gpu_of("NVIDIA A100-SXM4-80GB") == "a100-80gb"
    assert measured.gpu_of("NVIDIA A100-SXM4-40GB") == "a100"
    assert measured.gpu_of("Tesla T4") is None
    with pytest.raises(torchcost_error()):
        measured.alloc_settings("garbage_collection_threshold:0.6")
    assert measured.alloc_settings("expandable_segments:True,max_split_size_mb:128") == {
        "expandable_segments": True, "max_split_size_mb": 128}


def torchcost_error():
    from torchcost import TorchcostError

    return TorchcostError


def test_kernels_are_grouped_by_what_launched_them():
    # tools/measure_device.py's kernels_by_launcher on a linear layer's step, as torch.profiler lists it on CUDA:
    # each kernel under the CPU event of the operator that launched it (FunctionEvent.kernels), each event under
    # the range it ran in (cpu_parent). NB: events built here, not profiled: the profiler nests events by their
    # timestamps, which on a loaded machine can leave a microsecond-long aten::addmm outside its aten::linear.
    # The backward's two products (grad @ W, grad^T @ x) and the bias's sum belong to their autograd node; the
    # forward's aten::addmm to the outermost operator around it, aten::linear.
    import importlib.util
    import types

    spec = importlib.util.spec_from_file_location("measure_device_k", os.path.join(REPO, "tools", "measure_device.py"))
    md = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(md)

    def event(name, parent=None, kernels=0):
        return types.SimpleNamespace(name=name, cpu_parent=parent, kernels=["k"] * kernels)

    linear = event("aten::linear")
    relu = event("aten::relu")
    forward = [linear, event("aten::t", linear), event("aten::addmm", linear, 1), relu,
               event("aten::clamp_min", relu, 1), event("cudaLaunchKernel")]
    f = md.kernels_by_launcher(forward)
    assert f["aten::linear"] == {"calls": 1, "kernels": 1, "ops": {"aten::addmm": 1}}
    assert f["aten::relu"] == {"calls": 1, "kernels": 1, "ops": {"aten::clamp_min": 1}}
    assert set(f) == {"aten::linear", "aten::relu"}  # inner operators and runtime calls are no launchers
    node = event("autograd::engine::evaluate_function: AddmmBackward0")
    inner = event("AddmmBackward0", node)
    acc = event("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad")
    backward = [node, inner, event("aten::mm", inner, 1), event("aten::t", inner), event("aten::mm", inner, 1),
                event("aten::sum", inner, 1), event("aten::add", node, 1), acc,
                event("torch::autograd::AccumulateGrad", acc)]
    b = md.kernels_by_launcher(backward)
    # The gradient accumulation the engine runs after the node (aten::add) is the node's too.
    assert b["AddmmBackward0"] == {"calls": 1, "kernels": 4, "ops": {"aten::mm": 2, "aten::sum": 1,
                                                                        "aten::add": 1}}
    assert b["torch::autograd::AccumulateGrad"] == {"calls": 1, "kernels": 0, "ops": {}}
