#!/usr/bin/env bash
# Fails when a source file includes a header of a layer above its own, or
# when an installed header (include/onnxopt/**) names ONNX's protobuf types
# outside IR/ProtoTypes.h. The link order in CMakeLists.txt stops a lower
# library from calling an upper one; this stops the includes that the link
# does not see (inline functions, types, templates).
#
#   utils/check-layering.sh                  check the tree
#   ROOT=dir utils/check-layering.sh         check the tree at dir (a copy)
#   utils/check-layering.sh --op-compares    also fail on op-type string
#                                            compares in lib/Analysis,
#                                            lib/Export and passes/ (the
#                                            engines dispatch through the op
#                                            registry, include/onnxopt/Ops)
#   utils/check-layering.sh --self-test      check that a bad include, a
#                                            protobuf type in a header and an
#                                            op compare injected into a copy
#                                            are caught
#
# The layers, low to high (CMakeLists.txt):
#   support < ir < ops < analysis < io (Import, Export) < transforms < tool,
#   and ir < pass < transforms.
# A file may include headers of its own layer and of the layers below it.
# Only `#include "onnxopt/..."` lines and the private headers of lib/ and
# passes/ (a quoted name found in another layer's directory) are read.
set -euo pipefail
cd "$(dirname "$0")/.."
SELF=$PWD/utils/check-layering.sh
ROOT=${ROOT:-$PWD}

OP_COMPARES=0
case ${1:-} in
--op-compares) OP_COMPARES=1 ;;
--self-test)
  tmp=${TMPDIR:-/tmp}/check-layering.$$
  trap 'rm -rf "$tmp"' EXIT
  rm -rf "$tmp"
  mkdir -p "$tmp"
  cp -r include lib passes tools "$tmp"/
  # The tree as it is must pass (with op compares off), or the injections
  # below prove nothing.
  if ! out=$(ROOT=$tmp bash "$SELF" 2>&1); then
    echo "check-layering self-test: the unchanged copy fails: $out" >&2
    exit 1
  fi
  # An IR file that includes the pass layer.
  sed -i '1a #include "onnxopt/Pass/Pass.h"' "$tmp/lib/IR/Graph.cpp"
  if out=$(ROOT=$tmp bash "$SELF" 2>&1); then
    echo "check-layering self-test: an IR file including Pass.h passed" >&2
    exit 1
  fi
  if [[ $out != *"lib/IR/Graph.cpp:2: layer ir includes onnxopt/Pass/Pass.h (layer pass)"* ]]; then
    echo "check-layering self-test: unexpected message: $out" >&2
    exit 1
  fi
  sed -i '2d' "$tmp/lib/IR/Graph.cpp"
  # A protobuf type in an installed header (a forward declaration is a
  # use: the header's API then speaks protobuf).
  sed -i '/^namespace onnxopt {/i namespace onnx { class ModelProto; }' \
    "$tmp/include/onnxopt/IR/Graph.h"
  if out=$(ROOT=$tmp bash "$SELF" 2>&1); then
    echo "check-layering self-test: onnx:: in IR/Graph.h passed" >&2
    exit 1
  fi
  if [[ $out != *"include/onnxopt/IR/Graph.h:"*"names ONNX's protobuf types"* ]]; then
    echo "check-layering self-test: unexpected message: $out" >&2
    exit 1
  fi
  sed -i '/^namespace onnx { class ModelProto; }$/d' \
    "$tmp/include/onnxopt/IR/Graph.h"
  # An op compare, caught only with --op-compares.
  echo 'static bool isReshape(const Node &N) { return N.is("Reshape"); }' \
    >>"$tmp/passes/DCE.cpp"
  if ! ROOT=$tmp bash "$SELF" >/dev/null 2>&1; then
    echo "check-layering self-test: an op compare failed without --op-compares" >&2
    exit 1
  fi
  if out=$(ROOT=$tmp bash "$SELF" --op-compares 2>&1); then
    echo "check-layering self-test: N.is(\"Reshape\") passed --op-compares" >&2
    exit 1
  fi
  if [[ $out != *"passes/DCE.cpp:"*'N.is("Reshape")'* ]]; then
    echo "check-layering self-test: unexpected message: $out" >&2
    exit 1
  fi
  echo "check-layering self-test: a bad include, a protobuf type in a header and an op compare are caught"
  exit 0
  ;;
"") ;;
*)
  echo "usage: $0 [--op-compares | --self-test]" >&2
  exit 2
  ;;
esac
cd "$ROOT"

# Sets LAYER to the layer of a path (relative to the tree's root); empty
# for files outside the layered library (tests, docs).
layer_of() {
  case $1 in
  include/onnxopt/Support/* | lib/Support/*) LAYER=support ;;
  include/onnxopt/IR/* | lib/IR/*) LAYER=ir ;;
  include/onnxopt/Ops/* | lib/Ops/*) LAYER=ops ;;
  include/onnxopt/Analysis/* | lib/Analysis/*) LAYER=analysis ;;
  include/onnxopt/Import/* | include/onnxopt/Export/*) LAYER=io ;;
  lib/Import/* | lib/Export/*) LAYER=io ;;
  include/onnxopt/Pass/* | lib/Pass/*) LAYER=pass ;;
  include/onnxopt/Passes.h | include/onnxopt/Passes.def | passes/*) LAYER=transforms ;;
  include/onnxopt/Tool/* | lib/Tool/* | tools/*) LAYER=tool ;;
  *) LAYER= ;;
  esac
}

# What each layer may include: itself and every layer it links (directly or
# not).
declare -A MAY_INCLUDE=(
  [support]="support"
  [ir]="support ir"
  [ops]="support ir ops"
  [analysis]="support ir ops analysis"
  [io]="support ir ops analysis io"
  [pass]="support ir pass"
  [transforms]="support ir ops analysis io pass transforms"
  [tool]="support ir ops analysis io pass transforms tool"
)

# Installed headers that still name protobuf types, each with its reason.
# They are reported, not failed. Empty: Tensor's proto functions moved to
# IR/ProtoTypes.h, importModel(ModelProto &&) to lib/Import/ImportProto.h and
# exportModel, verifyProto to lib/Export/ExportProto.h (issue 29).
declare -A PROTO_PENDING=(
)
# Files that may break the layering, with the reason.
declare -A LAYER_PENDING=(
)

errors=0
fail() {
  echo "$1" >&2
  errors=$((errors + 1))
}

sources=$(find include/onnxopt lib passes tools -type f \
  \( -name '*.h' -o -name '*.cpp' -o -name '*.def' \) | sort)
# The private headers of lib/ and passes/ by name (lib/Export includes
# lib/Import's scanner as "ProtoWire.h").
declare -A PRIVATE=()
for h in $(find lib passes -type f -name '*.h' | sort); do
  name=${h##*/}
  [[ -n ${PRIVATE[$name]:-} ]] || PRIVATE[$name]=$h
done

# 1. Includes of a layer above (one grep over every file).
last=
while IFS= read -r hit; do
  f=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  if [[ $f != "$last" ]]; then
    last=$f
    layer_of "$f"
    layer=$LAYER
    allowed=" ${MAY_INCLUDE[$layer]:-} "
    dir=${f%/*}
    [[ -n $layer ]] || fail "$f: no layer for this file: add its directory to layer_of in utils/check-layering.sh"
  fi
  [[ -n $layer ]] || continue
  [[ $rest =~ \"([^\"]*)\" ]] || continue
  inc=${BASH_REMATCH[1]}
  if [[ $inc == onnxopt/* ]]; then
    target=include/$inc
  elif [[ -e $dir/$inc ]]; then
    continue # a private header beside the file: its own layer
  elif [[ -n ${PRIVATE[$inc]:-} ]]; then
    target=${PRIVATE[$inc]}
  else
    continue # a system header
  fi
  layer_of "$target"
  [[ -n $LAYER && $allowed == *" $LAYER "* ]] && continue
  if [[ -n ${LAYER_PENDING[$f]:-} ]]; then
    echo "note: $f:$line: layer $layer includes $inc (layer $LAYER): pending: ${LAYER_PENDING[$f]}"
    continue
  fi
  fail "$f:$line: layer $layer includes $inc (layer ${LAYER:-none})"
done < <(grep -nH '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' $sources || true)

# Prints the lines of the files "$@" (file:line:text) that match the ERE
# $1 outside `//` comments.
grep_code() {
  local re=$1
  shift
  local hit code
  while IFS= read -r hit; do
    code=${hit#*:*:}
    code=${code%%//*}
    [[ $code =~ $re ]] && echo "$hit"
  done < <(grep -nHE "$re" "$@" || true)
}

# 2. Protobuf types in installed headers: an include of ONNX's or
# protobuf's headers, a use of ONNX's message types (onnx::TensorProto) or a
# forward declaration of one (then the header's API speaks protobuf).
# ONNX's C++ interfaces that are not messages (a forward-declared
# onnx::InferenceContext for an inference hook) are not protobuf types.
proto='#[[:space:]]*include[[:space:]]*[<"](onnx|google)/|(^|[^A-Za-z0-9_])onnx::[A-Za-z0-9_]*Proto([^A-Za-z0-9_]|$)|(class|struct)[[:space:]]+[A-Za-z0-9_]*Proto[[:space:]]*;|google::protobuf'
headers=$(find include/onnxopt -type f \( -name '*.h' -o -name '*.def' \) \
  ! -path include/onnxopt/IR/ProtoTypes.h | sort)
last=
while IFS= read -r hit; do
  f=${hit%%:*}
  [[ $f != "$last" ]] || continue # one report per file
  last=$f
  rest=${hit#*:}
  line=${rest%%:*}
  if [[ -n ${PROTO_PENDING[$f]:-} ]]; then
    echo "note: $f:$line: names ONNX's protobuf types: pending: ${PROTO_PENDING[$f]}"
    continue
  fi
  fail "$f:$line: names ONNX's protobuf types (${rest#*:}); only include/onnxopt/IR/ProtoTypes.h may"
done < <(grep_code "$proto" $headers)

# 3. Op-type string compares in the engines (--op-compares): the registry
# (lib/Ops) says what an op is. Creating a node by name and a pattern's
# anchor (`Pattern("Reshape")`, a {"Reshape", hook} row) are not compares.
if ((OP_COMPARES)); then
  lit='"[A-Z][A-Za-z0-9]*"'
  compares=(
    "(\.|->)is\($lit"                                # N.is("Reshape")
    "getOpType\(\)[[:space:]]*[!=]=[[:space:]]*\""    # N.getOpType() == "Add"
    "(^|[^A-Za-z0-9_])Op(Type)?[[:space:]]*[!=]=[[:space:]]*$lit" # Op == "Add"
    "\.Cases?\(\"[A-Z][a-z]"                          # StringSwitch on op names
    "$lit,[[:space:]]*$lit"                           # {"Add", "Sub", ...}
    "^[[:space:]]*$lit,[[:space:]]*$"                 # a list, one per line
    "\[$lit\][[:space:]]*="                           # T["Reshape"] = ...
  )
  pattern=$(
    IFS='|'
    echo "${compares[*]}"
  )
  engines=$(find lib/Analysis lib/Export passes -type f \
    \( -name '*.h' -o -name '*.cpp' \) | sort)
  while IFS= read -r hit; do
    fail "$hit"
  done < <(grep_code "$pattern" $engines)
fi

if ((errors)); then
  echo "check-layering: $errors problem(s)" >&2
  exit 1
fi
if ((OP_COMPARES)); then
  echo "check-layering: every include respects the layers; no op compares"
else
  echo "check-layering: every include respects the layers"
fi
