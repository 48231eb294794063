#!/usr/bin/python3
"""Checks `--allocator cuda` against a second, independent model of PyTorch's CUDA caching allocator.

Usage: /usr/bin/python3 tests/python/test_cuda_allocator.py --torchcost PATH [--fixtures DIR]

torchcost's JSON report with --allocator cuda carries the allocations it
replayed (training.allocations: [id, bytes] or [id] for a free). This test
replays them through a plain-Python allocator written from
c10/cuda/CUDACachingAllocator.cpp (pytorch/pytorch commit
001074d25084fdb87a799823e395a50f5ec044d3), sharing no code with
src/memory/caching_allocator.cc (it keeps each segment's blocks in an
address-ordered list and finds the best fit by a linear scan), and compares
the allocated peak, reserved peak, fragmentation and segment count with
training.memory.allocator, for small real models (built GPT-2 and LLaMA
families, a traced AlexNet) under the default settings, expandable_segments
and max_split_size_mb.

It also checks `--budget` with the allocator model: the same allocations
replayed with the segments limited to the budget less the context, where
PyTorch's malloc, when cudaMalloc fails, frees every cached segment no block
of which is in use (release_cached_blocks) and retries alloc_block before it
raises out of memory (num_alloc_retries counts the releases). torchcost's
training.memory.budget must agree on fits and on the releases, for budgets
between the allocated and the reserved peak, below the allocated peak, and
above the reserved peak.

The last line printed is "N passed, M failed"; the exit status is 0 iff M == 0.
"""

import argparse
import json
import os
import subprocess
import sys

MiB = 1 << 20
K_MIN_BLOCK = 512          # kMinBlockSize
K_SMALL_SIZE = MiB         # kSmallSize
K_SMALL_BUFFER = 2 * MiB   # kSmallBuffer
K_LARGE_BUFFER = 20 * MiB  # kLargeBuffer
K_MIN_LARGE_ALLOC = 10 * MiB
K_ROUND_LARGE = 2 * MiB
NO_LIMIT = float("inf")


class Blk:
    __slots__ = ("addr", "size", "used", "small", "seg")

    def __init__(self, addr, size, small, seg):
        self.addr, self.size, self.used, self.small, self.seg = addr, size, False, small, seg


class OutOfMemory(Exception):
    """No room for a new segment, even after releasing the cached ones."""


class PyAllocator:
    """One stream: segments are lists of blocks in address order; `limit` bytes of segments at most."""

    def __init__(self, max_split=NO_LIMIT, expandable=False, limit=NO_LIMIT):
        self.max_split = max_split
        self.expandable = expandable
        self.limit = limit
        self.retries = 0
        self.segments = []        # Each: {"small": bool, "blocks": [Blk...], "expandable": bool}
        self.es = {}              # small -> its expandable segment
        self.allocated = 0
        self.reserved = 0
        self.device_allocs = 0
        self.next_addr = 0

    @staticmethod
    def round_size(n):
        return K_MIN_BLOCK if n < K_MIN_BLOCK else -(-n // K_MIN_BLOCK) * K_MIN_BLOCK

    @staticmethod
    def segment_size(n):
        if n <= K_SMALL_SIZE:
            return K_SMALL_BUFFER
        if n < K_MIN_LARGE_ALLOC:
            return K_LARGE_BUFFER
        return -(-n // K_ROUND_LARGE) * K_ROUND_LARGE

    def _is_growable_end(self, b):
        seg = b.seg
        return seg["expandable"] and seg["blocks"][-1] is b and not b.used

    def _free_blocks(self, small):
        for seg in self.segments:
            if seg["small"] == small:
                for b in seg["blocks"]:
                    if not b.used:
                        yield b

    def _best_fit(self, size, small):
        fits = sorted((b for b in self._free_blocks(small) if b.size >= size), key=lambda b: (b.size, b.addr))
        if not fits:
            return None
        pick = fits[0]
        if self.expandable and self._is_growable_end(pick) and len(fits) > 1:
            pick = fits[1]  # get_free_block: the growable end counts as its segment's whole address space.
        if size < self.max_split <= pick.size:
            return None
        if size >= self.max_split and pick.size >= size + K_LARGE_BUFFER:
            return None
        return pick

    def _new_memory(self, size, small):
        self.device_allocs += 1
        if not self.expandable:
            n = self.segment_size(size)
            seg = {"small": small, "blocks": [], "expandable": False}
            b = Blk(self.next_addr, n, small, seg)
            seg["blocks"].append(b)
            self.segments.append(seg)
            self.next_addr += n
            self.reserved += n
            return b
        seg = self.es.get(small)
        if seg is None:
            seg = {"small": small, "blocks": [], "expandable": True, "base": self.next_addr, "mapped": 0}
            self.next_addr += 1 << 50
            self.es[small] = seg
            self.segments.append(seg)
        page = K_SMALL_BUFFER if small else K_LARGE_BUFFER
        last = seg["blocks"][-1] if seg["blocks"] else None
        have = last.size if last is not None and not last.used else 0
        grow = -(-(size - have) // page) * page
        seg["mapped"] += grow
        self.reserved += grow
        if have:
            last.size += grow
            return last
        b = Blk(seg["base"] + seg["mapped"] - grow, grow, small, seg)
        seg["blocks"].append(b)
        return b

    def _release_cached(self):
        """release_cached_blocks: every segment that is one free block goes back to the device."""
        self.retries += 1
        keep = []
        for seg in self.segments:
            blocks = seg["blocks"]
            if not seg["expandable"] and len(blocks) == 1 and not blocks[0].used:
                self.reserved -= blocks[0].size
            else:
                keep.append(seg)
        self.segments = keep

    def malloc(self, nbytes):
        size = self.round_size(nbytes)
        small = size <= K_SMALL_SIZE
        b = self._best_fit(size, small)
        if b is None:
            if self.expandable:
                if self.limit != NO_LIMIT:
                    raise ValueError("a limit with expandable segments is not modelled here")
            elif self.reserved + self.segment_size(size) > self.limit:   # cudaMalloc fails
                self._release_cached()
                if self.reserved + self.segment_size(size) > self.limit:
                    raise OutOfMemory()
            b = self._new_memory(size, small)
        rest = b.size - size
        if small or self.expandable:
            split = rest >= K_MIN_BLOCK
        else:
            split = size < self.max_split and rest > K_SMALL_SIZE
        if split:
            blocks = b.seg["blocks"]
            tail = Blk(b.addr + size, rest, small, b.seg)
            blocks.insert(blocks.index(b) + 1, tail)
            b.size = size
        b.used = True
        self.allocated += b.size
        return b

    def free(self, b):
        b.used = False
        self.allocated -= b.size
        blocks = b.seg["blocks"]
        i = blocks.index(b)
        if i + 1 < len(blocks) and not blocks[i + 1].used:
            b.size += blocks[i + 1].size
            del blocks[i + 1]
        if i > 0 and not blocks[i - 1].used:
            blocks[i - 1].size += b.size
            del blocks[i]


def fits_within(events, limit, max_split=NO_LIMIT):
    """Replays `events` with `limit` bytes for segments: (no allocation failed, the releases)."""
    a = PyAllocator(max_split, limit=limit)
    live = {}
    try:
        for e in events:
            if len(e) == 1:
                b = live.pop(e[0], None)
                if b is not None:
                    a.free(b)
            elif e[1] > 0:
                live[e[0]] = a.malloc(e[1])
    except OutOfMemory:
        return False, a.retries
    return True, a.retries


def replay(events, max_split=NO_LIMIT, expandable=False):
    a = PyAllocator(max_split, expandable)
    live = {}
    peak = 0
    reserved_seen = -1
    at_reserved = 0
    reserved_at_peak = 0
    for e in events:
        if len(e) == 1:
            b = live.pop(e[0], None)
            if b is not None:
                a.free(b)
            continue
        if e[1] <= 0:
            continue
        live[e[0]] = a.malloc(e[1])
        if a.allocated > peak:
            peak = a.allocated
            reserved_at_peak = a.reserved
        if a.reserved > reserved_seen:
            reserved_seen = a.reserved
            at_reserved = a.allocated
    # Fragmentation: what the segments held free when the allocated bytes peaked.
    return {"allocated_peak": peak, "reserved_peak": a.reserved,
            "allocated_at_reserved_peak": at_reserved,
            "reserved_at_allocated_peak": reserved_at_peak,
            "fragmentation": reserved_at_peak - peak, "segments": a.device_allocs}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", default=None)
    args = ap.parse_args()
    gpt2 = ["--model", "gpt2", "--config", "layers=2,hidden=128,heads=4,vocab=1000,context=256",
            "--set", "B=4", "--set", "S=64"]
    llama = ["--model", "llama", "--config", "layers=2,hidden=128,heads=4,kv_heads=4,intermediate=344,vocab=32000",
             "--set", "B=2", "--set", "S=128"]
    cases = [
        ("gpt2", gpt2, {}),
        ("gpt2_expandable", gpt2 + ["--expandable-segments"], {"expandable": True}),
        ("gpt2_max_split", gpt2 + ["--max-split-size-mb", "21"], {"max_split": 21 * MiB}),
        ("llama_bf16_foreach", llama + ["--autocast", "bf16", "--optimizer-impl", "foreach"], {}),
        ("llama_checkpoint_expandable", llama + ["--checkpoint", "blocks", "--expandable-segments"],
         {"expandable": True}),
        ("llama_infer", llama + ["--mode", "infer"], {}),
    ]
    if args.fixtures and os.path.exists(os.path.join(args.fixtures, "alexnet.pt")):
        alexnet = [os.path.join(args.fixtures, "alexnet.pt"), "--input", "8,3,224,224", "--loss", "cross_entropy"]
        cases += [("alexnet_b8", alexnet, {}),
                  ("alexnet_b8_max_split", alexnet + ["--max-split-size-mb", "64"], {"max_split": 64 * MiB}),
                  ("alexnet_b8_expandable_sgd", alexnet + ["--expandable-segments", "--optimizer", "sgd"],
                   {"expandable": True})]
    passed = failed = 0
    for name, argv, opts in cases:
        out = subprocess.run([args.torchcost] + argv + ["--allocator", "cuda", "--json"],
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            print("FAIL %s: exit %d: %s" % (name, out.returncode, out.stderr.strip()))
            failed += 1
            continue
        t = json.loads(out.stdout)["training"]
        got = t["memory"]["allocator"]
        want = replay(t["allocations"], **opts)
        bad = {k: (got[k], v) for k, v in want.items() if got[k] != v}
        # The peak is the allocated blocks'; the exact tensor bytes are never more.
        if t["memory"]["peak"]["value"] != got["allocated_peak"] or got["tensor_peak"]["value"] > got["allocated_peak"]:
            bad["peak"] = (t["memory"]["peak"]["value"], got["allocated_peak"])
        if bad:
            print("FAIL %s: torchcost vs the Python model: %s" % (name, bad))
            failed += 1
        else:
            print("ok %s: %d events, allocated %d, reserved %d, fragmentation %d, %d segments" % (
                name, len(t["allocations"]), want["allocated_peak"], want["reserved_peak"],
                want["fragmentation"], want["segments"]))
            passed += 1
        if opts:
            continue  # The budget's releases are checked under the default settings.
        context = got["context_bytes"]
        lo, hi = want["allocated_peak"], want["reserved_peak"]
        limits = [lo - 1, (lo + hi) // 2, lo + (hi - lo) // 8, hi]
        for limit in limits:
            budget = context + limit
            out = subprocess.run([args.torchcost] + argv + ["--allocator", "cuda", "--json", "--budget", str(budget)],
                                 capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                print("FAIL %s budget %d: exit %d: %s" % (name, budget, out.returncode, out.stderr.strip()))
                failed += 1
                continue
            b = json.loads(out.stdout)["training"]["memory"]["budget"]
            fits, retries = fits_within(t["allocations"], limit)
            want_b = {"fits": fits, "releases": retries if fits else 0,
                      "needed_bytes": hi + context, "decided_by": "cuda_allocator"}
            bad = {k: (b[k], v) for k, v in want_b.items() if b[k] != v}
            if bad:
                print("FAIL %s budget %d (%d for segments): torchcost vs the Python model: %s" % (
                    name, budget, limit, bad))
                failed += 1
            else:
                print("ok %s budget: %d for segments: fits %s after %d releases" % (name, limit, fits, retries))
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
