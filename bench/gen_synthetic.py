#!/usr/bin/python3
#===- gen_synthetic.py - Big synthetic graphs for cse/dce scaling ----------===#
#
# Writes bench/out/synthetic_<N>.onnx for each requested node count N. The
# graph repeats the flatten chain exporters emit for `x.view(x.size(0), -1)`,
# once per block, with its own copies of every constant, and a dead branch:
#
#   idx  = Constant<value = int64 0>           \
#   s    = Shape(X)                             |  identical in every block:
#   n    = Gather(s, idx)                       |  cse merges them into one
#   u    = Unsqueeze(n, axes_k)   axes_k  = [0] |  (initializers axes_k and
#   c    = Concat(u, minus1_k)    minus1_k = [-1]  minus1_k are duplicates)
#   r    = Reshape(X, c)                       /
#   acc' = Add(acc, r)                         -- live, differs per block
#   d1 = Relu(r); d2 = Neg(d1); d3 = Mul(d1, d2)   -- dead: dce removes them
#
# 10 nodes and 2 initializers per block. After cse+dce one chain and the Add
# ladder remain (N/10 + 5 nodes). Weights are tiny: time goes to the graph.
#
#   /usr/bin/python3 bench/gen_synthetic.py [--out DIR] [--check] 100000 1000000
#
#===------------------------------------------------------------------------===#

import argparse
import os
import sys
import time

import onnx
from onnx import TensorProto, helper

OPSET = 17
IR_VERSION = 8
NODES_PER_BLOCK = 10


def add_node(graph, op, inputs, outputs, name):
    # graph.node.add() is several times faster than helper.make_node.
    n = graph.node.add()
    n.op_type = op
    n.name = name
    n.input.extend(inputs)
    n.output.extend(outputs)
    return n


def add_int64_init(graph, name, values):
    t = graph.initializer.add()
    t.name = name
    t.data_type = TensorProto.INT64
    t.dims.append(len(values))
    t.int64_data.extend(values)


def build(num_nodes):
    blocks = max(1, num_nodes // NODES_PER_BLOCK)
    model = onnx.ModelProto()
    model.ir_version = IR_VERSION
    model.producer_name = "onnx-opt-bench"
    model.opset_import.add(domain="", version=OPSET)
    g = model.graph
    g.name = f"synthetic_{blocks * NODES_PER_BLOCK}"
    g.input.append(helper.make_tensor_value_info(
        "X", TensorProto.FLOAT, ["N", 3, 4, 4]))
    zero = helper.make_tensor("zero", TensorProto.INT64, [], [0])

    acc = None
    for k in range(blocks):
        p = f"b{k}_"
        axes, minus1 = p + "axes", p + "minus1"
        add_int64_init(g, axes, [0])
        add_int64_init(g, minus1, [-1])
        const = add_node(g, "Constant", [], [p + "idx"], p + "idx")
        const.attribute.append(helper.make_attribute("value", zero))
        add_node(g, "Shape", ["X"], [p + "shape"], p + "shape")
        add_node(g, "Gather", [p + "shape", p + "idx"], [p + "n"], p + "gather")
        add_node(g, "Unsqueeze", [p + "n", axes], [p + "u"], p + "unsqueeze")
        concat = add_node(g, "Concat", [p + "u", minus1], [p + "c"], p + "concat")
        concat.attribute.append(helper.make_attribute("axis", 0))
        add_node(g, "Reshape", ["X", p + "c"], [p + "r"], p + "reshape")
        # The first block has no accumulator yet: start from r + r.
        add_node(g, "Add", [acc or p + "r", p + "r"], [p + "acc"], p + "acc")
        acc = p + "acc"
        add_node(g, "Relu", [p + "r"], [p + "d1"], p + "dead_relu")
        add_node(g, "Neg", [p + "d1"], [p + "d2"], p + "dead_neg")
        add_node(g, "Mul", [p + "d1", p + "d2"], [p + "d3"], p + "dead_mul")

    g.output.append(helper.make_tensor_value_info(acc, TensorProto.FLOAT,
                                                  ["N", 48]))
    return model, blocks


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="synthetic graphs for cse/dce")
    p.add_argument("nodes", nargs="*", type=int, default=[100000, 1000000])
    p.add_argument("--out", default=os.path.join(here, "out"))
    p.add_argument("--check", action="store_true",
                   help="run onnx.checker and strict shape inference (slow)")
    p.add_argument("--text", action="store_true",
                   help="also write ONNX text (.onnxtxt) via onnx.printer")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for n in args.nodes:
        t = time.time()
        model, blocks = build(n)
        path = os.path.join(args.out, f"synthetic_{n // 1000}k.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        if args.check:
            onnx.checker.check_model(model)
            onnx.shape_inference.infer_shapes(model, check_type=True,
                                              strict_mode=True, data_prop=True)
        print(f"{path}: {blocks * NODES_PER_BLOCK} nodes, "
              f"{len(model.graph.initializer)} initializers, "
              f"{os.path.getsize(path) / 1e6:.1f} MB ({time.time() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
