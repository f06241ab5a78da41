#!/usr/bin/env python3
"""Prints the element types of a model's inputs and the type and raw bytes
of its Constant tensors, read with ONNX's protobuf classes (for
modern-element-types.onnxtxt)."""
import sys

import onnx

m = onnx.load(sys.argv[1])
for i in m.graph.input:
    print("input", i.name, i.type.tensor_type.elem_type)
for n in m.graph.node:
    if n.op_type == "Constant":
        t = n.attribute[0].t
        print("constant", n.output[0], t.data_type, "dims", list(t.dims),
              "raw", t.raw_data.hex())
