#!/bin/sh
# Makes mobilevit_{static,dyn}_taps.onnx from the exports beside this script:
# the same models whose outputs are four feature maps instead of the pooled
# `mean`: the folds back of the first two MobileViT blocks (_unsafe_view_3,
# _unsafe_view_7, where the unfold/fold Reshapes end) and the fused maps
# after them (silu_15, silu_24). The random weights shrink the activations
# layer by layer until `mean` is exactly 0 at every input (and the third
# block's maps with it), so the oracle could not see a wrong rewrite there;
# the taps are small but normal floats that change with the input (compare
# them with --atol 0). Both exports name these values alike. The text round
# trip drops the exporter's metadata and node names.
#   usage: make_mobilevit_taps.sh ONNX-OPT
set -eu
OPT=$1
DIR=$(dirname "$0")
TMP=${TMPDIR:-/tmp}/mobilevit_taps.$$
mkdir "$TMP"
trap 'rm -rf "$TMP"' EXIT
for KIND in static dyn; do
  "$OPT" "$DIR/mobilevit_$KIND.onnx" -o "$TMP/m.onnxtxt" 2>/dev/null
  # B is 3 in the static export and `batch` in the dynamic one.
  B=$(sed -n 's/^main_graph (float\[\([^,]*\),3,64,96\] pixel_values).*/\1/p' "$TMP/m.onnxtxt")
  sed -e "s/^\(main_graph (.*) => \)(float\[$B,64\] mean)/\1(float[$B,32,8,12] _unsafe_view_3, float[$B,48,4,6] _unsafe_view_7, float[$B,16,8,12] silu_15, float[$B,24,4,6] silu_24)/" \
    "$TMP/m.onnxtxt" > "$TMP/taps.onnxtxt"
  "$OPT" "$TMP/taps.onnxtxt" --dce -o "$DIR/mobilevit_${KIND}_taps.onnx" 2>/dev/null
done
