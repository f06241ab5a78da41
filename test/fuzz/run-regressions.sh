#!/usr/bin/env bash
# Runs every input of test/fuzz/regressions through the normal onnx-opt
# binary: each must end with exit 0 or 1 (a diagnostic), never a signal or
# another code.
#   run-regressions.sh <onnx-opt> <regressions dir> <work dir>
#   *.onnx, *.onnxtxt   loaded, verified and saved; then every pipeline of
#                       pipelines.inc (as the passes fuzz target runs them)
#   *.pipeline          parsed as a --pass-pipeline over a small model
set -uo pipefail
OPT=$1 DIR=$2 WORK=$3
HERE=$(cd "$(dirname "$0")" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK"
mapfile -t PIPELINES < <(sed -n 's/^"\(.*\)",$/\1/p' "$HERE/pipelines.inc")
fail=0 runs=0
check() { # description, command...
  local what=$1
  shift
  "$@" >"$WORK/out" 2>"$WORK/err"
  local rc=$?
  runs=$((runs + 1))
  if ((rc != 0 && rc != 1)); then
    echo "FAIL: $what: exit $rc" >&2
    tail -5 "$WORK/err" >&2
    fail=$((fail + 1))
  fi
}
# Every pipeline the fuzz target runs must parse (the target treats a parse
# error as a broken invariant): options are validated before loading, so a
# missing file is the only error expected here.
for p in "${PIPELINES[@]}"; do
  "$OPT" "$WORK/missing.onnx" --pass-pipeline="$p" >/dev/null 2>"$WORK/err"
  if ! grep -q "cannot open" "$WORK/err"; then
    echo "FAIL: pipelines.inc: '$p' does not parse:" >&2
    head -3 "$WORK/err" >&2
    fail=$((fail + 1))
  fi
done
shopt -s nullglob
files=("$DIR"/*)
((${#files[@]})) || { echo "no regression inputs in $DIR" >&2; exit 1; }
for f in "${files[@]}"; do
  name=$(basename "$f")
  case $f in
  *.onnx | *.onnxtxt)
    check "$name" "$OPT" "$f" -o "$WORK/m.onnx"
    check "$name (text)" "$OPT" "$f" -o "$WORK/m.onnxtxt"
    for p in "${PIPELINES[@]}"; do
      check "$name --pass-pipeline='$p'" "$OPT" "$f" --pass-pipeline="$p" -o "$WORK/m.onnx"
    done
    ;;
  *.pipeline)
    check "$name" "$OPT" "$HERE/../Transforms/cse.onnxtxt" --pass-pipeline="$(cat "$f")" -o "$WORK/m.onnxtxt"
    ;;
  *) echo "FAIL: $name: unknown kind of regression input" >&2; fail=$((fail + 1)) ;;
  esac
done
echo "fuzz regressions: $runs runs over ${#files[@]} inputs, $fail failed"
((fail == 0))
