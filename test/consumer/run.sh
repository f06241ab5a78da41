#!/usr/bin/env bash
# usage: run.sh <cmake> <onnx-opt build dir> <consumer source> <work dir>
set -euo pipefail
CMAKE=$1 BUILD=$2 SRC=$3 WORK=$4
rm -rf "$WORK" && mkdir -p "$WORK"
"$CMAKE" --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
"$CMAKE" -S "$SRC" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$WORK/prefix" >/dev/null
"$CMAKE" --build "$WORK/build" >/dev/null
OUT=$("$WORK/build/consumer-opt" "$SRC/model.onnxtxt" \
  --pass-pipeline='set-graph-name{name=renamed_by_consumer},dce')
echo "$OUT"
grep -q "renamed_by_consumer" <<<"$OUT"
# The consumer's pass is listed next to the built-in ones. (Capture first:
# `cmd | grep -q` under pipefail fails when grep exits early on SIGPIPE.)
LIST=$("$WORK/build/consumer-opt" --list-passes)
grep -q "set-graph-name" <<<"$LIST"
grep -q "^  cse " <<<"$LIST"
echo "consumer project: OK"
