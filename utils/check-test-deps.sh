#!/usr/bin/env bash
# Fails early, naming the Debian package, when the test suite uses a tool or
# a Python module that utils/setup.sh does not install.
#
#   utils/check-test-deps.sh            check the tree against utils/setup.sh
#   SETUP_SH=file utils/check-test-deps.sh   check against another setup script
#   CHECK_INSTALLED=0 ...               do not also require the packages to be
#                                       installed on this machine
#   utils/check-test-deps.sh --self-test     check that a setup script without
#                                       python3-onnx (which lit tests import)
#                                       is caught, with the package name
#
# What it reads: the commands of lit RUN lines (test/**/*.onnxtxt, *.test),
# the Python modules imported by RUN lines, by Python sources that tests write
# with split-file and by the .py files tests run, the CMake tests' programs
# (find_program, add_test COMMAND), the tools of the shell scripts ctest runs,
# and the npm packages the node tests require. Each one is mapped to a Debian
# package by the table below; a dependency missing from the table is an
# error too, so the table cannot silently fall behind the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
SETUP_SH=${SETUP_SH:-utils/setup.sh}
CHECK_INSTALLED=${CHECK_INSTALLED:-1}

if [[ ${1:-} == --self-test ]]; then
  tmp=$(mktemp)
  trap 'rm -f "$tmp"' EXIT
  sed 's/ python3-onnx / /' utils/setup.sh >"$tmp"
  if out=$(SETUP_SH=$tmp CHECK_INSTALLED=0 bash "$0" 2>&1); then
    echo "check-test-deps self-test: a setup without python3-onnx passed" >&2
    exit 1
  fi
  if [[ $out != *"Debian package 'python3-onnx'"*"does not install"* ]]; then
    echo "check-test-deps self-test: unexpected message: $out" >&2
    exit 1
  fi
  echo "check-test-deps self-test: a missing python3-onnx is reported"
  exit 0
fi

# Commands -> Debian package. "essential" means a package every Debian system
# has (Essential: yes or priority required), "project" a program this tree
# builds, "builtin" a shell builtin.
declare -A TOOL_PKG=(
  [FileCheck]=llvm-14-tools [not]=llvm-14-tools [count]=llvm-14-tools
  [split-file]=llvm-14-tools [lit]=llvm-14-tools
  [python3]=python3 [/usr/bin/python3]=python3
  [node]=nodejs [nodejs]=nodejs [npm]=npm
  [cmake]=cmake [ninja]=ninja-build [ccache]=ccache
  [clang-14]=clang-14 [clang++-14]=clang-14
  [cmp]=essential [diff]=essential [rm]=essential [mkdir]=essential
  [ls]=essential [cp]=essential [ln]=essential [cat]=essential
  [head]=essential [tail]=essential [mkfifo]=essential [timeout]=essential
  [chmod]=essential [touch]=essential [mv]=essential [wc]=essential
  [sed]=essential [grep]=essential [sort]=essential [tr]=essential
  [env]=essential [sh]=essential [bash]=essential [dd]=essential
  [truncate]=essential [stat]=essential [readlink]=essential
  [realpath]=essential [basename]=essential [dirname]=essential
  [seq]=essential [yes]=essential [awk]=essential [find]=essential
  [script]=essential
  [xargs]=essential [sleep]=essential [du]=essential [od]=essential
  [onnx-opt]=project [onnxopt-unittests]=project [onnx-opt-fuzz]=project
  [cd]=builtin [echo]=builtin [test]=builtin [printf]=builtin
  [true]=builtin [false]=builtin [exit]=builtin [export]=builtin
  [set]=builtin ['[']=builtin [ulimit]=builtin [exec]=builtin
  [for]=builtin [do]=builtin [done]=builtin [if]=builtin [then]=builtin
  [fi]=builtin [else]=builtin [while]=builtin [umask]=builtin
  [local]=builtin [shift]=builtin [mapfile]=builtin [shopt]=builtin
  [case]=builtin [esac]=builtin [return]=builtin [read]=builtin
  [declare]=builtin [pwd]=builtin [unset]=builtin [trap]=builtin
  [wait]=builtin [kill]=builtin [command]=builtin [in]=builtin
  [elif]=builtin [break]=builtin [continue]=builtin [source]=builtin
)
# Python modules -> Debian package ("stdlib" ships with python3).
declare -A PY_PKG=(
  [onnx]=python3-onnx [numpy]=python3-numpy [torch]=python3-torch
  [torchvision]=python3-torchvision [google]=python3-protobuf
  [lit]=llvm-14-tools
)
# npm packages come from package.json through `npm ci` in setup.sh.

# Python's own modules (Debian 12's python3 is 3.11: sys.stdlib_module_names).
declare -A STDLIB=()
if [[ -x /usr/bin/python3 ]]; then
  while read -r m; do STDLIB[$m]=1; done < <(/usr/bin/python3 -c 'import sys; print("\n".join(sys.stdlib_module_names))')
else
  for m in argparse copy json os sys re subprocess struct tempfile shutil pathlib; do STDLIB[$m]=1; done
fi

problems=()
declare -A NEED=() # package -> first user

need() { # package, who needs it
  [[ -n ${NEED[$1]:-} ]] || NEED[$1]=$2
}

tool() { # command word, file
  local w=$1 where=$2
  w=${w#\"}; w=${w%\"}
  [[ -z $w || $w == *=* || $w == -* || $w == '\' || $w =~ ^[0-9]+$ ]] && return
  case $w in
  %python) need python3 "$where"; return ;;
  %*) return ;; # other lit substitutions name files
  esac
  local p=${TOOL_PKG[$w]:-}
  if [[ -z $p ]]; then
    local hint=""
    if f=$(command -v -- "$w" 2>/dev/null) && [[ $f == /* ]]; then
      hint=" (on this machine it is $f from $(dpkg -S "$(readlink -f "$f")" 2>/dev/null | cut -d: -f1 | head -1))"
    fi
    problems+=("$where: command '$w' is not in the table of utils/check-test-deps.sh$hint")
    return
  fi
  case $p in essential | project | builtin) return ;; esac
  need "$p" "$where (command $w)"
}

module() { # module, file
  local m=${1%%.*} where=$2
  [[ -z $m ]] && return
  [[ -n ${STDLIB[$m]:-} ]] && return
  # The module this tree builds (python/), with pybind11 and Python's headers.
  if [[ $m == onnxopt ]]; then
    need pybind11-dev "$where (import onnxopt, built with pybind11)"
    need python3-dev "$where (import onnxopt, built against Python's headers)"
    return
  fi
  # A module of this tree, beside the file that imports it.
  [[ -f "$(dirname "$where")/$m.py" ]] && return
  local p=${PY_PKG[$m]:-}
  if [[ -z $p ]]; then
    problems+=("$where: python module '$m' is not in the table of utils/check-test-deps.sh")
    return
  fi
  need "$p" "$where (import $m)"
}

imports_of() { # file: the module names of its import lines
  grep -hoE '^\s*(import\s+[A-Za-z_][A-Za-z0-9_.]*(\s*,\s*[A-Za-z_][A-Za-z0-9_.]*)*|from\s+[A-Za-z_][A-Za-z0-9_.]*\s+import)' "$1" |
    sed -E 's/^\s*//; s/^from\s+([^ ]+).*/\1/; s/^import\s+//; s/\s+as\s+\S+//g' | tr ',' '\n' | sed 's/ //g'
}

# 1. lit RUN lines: every command of every pipeline / list, and Python
# one-liners (`%python -c "import a, b; ..."`); then the import lines of the
# Python sources that tests write with split-file. One awk pass over all tests
# prints "file<TAB>tool|module<TAB>name".
# Regression inputs of the fuzzers are model bytes, not tests (their text may
# hold anything, RUN lines included).
mapfile -t TESTS < <(find test -path test/models -prune -o -path test/fuzz/regressions -prune -o \( -name '*.onnxtxt' -o -name '*.test' \) -print | sort)
while IFS=$'\t' read -r f kind name; do
  if [[ $kind == tool ]]; then tool "$name" "$f"; else module "$name" "$f"; fi
done < <(awk '
  function emit(kind, name) { if (name != "") print FILENAME "\t" kind "\t" name }
  function imports(text,   m, list, n, i) {
    while (match(text, /import[ \t]+[A-Za-z_][A-Za-z0-9_]*([ \t]*,[ \t]*[A-Za-z_][A-Za-z0-9_]*)*/)) {
      list = substr(text, RSTART + 6, RLENGTH - 6); gsub(/[ \t]/, "", list)
      n = split(list, m, ","); for (i = 1; i <= n; i++) emit("module", m[i])
      text = substr(text, RSTART + RLENGTH)
    }
  }
  /^[ \t]*(#|\/\/)[ \t]*RUN:/ {
    line = $0; sub(/^[ \t]*(#|\/\/)[ \t]*RUN:[ \t]*/, "", line)
    imports(line)
    gsub(/\047[^\047]*\047/, "", line); gsub(/"[^"]*"/, "", line)
    n = split(line, segs, /[|;&(){}]/)
    for (s = 1; s <= n; s++) {
      k = split(segs[s], w, /[ \t]+/); i = 1
      while (i <= k) {
        if (w[i] == "" || w[i] == "not" || w[i] == "!" || w[i] == "--crash" || w[i] == "env" || w[i] == "exec" || w[i] ~ /=/) i++
        else if (w[i] == "timeout") i += 2
        else break
      }
      if (i <= k) emit("tool", w[i])
    }
    next
  }
  /^[ \t]*import[ \t]/ { line = $0; sub(/[ \t]+as[ \t].*/, "", line); imports(line); next }
  /^[ \t]*from[ \t]+[A-Za-z_][A-Za-z0-9_.]*[ \t]+import/ { split($0, w, /[ \t.]+/); emit("module", w[1] == "" ? w[3] : w[2]) }
' "${TESTS[@]}" | sort -u)

# 2. .py files that a test, a CMake file or a test script runs.
while IFS= read -r py; do
  base=$(basename "$py")
  if grep -rqF --include='*.onnxtxt' --include='*.test' --include='CMakeLists.txt' \
    --include='*.sh' --include='*.js' --include='run' -e "$base" test utils .ci 2>/dev/null; then
    while read -r m; do [[ -n $m ]] && module "$m" "$py"; done < <(imports_of "$py")
  fi
done < <(find test utils -name '*.py' | sort)
need python3 "test/CMakeLists.txt (lit runs under /usr/bin/python3)"
need llvm-14-tools "test/CMakeLists.txt (lit.py)"

# 3. CMake tests and the scripts they run.
while IFS= read -r prog; do tool "$prog" "test CMake files (find_program)"; done < <(
  grep -rhoE 'find_program\([A-Z_]+ NAMES [^)]+\)' test CMakeLists.txt |
    sed -E 's/.*NAMES ([^ )]+).*/\1/')
while IFS= read -r sh; do
  # Functions the script defines are not commands to install.
  declare -A FUNCS=()
  while read -r fn; do FUNCS[$fn]=1; done < <(grep -oE '^\s*[A-Za-z_][A-Za-z0-9_-]*\(\)' "$sh" | tr -d ' ()')
  while IFS= read -r seg; do
    read -ra words <<<"$seg" || true
    ((${#words[@]})) || continue
    w=${words[0]}
    # Only plain command names: not variables, paths built at run time,
    # case patterns, redirections or arithmetic.
    [[ $w =~ ^[A-Za-z][A-Za-z0-9+._-]*$ ]] || continue
    [[ -n ${FUNCS[$w]:-} ]] && continue
    tool "$w" "$sh"
  done < <(grep -vE '^\s*#' "$sh" | sed -E "s/'[^']*'//g; s/\"[^\"]*\"//g; s/<<<.*//; s/\(\(.*\)\)//g; s/^\s*[^ ()]*\)//" | tr '|;&(){}' '\n' | sed -E 's/^\s+//')
  unset FUNCS
done < <(find test -name '*.sh' | sort)
if grep -rqE "require\('onnxruntime-node'\)" test utils; then
  need nodejs "test/e2e (node)"
  need npm "test/e2e (npm ci installs onnxruntime-node)"
  grep -q '"onnxruntime-node"' package.json ||
    problems+=("package.json: onnxruntime-node is required by the tests but not listed")
fi
# The sanitizer and fuzz builds of .ci/run.
if grep -q 'clang++-14' .ci/run 2>/dev/null; then
  need clang-14 ".ci/run (sanitizer build)"
  need libclang-rt-14-dev ".ci/run (ASan, UBSan and libFuzzer runtimes)"
fi

# 4. Compare with setup.sh's PACKAGES list.
mapfile -t SETUP_PKGS < <(sed -n '/^PACKAGES=(/,/^)/p' "$SETUP_SH" | sed '1s/^PACKAGES=(//; $s/)$//' | tr ' ' '\n' | sed '/^$/d')
in_setup() {
  local p
  for p in "${SETUP_PKGS[@]}"; do [[ $p == "$1" ]] && return 0; done
  return 1
}
for p in $(printf '%s\n' "${!NEED[@]}" | sort); do
  if ! in_setup "$p"; then
    problems+=("the tests need Debian package '$p' (${NEED[$p]}), which $SETUP_SH does not install: add it to PACKAGES")
  elif [[ $CHECK_INSTALLED == 1 ]] && [[ $p != nodejs && $p != npm ]] &&
    [[ $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) != *"ok installed"* ]]; then
    problems+=("Debian package '$p' (${NEED[$p]}) is not installed: run $SETUP_SH")
  fi
done

if ((${#problems[@]})); then
  printf 'check-test-deps: error: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "check-test-deps: ${#NEED[@]} packages the tests use are installed by $SETUP_SH: $(printf '%s\n' "${!NEED[@]}" | sort | tr '\n' ' ')"
