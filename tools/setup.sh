#!/usr/bin/env bash
# Installs torchcost's build and test dependencies from Debian's packages.
# Idempotent: packages already present are skipped without touching the network.
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libboost-graph-dev libyaml-cpp-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev zlib1g-dev libeigen3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-torch python3-torchvision libopenblas0-pthread
  python3-dev pybind11-dev python3-pytest python3-pip python3-venv python3-setuptools python3-wheel
  clang-14 libclang-rt-14-dev llvm-14 lld clang-format-14
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
