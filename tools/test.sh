#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite
# (unit tests, and the oracle tests that compare against PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
cd build && ctest --output-on-failure -j2 "$@"
