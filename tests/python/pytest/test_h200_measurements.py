"""torchcost against an H200's own numbers: the measurements recorded in docs/measurements/h200/.

tools/measure_device.py ran on an NVIDIA H200 (torch 2.11.0+cu130, CUDA 13.0, driver 580.159.04; 2026-11-28) with
the default caching allocator (cuda-default.json: GPT-2 124M B=8 S=1024, a Llama of 8 layers B=4 S=1024,
resnet18 B=64, LeNet-5 B=4096, each with Adam's single-tensor and foreach steps) and with
expandable_segments:True (cuda-expandable.json, single-tensor Adam). The measured side is the device's:
torch.cuda.max_memory_allocated / max_memory_reserved per phase from an empty cache, less the libraries'
workspaces primed before every run (cuBLAS's two 32 MiB workspaces and 1 MiB beside them); the categories
from the tensors themselves (ACT through saved_tensors_hooks); kernels from torch.profiler. The predicted side is
`calibrate --measured`'s analysis of the same step (`--torch-version 2` from the file's torch version,
`--allocator cuda` with the run's context and allocator settings). docs/allocator.md has the tables.

Issue 13's target is 2% on both peaks. What the model does not reach, and why (asserted at its present
size, so that a change shows either way):
  - cuDNN's convolution workspaces go through the caching allocator on torch 2.x and are not modelled:
    resnet18's allocated peak is 1.4% to 1.6% low (22 to 32 MB of workspace at the peak) and, with the
    default allocator, resnet18's and LeNet-5's reserved peaks 14% and 16% low: one backward workspace of
    52.6 MB (LeNet-5's conv1 at B=4096) takes a segment of its own (traces.json: segment_alloc 54525952).
  - llama with foreach Adam, default allocator: reserved 3.0% low. Its backward's reserved is 16.00 GB on the
    device in both runs; the model's replay keeps 15.24 GB reserved there (its frees follow liveness, where
    CPython frees a reassigned variable after the assignment: `q = q * cos + rotate_half(q) * sin` keeps the
    old q to the end; and elementwise outputs keep the transposed layout of their input, so matmul copies q
    first). With single-tensor Adam the update's temporaries then take a new segment in the model (16.04 GB)
    and the two errors meet: +0.2%.
"""

import os

import pytest

from torchcost import measured

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DIR = os.path.join(REPO, "docs", "measurements", "h200")

# (file, run) -> the largest |predicted / measured - 1| allowed for the reserved peak, where over 2% (above).
RESERVED_KNOWN = {("cuda-default", "resnet18-single"): 0.15, ("cuda-default", "resnet18-foreach"): 0.15,
                  ("cuda-default", "lenet5-single"): 0.17, ("cuda-default", "lenet5-foreach"): 0.17,
                  ("cuda-default", "llama-foreach"): 0.035}
# Allocated peaks within 2% everywhere; exactly (to the allocator's 512-byte blocks and a few small blocks the
# model does not place) where no convolution runs: at most 0.01%.
EXACT = 1e-4


@pytest.fixture(scope="module", params=["cuda-default", "cuda-expandable"])
def doc(request):
    return request.param, measured.compare(os.path.join(DIR, request.param + ".json"), root=REPO)


def _rows(run):
    return {name: (p, m) for name, p, m in run["memory"]}


def test_every_run_is_predicted(doc):
    name, d = doc
    assert d["errors"] == []
    assert len(d["runs"]) == (8 if name == "cuda-default" else 4)
    assert d["device"]["name"] == "NVIDIA H200" and d["device"]["torch"].startswith("2.11")


def test_allocated_peak(doc):
    name, d = doc
    for run in d["runs"]:
        p, m = _rows(run)["allocated peak"]
        bound = 0.02 if run["model"].startswith("resnet18") else EXACT
        assert abs(p / m - 1) <= bound, (name, run["model"], p, m)


def test_reserved_peak(doc):
    name, d = doc
    for run in d["runs"]:
        p, m = _rows(run)["reserved peak"]
        bound = RESERVED_KNOWN.get((name, run["model"]), 0.02)
        assert abs(p / m - 1) <= bound, (name, run["model"], p, m)


def test_phase_peaks(doc):
    # Each phase's allocated peak: the step's (exact bytes) against the device's blocks.
    name, d = doc
    for run in d["runs"]:
        rows = _rows(run)
        for phase in ("forward", "backward", "optimizer"):
            p, m = rows["phase %s (exact / blocks)" % phase]
            bound = 0.025 if run["model"].startswith("resnet18") else 0.01
            assert abs(p / m - 1) <= bound, (name, run["model"], phase, p, m)


def test_categories_exact(doc):
    # Params, buffers, grads, Adam's states and ACT (saved_tensors_hooks' storages on the device) to the byte.
    # NB: `scores / math.sqrt(d)` divides by a Python number, which PyTorch wraps into a 0-dim float64 that
    # DivBackward0 saves; on CUDA it stays on the host, and the model counts it on the CPU only.
    name, d = doc
    for run in d["runs"]:
        rows = _rows(run)
        for c in ("param", "buffer", "grad", "opt", "act"):
            p, m = rows["category %s" % c]
            assert p == m, (name, run["model"], c, p, m)


def test_optimizer_kernels_exact(doc):
    # torch 2.11's Adam: 7 kernels per tensor (lerp_, mul_, addcmul_, sqrt, div, add_, addcdiv_); foreach: 7
    # multi-tensor ops split by multi_tensor_apply's limits. The profiler's count of the optimizer phase's
    # kernels against OptimizerKernels.
    name, d = doc
    for run in d["runs"]:
        predicted = {s["name"].rpartition(" ")[2]: s["kernels"] for s in run["fit"]["samples"]}
        assert predicted["optimizer"] == run["measured"]["kernels"]["optimizer"], (name, run["model"])


def test_the_calibration_file_carries_the_context(doc, tmp_path, cli):
    # The calibration file's context: the most device memory a run used outside the allocator after its step,
    # plus the segments of the workspaces primed before the runs; --gpu-file hands it to --allocator cuda unless
    # --cuda-context is given.
    import json

    name, d = doc
    raw = json.load(open(os.path.join(DIR, name + ".json")))
    outside = max(r["measured"]["outside_allocator_bytes"] for r in raw["runs"])
    segments = sum(size for size, _ in raw["context"]["primed_blocks"])
    assert d["cuda_context_bytes"] == outside + segments
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(d))
    args = ("--model", "gpt2", "--config", "layers=2,hidden=128,heads=4,vocab=1000,context=64", "--set", "B=2,S=64",
            "--allocator", "cuda", "--gpu-file", str(path))
    alloc = cli(*args)["training"]["memory"]["allocator"]
    assert alloc["context_bytes"] == outside + segments
    assert alloc["context_source"] == "measured: %s" % path
    assert alloc["device_peak"] == alloc["reserved_peak"] + outside + segments
    given = cli(*args, "--cuda-context", "300MiB")["training"]["memory"]["allocator"]
    assert given["context_bytes"] == 300 << 20 and given["context_source"] == "given"
    default = cli(*args[:-2])["training"]["memory"]["allocator"]
    assert default["context_source"] == "an H200's" and default["context_bytes"] == 856489984


def test_profiled_ops_take_the_analysis_classes(doc):
    # The profiler's ranges are grouped by the analysis's own class of the op (predicted.op_classes), so that
    # both sides count an op alike: softmax is activation.yaml's, pointwise, though its name reads as a
    # reduction. On the Llama's forward the device's aten::_softmax time (8 eager attentions) moves from the
    # class by name (reduction) to the analysis's (pointwise), and nothing else moves.
    from torchcost import _fit

    _, d = doc
    run = next(r for r in d["runs"] if r["model"] == "llama-single")
    known = run["predicted"]["op_classes"]
    assert known["softmax"] == "pointwise" and known["linear"] == "matmul" and known["mean"] == "reduction"
    raw = run["measured"]["op_self_seconds"]["forward"]
    by_name, by_analysis = _fit.class_seconds(raw), _fit.class_seconds(raw, known)
    assert raw["aten::_softmax"] > 0
    assert by_name["reduction"] - by_analysis["reduction"] == pytest.approx(raw["aten::_softmax"])
    assert by_analysis["pointwise"] - by_name["pointwise"] == pytest.approx(raw["aten::_softmax"])
    assert by_analysis["matmul"] == pytest.approx(by_name["matmul"])
    # Its backward (aten::_softmax_backward_data) goes with it.
    back = run["measured"]["op_self_seconds"]["backward"]
    assert _fit.op_class_of("aten::_softmax_backward_data", known) == "pointwise"
    assert _fit.class_seconds(back, known)["pointwise"] - _fit.class_seconds(back)["pointwise"] == pytest.approx(
        back["aten::_softmax_backward_data"])


def test_class_seconds_are_the_devices_kernels(doc):
    # Each phase's self seconds grouped by class add up to the device's kernel seconds (the profiler's CUDA
    # kernel, memcpy and memset events): ranges that are no operator are left out. NB: CUPTI's "Activity Buffer
    # Request" carries 0.62 ms of device time in resnet18's forward and 0.37 ms in LeNet-5's (15-47% of the
    # phase); counted as pointwise, it halved that class's fitted efficiency (0.355 against 0.529).
    from torchcost import _fit

    name, _ = doc
    raw = measured.read(os.path.join(DIR, name + ".json"))
    checked = 0
    for run in raw["runs"]:
        m = run["measured"]
        for phase in ("forward", "backward"):
            by_class = _fit.class_seconds(m["op_self_seconds"][phase])
            assert sum(by_class.values()) == pytest.approx(m["kernel_seconds"][phase], rel=1e-3), (run["name"], phase)
            checked += 1
    assert checked == 2 * len(raw["runs"])
    assert _fit.op_class_of("Activity Buffer Request") is None


# The time model on the H200's own times (docs/calibration.md, "Device and host"): a phase takes the larger of
# its device seconds (roofline per class / efficiency + kernels x device seconds per kernel) and its host
# seconds (kernels x the host's cost per launch, by phase; the optimizer's also per tensor). Fitted on
# cuda-default.json's 24 phases: rms 0.114, every step within 9% (the additive fit before it: rms 0.36).
STEP_BOUND = 0.10
HELD_OUT_BOUND = 0.25


@pytest.fixture(scope="module")
def default_doc():
    return measured.compare(os.path.join(DIR, "cuda-default.json"), root=REPO)


def test_device_and_host_fit_explains_every_step(default_doc):
    f = default_doc["fit"]
    assert "host" in f and f["method"].startswith("least squares (Eigen) in two steps"), f.get("error")
    # The convolutions apart from the GEMMs: cuDNN's TF32 convolutions reach a fraction of the GEMMs' (measured
    # per class: 0.21-0.24 against 0.68-0.76).
    assert f["efficiency"]["convolution"] < 0.5 * f["efficiency"]["matmul"]
    # Transformers' phases are the device's, the small convnets' the host's; the single-tensor optimizer's
    # 7 launches per tensor are the host's everywhere.
    bound = {s["name"]: s["host_bound"] for s in f["samples"]}
    assert not bound["gpt2-single forward"] and not bound["llama-single backward"]
    assert bound["lenet5-single forward"] and bound["gpt2-single optimizer"]
    assert f["rms_relative_error"] < 0.2, f["rms_relative_error"]
    by_run = {}
    for s in f["samples"]:
        p, m = by_run.get(s["name"].rpartition(" ")[0], (0.0, 0.0))
        by_run[s["name"].rpartition(" ")[0]] = (p + s["predicted_seconds"], m + s["measured_seconds"])
    assert len(by_run) == 8
    for run, (p, m) in by_run.items():
        assert abs(p / m - 1) <= STEP_BOUND, (run, p, m)


@pytest.mark.parametrize("held", ["gpt2", "llama", "lenet5"])
def test_held_out_model_step(default_doc, held, tmp_path):
    # Fitted on the other three models, the held-out model's step through --gpu-file, against its measured
    # step (the phases' fastest). NB: resnet18 is not held out: its convolutions' only other sample would be
    # LeNet-5's, whose 1-6-16 channels reach a quarter of resnet18's efficiency (+100% held out).
    import json

    from torchcost import _fit

    samples = [s for r in default_doc["runs"] if not r["model"].startswith(held) for s in r["fit"]["samples"]]
    path = tmp_path / "fit.json"
    path.write_text(json.dumps({"format": "torchcost.calibration", "roofline": default_doc["roofline"],
                                "fit": _fit.fit(samples)}))
    raw = measured.read(os.path.join(DIR, "cuda-default.json"))
    runs = [r for r in raw["runs"] if r["name"].startswith(held)]
    assert len(runs) == 2
    for run in runs:
        t = measured.analyse(dict(run, torch=raw["device"]["torch"]), True, str(path), REPO).to_dict()["time"]
        m = sum(run["measured"]["phase_seconds_min"].values())
        assert t["host"]["optimizer_tensor_seconds"] > 0
        assert abs(t["step_seconds"] / m - 1) <= HELD_OUT_BOUND, (run["name"], t["step_seconds"], m)
