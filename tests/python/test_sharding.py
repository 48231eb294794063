#!/usr/bin/python3
"""Checks the CLI's data-parallel sharding and tensor parallelism against closed forms.

Usage: /usr/bin/python3 tests/python/test_sharding.py --torchcost PATH --fixtures DIR

NB: no GPU and no process group are available, so nothing here is measured on
a distributed PyTorch run: the expected numbers are the published formulas
(Rajbhandari et al. 2020, Figure 1: mixed-precision Adam keeps 2 + 2 + K bytes
per parameter, K = 12, split by the ZeRO stages) and Megatron's splits
(Shoeybi et al. 2019), derived here from the model's config.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchcost_cli import run_json  # noqa: E402

# A small GPT-2: V = 512, h = 64, L = 2 layers, n_ctx = 128 (all dims multiples of 4).
V, H, L, CTX = 512, 64, 2, 128
GPT2 = "layers=%d,hidden=%d,heads=4,vocab=%d,context=%d" % (L, H, V, CTX)
# Parameters: wte V*h + wpe n_ctx*h + per layer 12h^2 + 13h + final LayerNorm 2h (head tied).
PSI = V * H + CTX * H + L * (12 * H * H + 13 * H) + 2 * H
# Parameter tensors: wte, wpe, 12 per layer (2 LayerNorms, c_attn, attn c_proj, c_fc, c_proj; weight and bias), ln_f 2.
TENSORS = 2 + 12 * L + 2
N = 4
K = 12  # fp32 master weights, exp_avg, exp_avg_sq: 4 + 4 + 4 bytes per parameter.
STEP = 4  # NB: torch 1.13's Adam keeps a float32 `step` tensor per parameter tensor (one per flat shard).


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print("FAIL %s %s" % (name, detail))


def zero_states(c, binary):
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "adam",
            "--param-dtype", "bf16", "--master-weights"]
    # Every parameter's numel is a multiple of N, so the flat shards need no padding: Psi / N.
    expected = {
        "none": (2 * PSI, 2 * PSI, K * PSI + STEP * TENSORS),      # (2 + 2 + K) Psi
        "zero1": (2 * PSI, 2 * PSI, K * PSI // N + STEP),         # 2 Psi + 2 Psi + K Psi / N
        "zero2": (2 * PSI, 2 * PSI // N, K * PSI // N + STEP),    # 2 Psi + (2 + K) Psi / N
        "zero3": (2 * PSI // N, 2 * PSI // N, K * PSI // N + STEP),  # (2 + 2 + K) Psi / N
    }
    for strategy, (param, grad, opt) in sorted(expected.items()):
        args = base + (["--shard", strategy, "--world", str(N)] if strategy != "none" else [])
        # NB: the paper's ZeRO-3 keeps no parameter whole (DeepSpeed's persistence threshold 0).
        args += ["--zero3-persistence", "0"] if strategy == "zero3" else []
        report, err = run_json(binary, args)
        if err:
            c.check("zero_states[%s]" % strategy, False, err)
            continue
        got = report["sharding"]["per_rank"]
        c.check("zero_states[%s]" % strategy, (got["param"], got["grad"], got["opt"]) == (param, grad, opt),
                "got %s, expected param %d grad %d opt %d" % (got, param, grad, opt))
        opt_max = report["training"]["memory"]["category_max"]["opt"]["value"]
        c.check("zero_opt_in_timeline[%s]" % strategy, opt_max == opt, "OPT max %s, expected %d" % (opt_max, opt))
        if strategy != "none":
            comm = report["sharding"]["communication"]
            # ZeRO-1/2: reduce-scatter the bf16 gradients (2 Psi), all-gather the parameters (2 Psi);
            # ZeRO-3 at DeepSpeed's defaults (prefetch 5e7, reuse distance 1e9 elements): a model this small is
            # gathered whole by the first prefetch and kept to its last use, so each parameter once (2 Psi).
            gathered = 2 * PSI
            c.check("zero_comm[%s]" % strategy,
                    comm["reduce_scatter"] == 2 * PSI and comm["all_gather"] == gathered, str(comm))


def zero_offload(c, binary):
    # ZeRO-Offload (Ren et al. 2021, Sec. 4) over ZeRO-2: the device keeps the 2 Psi bf16 parameters; the fp32
    # masters and moments (K Psi / N, + the shard's fp32 `step`) and the gradient shard in fp32 (4 Psi / N) are on
    # the host, and the step runs there. Against plain ZeRO-2, every moment of the device's timeline holds no
    # OPT and its peak is lower by at least the K Psi / N of states.
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "adam",
            "--param-dtype", "bf16", "--master-weights", "--shard", "zero2", "--world", str(N)]
    zero2, err = run_json(binary, base)
    off, err2 = run_json(binary, base + ["--offload", "optimizer"])
    if err or err2:
        c.check("zero_offload", False, err or err2)
        return
    got = off["sharding"]["per_rank"]
    c.check("zero_offload_device", (got["param"], got["grad"], got["opt"]) == (2 * PSI, 0, 0), str(got))
    host = off["sharding"]["offload"]
    want = {"what": "optimizer", "param": 0, "opt": K * PSI // N + STEP, "grad": 4 * PSI // N,
            "transfer": 2 * 2 * PSI // N}
    c.check("zero_offload_host", host == want, "%s, expected %s" % (host, want))
    mem = off["training"]["memory"]
    c.check("zero_offload_no_opt", mem["category_max"]["opt"]["value"] == 0, str(mem["category_max"]["opt"]))
    peak, peak2 = mem["peak"]["value"], zero2["training"]["memory"]["peak"]["value"]
    # NB: DeepSpeed's offload adds a device staging buffer of the largest parameter (wte: V h bf16 elements).
    staging = 2 * V * H
    c.check("zero_offload_peak", peak <= peak2 - (K * PSI // N + STEP) + staging,
            "%d vs ZeRO-2's %d" % (peak, peak2))
    c.check("zero_offload_staging", off["sharding"]["gradient_buffers"]["offload_staging_bytes"] == staging,
            str(off["sharding"]["gradient_buffers"]))
    c.check("zero_offload_none", zero2["sharding"]["offload"] is None, str(zero2["sharding"].get("offload")))
    # The step runs on the host: a GPU's predicted time counts no optimizer step, and a note says so.
    timed, err = run_json(binary, base + ["--offload", "optimizer", "--gpu", "h100-sxm"])
    plain, err2 = run_json(binary, base + ["--gpu", "h100-sxm"])
    if err or err2:
        c.check("zero_offload_time", False, err or err2)
        return
    c.check("zero_offload_time", timed["time"]["optimizer_seconds"] == 0 < plain["time"]["optimizer_seconds"],
            "%s vs %s" % (timed["time"]["optimizer_seconds"], plain["time"]["optimizer_seconds"]))
    c.check("zero_offload_note", any("ZeRO-Offload" in d["message"] for d in timed["diagnostics"]),
            str(timed["diagnostics"]))


def param_offload(c, binary):
    # Parameter offload (FSDP's CPUOffload(offload_params=True); DeepSpeed ZeRO-3's offload_param with
    # offload_optimizer): the 2 Psi / N bytes of bf16 shards join the optimizer on the host, so the device's
    # parameters are only the gathered units: their maximum is plain sharding's less 2 Psi / N. Each step copies
    # the gradient shard down and every shard up twice (the forward's and the backward's gathers).
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "adam",
            "--param-dtype", "bf16", "--master-weights", "--world", str(N)]
    for strategy in ("zero3", "fsdp"):
        name = "param_offload[%s]" % strategy
        shard = ["--shard", strategy] + (["--zero3-persistence", "0"] if strategy == "zero3" else [])
        plain, err = run_json(binary, base + shard)
        off, err2 = run_json(binary, base + shard + ["--offload", "params"])
        if err or err2:
            c.check(name, False, err or err2)
            continue
        got = off["sharding"]["per_rank"]
        c.check(name + " device", (got["param"], got["grad"], got["opt"]) == (0, 0, 0), str(got))
        # NB: FSDP gathers each unit twice (forward, backward); ZeRO-3 at DeepSpeed's defaults once.
        gathers = 2 if strategy == "fsdp" else 1
        want = {"what": "params", "param": 2 * PSI // N, "opt": K * PSI // N + STEP, "grad": 4 * PSI // N,
                "transfer": 2 * PSI // N + gathers * 2 * PSI // N}
        host = off["sharding"]["offload"]
        c.check(name + " host", host == want, "%s, expected %s" % (host, want))
        pmax = off["training"]["memory"]["category_max"]["param"]["value"]
        pmax2 = plain["training"]["memory"]["category_max"]["param"]["value"]
        c.check(name + " param max", pmax == pmax2 - 2 * PSI // N, "%d vs %d" % (pmax, pmax2))
        c.check(name + " no opt", off["training"]["memory"]["category_max"]["opt"]["value"] == 0,
                str(off["training"]["memory"]["category_max"]["opt"]))


def zero3_schedule(c, binary):
    # DeepSpeed ZeRO-3's fetch schedule (partitioned_param_coordinator.py at deepspeedai/DeepSpeed edaa722), in
    # closed forms on the small GPT-2 (every numel a multiple of N: no padding; bf16: 2 bytes per element).
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "adam",
            "--param-dtype", "bf16", "--master-weights", "--shard", "zero3", "--world", str(N)]
    shard = 2 * PSI // N

    def run(name, extra):
        report, err = run_json(binary, base + extra)
        if err:
            c.check(name, False, err)
            return None
        return report

    # Persistence: every tensor here has at most 1e5 elements (wte: V h = 32768), so at the default threshold all
    # are persistent: whole on every rank beside their shards, never gathered in the step, gathered once after it.
    r = run("zero3_persistent_all", [])
    if r:
        z = r["sharding"]["zero3"]
        c.check("zero3_persistent_all", (z["persistent_param_bytes"], z["peak_gathered_bytes"],
                                         r["sharding"]["per_rank"]["param"],
                                         r["sharding"]["communication"]["all_gather"])
                == (2 * PSI, 0, shard + 2 * PSI, 2 * PSI), str(z))
    # Threshold 10000: persistent are all but wte and, per layer, c_attn's weight (12 h^2 / 4 = 3 h^2 = 12288)
    # and the MLP's two weights (4 h^2 = 16384 each).
    r = run("zero3_persistent_some", ["--zero3-persistence", "10000"])
    if r:
        persistent = PSI - V * H - L * (3 * H * H + 2 * 4 * H * H)
        z = r["sharding"]["zero3"]
        c.check("zero3_persistent_some", z["persistent_param_bytes"] == 2 * persistent, str(z))
    # No persistence, DeepSpeed's defaults: the first module's prefetch (5e7 elements > Psi) gathers the whole
    # model; the reuse distance (1e9) keeps each parameter to its last use in the backward.
    r = run("zero3_gathered_whole", ["--zero3-persistence", "0"])
    if r:
        z = r["sharding"]["zero3"]
        pmax = r["training"]["memory"]["category_max"]["param"]["value"]
        c.check("zero3_gathered_whole", (z["peak_gathered_bytes"], pmax) == (2 * PSI, shard + 2 * PSI),
                "%s, PARAM max %d" % (z, pmax))
    # No prefetch, no reuse: each module's parameters are gathered while it runs, in the forward and again in the
    # backward; the tied wte also by lm_head in both. The most at once: wte and wpe (2 (V + n_ctx) h bytes) at the
    # backward's end, as their inputs (token ids, positions) take no gradient, so that DeepSpeed's post-backward
    # hook never fires for them and release_backward_leftovers frees them last.
    r = run("zero3_each_module_alone", ["--zero3-persistence", "0", "--zero3-prefetch-bucket", "0",
                                        "--zero3-max-reuse", "0"])
    if r:
        z = r["sharding"]["zero3"]
        c.check("zero3_each_module_alone",
                (z["peak_gathered_bytes"], r["sharding"]["communication"]["all_gather"])
                == (2 * (V + CTX) * H, 2 * 2 * PSI + 2 * 2 * V * H), "%s, all-gather %d"
                % (z, r["sharding"]["communication"]["all_gather"]))
    # A DeepSpeed config's stage3 keys; Hugging Face's "auto": prefetch 0.9 h^2, persistence 10 h.
    r = run("zero3_deepspeed_keys", ["--deepspeed", json.dumps({"zero_optimization": {
        "stage": 3, "stage3_prefetch_bucket_size": "auto", "stage3_param_persistence_threshold": "auto",
        "stage3_max_live_parameters": 1000, "stage3_max_reuse_distance": 0}})])
    if r:
        z = r["sharding"]["zero3"]
        got = (z["prefetch_bucket_elements"], z["persistence_threshold"], z["max_live_elements"],
               z["max_reuse_elements"])
        c.check("zero3_deepspeed_keys", got == (int(0.9 * H * H), 10 * H, 1000, 0), str(got))


def fsdp_strategies(c, binary):
    # FSDP's sharding strategies on the small GPT-2 (units: the 2 blocks; the root holds wte, wpe and ln_f).
    # HYBRID_SHARD over 2N ranks in groups of N holds what FSDP over N does and all-reduces the reduced gradient
    # shard (2 Psi / N bytes) across the 2 groups; SHARD_GRAD_OP gathers each unit once per step, FULL_SHARD
    # the blocks twice (forward, backward).
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "adam",
            "--param-dtype", "bf16", "--master-weights", "--shard", "fsdp"]
    full, err = run_json(binary, base + ["--world", str(N)])
    hybrid, err2 = run_json(binary, base + ["--world", str(2 * N), "--fsdp-sharding", "hybrid_shard",
                                            "--shard-group", str(N)])
    grad_op, err3 = run_json(binary, base + ["--world", str(N), "--fsdp-sharding", "shard_grad_op"])
    if err or err2 or err3:
        c.check("fsdp_strategies", False, err or err2 or err3)
        return
    c.check("fsdp_hybrid_per_rank", hybrid["sharding"]["per_rank"] == full["sharding"]["per_rank"]
            and hybrid["training"]["memory"]["peak"] == full["training"]["memory"]["peak"],
            "%s vs %s" % (hybrid["sharding"]["per_rank"], full["sharding"]["per_rank"]))
    c.check("fsdp_hybrid_all_reduce", hybrid["sharding"]["communication"]["all_reduce"] == 2 * PSI // N,
            str(hybrid["sharding"]["communication"]))
    root = 2 * (V * H + CTX * H + 2 * H)  # wte, wpe, ln_f in bf16
    block = 2 * (12 * H * H + 13 * H)
    c.check("fsdp_all_gathers", (full["sharding"]["communication"]["all_gather"],
                                 grad_op["sharding"]["communication"]["all_gather"])
            == (root + 2 * L * block, root + L * block),
            "%s vs %s" % (full["sharding"]["communication"], grad_op["sharding"]["communication"]))
    c.check("fsdp_grad_op_json", grad_op["sharding"]["fsdp"] == {"reshard_after_forward": False, "shard_group": 0},
            str(grad_op["sharding"]["fsdp"]))
    # With the parameter shards on the host, SHARD_GRAD_OP copies each up once (FULL_SHARD: twice).
    off, err = run_json(binary, base + ["--world", str(N), "--fsdp-sharding", "shard_grad_op", "--offload", "params"])
    if err:
        c.check("fsdp_grad_op_offload", False, err)
        return
    c.check("fsdp_grad_op_offload", off["sharding"]["offload"]["transfer"] == 2 * PSI // N + 2 * PSI // N,
            str(off["sharding"]["offload"]))


def deepspeed_buffers(c, binary):
    # DeepSpeed's contiguous_gradients (its default; deepspeed/runtime/zero/stage_1_and_2.py setup_buckets and
    # copy_grads_in_partition, stage3.py __init__, at deepspeedai/DeepSpeed edaa722): a flat bucket buffer of
    # reduce_bucket_size elements of the 16-bit dtype (two with overlap_comm at ZeRO-1/2), and the rank's flat
    # gradient partition (2 Psi / N bytes). Each gradient is whole only when it is made (at most the largest
    # parameter, wte: V h elements), then copied into the buffer.
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "adam",
            "--param-dtype", "bf16", "--master-weights", "--world", str(N)]
    largest, partition = 2 * V * H, 2 * PSI // N
    cases = [
        # DeepSpeed's default 5e8 elements: no bucket fills during this backward, so the partition is allocated
        # only at its end; the buffer is held from the first gradient.
        ("zero2", [], 1, 500000000, 2 * 500000000, 2 * 500000000 + largest),
        # 1000 elements: the partition is allocated whole at the first full bucket, early in the backward.
        ("zero2", ["--reduce-bucket", "1000"], 1, 1000, partition + 2000, partition + 2000 + largest),
        ("zero2", ["--reduce-bucket", "1000", "--overlap-comm"], 2, 1000, partition + 4000,
         partition + 4000 + largest),
        # ZeRO-3: buffer and partition from initialization (one buffer with overlap_comm too).
        ("zero3", ["--reduce-bucket", "1000", "--overlap-comm"], 1, 1000, partition + 2000,
         partition + 2000 + largest),
    ]
    for strategy, extra, buckets, elements, lo, hi in cases:
        name = "deepspeed_buffers[%s %s]" % (strategy, " ".join(extra))
        got, err = run_json(binary, base + ["--shard", strategy] + extra)
        if err:
            c.check(name, False, err)
            continue
        want = {"reduce_bucket_elements": elements, "buckets": buckets, "bucket_bytes": 2 * elements * buckets,
                "offload_staging_bytes": 0}
        c.check(name, got["sharding"]["gradient_buffers"] == want,
                "%s, expected %s" % (got["sharding"]["gradient_buffers"], want))
        grad_max = got["training"]["memory"]["category_max"]["grad"]["value"]
        c.check(name + " grad max", lo < grad_max <= hi, "%d, expected in (%d, %d]" % (grad_max, lo, hi))
    # The ZeRO paper's accounting: no buffers, the per-rank states unchanged.
    paper, err = run_json(binary, base + ["--shard", "zero2", "--no-contiguous-gradients"])
    deep, err2 = run_json(binary, base + ["--shard", "zero2"])
    if err or err2:
        c.check("deepspeed_buffers[paper]", False, err or err2)
        return
    c.check("deepspeed_buffers[paper]", paper["sharding"]["gradient_buffers"] is None
            and paper["sharding"]["per_rank"] == deep["sharding"]["per_rank"],
            "%s / %s" % (paper["sharding"]["gradient_buffers"], paper["sharding"]["per_rank"]))


def deepspeed_config(c, binary):
    # A DeepSpeed config in the shape of Hugging Face's ds_config_zero2.json with offload: the file gives what the
    # flags would, with "auto" reduce_bucket_size = hidden^2 (transformers/integrations/deepspeed.py,
    # trainer_config_finalize); the keys read but not modelled are named in a note.
    ds = {"bf16": {"enabled": True}, "fp16": {"enabled": "auto"},
          "optimizer": {"type": "AdamW", "params": {"lr": "auto"}},
          "zero_optimization": {"stage": 2, "offload_optimizer": {"device": "cpu"}, "overlap_comm": True,
                                "allgather_bucket_size": 2e8, "reduce_bucket_size": "auto",
                                "contiguous_gradients": True},
          "train_micro_batch_size_per_gpu": "auto"}
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--world", str(N)]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ds_config.json")
        with open(path, "w") as f:
            json.dump(ds, f)
        got, err = run_json(binary, base + ["--deepspeed", path])
        want, err2 = run_json(binary, base + ["--shard", "zero2", "--offload", "optimizer", "--overlap-comm",
                                              "--reduce-bucket", str(H * H), "--param-dtype", "bf16",
                                              "--master-weights", "--optimizer", "adamw"])
        if err or err2:
            c.check("deepspeed_config", False, err or err2)
            return
        c.check("deepspeed_config sharding", got["sharding"] == want["sharding"],
                "%s vs %s" % (got["sharding"], want["sharding"]))
        c.check("deepspeed_config peak", got["training"]["memory"]["peak"] == want["training"]["memory"]["peak"],
                "%s vs %s" % (got["training"]["memory"]["peak"], want["training"]["memory"]["peak"]))
        note = "DeepSpeed config %s: not modelled: train_micro_batch_size_per_gpu, " \
               "zero_optimization.allgather_bucket_size" % path
        c.check("deepspeed_config note", any(d["message"] == note for d in got["diagnostics"]),
                str(got["diagnostics"]))
        proc = subprocess.run([binary] + base + ["--deepspeed", path, "--shard", "zero3"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=120)
        want_err = "--shard zero3 disagrees with %s: zero_optimization.stage (zero2)" % path
        c.check("deepspeed_config conflict", proc.returncode == 2 and want_err in proc.stderr,
                "rc %d, stderr %r" % (proc.returncode, proc.stderr))


def ddp_and_fsdp(c, binary):
    base = ["--model", "gpt2", "--config", GPT2, "--set", "B=2,S=16", "--optimizer", "sgd"]
    plain, err = run_json(binary, base)
    ddp, err2 = run_json(binary, base + ["--shard", "ddp", "--world", "8"])
    if err or err2:
        c.check("ddp", False, err or err2)
        return
    # float32 gradients 4 Psi, a second copy in DDP's buckets: every moment holds 4 Psi more.
    peak = plain["training"]["memory"]["peak"]["value"]
    c.check("ddp_peak", ddp["training"]["memory"]["peak"]["value"] == peak + 4 * PSI,
            "%s vs %d" % (ddp["training"]["memory"]["peak"]["value"], peak + 4 * PSI))
    c.check("ddp_all_reduce", ddp["sharding"]["communication"]["all_reduce"] == 4 * PSI)
    fsdp, err = run_json(binary, base + ["--shard", "fsdp", "--world", "8"])
    if err:
        c.check("fsdp", False, err)
        return
    # Units: the root and the blocks h.0, h.1; a block's padded flat parameter: (12h^2 + 13h) * 4 bytes.
    block = (12 * H * H + 13 * H) * 4
    c.check("fsdp_units", fsdp["sharding"]["units"] == ["", "h.0", "h.1"], str(fsdp["sharding"]["units"]))
    c.check("fsdp_largest_unit", fsdp["sharding"]["largest_unit_bytes"] >= block,
            "%s < %d" % (fsdp["sharding"]["largest_unit_bytes"], block))


def tensor_parallel(c, binary):
    for t in (2, 4):
        report, err = run_json(binary, ["--model", "gpt2", "--config", GPT2 + ",tp=%d" % t])
        if err:
            c.check("tp%d" % t, False, err)
            continue
        # Column-parallel c_attn and c_fc (weights and biases / t), row-parallel c_proj (weights / t,
        # biases whole), vocabulary-parallel wte, replicated wpe and LayerNorms.
        layer = 3 * H * H // t + 3 * H // t + H * H // t + H + 4 * H * H // t + 4 * H // t + 4 * H * H // t + H + 4 * H
        expected = V // t * H + CTX * H + L * layer + 2 * H
        c.check("tp%d_params" % t, report["totals"]["params"] == expected,
                "%s vs %d" % (report["totals"]["params"], expected))


def errors(c, binary):
    cases = [
        (["--model", "gpt2", "--world", "4"], "--world 4 needs --shard"),
        (["--model", "gpt2", "--shard", "fsdp", "--world", "2", "--fsdp-unit", "("], "--fsdp-unit '('"),
        (["--model", "gpt2", "--shard", "zero1", "--world", "2", "--mode", "infer"], "--mode infer"),
        (["--model", "gpt2", "--shard", "zero9"], "--shard"),
        (["--model", "gpt2", "--shard", "ddp", "--world", "2", "--overlap-comm"],
         "--overlap-comm is DeepSpeed's: it needs --shard zero1|zero2|zero3"),
        (["--model", "gpt2", "--reduce-bucket", "1e6"], "--reduce-bucket is DeepSpeed's"),
        (["--model", "gpt2", "--shard", "zero2", "--world", "2", "--offload", "params"],
         "--offload params needs --shard zero3 or fsdp"),
        (["--model", "gpt2", "--shard", "zero2", "--reduce-bucket", "0"], "--reduce-bucket: must be a whole number"),
        (["--model", "gpt2", "--shard", "zero2", "--reduce-bucket", "1.5"], "--reduce-bucket: must be a whole"),
        (["--model", "gpt2", "--shard", "zero2", "--world", "2", "--offload", "optimizer",
          "--no-contiguous-gradients"], "--no-contiguous-gradients: DeepSpeed turns contiguous gradients on"),
        (["--model", "gpt2", "--config", GPT2 + ",tp=3"], "heads=4 is not divisible by tp=3"),
        (["--model", "gpt2", "--shard", "zero2", "--world", "2", "--zero3-max-reuse", "0"],
         "--zero3-max-reuse is DeepSpeed ZeRO-3's: it needs --shard zero3"),
        (["--model", "gpt2", "--shard", "zero3", "--world", "2", "--zero3-prefetch-bucket", "-1"],
         "--zero3-prefetch-bucket: must be a whole number of elements from 0 to 2^50"),
    ]
    for args, needle in cases:
        proc = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)
        lines = proc.stderr.strip().splitlines()
        c.check("error %s" % " ".join(args[2:]),
                proc.returncode == 2 and len(lines) == 1 and needle in lines[0],
                "rc %d, stderr %r" % (proc.returncode, proc.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", required=False)
    args = ap.parse_args()
    c = Checks()
    zero_states(c, args.torchcost)
    zero_offload(c, args.torchcost)
    zero3_schedule(c, args.torchcost)
    fsdp_strategies(c, args.torchcost)
    deepspeed_buffers(c, args.torchcost)
    param_offload(c, args.torchcost)
    deepspeed_config(c, args.torchcost)
    ddp_and_fsdp(c, args.torchcost)
    tensor_parallel(c, args.torchcost)
    errors(c, args.torchcost)
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 0 if c.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
