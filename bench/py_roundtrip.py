#!/usr/bin/python3
#===- py_roundtrip.py - The Python baseline: onnx.load + onnx.save ---------===#
#
# What every Python tool pays before doing anything: parse the file into a
# ModelProto and serialize it back. bench/run_torch_style.sh times this
# against onnx-opt.
#
#   /usr/bin/python3 bench/py_roundtrip.py IN.onnx OUT.onnx
#
#===------------------------------------------------------------------------===#
import sys

import onnx

onnx.save(onnx.load(sys.argv[1]), sys.argv[2])
