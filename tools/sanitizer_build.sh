#!/usr/bin/env bash
# Sourced by tools/sanitize.sh and tools/fuzz.sh: configures the one clang
# build both use, so CI compiles the libraries once. Everything is built with
# AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's coverage
# (-fsanitize=fuzzer-no-link; the fuzz targets alone link libFuzzer), at -O1
# with line tables only, and libstdc++'s assertions on; the unit tests' own code
# is compiled without the sanitizers, at -O0 (TORCHCOST_TESTS_UNINSTRUMENTED:
# the libraries they test are what is checked). Without LibTorch: the
# TorchScript plugin (LibTorch's code, whose libraries lack the typeinfo UBSan's
# vptr check needs) is not built; everything before it (the zip check) is.
# NB: -O1 compiles the libraries about twice as long as -O0 (step_config.cc:
# 17 s against 9 s on the 2-core machine), but at -O0 the unit tests ran 2.5
# times as long and the fuzz targets ran a tenth of the inputs: in CI's 5 s,
# hf_config and rule_yaml did not get through their seeds.
source tools/build_config.sh

#   configure_sanitizer_build DIR
configure_sanitizer_build() {
  local build="$1"
  local cxx
  cxx="$(command -v clang++-14 || command -v clang++ || true)"
  if [ -z "$cxx" ]; then
    echo "sanitizer build: clang++ not found (tools/setup.sh installs clang and libclang-rt-14-dev)" >&2
    return 2
  fi
  local flags="-fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined"
  flags+=" -fno-omit-frame-pointer -D_GLIBCXX_ASSERTIONS"
  # NB: lld links a sanitized test binary in 0.5 s where ld.bfd takes 3.4 (27 binaries).
  local linker=""
  command -v ld.lld >/dev/null && linker=" -fuse-ld=lld"
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # NB: generator_args unquoted: it prints two words or none.
  cmake -S . -B "$build" $(generator_args "$build") "${BUILD_OPTIONS[@]}" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined$linker" \
    -DTORCHCOST_BUILD_BENCHMARKS=OFF -DTORCHCOST_BUILD_EXAMPLES=OFF -DTORCHCOST_INSTALL=OFF \
    -DTORCHCOST_WITH_LIBTORCH=OFF -DTORCHCOST_BUILD_FUZZERS=ON -DTORCHCOST_TESTS_UNINSTRUMENTED=ON \
    "${launcher[@]}" >/dev/null
  ASAN_SYMBOLIZER_PATH="$(command -v llvm-symbolizer-14 || command -v llvm-symbolizer || true)"
  export ASAN_SYMBOLIZER_PATH
}

# Runs `COMMAND ITEM` for every ITEM, two at a time (each runs on one core),
# longest first as given; ITEM's verdict goes to DIR/ITEM.status.
#   run_two_at_a_time DIR COMMAND ITEM...
run_two_at_a_time() {
  local dir="$1" cmd="$2" item
  shift 2
  mkdir -p "$dir"
  rm -f "$dir"/*.status
  for item in "$@"; do
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    { if "$cmd" "$item"; then echo passed; else echo failed; fi >"$dir/$item.status"; } &
  done
  wait
}

# Succeeds if ITEM passed in run_two_at_a_time DIR.
#   passed DIR ITEM
passed() {
  [ "$(cat "$1/$2.status" 2>/dev/null)" = passed ]
}
