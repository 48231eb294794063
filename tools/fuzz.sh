#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, in the clang sanitizer build shared with
# tools/sanitize.sh) and runs each for SECONDS from seeds made of the project's
# own files (fuzz/make_seeds.py). Exits non-zero on a crash, a sanitizer report
# (leaks included), a hang (one input over 10 s) or an OOM (over 2 GiB); the
# input that did it is left in BUILD/fuzz-artifacts/.
# Usage: bash tools/fuzz.sh SECONDS [TARGET...]   (BUILD: $TORCHCOST_SAN_BUILD, default build-san)
set -euo pipefail
cd "$(dirname "$0")/.."
PER="${1:?usage: tools/fuzz.sh SECONDS [TARGET...]}"
shift
BUILD="${TORCHCOST_SAN_BUILD:-build-san}"
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(sym_parse rule_expr rule_yaml graph_json module_attrs zip_archive torchscript ts_source ts_pickle cli_spec
  family_config hf_config deepspeed_config)
source tools/sanitizer_build.sh
configure_sanitizer_build "$BUILD"
# NB: all of them as one goal (fuzz/CMakeLists.txt's `fuzzers`), so that the build tool builds them
# side by side.
if [ $# -eq 0 ]; then goals=(fuzzers); else goals=("${TARGETS[@]/#/fuzz_}"); fi
nice cmake --build "$BUILD" -j2 --target "${goals[@]}"
CORPUS="$BUILD/fuzz-corpus"
ARTIFACTS="$BUILD/fuzz-artifacts"
mkdir -p "$ARTIFACTS"
/usr/bin/python3 fuzz/make_seeds.py "$CORPUS/seeds" --fixtures "${TORCHCOST_FIXTURES:-build/fixtures}"
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Fuzzes one target; fails on a finding.
fuzz_one() {
  local t="$1"
  mkdir -p "$CORPUS/$t" "$CORPUS/seeds/$t"
  # The first directory keeps what the run finds (kept between local runs); the seeds are only read.
  nice "$BUILD/fuzz/fuzz_$t" -max_total_time="$PER" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -artifact_prefix="$ARTIFACTS/$t-" -print_final_stats=1 "$CORPUS/$t" "$CORPUS/seeds/$t" >"$ARTIFACTS/$t.log" 2>&1
}
run_two_at_a_time "$ARTIFACTS" fuzz_one "${TARGETS[@]}"
failed=0
for t in "${TARGETS[@]}"; do
  log="$ARTIFACTS/$t.log"
  if passed "$ARTIFACTS" "$t"; then
    echo "fuzz: $t: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') runs in ${PER} s," \
         "$(ls "$CORPUS/$t" | wc -l) corpus inputs, no finding"
  else
    echo "fuzz: $t FAILED (log $log; input $(ls -t "$ARTIFACTS/$t-"* 2>/dev/null | grep -v '\.log$' | head -1))"
    grep -E "ERROR: |SUMMARY: |runtime error|Assertion|what\(\)" "$log" | head -5 || true
    failed=$((failed + 1))
  fi
done
echo "fuzz: $(( ${#TARGETS[@]} - failed )) of ${#TARGETS[@]} targets ran ${PER} s without a finding"
[ "$failed" -eq 0 ]
