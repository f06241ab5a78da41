#!/usr/bin/env bash
# Runs one libFuzzer target over a seed corpus made from the tree.
#   utils/fuzz.sh TARGET SECONDS [libFuzzer options...]
#   TARGET: load (binary load -> verify -> save), text (parse -> print ->
#           parse), pipeline (parse -> print -> parse), passes (load -> a
#           shape pipeline -> save)
# Builds the target in $FUZZ_BUILD_DIR (default build-asan; configured with
# clang-14, ASan+UBSan and -DONNXOPT_FUZZ=ON when missing). Seeds are
# generated at run time: test/models/*.onnx, the binary inputs of test/IO,
# the .onnxtxt tests (as text and, converted, as binary), pipelines from the
# lit RUN lines, and test/fuzz/regressions. The corpus grows in
# $FUZZ_BUILD_DIR/fuzz/TARGET/corpus; crashes land in .../artifacts.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${1:?usage: utils/fuzz.sh TARGET SECONDS}
SECONDS_TO_RUN=${2:?usage: utils/fuzz.sh TARGET SECONDS}
shift 2
case $TARGET in load | text | pipeline | passes) ;; *)
  echo "fuzz: unknown target '$TARGET' (load, text, pipeline, passes)" >&2
  exit 1
  ;;
esac
BUILD=${FUZZ_BUILD_DIR:-build-asan}
export CCACHE_BASEDIR=$PWD
if [[ ! -f $BUILD/CMakeCache.txt ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B "$BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
    -DONNXOPT_SANITIZE=address,undefined \
    -DONNXOPT_FUZZ=ON >/dev/null
fi
ninja -C "$BUILD" "fuzz-$TARGET" onnx-opt >/dev/null

WORK=$BUILD/fuzz/$TARGET
SEEDS=$WORK/seeds
mkdir -p "$WORK/corpus" "$WORK/artifacts"
rm -rf "$SEEDS" && mkdir -p "$SEEDS"
OPT=$BUILD/onnx-opt
n=0
seed() { # file: copy into the seed dir under a unique name
  cp "$1" "$SEEDS/$n-$(basename "$1")"
  n=$((n + 1))
}
text_tests() { # .onnxtxt tests that hold a model (split-file parts too)
  find test -path test/fuzz -prune -o -name '*.onnxtxt' -print | sort
}
case $TARGET in
load | passes)
  for f in test/models/*.onnx test/IO/Inputs/*.onnx test/fuzz/regressions/*.onnx; do
    [[ $(stat -c %s "$f") -le 1048576 ]] && seed "$f"
  done
  # The text tests, converted to binary by the tool itself.
  while read -r f; do
    "$OPT" "$f" --no-verify -o "$SEEDS/$n.onnx" 2>/dev/null && n=$((n + 1)) || true
  done < <(text_tests; ls test/fuzz/regressions/*.onnxtxt)
  if [[ $TARGET == passes ]]; then
    # The first byte picks the pipeline: give each seed a few of them.
    for f in "$SEEDS"/*; do
      for k in 0 1 2 3 4 5 6 7; do
        { printf "\\x0$k"; cat "$f"; } >"$f.p$k"
      done
      rm "$f"
    done
  fi
  ;;
text)
  while read -r f; do seed "$f"; done < <(text_tests; ls test/fuzz/regressions/*.onnxtxt)
  ;;
pipeline)
  # --pass-pipeline arguments and pass flags of the lit RUN lines.
  grep -rhoE -- "--pass-pipeline='[^']*'" test | sed -E "s/^--pass-pipeline='//; s/'$//" | sort -u |
    while IFS= read -r p; do printf '%s' "$p" >"$SEEDS/$n.txt"; n=$((n + 1)); done
  grep -rhoE -- "--[a-z-]+='[^']*'" test | grep -v -- "--pass-pipeline" |
    sed -E "s/^--([a-z-]+)='(.*)'$/\1{\2}/" | sort -u |
    while IFS= read -r p; do printf '%s' "$p" >"$SEEDS/p$n.txt"; n=$((n + 1)); done
  for f in test/fuzz/regressions/*.pipeline; do seed "$f"; done
  ;;
esac
echo "fuzz-$TARGET: $(ls "$SEEDS" | wc -l) seeds, $SECONDS_TO_RUN s"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/test/fuzz/lsan.supp:print_suppressions=0}
# One process on one core; a 2 GB RSS cap and 10 s per input.
"$BUILD/test/fuzz/fuzz-$TARGET" -max_total_time="$SECONDS_TO_RUN" \
  -rss_limit_mb=2048 -timeout=10 -max_len=1048576 -print_final_stats=1 \
  -artifact_prefix="$WORK/artifacts/" "$@" "$WORK/corpus" "$SEEDS"
