"""What the generation oracles (test_generate.py, test_generate_gpt2.py, test_generate_neox.py) share.

A Hugging Face DynamicCache (keys and values grown by torch.cat, starting from an
empty tensor), the measurement of a greedy generation (`measure`), and the
per-case loop (`check_cases`): run `torchcost --model FAMILY --mode generate`
at (B, S, T) and compare params, KV bytes and the prefill's and last decode
step's peaks with what PyTorch measured.
"""

import gc
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tools"))
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import measure_step  # noqa: E402
from torchcost_cli import run_json  # noqa: E402


class Cache:
    """DynamicCache with DynamicLayers: per layer, keys and values grown by torch.cat.

    Hugging Face's transformers src/transformers/cache_utils.py at
    004999d972e478164dd7e8e508350937c803531e: keys = torch.cat([keys, key_states],
    dim=-2), starting from an empty tensor, so the prefill copies the prompt's keys.
    """

    def __init__(self):
        self.keys, self.values = [], []

    def update(self, k, v, i):
        if len(self.keys) <= i:
            empty = torch.tensor([], dtype=k.dtype)
            self.keys.append(torch.cat([empty, k], dim=-2))
            self.values.append(torch.cat([empty, v], dim=-2))
        else:
            self.keys[i] = torch.cat([self.keys[i], k], dim=-2)
            self.values[i] = torch.cat([self.values[i], v], dim=-2)
        return self.keys[i], self.values[i]

    def update_list(self, kv, i):
        """As update(kv[0], kv[1], i), taking the tensors out of the list `kv`: the new keys are freed before
        the values' cat, as a traced graph frees them (update()'s caller holds them, as Hugging Face's does)."""
        k = kv.pop(0)
        if len(self.keys) <= i:
            self.keys.append(torch.cat([torch.tensor([], dtype=k.dtype), k], dim=-2))
        else:
            self.keys[i] = torch.cat([self.keys[i], k], dim=-2)
        del k
        v = kv.pop(0)
        if len(self.values) <= i:
            self.values.append(torch.cat([torch.tensor([], dtype=v.dtype), v], dim=-2))
        else:
            self.values[i] = torch.cat([self.values[i], v], dim=-2)
        del v
        return self.keys[i], self.values[i]

    def tensors(self):
        return self.keys + self.values


def storage_bytes(tensors):
    """Bytes of the distinct storages under `tensors`."""
    return measure_step._unique_bytes(tensors)[0]


def measure(model, B, S, T, vocab):
    """Generates T tokens greedily from a random prompt of ids below `vocab`; returns the measured quantities.

    model(ids, cache) returns the last position's logits. The way
    tools/measure_step.py measures (the legacy autograd profiler's CPU memory
    events over a baseline of the live tensors):

      prefill  peak of model(prompt) under no_grad; baseline params + prompt ids;
      decode   peak of the last decode step (S + T - 2 tokens cached before it);
               baseline params + its ids + the cache before it + the previous step's float32
               logits (generate()'s next_token_logits, held until this step's copy replaces them);
      kv       the cache's storage bytes after the last step (S + T - 1 tokens:
               the last new token is never fed back), per token and sequence.

    NB: one profiling session covers the whole generation, so that every block
    freed in it was allocated in it (the profiler records no free of a block
    allocated before it started, and a stale size for an address an earlier
    session saw). The prefill's peak is params + prompt + the session's running
    maximum during the prefill; the last decode step's is params + the running
    maximum during that step (the running sum then holds the cache and the step's ids).
    Buffers are not in these peaks (check_cases adds them).
    """
    torch.manual_seed(0)
    params = storage_bytes(list(model.parameters()))
    prompt = torch.randint(0, vocab, (B, S))
    cache = Cache()
    gc.collect()
    with torch.no_grad(), measure_step.Profile() as p:
        p.phase("prefill")
        logits = model(prompt, cache)
        # GenerationMixin._sample (transformers src/transformers/generation/utils.py at
        # 000034a44ef887621d9b36001a5eb7c46e64cb3f): next_token_logits = outputs.logits[:, -1, :].to(copy=True,
        # dtype=torch.float32), held until the next step's copy replaces it; then the greedy argmax.
        next_token_logits = logits[:, -1, :].to(copy=True, dtype=torch.float32)
        ids = next_token_logits.argmax(-1, keepdim=True)
        del logits
        for step in range(1, T):
            p.phase("decode_last" if step == T - 1 else "decode")
            logits = model(ids, cache)
            next_token_logits = logits[:, -1, :].to(copy=True, dtype=torch.float32)
            ids = next_token_logits.argmax(-1, keepdim=True)
            del logits
        p.phase("end")
    peaks = measure_step.analyse(p.events(), 0)["phase_peak_delta"]
    kv_tokens = S + T - 1
    return {"params": sum(p.numel() for p in model.parameters()),
            "prefill": params + storage_bytes([prompt]) + peaks["prefill"],
            "decode": params + peaks["decode_last"] if T > 1 else None,
            "kv_per_token": storage_bytes(cache.tensors()) // (kv_tokens * B),
            "kv_exact": storage_bytes(cache.tensors()) % (kv_tokens * B) == 0}


class Checks:
    """Counts checks; prints one FAIL line per failed one."""

    def __init__(self):
        self.passed = self.failed = 0

    def check(self, label, got, expected):
        if got is not None and got == expected:
            self.passed += 1
        else:
            self.fail(label, "torchcost %s, measured %s" % (got, expected))

    def fail(self, label, why):
        self.failed += 1
        print("FAIL %s: %s" % (label, why))

    def finish(self):
        """Prints "N passed, M failed"; returns the exit status."""
        print("%d passed, %d failed" % (self.passed, self.failed))
        return 0 if self.failed == 0 else 1


def check_cases(checks, torchcost, family, builder, model, cases, vocab, kv_per_token, label=""):
    """For each (B, S, T): measures `model`'s generation, runs `torchcost --model FAMILY --config BUILDER
    --mode generate --json` and checks params, KV bytes and both phases' peaks, exact.

    kv_per_token: the KV bytes per token and sequence derived by the caller (2 x layers x kv_heads x
    head_dim x bytes). The model's buffers are live throughout (torchcost's BUFFER): added to both
    measured peaks. Returns {(B, S, T): the measurement}.
    """
    buffers = storage_bytes(list(model.buffers()))
    measured = {}
    for B, S, T in cases:
        m = measure(model, B, S, T, vocab)
        measured[(B, S, T)] = m
        name = (label + " " if label else "") + "B=%d S=%d T=%d" % (B, S, T)
        report, err = run_json(torchcost, ["--model", family, "--config", builder, "--mode", "generate",
                                           "--set", "B=%d" % B, "--set", "S=%d" % S, "--set", "T=%d" % T],
                               label="generate " + name)
        if err:
            checks.fail(name, err)
            continue
        g = report["generation"]
        checks.check(name + " params", report["totals"]["params"], m["params"])
        checks.check(name + " kv bytes per token (derived)", g["kv_bytes_per_token"], kv_per_token)
        checks.check(name + " kv bytes per token (measured at S+T-1 tokens)", g["kv_bytes_per_token"],
                     m["kv_per_token"] if m["kv_exact"] else None)
        checks.check(name + " kv_cache_bytes for S+T tokens", g["kv_cache_bytes"]["value"], kv_per_token * (S + T) * B)
        checks.check(name + " prefill peak", g["prefill"]["peak_bytes"]["value"], m["prefill"] + buffers)
        if m["decode"] is not None:
            checks.check(name + " decode peak (last step)", g["decode"]["peak_bytes"]["value"], m["decode"] + buffers)
    return measured
