#!/usr/bin/env bash
# Writes every TorchScript fixture the tests read into DIR: tools/make_fixtures.py
# at the models' example batch, at batch 3 and at batch 8, the three runs side by
# side (ctest's fixtures.generate; files that exist are skipped).
# Usage: bash tools/make_test_fixtures.sh DIR
# NB: each run traces one model at a time and is bound by one core's Python and
# the disk (about 4 GB in all); side by side they took 60 s instead of 89 on the
# 2-core machine.
set -uo pipefail
cd "$(dirname "$0")/.."
DIR="${1:?usage: tools/make_test_fixtures.sh DIR}"
pids=()
for batch in "" 3 8; do
  /usr/bin/python3 tools/make_fixtures.py "$DIR" ${batch:+--batch "$batch"} &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
exit "$failed"
