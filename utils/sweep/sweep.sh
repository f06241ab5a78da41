#!/usr/bin/env bash
#===- sweep.sh - Check onnx-opt's shape-pass promise on many models ------===#
#
# usage: utils/sweep/sweep.sh [--bin ONNX_OPT] [--out DIR] [--every K]
#                             [--filter REGEX] [--only REGEX] [--timeout SECONDS] [--each-input]
#                             [--refreeze] [--refreeze-at N,...]
#                             [--refreeze-partial] [model.onnx ...]
#
# Without models: test/models/*.onnx plus every model.onnx of Debian's
# libonnx-testdata. --every K keeps every K-th model of the list (a
# deterministic sample); --only runs the pipelines whose name matches.
# --each-input also makes every other static input dynamic alone
# (make-dynamic#k); --refreeze makes each dynamic model static (freeze-dims,
# --simplify) and dynamic again (refreeze#k); --refreeze-at 2,4 also
# freezes where every symbol is 2, then 4; --refreeze-partial also keeps
# one symbol dynamic and freezes the others (refreeze-keep-X#k). Runs one
# model at a time under nice -n 10, writes DIR/results.jsonl and
# DIR/summary.md (default DIR: /tmp/sweep). The binary defaults to
# DIR/bin/onnx-opt, copied from build/ when it is missing.
# See utils/sweep/README.md.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
OUT=/tmp/sweep
BIN=
PASS=()
MODELS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) BIN=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --every|--filter|--only|--timeout|--refreeze-at) PASS+=("$1" "$2"); shift 2 ;;
    --each-input|--refreeze|--refreeze-partial) PASS+=("$1"); shift ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    -*) echo "sweep.sh: unknown option $1" >&2; exit 2 ;;
    *) MODELS+=("$1"); shift ;;
  esac
done

mkdir -p "$OUT"
if [ -z "$BIN" ]; then
  BIN=$OUT/bin/onnx-opt
  if [ ! -x "$BIN" ]; then
    mkdir -p "$OUT/bin"
    cp "$REPO/build/onnx-opt" "$BIN"
  fi
fi
[ -x "$BIN" ] || { echo "sweep.sh: no onnx-opt at $BIN" >&2; exit 2; }
[ -d "$REPO/node_modules/onnxruntime-node" ] ||
  { echo "sweep.sh: run 'npm ci' at $REPO first" >&2; exit 2; }

LIST=$OUT/models.txt
if [ ${#MODELS[@]} -gt 0 ]; then
  printf '%s\n' "${MODELS[@]}" > "$LIST"
else
  { ls "$REPO"/test/models/*.onnx
    dpkg -L libonnx-testdata 2>/dev/null | grep '/model\.onnx$' | sort || true
  } > "$LIST"
fi
echo "sweep.sh: $(wc -l < "$LIST") models, binary $BIN, results in $OUT" >&2

nice -n 10 node "$HERE/sweep.js" --bin "$BIN" --out "$OUT" --list "$LIST" "${PASS[@]}"
node "$HERE/summarize.js" "$OUT"
echo "sweep.sh: summary in $OUT/summary.md" >&2
