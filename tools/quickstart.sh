#!/usr/bin/env bash
# Installs what is missing, builds torchcost, and analyses a bundled example
# (ResNet-18, traced at test time by tools/make_fixtures.py: no weights in git).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target torchcost -j2
/usr/bin/python3 tools/make_fixtures.py build/fixtures --models resnet18 >/dev/null
./build/torchcost build/fixtures/resnet18.pt --input B,3,224,224 --set B=8 --depth 2 "$@"
