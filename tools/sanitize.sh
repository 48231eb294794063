#!/usr/bin/env bash
# Builds the unit tests with AddressSanitizer and UndefinedBehaviorSanitizer
# (leaks included) and runs them; exits non-zero on any sanitizer report or
# failed test. Usage: bash tools/sanitize.sh [BUILD_DIR]   (default build-sanitize)
#
# NB: import_tests is left out: LibTorch's shared libraries lack the typeinfo
# UBSan's vptr check needs (undefined reference to typeinfo for c10::DynamicType),
# and the TorchScript importer is LibTorch's code path rather than ours.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-sanitize}"
FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
LAUNCHER=()
command -v ccache >/dev/null && LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTORCHCOST_BUILD_BENCHMARKS=OFF \
  "${LAUNCHER[@]}" -DCMAKE_CXX_FLAGS="$FLAGS" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
TESTS=(sym ir rules passes analysis report builder training peft step cli)
cmake --build "$BUILD" -j2 --target "${TESTS[@]/%/_tests}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
failed=0
for t in "${TESTS[@]}"; do
  log="$BUILD/${t}_tests.sanitize.log"
  if "$BUILD/${t}_tests" >"$log" 2>&1 && ! grep -qE "runtime error|ERROR: (Address|Leak)Sanitizer" "$log"; then
    echo "sanitize: ${t}_tests passed"
  else
    echo "sanitize: ${t}_tests FAILED (see $log)"; grep -E "runtime error|Sanitizer|FAILED" "$log" | head -5
    failed=$((failed + 1))
  fi
done
echo "sanitize: $(( ${#TESTS[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
