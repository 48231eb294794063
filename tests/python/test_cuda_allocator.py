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
raises out of memory (num_alloc_retries counts the releases). With
expandable segments the segment's pages are mapped and unmapped instead: a
release unmaps every whole page of its free blocks (release_blocks,
unmap_block), leaving unmapped ranges between live blocks; a request no free
block serves maps pages into the lowest-address unmapped range that, with the
free block before it, has room (find_expandable_block, map_block), and the
best fit counts a free block with the unmapped range after it
(get_free_block's expandable_size). torchcost's training.memory.budget must
agree on fits and on the releases, for budgets between the allocated and the
reserved peak, below the allocated peak, and above the reserved peak; with
expandable segments also one byte below the reserved peak and at the fewest
2 MiB pages the Python model fits in.

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
    __slots__ = ("addr", "size", "used", "small", "seg", "mapped")

    def __init__(self, addr, size, small, seg, mapped=True):
        self.addr, self.size, self.used, self.small, self.seg = addr, size, False, small, seg
        self.mapped = mapped  # False: an expandable segment's unmapped pages (never used, never in best fit).


class OutOfMemory(Exception):
    """No room for a new segment, even after releasing the cached ones."""


class PyAllocator:
    """One stream: segments are lists of blocks in address order; `limit` bytes of segments at most.

    An expandable segment's list spans its whole address space: mapped blocks (used or free) and
    unmapped ranges of whole pages (Blk.mapped False), the last one running to the segment's end.
    """

    def __init__(self, max_split=NO_LIMIT, expandable=False, limit=NO_LIMIT):
        self.max_split = max_split
        self.expandable = expandable
        self.limit = limit
        self.retries = 0
        self.segments = []        # Each: {"small": bool, "blocks": [Blk...], "expandable": bool[, "base": int]}
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

    @staticmethod
    def page_size(small):
        return K_SMALL_BUFFER if small else K_LARGE_BUFFER

    def _free_blocks(self, small):
        for seg in self.segments:
            if seg["small"] == small:
                for b in seg["blocks"]:
                    if not b.used and b.mapped:
                        yield b

    @staticmethod
    def _expandable_size(b):
        """get_free_block's expandable_size: a free block and the unmapped range right after it."""
        blocks = b.seg["blocks"]
        i = blocks.index(b)
        return b.size + (blocks[i + 1].size if i + 1 < len(blocks) and not blocks[i + 1].mapped else 0)

    def _best_fit(self, size, small):
        fits = sorted((b for b in self._free_blocks(small) if b.size >= size), key=lambda b: (b.size, b.addr))
        if not fits:
            return None
        i = 0
        if self.expandable:
            # get_free_block: from the best fit, on to the next larger block while that one's
            # expandable_size is smaller than the current one's.
            while i + 1 < len(fits) and self._expandable_size(fits[i + 1]) < self._expandable_size(fits[i]):
                i += 1
        pick = fits[i]
        if size < self.max_split <= pick.size:
            return None
        if size >= self.max_split and pick.size >= size + K_LARGE_BUFFER:
            return None
        return pick

    def _new_segment(self, size, small):
        """cudaMalloc of a whole segment (alloc_block); None where it would pass the limit."""
        n = self.segment_size(size)
        if self.reserved + n > self.limit:
            return None
        self.device_allocs += 1
        seg = {"small": small, "blocks": [], "expandable": False}
        b = Blk(self.next_addr, n, small, seg)
        seg["blocks"].append(b)
        self.segments.append(seg)
        self.next_addr += n
        self.reserved += n
        return b

    def _find_expandable(self, size, small):
        """find_expandable_block: the lowest-address unmapped range (or the free block right before
        it) from which free and unmapped blocks add up to `size`; a new segment if none does."""
        # NB: one stream: a pool has one expandable segment (its address space has room for anything).
        for seg in sorted((s for s in self.segments if s["expandable"] and s["small"] == small),
                          key=lambda s: s["base"]):
            blocks = seg["blocks"]
            for i, c in enumerate(blocks):
                if c.mapped:
                    continue
                if i > 0 and not blocks[i - 1].used:
                    i -= 1
                room = 0
                j = i
                while room < size and j < len(blocks) and not blocks[j].used:
                    room += blocks[j].size
                    j += 1
                if room >= size:
                    return seg, i
        # A new segment: its address space is one unmapped block (PyTorch: 1 1/8 of the device's memory).
        page = self.page_size(small)
        space = page << 30
        seg = {"small": small, "blocks": [], "expandable": True, "base": self.next_addr}
        seg["blocks"].append(Blk(self.next_addr, space, small, seg, mapped=False))
        self.next_addr += space
        self.segments.append(seg)
        return seg, 0

    def _map(self, seg, i, nbytes):
        """map_block: maps the pages covering the first `nbytes` of unmapped block i, merged with its
        free neighbours; the index of the merged free block, or None where the pages pass the limit."""
        blocks = seg["blocks"]
        b = blocks[i]
        page = self.page_size(seg["small"])
        n = -(-nbytes // page) * page
        if self.reserved + n > self.limit:  # cuMemCreate fails: the pages made so far are released.
            return None
        if n < b.size:
            blocks.insert(i + 1, Blk(b.addr + n, b.size - n, b.small, seg, mapped=False))
        b.size, b.mapped = n, True
        self.reserved += n
        self.device_allocs += 1
        if i + 1 < len(blocks) and blocks[i + 1].mapped and not blocks[i + 1].used:
            b.size += blocks[i + 1].size
            del blocks[i + 1]
        if i > 0 and blocks[i - 1].mapped and not blocks[i - 1].used:
            blocks[i - 1].size += b.size
            del blocks[i]
            i -= 1
        return i

    def _alloc_expandable(self, size, small):
        """try_allocate_expandable_block: maps pages into the range find_expandable_block picks, as
        few as make its first block `size` bytes; None where a mapping passes the limit (the pages
        already mapped stay)."""
        seg, i = self._find_expandable(size, small)
        blocks = seg["blocks"]
        if not blocks[i].mapped:
            i = self._map(seg, i, min(blocks[i].size, size))
            if i is None:
                return None
        while blocks[i].size < size:
            nxt = blocks[i + 1]  # Unmapped: free and unmapped blocks alternate.
            i = self._map(seg, i + 1, min(size - blocks[i].size, nxt.size))
            if i is None:
                return None
        return blocks[i]

    def _unmap(self, b):
        """unmap_block: unmaps the whole pages inside free block `b` (ExpandableSegment::unmap rounds
        inward); the bytes before and after them stay mapped free blocks."""
        seg = b.seg
        blocks = seg["blocks"]
        page = self.page_size(seg["small"])
        lo = seg["base"] + -(-(b.addr - seg["base"]) // page) * page
        hi = seg["base"] + (b.addr + b.size - seg["base"]) // page * page
        if lo >= hi:
            return
        i = blocks.index(b)
        end = b.addr + b.size
        hole = Blk(lo, hi - lo, b.small, seg, mapped=False)
        parts = ([Blk(b.addr, lo - b.addr, b.small, seg)] if lo > b.addr else []) + [hole] + (
            [Blk(hi, end - hi, b.small, seg)] if end > hi else [])
        blocks[i:i + 1] = parts
        self.reserved -= hi - lo
        j = blocks.index(hole)
        if j + 1 < len(blocks) and not blocks[j + 1].mapped:
            hole.size += blocks[j + 1].size
            del blocks[j + 1]
        if j > 0 and not blocks[j - 1].mapped:
            blocks[j - 1].size += hole.size
            del blocks[j]

    def _release_cached(self):
        """release_cached_blocks: every segment that is one free block goes back to the device;
        expandable segments unmap their free blocks' whole pages (release_blocks, unmap_block), and
        one left a single unmapped block goes (release_expandable_segment)."""
        self.retries += 1
        keep = []
        for seg in self.segments:
            blocks = seg["blocks"]
            if seg["expandable"]:
                to_unmap = [b for b in blocks if b.mapped and not b.used]
                for b in to_unmap:
                    self._unmap(b)
                if to_unmap and len(blocks) == 1 and not blocks[0].mapped:
                    continue  # release_expandable_segment.
                keep.append(seg)
            elif len(blocks) == 1 and not blocks[0].used:
                self.reserved -= blocks[0].size
            else:
                keep.append(seg)
        self.segments = keep

    def malloc(self, nbytes):
        size = self.round_size(nbytes)
        small = size <= K_SMALL_SIZE
        b = self._best_fit(size, small)
        if b is None:
            grow = self._alloc_expandable if self.expandable else self._new_segment
            b = grow(size, small)
            if b is None:  # cudaMalloc (cuMemCreate) fails.
                if self.expandable and self.max_split != NO_LIMIT:
                    # release_available_cached_blocks would release_block an expandable block.
                    raise ValueError("a limit with expandable segments and max_split_size is not modelled here")
                self._release_cached()
                b = grow(size, small)
                if b is None:
                    raise OutOfMemory()
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
        if i + 1 < len(blocks) and not blocks[i + 1].used and blocks[i + 1].mapped:
            b.size += blocks[i + 1].size
            del blocks[i + 1]
        if i > 0 and not blocks[i - 1].used and blocks[i - 1].mapped:
            blocks[i - 1].size += b.size
            del blocks[i]


def fits_within(events, limit, max_split=NO_LIMIT, expandable=False):
    """Replays `events` with `limit` bytes for segments: (no allocation failed, the releases)."""
    a = PyAllocator(max_split, expandable, limit)
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
        # Under a budget, releases here leave unmapped pages between live blocks: the gpt2 step's
        # stay a hole, the llama step's next segment-growing request maps a page into its hole.
        ("gpt2_accumulate_foreach_expandable",
         gpt2 + ["--accumulate", "2", "--optimizer-impl", "foreach", "--expandable-segments"], {"expandable": True}),
        ("llama_b8_checkpoint_foreach_expandable",
         llama[:4] + ["--set", "B=8", "--set", "S=128", "--checkpoint", "blocks", "--optimizer-impl", "foreach",
                      "--expandable-segments"], {"expandable": True}),
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
        if "max_split" in opts:
            continue  # The budget's releases are checked under the default settings and expandable segments.
        expandable = opts.get("expandable", False)
        context = got["context_bytes"]
        lo, hi = want["allocated_peak"], want["reserved_peak"]
        limits = [lo - 1, (lo + hi) // 2, lo + (hi - lo) // 8, hi]
        if expandable:
            # Reserved bytes are whole 2 MiB pages: one byte short of the reserved peak, and the
            # fewest pages the Python model fits in (below the peak only once a release unmapped pages).
            limits.insert(3, hi - 1)
            page = K_SMALL_BUFFER
            least = next((n for n in range(-(-lo // page) * page, hi, page) if fits_within(
                t["allocations"], n, expandable=True)[0]), hi)
            if least not in limits:
                limits.insert(3, least)
        for limit in limits:
            budget = context + limit
            out = subprocess.run([args.torchcost] + argv + ["--allocator", "cuda", "--json", "--budget", str(budget)],
                                 capture_output=True, text=True, timeout=300)
            if out.returncode != 0:
                print("FAIL %s budget %d: exit %d: %s" % (name, budget, out.returncode, out.stderr.strip()))
                failed += 1
                continue
            b = json.loads(out.stdout)["training"]["memory"]["budget"]
            fits, retries = fits_within(t["allocations"], limit, expandable=expandable)
            want_b = {"fits": fits, "releases": retries if fits else 0,
                      "needed_bytes": hi + context, "decided_by": "cuda_allocator"}
            bad = {k: (b[k], v) for k, v in want_b.items() if b[k] != v}
            if bad:
                print("FAIL %s budget %d (%d for segments): torchcost vs the Python model: %s%s" % (
                    name, budget, limit, bad, " (torchcost: pessimistic)" if b.get("pessimistic") else ""))
                failed += 1
            else:
                print("ok %s budget: %d for segments: fits %s after %d releases" % (name, limit, fits, retries))
                passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
