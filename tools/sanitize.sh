#!/usr/bin/env bash
# Builds the unit tests with clang's AddressSanitizer and UndefinedBehavior-
# Sanitizer (leaks included) and runs them; exits non-zero on any sanitizer
# report or failed test. Usage: bash tools/sanitize.sh [BUILD_DIR]
# (default build-san, the build tools/fuzz.sh shares: tools/sanitizer_build.sh).
#
# NB: the build is made without LibTorch (TORCHCOST_WITH_LIBTORCH=OFF):
# LibTorch's shared libraries lack the typeinfo UBSan's vptr check needs, and the
# TorchScript plugin is LibTorch's code path rather than ours. import_tests runs
# (the JSON frontend, module attributes, the zip check, the plugin loader); its
# TorchScript tests skip. The Release build's ctest runs them with LibTorch.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build-san}"
source tools/sanitizer_build.sh
configure_sanitizer_build "$BUILD"
# Every layer's unit tests, as CMakeLists.txt declares them (torchcost_tests(NAME ...)).
mapfile -t TESTS < <(sed -n 's/^ *torchcost_tests(\([a-z_]*\) .*/\1/p' CMakeLists.txt)
nice cmake --build "$BUILD" -j2 --target torchcost_unit_tests
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Runs one layer's binary; fails on a failed test or a sanitizer's report.
run_one() {
  local log="$BUILD/${1}_tests.sanitize.log"
  "$BUILD/${1}_tests" >"$log" 2>&1 && ! grep -qE "runtime error|ERROR: (Address|Leak)Sanitizer" "$log"
}
# NB: the longest ones (step, builder, nas) first.
ORDER=($(printf '%s\n' "${TESTS[@]}" | grep -xE 'step|builder|nas') $(printf '%s\n' "${TESTS[@]}" | grep -vxE 'step|builder|nas'))
run_two_at_a_time "$BUILD/sanitize-status" run_one "${ORDER[@]}"
failed=0
for t in "${TESTS[@]}"; do
  log="$BUILD/${t}_tests.sanitize.log"
  if passed "$BUILD/sanitize-status" "$t"; then
    echo "sanitize: ${t}_tests passed"
  else
    echo "sanitize: ${t}_tests FAILED (see $log)"; grep -E "runtime error|Sanitizer|FAILED" "$log" | head -5 || true
    failed=$((failed + 1))
  fi
done
echo "sanitize: $(( ${#TESTS[@]} - failed )) passed, $failed failed"
[ "$failed" -eq 0 ]
