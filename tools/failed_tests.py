#!/usr/bin/python3
"""Prints the last lines of each failed test's output, so that they close a CI log.

Usage: /usr/bin/python3 tools/failed_tests.py BUILD [LINES]

Reads ctest's BUILD/Testing/Temporary/LastTestsFailed.log (one "N:name" a line)
and LastTest.log (every test's command and output); prints, for each failed test,
its name and the last LINES (default 15) lines of its output.
"""

import os
import re
import sys


def outputs(log_text):
    """Returns {test name: output text} from the text of ctest's LastTest.log."""
    found = {}
    pattern = re.compile(r'^"(?P<name>[^"]+)" start time:.*?\nOutput:\n-+\n(?P<out>.*?)<end of output>',
                         re.S | re.M)
    for m in pattern.finditer(log_text):
        found[m.group("name")] = m.group("out")
    return found


def main(argv):
    if not 1 <= len(argv) <= 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tmp = os.path.join(argv[0], "Testing", "Temporary")
    lines = int(argv[1]) if len(argv) > 1 else 15
    try:
        failed = [l.split(":", 1)[1].strip() for l in open(os.path.join(tmp, "LastTestsFailed.log")) if ":" in l]
        log = open(os.path.join(tmp, "LastTest.log"), errors="replace").read()
    except OSError as e:
        print("failed_tests: %s" % e, file=sys.stderr)
        return 1
    found = outputs(log)
    for name in failed:
        tail = found.get(name, "(no output recorded)\n").rstrip("\n").splitlines()[-lines:]
        print("=== %s failed; its last %d lines:" % (name, len(tail)))
        for l in tail:
            print("    " + l)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
