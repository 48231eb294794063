#!/usr/bin/env bash
# Fails if a C++ source differs from what .clang-format (BasedOnStyle: Google)
# makes of it, naming the file and line; `clang-format -i FILE` fixes it.
set -euo pipefail
cd "$(dirname "$0")/.."
format=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$format" ]; then
  echo "check_format: clang-format not found (tools/setup.sh installs clang-format-14)" >&2
  exit 77  # Skipped.
fi
find src include tests bench fuzz examples python/src -name '*.cc' -o -name '*.h' | sort |
  xargs "$format" --dry-run --Werror
