#!/bin/sh
# Writes the .onnx beside each .onnxtxt here (hand-written models; no
# exporter makes them small enough).   usage: make.sh ONNX-OPT
set -eu
DIR=$(dirname "$0")
for T in "$DIR"/*.onnxtxt; do
  "$1" "$T" -o "${T%.onnxtxt}.onnx" 2>/dev/null
done
