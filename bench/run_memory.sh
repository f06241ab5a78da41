#!/usr/bin/env bash
#===- run_memory.sh - Passes on large external-data models in small memory ===#
#
# Issue 32: passes read weights only when they need their values. For each
# model given (default: bench/out/large_external.onnx from gen_large.py and
# bench/out/dynamo_llm_{1b,7b}.onnx from gen_dynamo_llm.py, those present),
# times and measures the peak RSS of, writing into another folder:
#   cp of the model and its data files      (the I/O floor)
#   onnx-opt --simplify
#   onnx-opt --infer-shapes --unify-dims --fold-shapes --cse --dce
#   python3 onnx.load + onnx.save           (PY=1 only: needs RAM for all weights)
# Each command runs twice; the second (warm page cache) run is reported.
#
#   bench/run_memory.sh [MODEL.onnx ...]
# Environment: ONNX_OPT (default build/onnx-opt), BENCH_OUT (default bench/out),
# PY=1 to add the python baseline.
#
#===------------------------------------------------------------------------===#
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${BENCH_OUT:-$HERE/out}
ONNX_OPT=${ONNX_OPT:-$ROOT/build/onnx-opt}
[[ -x /usr/bin/time ]] || { echo "need /usr/bin/time (apt-get install -y time)" >&2; exit 1; }
MODELS=("$@")
if ((${#MODELS[@]} == 0)); then
  for m in large_external dynamo_llm_1b dynamo_llm_7b; do
    [[ -f $OUT/$m.onnx ]] && MODELS+=("$OUT/$m.onnx")
  done
fi
DEST=$OUT/memory-run
row() { printf '| %s | %s | %s | %s | %s |\n' "$@"; }

# measure NAME CMD...: second of two runs; prints a table row.
measure() {
  local name=$1; shift
  local log=$DEST/time.log
  for _ in 1 2; do
    rm -rf "$DEST/out"; mkdir -p "$DEST/out"
    if ! /usr/bin/time -f '%e %U %S %M' -o "$log" "$@" >/dev/null 2>"$DEST/stderr"; then
      row "$MODEL_NAME" "$name" FAILED "" "$(tail -1 "$DEST/stderr")"; return
    fi
  done
  read -r wall user sys rss <"$log"
  local cpu; cpu=$(awk "BEGIN{print $user+$sys}")
  row "$MODEL_NAME" "$name" "$wall" "$cpu" "$((rss / 1024))"
}

mkdir -p "$DEST"
echo "onnx-opt: $ONNX_OPT ($(git -C "$ROOT" rev-parse --short HEAD)), load $(cut -d' ' -f1 /proc/loadavg)"
row model command "wall s" "cpu s" "peak RSS MiB"
row --- --- --- --- ---
for m in "${MODELS[@]}"; do
  MODEL_NAME=$(basename "$m" .onnx)
  data=$(ls "$m".data "${m%.onnx}".data 2>/dev/null || true)
  measure "cp" cp "$m" $data "$DEST/out/"
  measure "--simplify" "$ONNX_OPT" "$m" --simplify -o "$DEST/out/o.onnx"
  measure "5-pass pipeline" "$ONNX_OPT" "$m" --infer-shapes --unify-dims \
    --fold-shapes --cse --dce -o "$DEST/out/o.onnx"
  if [[ ${PY:-0} == 1 ]]; then
    measure "python load+save" /usr/bin/python3 -c \
      "import onnx,sys; m=onnx.load(sys.argv[1]); onnx.save(m, sys.argv[2], save_as_external_data=True, location='o.onnx.data')" \
      "$m" "$DEST/out/o.onnx"
  fi
done
rm -rf "$DEST/out"
