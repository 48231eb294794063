#!/usr/bin/env bash
# Installs what is missing, builds torchcost, installs the Python package
# (pip install . into .venv, a virtual environment that sees Debian's torch),
# and analyses a bundled example (ResNet-18, traced at test time by
# tools/make_fixtures.py: no weights in git).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
source tools/build_config.sh
# NB: generator_args unquoted: it prints two words or none.
cmake -S . -B build $(generator_args build) "${BUILD_OPTIONS[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target torchcost -j2
# NB: Debian's python3 is externally managed (PEP 668): the package goes into .venv.
[ -x .venv/bin/pip ] || /usr/bin/python3 -m venv --system-site-packages .venv
TORCHCOST_BUILD_DIR="$PWD/build" .venv/bin/pip install -q --no-build-isolation . >&2
/usr/bin/python3 tools/make_fixtures.py build/fixtures --models resnet18 >/dev/null
./build/torchcost build/fixtures/resnet18.pt --input B,3,224,224 --set B=8 --depth 2 "$@"
