#!/usr/bin/env bash
#===- run_make_dynamic.sh - make-dynamic on a deep static decoder ---------===#
#
# A static export repairs its baked Reshape targets a layer per round (a
# node downstream of a repair waits for the model to be inferred again).
# This freezes bench/out/dynamo_llm_deep80.onnx (gen_dynamo_llm.py deep80:
# 80 layers, 4,658 nodes) at batch 1 and sequence 16, as a static export
# is made, then times make-dynamic back to [B,S] (the second of two runs)
# and prints its closing remark.
#
#   bench/run_make_dynamic.sh
# Environment: ONNX_OPT (default build/onnx-opt), BENCH_OUT (default bench/out).
#
#===------------------------------------------------------------------------===#
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${BENCH_OUT:-$HERE/out}
ONNX_OPT=${ONNX_OPT:-$ROOT/build/onnx-opt}
[[ -x /usr/bin/time ]] || { echo "need /usr/bin/time (apt-get install -y time)" >&2; exit 1; }
MODEL=$OUT/dynamo_llm_deep80.onnx
[[ -f $MODEL ]] || BENCH_OUT=$OUT /usr/bin/python3 "$HERE/gen_dynamo_llm.py" deep80
IN='input_ids[1,16],attention_mask[1,16],position_ids[1,16]'
NEW='input_ids[B,S],attention_mask[B,S],position_ids[B,S]'
"$ONNX_OPT" "$MODEL" --freeze-dims="shapes=$IN" -o "$OUT/deep80_static.onnx" 2>/dev/null
for run in 1 2; do
  /usr/bin/time -f "make-dynamic: %e s wall, %M KiB peak RSS" -o "$OUT/deep80.time" \
    "$ONNX_OPT" "$OUT/deep80_static.onnx" --make-dynamic="shapes=$NEW" \
    -o "$OUT/deep80_dynamic.onnx" 2> "$OUT/deep80.log" || true
done
grep 'remark: make-dynamic: repaired' "$OUT/deep80.log" || grep error "$OUT/deep80.log" | head -3
cat "$OUT/deep80.time"
