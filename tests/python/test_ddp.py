#!/usr/bin/python3
"""Checks `--shard ddp` against PyTorch's DistributedDataParallel measured on CPU.

Usage: /usr/bin/python3 tests/python/test_ddp.py --torchcost PATH --fixtures DIR

Two processes (gloo, a file store) train tools/make_fixtures.py's models under
torch.nn.parallel.DistributedDataParallel, as torch 1.13 runs it on CPU; rank 0
measures its step as tools/measure_step.py measures one (the legacy profiler's
allocation events, one intra-op thread): zero_grad(set_to_none=True), forward,
out.float().sum(), backward, SGD's step, after three warm-up steps (DDP rebuilds
its buckets after the first). A communication hook records each bucket's flat
buffer (GradBucket.buffer()) as the reducer hands it over. For each model and
setting (bucket_cap_mb 25, the default; 0.25; gradient_as_bucket_view=True):

  buckets   the number of buckets the reducer made == torchcost's ddp_buckets;
  grad      the gradient bytes a rank holds after the step (the .grad storages
            and the bucket buffers, counted once) == torchcost's per_rank.grad;
  peak      the measured peak (the profile's, over params, buffers and the
            input, plus the bucket buffers, allocated before it and alive
            throughout) == torchcost's training peak, exactly. NB: with the
            bucket view, llama_tiny's peak is in lm_head's MmBackward0, where
            each GEMM copies sum()'s broadcast gradient whole (262144 bytes,
            freed within the op).

The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tools"))

MODELS = ("gpt2_tiny", "llama_tiny")
# (label, bucket_cap_mb, gradient_as_bucket_view)
SETTINGS = (("default", 25.0, False), ("small_buckets", 0.25, False), ("bucket_view", 25.0, True))
WORLD = 2


def rank_main(rank, name, store, out_path):
    """One rank: every setting in turn; rank 0 writes its measurements to out_path."""
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    import measure_step as ms

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + store, rank=rank, world_size=WORLD)
    results = {}
    for label, cap_mb, view in SETTINGS:
        model, inputs, _ = ms.build(name, 1 if name == "lenet5" else 2)
        params = list(model.parameters())
        # NB: gloo cannot broadcast bool buffers (causal masks); every rank builds them alike.
        DDP._set_params_and_buffers_to_ignore_for_model(
            model, [n for n, b in model.named_buffers() if b.dtype == torch.bool])
        ddp = DDP(model, bucket_cap_mb=cap_mb, gradient_as_bucket_view=view, broadcast_buffers=False)
        buckets = {}

        def hook(state, bucket, buckets=buckets):
            buf = bucket.buffer()
            buckets[bucket.index()] = buf.numel() * buf.element_size()
            return dist.all_reduce(buf, async_op=True).get_future().then(lambda f: f.value()[0])

        ddp.register_comm_hook(None, hook)
        opt = torch.optim.SGD(params, lr=1e-3)
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            ms._loss(ms._first(ddp(*inputs))).backward()
            opt.step()
        opt.zero_grad(set_to_none=True)
        buckets.clear()
        gc.collect()
        events = ms.profile_step(lambda: ms._first(ddp(*inputs)), ms._loss, opt)
        if rank == 0:
            base, _ = ms._unique_bytes(params + list(model.buffers()) + list(inputs))
            bucket_bytes = sum(buckets.values())
            # .grad and the buckets, each storage once (views of a bucket are the bucket).
            held = {}
            for g in [p.grad for p in params if p.grad is not None]:
                held[ms._storage_key(g)] = g.storage().nbytes()
            grad_storages = sum(held.values())
            grad = grad_storages if view else grad_storages + bucket_bytes
            results[label] = {"buckets": len(buckets), "grad": grad,
                              "peak": ms.analyse(events, base)["peak_bytes"] + bucket_bytes}
        del ddp, opt, model
    if rank == 0:
        with open(out_path, "w") as f:
            json.dump(results, f)
    dist.destroy_process_group()


def measure(name):
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as tmp:
        store, out_path = os.path.join(tmp, "store"), os.path.join(tmp, "out.json")
        mp.spawn(rank_main, args=(name, store, out_path), nprocs=WORLD, join=True)
        with open(out_path) as f:
            return json.load(f)


def torchcost(binary, pt, cap_mb, view):
    import torchcost_cli

    args = [binary, pt, "--device", "cpu", "--optimizer", "sgd", "--shard", "ddp", "--world", str(WORLD),
            "--ddp-bucket", str(cap_mb), "--torch-version", torchcost_cli.oracle_torch_version(),
            "--json"] + (["--ddp-bucket-view"] if view else [])
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if proc.returncode != 0:
        return None, proc.stderr.strip()
    r = json.loads(proc.stdout)
    return {"buckets": r["sharding"]["ddp_buckets"], "grad": r["sharding"]["per_rank"]["grad"],
            "peak": r["training"]["memory"]["peak"]["value"]}, None


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    import make_fixtures

    passed = failed = 0
    for name in MODELS:
        pt = make_fixtures.make_fixture(name, args.fixtures)
        measured = measure(name)
        for label, cap_mb, view in SETTINGS:
            got, err = torchcost(args.torchcost, pt, cap_mb, view)
            want = measured[label]
            for key in ("buckets", "grad", "peak"):
                check = "%s %s %s" % (name, label, key)
                ok = err is None and got[key] == want[key]
                if ok:
                    passed += 1
                    print("PASS %s %d (measured %d)" % (check, got[key], want[key]))
                else:
                    failed += 1
                    print("FAIL %s: torchcost %s, DDP measured %d" % (check, err or got[key], want[key]))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
