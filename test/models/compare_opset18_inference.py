#!/usr/bin/env python3
"""Infers each model at its own opset and converted to opset 18+ (with
to_opset18.py) and compares the inferred graph signatures (the types of the
graph inputs and outputs): rewriting the opset must not change what
onnx-opt infers. Prints one line per model and a summary; exits 1 on a
difference.

    compare_opset18_inference.py --onnx-opt BIN --opset 18 DIR PATTERN...
"""
import argparse
import fnmatch
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import to_opset18  # noqa: E402


def signature(onnx_opt, path):
    r = subprocess.run([onnx_opt, path, "--infer-shapes", "--no-verify"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return "error: " + r.stderr.strip().splitlines()[-1]
    for line in r.stdout.splitlines():
        if ") => (" in line:
            return line.rstrip(" {")
    return "no signature"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--onnx-opt", required=True)
    p.add_argument("--opset", type=int, default=18)
    p.add_argument("dir")
    p.add_argument("patterns", nargs="+")
    args = p.parse_args()
    names = sorted(n for n in os.listdir(args.dir)
                   if any(fnmatch.fnmatch(n, pat) for pat in args.patterns))
    same = differ = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model = os.path.join(args.dir, name, "model.onnx")
            if not os.path.exists(model):
                continue
            out = os.path.join(tmp, name + ".onnx")
            try:
                to_opset18.convert(model, out, args.opset)
            except SystemExit as e:
                skipped += 1
                print(f"{name}: not converted ({e})")
                continue
            a, b = signature(args.onnx_opt, model), signature(args.onnx_opt, out)
            if a == b and not a.startswith("error"):
                same += 1
            else:
                differ += 1
                print(f"{name}: DIFFERENT\n  original: {a}\n  opset {args.opset}: {b}")
    print(f"{same} same, {differ} different, {skipped} not converted")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
