#!/usr/bin/env bash
# Times onnx-opt's round trip and every shape pass on each family of
# bench/gen_scaling.py at N and 2N nodes and prints the ratio; a ratio above
# 3 is flagged (linear is about 2). Not a test: timings depend on the machine.
#   bench/run_scaling.sh [N]          (default N = 10000)
#   ONNX_OPT=path/to/onnx-opt bench/run_scaling.sh
set -uo pipefail
cd "$(dirname "$0")/.."
N=${1:-10000}
OPT=${ONNX_OPT:-build/onnx-opt}
OUT=bench/out
PASSES=("" --infer-shapes --fold-shapes --constant-fold --cse --dce
        --unify-dims --check-static=report-only=true
        --set-dim-range=derive=true --simplify)
for fam in $(/usr/bin/python3 bench/gen_scaling.py --list); do
  /usr/bin/python3 bench/gen_scaling.py "$fam" "$N" "$fam" $((2 * N)) >/dev/null
  for p in "${PASSES[@]}"; do
    t=()
    for n in "$N" $((2 * N)); do
      /usr/bin/time -o "$OUT/scaling.time" -f "%e" timeout 300 "$OPT" \
        "$OUT/scaling_${fam}_$n.onnx" $p -o "$OUT/scaling_out.onnx" \
        >/dev/null 2>&1
      t+=("$(tail -1 "$OUT/scaling.time")")
    done
    ratio=$(awk -v a="${t[0]}" -v b="${t[1]}" \
      'BEGIN { if (a + 0 < 0.05) print "-"; else printf "%.1f", b / a }')
    flag=$(awk -v r="$ratio" 'BEGIN { if (r != "-" && r + 0 > 3) print "  <<<" }')
    printf '%-20s %-34s %6ss %6ss  x%s%s\n' "$fam" "${p:-(round trip)}" \
      "${t[0]}" "${t[1]}" "$ratio" "$flag"
  done
done
