#!/usr/bin/env bash
#===- run.sh - onnx-opt I/O and scaling benchmark ---------------------------===#
#
# Measures, on the models made by gen_large.py and gen_synthetic.py:
#   - `cp` of a model's bytes vs `onnx-opt IN -o OUT` (load, verify, save):
#     wall time and peak RSS (/usr/bin/time -v "Maximum resident set size");
#   - external data written beside the input (references kept) and into
#     another directory (a new data file is written);
#   - `onnx-opt IN --cse --dce --timing -o OUT` at 100k and 1M nodes.
# Every command runs RUNS times (default 2) and the LAST run is reported: the
# page cache is warm (caches are not dropped; the machine is shared).
#
#   bench/run.sh                 # everything
#   bench/run.sh large|external|synthetic   # one part
# Environment: ONNX_OPT (binary; default build-bench/onnx-opt), ONNX_OPT_REV
# (the revision it was built from, for the report; default: git HEAD), BENCH_OUT
# (default bench/out), RUNS, PYTHON (default /usr/bin/python3).
#
#===------------------------------------------------------------------------===#
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
OUT=${BENCH_OUT:-$HERE/out}
ONNX_OPT=${ONNX_OPT:-$ROOT/build-bench/onnx-opt}
RUNS=${RUNS:-2}
PYTHON=${PYTHON:-/usr/bin/python3}
PARTS=${*:-large external synthetic}
WORK=$OUT/run
RESULTS=$OUT/results.md

[[ -x /usr/bin/time ]] || { echo "need /usr/bin/time (apt-get install -y time)" >&2; exit 1; }
[[ -x $ONNX_OPT ]] || { echo "no onnx-opt at $ONNX_OPT (set ONNX_OPT)" >&2; exit 1; }
mkdir -p "$WORK"

# --- helpers ---------------------------------------------------------------

# measure LOG PRE CMD...: runs CMD $RUNS times, each after `eval PRE` (not
# timed: removes the previous output). Sets WALL (s), CPU (user+sys s), RSS_MB
# and LOAD (1-minute load average before the last run), or all to FAILED.
# CMD's stderr goes to LOG.
measure() {
  local log=$1 pre=$2; shift 2
  local tf=$WORK/time.txt i start end
  for ((i = 1; i <= RUNS; i++)); do
    eval "$pre"
    LOAD=$(cut -d' ' -f1 /proc/loadavg)
    start=$(date +%s%N)
    if ! /usr/bin/time -v -o "$tf" "$@" >/dev/null 2>"$log"; then
      echo "FAILED: $*" >&2
      grep -v '^Command exited' "$log" | tail -n 5 >&2
      WALL=FAILED CPU=FAILED RSS_MB=FAILED
      return 0
    fi
    end=$(date +%s%N)
  done
  WALL=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  CPU=$(awk -F': ' '/User time|System time/ { s += $2 } END { printf "%.2f", s }' "$tf")
  RSS_MB=$(awk '/Maximum resident set size/ { printf "%.0f", $NF / 1024 }' "$tf")
}

# Extra onnx-opt flags for every run (e.g. OPT_FLAGS=--no-verify).
read -ra OPT_FLAGS_ARR <<<"${OPT_FLAGS:-}"

isnum() { [[ $1 =~ ^[0-9.]+$ ]]; }
size_mb() { du -b "$@" | awk '{ s += $1 } END { printf "%.0f", s / 1048576 }'; }
ratio() {
  isnum "$1" && isnum "$2" || { echo "n/a"; return; }
  awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'
}
verdict() {
  isnum "$1" || { echo "FAILED"; return; }
  if awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; then echo "met"; else echo "MISSED"; fi
}

ROWS=()
row() { ROWS+=("| $(IFS='|'; echo "$*" | sed 's/|/ | /g') |"); }

# --- models ----------------------------------------------------------------

ensure_models() {
  if [[ ! -f $OUT/large_single.onnx || ! -f $OUT/large_external.data ]]; then
    "$PYTHON" "$HERE/gen_large.py" --out "$OUT"
  fi
  if [[ ! -f $OUT/synthetic_100k.onnx || ! -f $OUT/synthetic_1000k.onnx ]]; then
    "$PYTHON" "$HERE/gen_synthetic.py" --out "$OUT" 100000 1000000
  fi
}

# --- single file -----------------------------------------------------------

bench_large() {
  local in=$OUT/large_single.onnx out=$WORK/single.onnx
  local size cp_w wr rr
  size=$(size_mb "$in")
  measure "$WORK/cp_single.log" "rm -f '$out'" cp "$in" "$out"
  cp_w=$WALL
  row "single ${size} MiB" "cp" "$WALL" "$CPU" "1.00" "$RSS_MB" "$LOAD" ""
  measure "$WORK/opt_single.log" "rm -f '$out'" \
    "$ONNX_OPT" "${OPT_FLAGS_ARR[@]}" "$in" -o "$out"
  wr=$(ratio "$WALL" "$cp_w")
  rr=$(ratio "$RSS_MB" "$size")
  row "single ${size} MiB" "onnx-opt -o" "$WALL" "$CPU" "$wr" "$RSS_MB (${rr}x file)" "$LOAD" \
    "wall $(verdict "$wr" 3) (<=3x cp); RSS $(verdict "$rr" 1.5) (<=1.5x file)"
  if [[ -f $out ]] && ! cmp -s "$in" "$out"; then
    echo "note: $out differs from its input" >&2
  fi
}

# --- external data ---------------------------------------------------------

bench_external() {
  local in=$OUT/large_external.onnx data=$OUT/large_external.data
  local size cp_w other=$WORK/ext_other same=$OUT/large_external.same.onnx
  size=$(size_mb "$in" "$data")
  mkdir -p "$WORK/ext_cp"
  measure "$WORK/cp_ext.log" "rm -f '$WORK'/ext_cp/*" cp "$in" "$data" "$WORK/ext_cp/"
  cp_w=$WALL
  rm -rf "$WORK/ext_cp"
  row "external ${size} MiB" "cp .onnx+.data" "$WALL" "$CPU" "1.00" "$RSS_MB" "$LOAD" ""

  # Beside the input: the new model must reference the existing data file.
  local before after new
  before=$(ls "$OUT" | sort)
  measure "$WORK/opt_ext_same.log" "rm -f '$same'" \
    "$ONNX_OPT" "${OPT_FLAGS_ARR[@]}" "$in" -o "$same"
  after=$(ls "$OUT" | sort)
  new=$(comm -13 <(echo "$before") <(echo "$after") |
    grep -v '^large_external.same.onnx$' | tr '\n' ' ' || true)
  row "external ${size} MiB" "onnx-opt -o same dir" "$WALL" "$CPU" "$(ratio "$WALL" "$cp_w")" \
    "$RSS_MB" "$LOAD" "RSS $(verdict "$RSS_MB" 300) (<=300 MiB); wrote $(size_mb "$same" 2>/dev/null || echo 0) MiB${new:+, new files: $new}"

  # Another directory: a new data file is written beside the output.
  rm -rf "$other"
  mkdir -p "$other"
  measure "$WORK/opt_ext_other.log" "rm -f '$other'/*" \
    "$ONNX_OPT" "${OPT_FLAGS_ARR[@]}" "$in" -o "$other/large_external.onnx"
  row "external ${size} MiB" "onnx-opt -o other dir" "$WALL" "$CPU" "$(ratio "$WALL" "$cp_w")" \
    "$RSS_MB" "$LOAD" "RSS $(verdict "$RSS_MB" 300) (<=300 MiB); wrote $(size_mb "$other") MiB: $(ls "$other" | tr '\n' ' ')"
  rm -rf "$other" "$same"
}

# --- synthetic cse+dce -----------------------------------------------------

# pass_ms LOG NAME: the wall time (ms) of one row of the --timing report.
pass_ms() { awk -v n="$2" '$NF == n && /%\)/ { print $1; exit }' "$1"; }

bench_synthetic() {
  local k in out log nodes r
  declare -A W C P
  for k in 100k 1000k; do
    in=$OUT/synthetic_$k.onnx out=$WORK/synthetic_$k.out.onnx
    measure "$WORK/opt_syn_${k}_plain.log" "rm -f '$out'" \
      "$ONNX_OPT" "${OPT_FLAGS_ARR[@]}" "$in" -o "$out"
    W[plain_$k]=$WALL C[plain_$k]=$CPU
    row "synthetic $k nodes" "onnx-opt -o (no passes)" "$WALL" "$CPU" "" "$RSS_MB" "$LOAD" ""
    log=$WORK/opt_syn_${k}_cse_dce.log
    measure "$log" "rm -f '$out'" \
      "$ONNX_OPT" "${OPT_FLAGS_ARR[@]}" "$in" --cse --dce --timing -o "$out"
    W[passes_$k]=$WALL C[passes_$k]=$CPU
    P[cse_$k]=$(pass_ms "$log" cse)
    P[dce_$k]=$(pass_ms "$log" dce)
    P[ver_$k]=$(pass_ms "$log" "(verifier)")
    nodes=?
    [[ -f $out ]] && nodes=$("$PYTHON" -c \
      "import onnx,sys; print(len(onnx.load(sys.argv[1]).graph.node))" "$out")
    row "synthetic $k nodes" "onnx-opt --cse --dce" "$WALL" "$CPU" "" "$RSS_MB" "$LOAD" \
      "cse ${P[cse_$k]:-?} ms, dce ${P[dce_$k]:-?} ms, verify-each ${P[ver_$k]:-?} ms; $nodes nodes left"
    rm -f "$out"
  done
  r=$(ratio "${C[passes_1000k]}" "${C[passes_100k]}")
  row "synthetic 1M / 100k" "ratios: --cse --dce" "$(ratio "${W[passes_1000k]}" "${W[passes_100k]}")" "$r" "" "" "" \
    "CPU ratio $(verdict "$r" 13) (linear: ~10x); no passes: wall $(ratio "${W[plain_1000k]}" "${W[plain_100k]}")x, CPU $(ratio "${C[plain_1000k]}" "${C[plain_100k]}")x"
  row "synthetic 1M / 100k" "ratios: cse / dce / verify-each" "" "" \
    "$(ratio "${P[cse_1000k]}" "${P[cse_100k]}") / $(ratio "${P[dce_1000k]}" "${P[dce_100k]}") / $(ratio "${P[ver_1000k]}" "${P[ver_100k]}")" \
    "" "" "per-pass time ratios from --timing"
}

# --- main ------------------------------------------------------------------

ensure_models
for part in $PARTS; do
  case $part in
    large) bench_large ;;
    external) bench_external ;;
    synthetic) bench_synthetic ;;
    *) echo "unknown part '$part' (large, external, synthetic)" >&2; exit 1 ;;
  esac
done

{
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); host: $(nproc) cores," \
    "$(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo)," \
    "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "onnx-opt: $ONNX_OPT at ${ONNX_OPT_REV:-$(cd "$ROOT" && git log -1 --format=%h 2>/dev/null || echo '?')}" \
    "${OPT_FLAGS:+with $OPT_FLAGS }- runs per command: $RUNS, the last (warm cache) reported"
  echo
  echo "| model | command | wall s | cpu s | ratio | peak RSS MiB | load | target / notes |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${ROWS[@]}"
} | tee "$RESULTS"
echo "(written to $RESULTS)"
