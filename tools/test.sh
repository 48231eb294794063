#!/usr/bin/env bash
# Installs what is missing, builds everything, and runs the whole test suite
# (unit tests, and the oracle tests that compare against PyTorch); then the
# unit tests under AddressSanitizer + UndefinedBehaviorSanitizer and each fuzz
# target for a short bounded run, both in one clang build (build-san/).
# TORCHCOST_SANITIZE=0 skips the last two; TORCHCOST_FUZZ_SECONDS sets the run
# per target (default 5, two at a time: thirteen targets, about 35 s; a smoke
# run; longer runs: tools/fuzz.sh SECONDS). A clean clone on the slower 2-core
# machine took 18 minutes: the Release build 241 s, ctest 461 s, the clang
# build with its unit tests and the fuzz run 385 s.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
# NB: with the sanitizer build, every layer's unit tests run there (tools/sanitize.sh);
# the Release build then builds only the import layer's, whose TorchScript tests
# need LibTorch, which the sanitizer build leaves out. That saves ~90 -O3 test
# compiles (about 4 minutes on the 2-core machine).
layers=""
[ "${TORCHCOST_SANITIZE:-1}" != 0 ] && layers=import
source tools/build_config.sh
# NB: generator_args unquoted: it prints two words or none.
cmake -S . -B build $(generator_args build) "${BUILD_OPTIONS[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DTORCHCOST_UNIT_TEST_LAYERS="$layers" >/dev/null
cmake --build build -j2
if ! (cd build && ctest --output-on-failure -j2 "$@"); then
  # NB: a CI log is often read from its end: repeat why each failed test failed there.
  /usr/bin/python3 tools/failed_tests.py build || true
  exit 1
fi
if [ "${TORCHCOST_SANITIZE:-1}" != 0 ]; then
  start=$SECONDS
  bash tools/sanitize.sh
  TORCHCOST_FIXTURES=build/fixtures bash tools/fuzz.sh "${TORCHCOST_FUZZ_SECONDS:-5}"
  echo "test: sanitizers and fuzzing took $((SECONDS - start)) s"
fi
