#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora from the project's own files.

    /usr/bin/python3 fuzz/make_seeds.py OUTDIR [--fixtures DIR]

OUTDIR/<target>/ gets one file per seed: rule_yaml each rule of rules/*.yaml
as a one-rule file; rule_expr the expressions of those rules; graph_json the
JSON graphs of tests/import and two that tools/export writes here;
module_attrs the attribute files of tests/import/module_attrs_test.cc and one
that tools/export/module_attrs.py writes here; zip_archive two TorchScript
archives torch.jit.save writes here, one with that file inside (plus the
fixtures under --fixtures smaller than 256 KiB), the same archives for
torchscript, their code/ sources for ts_source and their pickles for
ts_pickle; and sym_parse, cli_spec and
family_config the lines of fuzz/seeds/<target>.txt.
Nothing binary is kept in git.
"""
import argparse
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(outdir, target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(outdir, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def rule_chunks():
    """Yields (rule text as a one-rule file, its expressions)."""
    rules_dir = os.path.join(ROOT, "rules")
    for name in sorted(os.listdir(rules_dir)):
        if not name.endswith(".yaml"):
            continue
        text = open(os.path.join(rules_dir, name)).read()
        body = text.split("\nrules:\n", 1)
        if len(body) != 2:
            yield text, []
            continue
        for chunk in re.split(r"\n(?=  - )", body[1]):
            exprs = []
            for line in chunk.splitlines():
                m = re.match(r"^\s*(?:- )?[A-Za-z_][\w.]*:\s+(.+?)\s*(?:#.*)?$", line)
                if m and not m.group(1).startswith(("\"", "'", "[aten", "|", "{")):
                    exprs.append(m.group(1))
            yield "version: 1\nrules:\n" + chunk + "\n", exprs


def main(argv):
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("--fixtures", default="")
    args = p.parse_args(argv)
    shutil.rmtree(args.outdir, ignore_errors=True)
    for rule, exprs in rule_chunks():
        write(args.outdir, "rule_yaml", rule)
        for e in exprs:
            write(args.outdir, "rule_expr", e)
    for name in os.listdir(os.path.join(ROOT, "tests", "import")):
        src = open(os.path.join(ROOT, "tests", "import", name)).read()
        for m in re.finditer(r'R"json\((.*?)\)json"', src, re.S):
            write(args.outdir, "graph_json", m.group(1))
    src = open(os.path.join(ROOT, "tests", "import", "module_attrs_test.cc")).read()
    for m in re.finditer(r'R"\((.*?)\)"', src, re.S):
        write(args.outdir, "module_attrs", m.group(1))
    # Hugging Face configs: the bundled ones, and one with overrides after a NUL.
    configs = os.path.join(ROOT, "examples", "configs")
    for name in sorted(os.listdir(configs)):
        text = open(os.path.join(configs, name)).read()
        write(args.outdir, "hf_config", text)
        write(args.outdir, "hf_config", text + "\0num_hidden_layers=2,n_layer=2,dtype=bf16,attn=eager")
    # DeepSpeed configs: the unit tests' raw strings.
    src = open(os.path.join(ROOT, "tests", "step", "deepspeed_config_test.cc")).read()
    for m in re.finditer(r'R"\((.*?)\)"', src, re.S):
        write(args.outdir, "deepspeed_config", m.group(1))
    for target in ("sym_parse", "cli_spec", "family_config"):
        for line in open(os.path.join(ROOT, "fuzz", "seeds", target + ".txt")):
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                write(args.outdir, target, line)
    # TorchScript archives as torch.jit.save writes them: a plain one, and one
    # with the module attributes file (tools/export/module_attrs.py) inside.
    script = ("import os, sys, tempfile, torch\n"
              "sys.path.insert(0, sys.argv[1])\n"
              "from tools.export.module_attrs import module_attributes, save_traced\n"
              "torch.manual_seed(0)\n"
              "m = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()\n"
              "t = torch.jit.trace(m, torch.ones(1, 3, 8), check_trace=False)\n"
              "d = tempfile.mkdtemp()\n"
              "torch.jit.save(t, os.path.join(d, 'plain.pt'))\n"
              "save_traced(t, m, os.path.join(d, 'attrs.pt'))\n"
              "open(os.path.join(d, 'attrs.json'), 'w').write(module_attributes(m))\n"
              "from tools.export import export, InputSpec\n"
              "mlp = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.LayerNorm(8))\n"
              "export(mlp, [InputSpec([2, 4], 'float32', name='x')], os.path.join(d, 'mlp.json'),\n"
              "       symbolic_dims={'x': ['B', None]})\n"
              "cnn = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),\n"
              "                          torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 2))\n"
              "export(cnn, [InputSpec([1, 3, 8, 8], 'float32', name='img')], os.path.join(d, 'cnn.json'))\n"
              "print(d)\n")
    r = subprocess.run(["/usr/bin/python3", "-c", script, ROOT], capture_output=True, text=True)
    if r.returncode == 0 and r.stdout.strip():
        d = r.stdout.strip()
        for name, target in (("plain.pt", "zip_archive"), ("attrs.pt", "zip_archive"), ("attrs.json", "module_attrs"),
                             ("mlp.json", "graph_json"), ("cnn.json", "graph_json")):
            write(args.outdir, target, open(os.path.join(d, name), "rb").read())
        shutil.rmtree(d, ignore_errors=True)
    else:
        sys.stderr.write("make_seeds: torch.jit.save failed; zip_archive starts without an archive seed\n" + r.stderr)
    if args.fixtures and os.path.isdir(args.fixtures):
        for name in sorted(os.listdir(args.fixtures)):
            path = os.path.join(args.fixtures, name)
            if name.endswith(".pt") and os.path.getsize(path) < 256 * 1024:
                write(args.outdir, "zip_archive", open(path, "rb").read())
    # The reader without LibTorch: the same archives whole, and their sources and pickles.
    zip_dir = os.path.join(args.outdir, "zip_archive")
    for name in sorted(os.listdir(zip_dir)) if os.path.isdir(zip_dir) else []:
        data = open(os.path.join(zip_dir, name), "rb").read()
        write(args.outdir, "torchscript", data)
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                for member in z.namelist():
                    if member.endswith(".py"):
                        write(args.outdir, "ts_source", z.read(member))
                    elif member.endswith(".pkl") and not member.endswith(".debug_pkl"):
                        write(args.outdir, "ts_pickle", z.read(member))
        except zipfile.BadZipFile:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
