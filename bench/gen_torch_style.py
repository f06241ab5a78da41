#!/usr/bin/python3
#===- gen_torch_style.py - Big graphs named and shaped like torch exports ---===#
#
# Writes bench/out/torch_style_<N>k.onnx for each requested node count N: what
# torch.onnx.export (opset 17) emits for a stack of blocks
#
#   x = relu(linear_i(x)); x = x.view(x.size(0), -1, k_i)    k_i = 8, 2, 4, ...
#
# with a dynamic batch dim. Each block is 12 nodes, named the way torch names
# them (node `/layers.3/MatMul`, output `/layers.3/MatMul_output_0`, weight
# initializer `onnx::MatMul_123`, bias `layers.3.bias`) and, as torch does,
# every constant of the view chain is its own Constant node:
#
#   /layers.i/MatMul     (x, onnx::MatMul_j)       x: [batch, 16/k', k']
#   /layers.i/Add        (layers.i.bias, mm)
#   /layers.i/Relu
#   /Shape_i, /Constant_a (int64 0), /Gather_i     x.size(0)
#   /Constant_b ([0]), /Unsqueeze_i                (opset 13 axes input)
#   /Constant_c ([-1]), /Constant_d ([k_i])
#   /Concat_i (axis 0), /Reshape_i (allowzero 0)   -> [batch, 16/k_i, k_i]
#
# The MatMul weight is [k', k'] (k' the previous k), so every block keeps 16
# elements per batch row and dims stay small. Weights are raw_data, as torch
# writes them. `--fold-shapes` turns each chain into a constant [0,-1,k];
# `--cse --dce` then removes the Shape/Gather/Unsqueeze/Concat of every block.
#
#   /usr/bin/python3 bench/gen_torch_style.py [--out DIR] [--check] 100000 1000000
#
#===------------------------------------------------------------------------===#

import argparse
import os
import struct
import sys
import time

import onnx
from onnx import TensorProto, helper

OPSET = 17
IR_VERSION = 8
NODES_PER_BLOCK = 12
ROW = 16           # elements per batch row, kept by every block
KS = (8, 2, 4)     # the k of x.view(x.size(0), -1, k), cycling


class Builder:
    def __init__(self, graph):
        self.g = graph
        self.counts = {}   # torch's per-scope counters: /Constant, /Constant_1
        self.onnx_id = 0   # torch's onnx::MatMul_<n> numbering

    def unique(self, scope, op):
        key = (scope, op)
        n = self.counts.get(key, 0)
        self.counts[key] = n + 1
        return f"{scope}/{op}" + (f"_{n}" if n else "")

    def node(self, scope, op, inputs, attrs=()):
        # graph.node.add() is several times faster than helper.make_node.
        name = self.unique(scope, op)
        n = self.g.node.add()
        n.op_type = op
        n.name = name
        n.input.extend(inputs)
        n.output.append(name + "_output_0")
        for a in attrs:
            n.attribute.append(a)
        return n.output[0]

    def constant(self, scope, values, scalar=False):
        t = TensorProto()
        t.data_type = TensorProto.INT64
        if not scalar:
            t.dims.append(len(values))
        t.raw_data = struct.pack(f"<{len(values)}q", *values)
        a = helper.make_attribute("value", t)
        return self.node(scope, "Constant", [], [a])

    def float_init(self, name, dims, seed):
        t = self.g.initializer.add()
        t.name = name
        t.data_type = TensorProto.FLOAT
        t.dims.extend(dims)
        count = 1
        for d in dims:
            count *= d
        # Deterministic, different in every block (as trained weights are:
        # cse must not merge them), small enough to run the small graphs.
        state = (seed * 2654435761 + 1) % (1 << 32)
        values = []
        for _ in range(count):
            state = (state * 1664525 + 1013904223) % (1 << 32)
            values.append((state / (1 << 32) - 0.5) * 0.5)
        t.raw_data = struct.pack(f"<{count}f", *values)
        return name


def build(num_nodes):
    blocks = max(1, num_nodes // NODES_PER_BLOCK)
    model = onnx.ModelProto()
    model.ir_version = IR_VERSION
    model.producer_name = "pytorch"
    model.producer_version = "1.13.1"
    model.opset_import.add(domain="", version=OPSET)
    g = model.graph
    g.name = "torch_jit"
    b = Builder(g)
    prev_k = KS[-1]
    g.input.append(helper.make_tensor_value_info(
        "input", TensorProto.FLOAT, ["batch", ROW // prev_k, prev_k]))
    x = "input"
    zero_attr = helper.make_attribute("axis", 0)
    for i in range(blocks):
        k = KS[i % len(KS)]
        scope = f"/layers.{i}"
        b.onnx_id += 1
        w = b.float_init(f"onnx::MatMul_{b.onnx_id}", [prev_k, prev_k], 2 * i)
        bias = b.float_init(f"layers.{i}.bias", [prev_k], 2 * i + 1)
        mm = b.node(scope, "MatMul", [x, w])
        add = b.node(scope, "Add", [bias, mm])
        relu = b.node(scope, "Relu", [add])
        # x.view(x.size(0), -1, k): torch scopes the view chain at the top.
        shape = b.node("", "Shape", [relu])
        idx = b.constant("", [0], scalar=True)
        n = b.node("", "Gather", [shape, idx],
                   [helper.make_attribute("axis", 0)])
        axes = b.constant("", [0])
        u = b.node("", "Unsqueeze", [n, axes])
        minus1 = b.constant("", [-1])
        kc = b.constant("", [k])
        cat = b.node("", "Concat", [u, minus1, kc], [zero_attr])
        x = b.node("", "Reshape", [relu, cat],
                   [helper.make_attribute("allowzero", 0)])
        prev_k = k
    g.output.append(helper.make_tensor_value_info(
        "output", TensorProto.FLOAT, ["batch", ROW // prev_k, prev_k]))
    # torch names the graph output after the module's return value.
    last = g.node[len(g.node) - 1]
    last.output[0] = "output"
    return model, blocks


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="torch-style graphs for scaling")
    p.add_argument("nodes", nargs="*", type=int, default=[100000, 1000000])
    p.add_argument("--out", default=os.path.join(here, "out"))
    p.add_argument("--check", action="store_true",
                   help="run onnx.checker and strict shape inference (slow)")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for n in args.nodes:
        t = time.time()
        model, blocks = build(n)
        path = os.path.join(args.out, f"torch_style_{n // 1000}k.onnx")
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
