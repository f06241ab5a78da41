#!/usr/bin/env bash
# Runs every pass (and the shape pipelines of the README) on every given
# model with two onnx-opt binaries and checks that both write byte-identical
# models and agree on success. For refactorings that must not change what
# passes do (the GraphPass port, analysis caching).
#   utils/compare-pass-outputs.sh OLD_BIN NEW_BIN MODEL...
# Prints one line per difference and a closing "N passed, N failed" line.
set -uo pipefail
OLD=$1 NEW=$2; shift 2
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
PIPELINES=(
  --dce --cse --topo-sort --eliminate-identity --constant-fold --fold-shapes
  --infer-shapes --unify-dims --check-static=report-only=true
  "--pass-pipeline=infer-shapes,unify-dims,fold-shapes,cse,dce"
  "--pass-pipeline=constant-fold,fold-shapes,cse,dce,topo-sort"
)
pass=0 fail=0
for m in "$@"; do
  for p in "${PIPELINES[@]}"; do
    "$OLD" "$m" "$p" -o "$TMP/old.onnx" >/dev/null 2>&1; a=$?
    "$NEW" "$m" "$p" -o "$TMP/new.onnx" >/dev/null 2>&1; b=$?
    if [[ $a != "$b" ]]; then
      echo "DIFF exit $a vs $b: $m $p"; fail=$((fail + 1))
    elif [[ $a == 0 ]] && ! cmp -s "$TMP/old.onnx" "$TMP/new.onnx"; then
      echo "DIFF bytes: $m $p"; fail=$((fail + 1))
    else
      pass=$((pass + 1))
    fi
    rm -f "$TMP/old.onnx" "$TMP/new.onnx"
  done
done
echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
