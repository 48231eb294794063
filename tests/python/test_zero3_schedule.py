#!/usr/bin/python3
"""Checks torchcost's ZeRO-3 fetch schedule against DeepSpeed's coordinator driven by a real torch step.

Usage: /usr/bin/python3 tests/python/test_zero3_schedule.py --torchcost PATH --fixtures DIR

DeepSpeed cannot run here (no GPU, no process group, not packaged), so its
parameter coordinator is re-implemented below in plain Python, transcribed from
deepspeedai/DeepSpeed at edaa722:
  deepspeed/runtime/zero/partitioned_param_coordinator.py  fetch_sub_module (gather, then prefetch from
      the parameter trace up to prefetch_bucket_size while fewer than max_live_parameters are available),
      release_sub_module and __params_to_release (keep persistent parameters, parameters prefetched for a
      later step, and parameters used again within max_reuse_distance elements), reset_step, the trace;
  deepspeed/runtime/zero/parameter_offload.py  the hooks that drive it: forward pre-hooks fetch, forward
      hooks release; PreBackwardFunctionForModule on a module's outputs fetches when their gradient
      arrives (reference-counted), PostBackwardFunctionModule on its inputs releases once every input's
      gradient has arrived; mark_persistent_parameters (numel <= stage3_param_persistence_threshold).
It shares no code with torchcost: the module trace comes from torch's own hooks
and autograd running the reference models (one recording step, then the
measured steady-state step; once with Llama's decoder layers under reentrant
activation checkpointing, whose recomputation fires their hooks again),
torchcost's from the node scopes of their trace.
For each model and setting, the most bytes gathered at once, the bytes
all-gathered per step and the persistent parameters' bytes must be IDENTICAL.
A gathered parameter is N padded shards: N * ceil(numel / N) elements.
The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import collections
import os
import sys
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tools"))
sys.path.insert(0, os.path.join(REPO, "python"))

import torch  # noqa: E402

import make_fixtures  # noqa: E402
from torchcost.reference import hf_reference  # noqa: E402
from torchcost_cli import run_json  # noqa: E402

N = 4  # Ranks.
# (name, prefetch_bucket_size, max_live_parameters, max_reuse_distance, param_persistence_threshold)
SETTINGS = [
    ("each_module_alone", 0, 10**9, 0, 0),
    ("reuse_across_the_turn", 0, 10**9, 60000, 0),
    ("prefetch", 30000, 10**9, 0, 0),
    ("prefetch_max_live", 30000, 120000, 100000, 0),
    ("persistent_and_reuse", 20000, 10**9, 50000, 10000),
    ("deepspeed_defaults", 5 * 10**7, 10**9, 10**9, 10**5),
]


class Param:
    def __init__(self, ds_id, numel, element_bytes, persist):
        self.ds_id = ds_id
        self.numel = numel
        self.element_bytes = element_bytes
        self.bytes = N * -(-numel // N) * element_bytes
        self.persist = persist
        self.available = persist  # NB: the steady state: persistent parameters are always whole.
        self.active = set()


class Coordinator:
    """PartitionedParameterCoordinator's trace, fetch, prefetch and release."""

    def __init__(self, prefetch_bucket, max_live, max_reuse):
        self.prefetch_bucket = prefetch_bucket
        self.max_live = max_live
        self.max_reuse = max_reuse
        self.complete = False
        self.submodule_order = []
        self.param_order = []  # (param, step_id_last_used_at)
        self.gathered = self.peak = self.all_gathered = 0
        self.reset_step()

    def reset_step(self):
        if not self.complete and self.submodule_order:
            for step, module in enumerate(self.submodule_order):
                for p in sorted(set(module.ds_params), key=lambda p: p.ds_id):
                    self.param_order.append((p, step))
            self.complete = True
        self.queue = collections.deque(self.param_order)
        self.most_recent = collections.defaultdict(lambda: -10**10)
        self.step_id = 0
        self.n_available = 0

    def gather(self, p):
        p.available = True
        self.n_available += p.numel
        self.gathered += p.bytes
        self.all_gathered += p.bytes
        self.peak = max(self.peak, self.gathered)

    def fetch(self, module):
        if not self.complete:
            self.submodule_order.append(module)
        params = set(module.ds_params)
        for p in params:
            if not p.available:
                self.gather(p)
        for p in params:
            p.active.add(id(module))
        if self.complete:
            not_fetched = set(p for p in params if self.most_recent[p] < self.step_id)
            discarded = set()
            while self.queue and len(discarded) < len(not_fetched):
                p, step = self.queue.popleft()
                self.most_recent[p] = step
                discarded.add(p)
            assert discarded == not_fetched, "trace mismatch at step %d" % self.step_id
            if self.prefetch_bucket > 0:
                limit = min(self.max_live - self.n_available, self.prefetch_bucket)
                to_prefetch, numel = set(), 0
                while self.queue and numel < limit:
                    p, step = self.queue.popleft()
                    do = not p.available and p not in to_prefetch
                    self.most_recent[p] = max(self.most_recent[p], step)
                    if do:
                        to_prefetch.add(p)
                        numel += p.numel
                for p in to_prefetch:
                    self.gather(p)
        self.step_id += 1

    def to_release(self, module):
        release = set(p for p in module.ds_params if not p.persist)
        for p in module.ds_params:
            if self.most_recent[p] > self.step_id:
                release.discard(p)
        traversed = 0
        for m in self.submodule_order[self.step_id:]:
            if traversed >= self.max_reuse:
                break
            for p in m.ds_params:
                release.discard(p)
                traversed += p.numel
        return release

    def release(self, module):
        release = self.to_release(module) if self.complete else set(module.ds_params)
        for p in set(module.ds_params):
            p.active.discard(id(module))
            if p in release and p.available and not p.active and not p.persist:
                p.available = False
                self.n_available -= p.numel
                self.gathered -= p.bytes

    def release_leftovers(self):
        """The backward's end: modules whose post-backward never fired (inputs without gradients)."""
        for p in self.all_params:
            p.active.clear()
            if p.available and not p.persist:
                p.available = False
                self.n_available -= p.numel
                self.gathered -= p.bytes


def apply_to_tensors(fn, value):
    if torch.is_tensor(value):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(apply_to_tensors(fn, v) for v in value)
    return value


def install(model, coordinator):
    """parameter_offload.py's four hooks on every module."""
    by_param = {}
    for i, (_, t) in enumerate(model.named_parameters()):
        by_param[t] = Param(i, t.numel(), t.element_size(), False)
    coordinator.all_params = list(by_param.values())
    handles = []

    for module in model.modules():
        module.ds_params = [by_param[t] for t in module.parameters(recurse=False)]
        module.pre_bwd_count = 0
        module.grads_remaining = 0

        class PreBackward(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, m=module):
                ctx.m = m
                m.pre_bwd_count += 1
                return x.detach()

            @staticmethod
            def backward(ctx, g):
                if ctx.m.pre_bwd_count > 0:
                    coordinator.fetch(ctx.m)
                    ctx.m.pre_bwd_count -= 1
                return g, None

        class PostBackward(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, m=module):
                ctx.m = m
                if x.requires_grad:
                    m.grads_remaining += 1
                return x.detach()

            @staticmethod
            def backward(ctx, g):
                ctx.m.grads_remaining -= 1
                if ctx.m.grads_remaining == 0:
                    coordinator.release(ctx.m)
                return g, None

        def pre_forward(m, inputs, post=PostBackward):
            coordinator.fetch(m)
            m.grads_remaining = 0
            return apply_to_tensors(post.apply, inputs)

        def post_forward(m, inputs, output, pre=PreBackward):
            coordinator.release(m)
            return apply_to_tensors(pre.apply, output)

        handles.append(module.register_forward_pre_hook(pre_forward))
        handles.append(module.register_forward_hook(post_forward))
    return by_param, handles


def deepspeed_step(model, inputs, setting):
    """The recording step, then the measured one; returns (peak, all-gathered, persistent) bytes."""
    _, prefetch, max_live, reuse, persistence = setting
    coordinator = Coordinator(prefetch, max_live, reuse)
    params, handles = install(model, coordinator)
    for p in params.values():
        p.persist = p.numel <= persistence
        p.available = p.persist
    for _ in range(2):
        coordinator.reset_step()
        coordinator.peak = coordinator.all_gathered = 0
        model.zero_grad(set_to_none=True)
        model(*inputs).sum().backward()
        coordinator.release_leftovers()
    for h in handles:
        h.remove()
    persistent = sum(p.numel * p.element_bytes for p in params.values() if p.persist)
    # NB: persistent parameters are gathered once after the optimizer step (stage3.py _post_step).
    return coordinator.peak, coordinator.all_gathered + persistent, persistent


def checkpointed_llama_forward(self, input_ids):
    """hf_reference.Llama.forward with each decoder layer under torch.utils.checkpoint (reentrant), called
    as Hugging Face's gradient checkpointing calls it (the layer's __call__, so its hooks fire again in the
    recomputation)."""
    import torch.utils.checkpoint

    hidden_states = self.embed_tokens(input_ids)
    position_embeddings = self.rotary_emb(hidden_states)
    for decoder_layer in self.layers:
        hidden_states = torch.utils.checkpoint.checkpoint(decoder_layer, hidden_states, position_embeddings)
    return self.lm_head(self.norm(hidden_states))


def references(fixtures):
    """(name, module, inputs, TorchScript path, torchcost flags) for each reference model; the last is
    llama_hf_tiny with its decoder layers checkpointed (torchcost: --checkpoint blocks)."""
    out = []
    for name in ("llama_hf_tiny", "llama_hf_tiny_tied", "gpt2_tiny"):
        if name in hf_reference.MODELS:
            module = hf_reference.build(name)
            inputs = [hf_reference.example_input()]
        else:
            module, shapes = make_fixtures.build_model(name)
            inputs = make_fixtures.example_inputs(name, shapes)
        module.train()
        pt = os.path.join(fixtures, "%s_zero3.pt" % name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", torch.jit.TracerWarning)
            torch.jit.save(torch.jit.trace(module, tuple(inputs), check_trace=False), pt)
        flags = []
        for x in inputs:
            flags += ["--input", ",".join(str(d) for d in x.shape) + ":" + str(x.dtype).replace("torch.", "")]
        out.append((name, module, inputs, pt, flags))
    name, module, inputs, pt, flags = out[0]
    module = hf_reference.build(name).train()
    module.forward = types.MethodType(checkpointed_llama_forward, module)
    out.append((name + " checkpointed", module, inputs, pt, flags + ["--checkpoint", "blocks"]))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--torchcost", required=True)
    parser.add_argument("--fixtures", required=True)
    args = parser.parse_args(argv)
    os.makedirs(args.fixtures, exist_ok=True)
    passed = failed = 0
    for name, module, inputs, pt, flags in references(args.fixtures):
        for setting in SETTINGS:
            label, prefetch, max_live, reuse, persistence = setting
            want = deepspeed_step(module, inputs, setting)
            report, err = run_json(args.torchcost, [pt] + flags + [
                "--device", "cpu", "--optimizer", "sgd", "--shard", "zero3", "--world", str(N),
                "--zero3-prefetch-bucket", str(prefetch), "--zero3-max-live", str(max_live),
                "--zero3-max-reuse", str(reuse), "--zero3-persistence", str(persistence)])
            check = "%s %s" % (name, label)
            if err:
                failed += 1
                print("FAIL %s: %s" % (check, err))
                continue
            z = report["sharding"]["zero3"]
            got = (z["peak_gathered_bytes"], report["sharding"]["communication"]["all_gather"],
                   z["persistent_param_bytes"])
            if got == want:
                passed += 1
                print("PASS %s %s" % (check, got))
            else:
                failed += 1
                print("FAIL %s: torchcost (peak, all-gather, persistent) %s, DeepSpeed's rules %s" % (check, got, want))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
