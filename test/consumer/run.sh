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
  --pass-pipeline='set-graph-name{name=renamed_by_consumer},erase-double-neg,dce')
echo "$OUT"
grep -q "renamed_by_consumer" <<<"$OUT"
# The pattern ran in the main graph and, through the driver, in the branch.
! grep -q "Neg" <<<"$OUT"
grep -q "y = Relu (x)" <<<"$OUT"
grep -q "t = Abs (x)" <<<"$OUT"

# The library driven by hand: load, a pipeline built in code (the GraphPass
# reaches the branch), an analysis, save; the result loads back.
EMB=$("$WORK/build/consumer-opt" --embed "$SRC/model.onnxtxt" "$WORK/embedded.onnx")
echo "$EMB"
grep -q "^inferred [1-9][0-9]* nodes" <<<"$EMB"
TXT=$("$WORK/build/consumer-opt" "$WORK/embedded.onnx")
! grep -q "Neg" <<<"$TXT"
# Text nodes have no names; each now carries the prefix, in
# the branch too (bodies are graphs the pass manager walks).
PROTO=$(/usr/bin/python3 -c "import onnx,sys; m=onnx.load(sys.argv[1]); print([n.name for n in m.graph.node]); print([n.name for n in m.graph.node[-1].attribute[0].g.node])" "$WORK/embedded.onnx")
echo "$PROTO"
grep -q "'e_" <<<"$(sed -n 2p <<<"$PROTO")"
# The consumer's pass is listed next to the built-in ones. (Capture first:
# `cmd | grep -q` under pipefail fails when grep exits early on SIGPIPE.)
LIST=$("$WORK/build/consumer-opt" --list-passes)
grep -q "set-graph-name" <<<"$LIST"
grep -q "^  cse " <<<"$LIST"
echo "consumer project: OK"
