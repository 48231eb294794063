"""Measures commands end to end as cold processes, side by side.

    /usr/bin/python3 tools/start_time.py [--runs N] -- 'CMD 1' 'CMD 2' ...

Each command (split on spaces, no shell) is run N times (default 21), the
commands interleaved so that load on the machine affects them alike; stdout
goes to /dev/null. Prints, per command, the median and the minimum of its CPU
time (user + sys, from wait4's rusage) and of its wall time, in ms.
"""

import argparse
import os
import statistics
import sys
import time


def run_once(argv):
    """Returns (cpu_ms, wall_ms, exit status) of one run of `argv`."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, usage = os.wait4(pid, 0)
    wall = (time.perf_counter() - start) * 1e3
    return (usage.ru_utime + usage.ru_stime) * 1e3, wall, os.waitstatus_to_exitcode(status)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("commands", nargs="+")
    args = parser.parse_args()
    cmds = [c.split() for c in args.commands]
    cpu = [[] for _ in cmds]
    wall = [[] for _ in cmds]
    for _ in range(args.runs):
        for i, argv in enumerate(cmds):
            c, w, rc = run_once(argv)
            if rc != 0:
                sys.exit("%s: exit status %d" % (" ".join(argv), rc))
            cpu[i].append(c)
            wall[i].append(w)
    print("%-8s %-8s %-8s %-8s  command (%d cold runs each; ms)" % ("cpu med", "cpu min", "wall med", "wall min",
                                                                      args.runs))
    for i, argv in enumerate(cmds):
        print("%-8.1f %-8.1f %-8.1f %-8.1f  %s" % (statistics.median(cpu[i]), min(cpu[i]), statistics.median(wall[i]),
                                                   min(wall[i]), " ".join(argv)))


if __name__ == "__main__":
    main()
