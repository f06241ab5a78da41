#!/usr/bin/env bash
# Rewrites the pass list of docs/passes.md from `onnx-opt --list-passes`
# (test/CLI/docs-passes.test checks that the two agree).
#   utils/update-pass-docs.sh [onnx-opt binary, default build/onnx-opt]
set -euo pipefail
cd "$(dirname "$0")/.."
OPT=${1:-build/onnx-opt}
list=$("$OPT" --list-passes)
/usr/bin/python3 - "$list" <<'PY'
import sys
path = "docs/passes.md"
doc = open(path).read()
begin, end = "<!-- BEGIN list-passes -->\n", "<!-- END list-passes -->"
b = doc.index(begin) + len(begin)
e = doc.index(end)
open(path, "w").write(doc[:b] + "```\n" + sys.argv[1].rstrip("\n") + "\n```\n" + doc[e:])
PY
