#!/usr/bin/python3
"""TensorFlow-"same" padding as a static export bakes it, and its twin.

For make-dynamic's reading of constant pads (issue 30). timm's tf_* models
and Keras ports pad ahead of a strided window by TensorFlow's "same" rule:
total = max((ceil(D/s) - 1)*s + (k - 1)*d + 1 - D, 0), split total//2
before and the rest after. A dynamic export computes the amounts from the
input's Shape; a static one at 32x32 bakes them as constants, (0, 1) for a
3x3 stride-2 window at every even size. The graph: Pad + Conv 3x3 stride 2,
Conv 3x3 stride 1 (its own pads), Pad + Conv 3x3 stride 2, Pad (-inf) +
MaxPool 3x3 stride 2, ReduceMean over H and W. Written:

  tf_same_static.onnx   input [1,3,32,32], the amounts baked as constants
  tf_same_dynamic.onnx  input [N,3,H,W], the amounts computed from Shape

The two agree where H and W keep the old size's remainder modulo every
stride-2 stage (H%8=0 for three stages from 32); at H = 36 the MaxPool's
Pad sees 9, where "same" pads (1, 1) and the constant still (0, 1).

    /usr/bin/python3 test/models/gen_tf_same.py [--out-dir test/models/handwritten]

Replaces this generator's entries in ../manifest.json and keeps the others.
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

from manifest_entries import replace_entries

GENERATOR = "test/models/gen_tf_same.py"
SIDE = 32


def same_amounts(size, kernel, stride):
    total = max((-(-size // stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


class Graph:
    def __init__(self, static):
        self.static, self.nodes, self.inits = static, [], []
        self.rng = np.random.default_rng(7)

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, output, **attrs):
        self.nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    def same_pads(self, x, size, tag):
        """The pads operand of a 3x3 stride-2 "same" Pad of x."""
        if self.static:
            b, a = same_amounts(size, 3, 2)
            return self.const(tag + "_pads", np.array([0, 0, b, b, 0, 0, a, a], np.int64))
        shape = self.node("Shape", [x], tag + "_shape")
        hw = self.node("Slice", [shape, self.const(tag + "_s", np.array([2], np.int64)),
                                 self.const(tag + "_e", np.array([4], np.int64))], tag + "_hw")
        two = self.const(tag + "_two", np.array(2, np.int64))
        one = self.const(tag + "_one", np.array(1, np.int64))
        ceil = self.node("Div", [self.node("Add", [hw, one], tag + "_up"), two], tag + "_ceil")
        span = self.node("Add", [self.node("Mul", [self.node("Sub", [ceil, one], tag + "_c1"), two],
                                           tag + "_c2"), self.const(tag + "_k", np.array(3, np.int64))],
                         tag + "_span")
        total = self.node("Max", [self.node("Sub", [span, hw], tag + "_over"),
                                  self.const(tag + "_zero", np.array(0, np.int64))], tag + "_total")
        before = self.node("Div", [total, two], tag + "_before")
        after = self.node("Sub", [total, before], tag + "_after")
        zeros = self.const(tag + "_nc", np.array([0, 0], np.int64))
        return self.node("Concat", [zeros, before, zeros, after], tag + "_pads", axis=0)

    def conv(self, x, cin, cout, tag, stride, pads=None):
        w = self.const(tag + "_w", (self.rng.standard_normal((cout, cin, 3, 3)) * 0.3).astype(np.float32))
        attrs = dict(kernel_shape=[3, 3], strides=[stride, stride])
        if pads:
            attrs["pads"] = pads
        return self.node("Relu", [self.node("Conv", [x, w], tag, **attrs)], tag + "_relu")


def build(static):
    g = Graph(static)
    x = g.node("Pad", ["x", g.same_pads("x", SIDE, "p1")], "x_pad")
    x = g.conv(x, 3, 8, "stem", 2)
    x = g.conv(x, 8, 8, "mid", 1, pads=[1, 1, 1, 1])
    x = g.node("Pad", [x, g.same_pads(x, SIDE // 2, "p2")], "mid_pad")
    x = g.conv(x, 8, 16, "down", 2)
    x = g.node("Pad", [x, g.same_pads(x, SIDE // 4, "p3"),
                       g.const("neg_inf", np.array(-np.inf, np.float32))], "pool_pad")
    x = g.node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2])
    g.node("ReduceMean", [x, g.const("hw_axes", np.array([2, 3], np.int64))], "y", keepdims=0)
    dims = [1, 3, SIDE, SIDE] if static else ["N", 3, "H", "W"]
    out = [1, 16] if static else ["N", 16]
    graph = helper.make_graph(g.nodes, "tf_same",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)], g.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                             ir_version=10, producer_name=GENERATOR)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out-dir", default=os.path.join(here, "handwritten"))
    out = parser.parse_args().out_dir
    entries = []
    for file, static in (("tf_same_static.onnx", True), ("tf_same_dynamic.onnx", False)):
        path = os.path.join(out, file)
        save(build(static), path)
        entries.append({
            "name": file[:-5],
            "file": "handwritten/" + file,
            "generator": GENERATOR,
            "opset": 18,
            "inputs": ["x"],
            "outputs": ["y"],
            "dynamic_axes": {} if static else {"x": {"0": "N", "2": "H", "3": "W"}, "y": {"0": "N"}},
            "shape_sets": [{"x": f"1x3x{SIDE}x{SIDE}"}] +
                          ([] if static else [{"x": "2x3x40x24"}, {"x": "1x3x36x30"}]),
            "purpose": "TensorFlow-'same' pads ahead of stride-2 windows, " +
                       ("baked as constants at 32x32" if static else "computed from Shape (twin)"),
            "rtol": 0.0001,
            "atol": 1e-05,
        })
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    replace_entries(os.path.join(out, "..", "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
