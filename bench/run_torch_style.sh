#!/usr/bin/env bash
#===- run_torch_style.sh - onnx-opt vs python on torch-style graphs --------===#
#
# The figures of issue 14, on the graphs of gen_torch_style.py:
#   - python `onnx.load` + `onnx.save` (py_roundtrip.py): the baseline;
#   - `onnx-opt IN -o OUT` (load, verify, save: the round trip);
#   - `onnx-opt IN --infer-shapes --unify-dims --fold-shapes --cse --dce
#     --timing -o OUT` (the shape pipeline, per-pass times from --timing);
# at 100k and 1M nodes; and ONNX Runtime session creation (ort_session.js)
# before and after `--fold-shapes --cse --dce` at 10k and 20k nodes.
# Wall time, CPU time (user + sys) and peak RSS from /usr/bin/time -v; each
# command runs RUNS times (default 2), the LAST run is reported (warm cache).
#
#   bench/run_torch_style.sh                  # everything
#   bench/run_torch_style.sh roundtrip|ort    # one part
# Environment: ONNX_OPT (default build-bench/onnx-opt), BENCH_OUT (default
# bench/out), RUNS, SIZES (default "100 1000", in thousands of nodes),
# ORT_SIZES (default "10 20"), PYTHON (default /usr/bin/python3).
#
#===------------------------------------------------------------------------===#
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${BENCH_OUT:-$HERE/out}
ONNX_OPT=${ONNX_OPT:-$ROOT/build-bench/onnx-opt}
RUNS=${RUNS:-2}
PYTHON=${PYTHON:-/usr/bin/python3}
SIZES=${SIZES:-100 1000}
ORT_SIZES=${ORT_SIZES:-10 20}
PARTS=${*:-roundtrip ort}
WORK=$OUT/run_torch
RESULTS=$OUT/torch_style_results.md
PIPELINE=(--infer-shapes --unify-dims --fold-shapes --cse --dce)

[[ -x /usr/bin/time ]] || { echo "need /usr/bin/time (apt-get install -y time)" >&2; exit 1; }
[[ -x $ONNX_OPT ]] || { echo "no onnx-opt at $ONNX_OPT (set ONNX_OPT)" >&2; exit 1; }
mkdir -p "$WORK"

# measure LOG CMD...: runs CMD $RUNS times; sets WALL, CPU (s), RSS_MB and
# LOAD (1-minute load average before the last run), or all to FAILED.
measure() {
  local log=$1; shift
  local tf=$WORK/time.txt i start end
  for ((i = 1; i <= RUNS; i++)); do
    rm -f "$WORK/out.onnx"
    LOAD=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s%N)
    if ! /usr/bin/time -v -o "$tf" "$@" >/dev/null 2>"$log"; then
      echo "FAILED: $*" >&2
      tail -n 5 "$log" >&2
      WALL=FAILED CPU=FAILED RSS_MB=FAILED
      return 0
    fi
    end=$(date +%s%N)
  done
  WALL=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  CPU=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$tf")
  RSS_MB=$(awk '/Maximum resident set size/ { printf "%.0f", $NF / 1024 }' "$tf")
}

ratio() {
  [[ $1 =~ ^[0-9.]+$ && $2 =~ ^[0-9.]+$ ]] || { echo "n/a"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}

# timing_rows LOG: the --timing report as "name ms, name ms, ...".
timing_rows() {
  awk '/%\)/ && $NF != "Total" {
    name = $0; sub(/^.*%\) +/, "", name)
    printf "%s%s %.0f ms", sep, name, $1; sep = ", " }' "$1"
}

ROWS=() ORT_ROWS=()
row() { ROWS+=("| $(IFS='|'; echo "$*" | sed 's/|/ | /g') |"); }

model() {
  local k=$1 f=$OUT/torch_style_${1}k.onnx
  [[ -f $f ]] || "$PYTHON" "$HERE/gen_torch_style.py" --out "$OUT" "$((k * 1000))" >&2
  echo "$f"
}

bench_roundtrip() {
  local k in py_w py_c
  for k in $SIZES; do
    in=$(model "$k")
    measure "$WORK/py_${k}k.log" "$PYTHON" "$HERE/py_roundtrip.py" "$in" "$WORK/out.onnx"
    py_w=$WALL py_c=$CPU
    row "${k}k" "python onnx.load + onnx.save" "$WALL" "$CPU" "1.00 / 1.00" "$RSS_MB" "$LOAD" ""
    measure "$WORK/rt_${k}k.log" "$ONNX_OPT" "$in" -o "$WORK/out.onnx" --timing
    row "${k}k" "onnx-opt -o" "$WALL" "$CPU" "$(ratio "$WALL" "$py_w") / $(ratio "$CPU" "$py_c")" \
      "$RSS_MB" "$LOAD" "$(timing_rows "$WORK/rt_${k}k.log")"
    measure "$WORK/pipe_${k}k.log" "$ONNX_OPT" "$in" "${PIPELINE[@]}" --timing -o "$WORK/out.onnx"
    row "${k}k" "onnx-opt ${PIPELINE[*]}" "$WALL" "$CPU" \
      "$(ratio "$WALL" "$py_w") / $(ratio "$CPU" "$py_c")" "$RSS_MB" "$LOAD" \
      "$(timing_rows "$WORK/pipe_${k}k.log")"
  done
}

bench_ort() {
  [[ -d $ROOT/node_modules/onnxruntime-node ]] || {
    echo "no node_modules/onnxruntime-node (npm ci --ignore-scripts)" >&2; return 0; }
  local k in folded before after
  for k in $ORT_SIZES; do
    in=$(model "$k")
    folded=$OUT/torch_style_${k}k.folded.onnx
    "$ONNX_OPT" "$in" --fold-shapes --cse --dce -o "$folded"
    before=$(node "$HERE/ort_session.js" "$in" | cut -d' ' -f1)
    after=$(node "$HERE/ort_session.js" "$folded" | cut -d' ' -f1)
    ORT_ROWS+=("| ${k}k | $(awk -v a="$before" -v b="$after" \
      'BEGIN { printf "%.2f | %.2f", a / 1000, b / 1000 }') | $(ratio "$before" "$after") | $(cut -d' ' -f1 /proc/loadavg) |")
  done
}

for part in $PARTS; do
  case $part in
  roundtrip) bench_roundtrip ;;
  ort) bench_ort ;;
  *) echo "unknown part '$part' (roundtrip, ort)" >&2; exit 1 ;;
  esac
done

{
  echo "onnx-opt $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), RUNS=$RUNS (last reported)"
  echo
  echo "| graph | command | wall s | cpu s | ratio to python (wall / cpu) | peak RSS MiB | load | notes |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  [[ ${#ROWS[@]} == 0 ]] || printf '%s\n' "${ROWS[@]}"
  if [[ ${#ORT_ROWS[@]} != 0 ]]; then
    echo
    echo "ONNX Runtime session creation (median of $RUNS, ort_session.js):"
    echo
    echo "| graph | before s | after --fold-shapes --cse --dce s | ratio | load |"
    echo "| --- | --- | --- | --- | --- |"
    printf '%s\n' "${ORT_ROWS[@]}"
  fi
} | tee "$RESULTS"
