#!/usr/bin/python3
"""Oracle test of the TorchScript reader that does not load LibTorch.

Usage (Debian's system python3):

    /usr/bin/python3 tests/python/test_tsreader.py --torchcost BUILD/torchcost \\
        --fixtures BUILD/fixtures [--names resnet50,vit_b_16] [--jobs 2]

For every TorchScript archive in the fixture directory, `torchcost FILE --json`
runs with each reader ($TORCHCOST_TORCHSCRIPT_READER): "libtorch" (the plugin,
the reference), "fast" (the reader without LibTorch) and "auto" (the default).
Checks, per archive and mode (--mode train, and --mode infer):
  same_report  the fast reader's report is byte for byte the plugin's, or the
               fast reader declined the archive with a one-line error
               ("cannot read this TorchScript archive without LibTorch: ...");
  auto         the default's report is byte for byte the plugin's, always;
  errors       an archive the plugin cannot read (corrupt.pt) gives the same
               one-line error with every reader.
And, on the archives the fast reader reads, it reads at least the traced
torchvision and GPT/LLaMA fixtures (a decline there fails the test). A small
CNN with torch.diff (no rule covers aten::diff) is traced here too: the fast
reader reads it, and the shapes of diff's output come from LibTorch, loaded
then, as with the plugin ("outputs take the shapes LibTorch infers").

Prints one line per failed check and, last, "N passed, M failed" (and how many
archives the fast reader declined). Exits 0 only if nothing failed.
"""

import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torchcost_cli  # noqa: E402

# Fixtures the fast reader must read (tools/make_fixtures.py's traced models).
MUST_READ = ("alexnet", "vgg16", "resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
             "squeezenet1_0", "googlenet", "regnet_y_400mf", "vit_b_16", "gpt_tiny", "gpt_tiny_untied", "gpt2_tiny",
             "llama_tiny", "lenet5", "tiny", "tied")
DECLINED = "cannot read this TorchScript archive without LibTorch: "


def run(binary, path, mode, reader, timeout=300):
    """Returns (exit status, stdout, stderr) of `torchcost PATH --mode MODE --json` with READER."""
    env = dict(os.environ, TORCHCOST_TORCHSCRIPT_READER=reader)
    try:
        proc = subprocess.run([binary, path, "--mode", mode, "--json"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return -1, "", "timed out after %ds" % timeout
    return proc.returncode, proc.stdout, proc.stderr.strip()


def check_one(binary, path, mode):
    """Returns a list of (ok, label, detail) and whether the fast reader declined."""
    name = os.path.basename(path)
    label = "%s --mode %s" % (name, mode)
    ref = run(binary, path, mode, "libtorch")
    fast = run(binary, path, mode, "fast")
    auto = run(binary, path, mode, "auto")
    out = []
    declined = False
    if ref[0] != 0:
        # The plugin cannot read it: every reader gives one line; the fast reader's is LibTorch's or its own.
        for who, r in (("fast", fast), ("auto", auto)):
            out.append((r[0] != 0 and len(r[2].splitlines()) == 1, "%s errors (%s)" % (label, who),
                        "exit %d, stderr %r; the plugin's: %r" % (r[0], r[2][:300], ref[2][:300])))
        out.append((auto[2] == ref[2], "%s errors (auto = libtorch)" % label,
                    "auto %r, libtorch %r" % (auto[2][:300], ref[2][:300])))
        return out, False
    if fast[0] != 0:
        declined = True
        out.append((DECLINED in fast[2] and len(fast[2].splitlines()) == 1, "%s same_report" % label,
                    "the fast reader failed without declining: %r" % fast[2][:300]))
        stem = name[:-3]
        out.append((stem not in MUST_READ, "%s must_read" % label, "declined: %r" % fast[2][:300]))
    else:
        same = fast[1] == ref[1]
        detail = ""
        if not same:
            a, b = fast[1].splitlines(), ref[1].splitlines()
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            detail = "reports differ at line %d: fast %r, libtorch %r" % (
                first + 1, a[first][:200] if first < len(a) else None, b[first][:200] if first < len(b) else None)
        out.append((same, "%s same_report" % label, detail))
    out.append((auto[0] == 0 and auto[1] == ref[1], "%s auto" % label,
                "exit %d, stderr %r" % (auto[0], auto[2][:300]) if auto[0] != 0 else "reports differ"))
    return out, declined


def trace_diffnet(directory):
    """Writes DIRECTORY/diffnet.pt: conv, torch.diff along W, linear, traced at 2x3x8x8."""
    import torch

    class DiffNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 4, 3)
            self.fc = torch.nn.Linear(4 * 6 * 5, 2)  # conv: 8 -> 6; diff: W 6 -> 5.

        def forward(self, x):
            return self.fc(torch.diff(self.conv(x), dim=-1).flatten(1))

    torch.manual_seed(0)
    path = os.path.join(directory, "diffnet.pt")
    torch.jit.save(torch.jit.trace(DiffNet().eval(), torch.randn(2, 3, 8, 8)), path)
    with open(os.path.join(directory, "diffnet.meta.json"), "w") as f:
        json.dump({"input_shapes": [[2, 3, 8, 8]], "input_dtypes": ["float32"]}, f)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--torchcost", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--names", default="", help="comma-separated fixture stems (default: every .pt)")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if not (os.path.isfile(args.torchcost) and os.access(args.torchcost, os.X_OK)):
        print("%s is not an executable file" % args.torchcost)
        return 1
    paths = sorted(glob.glob(os.path.join(args.fixtures, "*.pt")))
    if args.names:
        wanted = set(args.names.split(","))
        paths = [p for p in paths if os.path.basename(p)[:-3] in wanted]
    if not paths:
        print("no .pt files in %s (ctest -R fixtures.generate writes them)" % args.fixtures)
        return 1
    # Training analyses of the batch-1 archives, inference of all.
    jobs = [(p, "infer") for p in paths] + [(p, "train") for p in paths if "_b3" not in p and "_b8" not in p]
    results = torchcost_cli.Results()
    declined = set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for (path, mode), (checks, was_declined) in zip(jobs, pool.map(lambda j: check_one(args.torchcost, *j), jobs)):
            if was_declined:
                declined.add(os.path.basename(path))
            for ok, label, detail in checks:
                results.check(ok, label, detail)
    with tempfile.TemporaryDirectory() as tmp:
        path = trace_diffnet(tmp)
        for mode in ("infer", "train"):
            checks, was_declined = check_one(args.torchcost, path, mode)
            results.check(not was_declined, "diffnet.pt --mode %s read without LibTorch" % mode)
            for ok, label, detail in checks:
                results.check(ok, label, detail)
        code, out, err = run(args.torchcost, path, "infer", "fast")
        results.check(code == 0 and "aten::diff" in out and "outputs take the shapes LibTorch infers: [2, 4, 6, 5]" in out,
                      "diffnet.pt shape of aten::diff from LibTorch", "exit %d, %r" % (code, err[:300]))
    print("# %d archives, %d declined by the fast reader: %s" % (len(paths), len(declined), " ".join(sorted(declined))))
    return results.summary()


if __name__ == "__main__":
    sys.exit(main())
