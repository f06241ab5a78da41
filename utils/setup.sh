#!/usr/bin/env bash
# Installs what onnx-opt needs on Debian 12 (idempotent) and builds it.
#   utils/setup.sh            install + configure + build into ./build
#   BUILD_DIR=dir utils/setup.sh
# Debian's python3 then imports the Python module onnxopt from the build
# tree: a .pth file in its site-packages (or the user's, without root)
# names $BUILD_DIR/python, so rebuilding updates it (docs/python.md).
# apt-get runs only when a package is missing; npm only when node_modules is
# missing or older than package-lock.json.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  llvm-14-dev llvm-14-tools
  googletest libgtest-dev libbenchmark-dev
  python3 python3-onnx python3-numpy libonnx-testdata
  python3-dev pybind11-dev
  nodejs npm
  clang-14 libclang-rt-14-dev
)
# python3-dev and pybind11-dev build the Python module onnxopt (python/).
# clang-14 and libclang-rt-14-dev (ASan, UBSan, libFuzzer runtimes) are for
# the sanitizer and fuzz builds of .ci/run and utils/fuzz.sh.
# utils/check-test-deps.sh checks that this list covers what the tests use.

missing=()
for p in "${PACKAGES[@]}"; do
  # nodejs/npm may come from the machine image rather than Debian.
  if [[ $p == nodejs ]] && command -v node >/dev/null; then continue; fi
  if [[ $p == npm ]] && command -v npm >/dev/null; then continue; fi
  [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) == *"ok installed"* ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ -f package-lock.json ]] && { [[ ! -d node_modules ]] || [[ package-lock.json -nt node_modules ]]; }; then
  echo "setup: npm ci (scripts off; see .npmrc)"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  touch node_modules
fi

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)"

# The Python module: point Debian's python3 at the build tree.
if [[ -f $BUILD_DIR/python/onnxopt/__init__.py ]]; then
  PYDIR=$(cd "$BUILD_DIR/python" && pwd)
  SITE=$(/usr/bin/python3 -c 'import site; print(site.getsitepackages()[0])')
  if ! { mkdir -p "$SITE" 2>/dev/null && [[ -w $SITE ]]; }; then
    SITE=$(/usr/bin/python3 -m site --user-site)
    mkdir -p "$SITE"
  fi
  if [[ $(cat "$SITE/onnxopt.pth" 2>/dev/null) != "$PYDIR" ]]; then
    echo "$PYDIR" >"$SITE/onnxopt.pth"
    echo "setup: /usr/bin/python3 imports onnxopt from $PYDIR ($SITE/onnxopt.pth)"
  fi
  /usr/bin/python3 -c 'import onnxopt'
fi
