"""Shared fixtures: the torchcost command (the CLI whose JSON the package must equal) and a scratch directory."""

import json
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="session")
def cli():
    """Runs the torchcost command with arguments; returns its parsed --json output."""
    exe = os.environ.get("TORCHCOST_CLI") or os.path.join(REPO, "build", "torchcost")
    if not os.path.exists(exe):
        pytest.fail("the torchcost command is needed (set TORCHCOST_CLI): %s" % exe)

    def run(*args):
        proc = subprocess.run([exe, *args, "--json"], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)
    return run


def same_report(py, cli_doc):
    """Asserts two JSON reports are equal except for the model's name (the package names the class)."""
    a, b = dict(py), dict(cli_doc)
    a.pop("model")
    b.pop("model")
    assert a == b
