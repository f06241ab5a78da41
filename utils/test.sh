#!/usr/bin/env bash
# Installs, builds and runs the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
utils/setup.sh
cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" "$@"
