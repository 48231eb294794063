#!/usr/bin/env python3
"""Writes a large JSON graph (docs/graph-schema.md) for measuring torchcost's limits.

A chain: x [4, 64] -> linear (w [64, 64]) -> relu -> relu -> ... (NODES nodes in
all). With --distinct-modules each node runs in a module of its own
(layers.0, layers.1, ...); otherwise all in the root.

    /usr/bin/python3 tools/make_large_graph.py 1000000 chain.json
    torchcost chain.json --input 4,64
"""
import argparse
import json
import sys


def write_graph(nodes, out, distinct_modules=False):
    out.write('{"format": "torchcost.graph", "version": 1, "model": "Chain",\n')
    out.write(' "inputs": [{"name": "x", "shape": [4, 64], "dtype": "float32"}],\n')
    out.write(' "params": [{"name": "fc.weight", "shape": [64, 64]}],\n')
    out.write(' "modules": [{"path": "", "type": "Chain"}')
    if distinct_modules:
        for i in range(nodes):
            out.write(',\n  {"path": "layers.%d", "type": "%s"}' % (i, "Linear" if i == 0 else "ReLU"))
    out.write('],\n "nodes": [\n')

    def module(i):
        return ', "module": "layers.%d"' % i if distinct_modules else ""

    out.write('  {"op": "aten::linear", "args": {"input": {"input": 0}, "weight": {"param": "fc.weight"}, '
              '"bias": null}, "outputs": ["v0"]%s}' % module(0))
    for i in range(1, nodes):
        out.write(',\n  {"op": "aten::relu", "args": {"self": {"ref": "v%d"}}, "outputs": ["v%d"]%s}'
                  % (i - 1, i, module(i)))
    out.write('],\n "outputs": [{"ref": "v%d"}]}\n' % (nodes - 1))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("nodes", type=int, help="nodes in the chain (at least 1)")
    p.add_argument("out", help="the JSON file to write ('-': stdout)")
    p.add_argument("--distinct-modules", action="store_true", help="each node in a module of its own")
    a = p.parse_args()
    if a.nodes < 1:
        sys.exit("make_large_graph.py: nodes must be at least 1")
    if a.out == "-":
        write_graph(a.nodes, sys.stdout, a.distinct_modules)
    else:
        with open(a.out, "w") as f:
            write_graph(a.nodes, f, a.distinct_modules)


if __name__ == "__main__":
    main()
