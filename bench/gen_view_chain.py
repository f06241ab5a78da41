#!/usr/bin/python3
#===- gen_view_chain.py - Deep graphs of x.view(x.size(0), -1, k) blocks ---===#
#
# Writes bench/out/view_chain_<N>k.onnx for each requested node count N: the
# graph torch.onnx.export makes of a deep stack of
#
#   h = relu(h @ W_i + b_i)
#   h = h.view(h.size(0), -1, k_i)        # k_i cycles 8, 2, 4
#
# with the constants of the view as Constant nodes, as torch writes them:
#
#   MatMul, Add, Relu, Shape, Constant(0), Gather, Constant([0]), Unsqueeze,
#   Constant([-1]), Constant([k]), Concat, Reshape          (12 nodes a block)
#
# Each Reshape's target is computed from the Shape of the value it reshapes,
# and the next block's Shape reads the result: folding one block needs the
# previous block's result shape, so fold-shapes must carry shapes forward
# through the whole chain in one run (issue 16). Weights are tiny (k x k).
#
# --via-identity passes x.size(0) through an Identity (13 nodes a block,
# view_chain_identity_<N>k.onnx): ONNX 1.12's data propagation stops there,
# so a Reshape's result has a shape only once its target is folded, and
# each block needs the previous one folded first (what made fold-shapes
# resolve one block per round of whole-graph inference).
#
#   /usr/bin/python3 bench/gen_view_chain.py [--out DIR] [--check] [--via-identity] 10000 100000
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
NODES_PER_BLOCK = 12
CYCLE = (8, 2, 4)
ELEMS = 16  # elements per batch row: every k of CYCLE divides it


def add_node(graph, op, inputs, outputs, name):
    # graph.node.add() is several times faster than helper.make_node.
    n = graph.node.add()
    n.op_type = op
    n.name = name
    n.input.extend(inputs)
    n.output.extend(outputs)
    return n


def add_constant(graph, name, dims, values):
    n = add_node(graph, "Constant", [], [name + "_output_0"], name)
    n.attribute.append(helper.make_attribute(
        "value", helper.make_tensor("", TensorProto.INT64, dims, values)))
    return n.output[0]


def add_float_init(graph, name, dims, seed):
    t = graph.initializer.add()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    count = 1
    for d in dims:
        count *= d
    # Small deterministic weights that keep activations bounded.
    t.float_data.extend(((seed * 31 + i * 17) % 13 - 6) / 16.0
                        for i in range(count))


def build(num_nodes, via_identity=False):
    per_block = NODES_PER_BLOCK + (1 if via_identity else 0)
    blocks = max(1, num_nodes // per_block)
    model = onnx.ModelProto()
    model.ir_version = IR_VERSION
    model.producer_name = "onnx-opt-bench"
    model.opset_import.add(domain="", version=OPSET)
    g = model.graph
    g.name = f"view_chain_{blocks * per_block}"
    k_prev = CYCLE[0]
    g.input.append(helper.make_tensor_value_info(
        "x", TensorProto.FLOAT, ["batch", ELEMS // k_prev, k_prev]))
    h = "x"
    for i in range(blocks):
        k = CYCLE[i % len(CYCLE)]
        p = f"/blocks.{i}/"
        w, b = f"blocks.{i}.weight", f"blocks.{i}.bias"
        add_float_init(g, w, [k_prev, k_prev], i)
        add_float_init(g, b, [k_prev], i + 7)
        add_node(g, "MatMul", [h, w], [p + "MatMul_output_0"], p + "MatMul")
        add_node(g, "Add", [p + "MatMul_output_0", b], [p + "Add_output_0"],
                 p + "Add")
        add_node(g, "Relu", [p + "Add_output_0"], [p + "Relu_output_0"],
                 p + "Relu")
        r = p + "Relu_output_0"
        add_node(g, "Shape", [r], [p + "Shape_output_0"], p + "Shape")
        idx = add_constant(g, p + "Constant", [], [0])
        add_node(g, "Gather", [p + "Shape_output_0", idx],
                 [p + "Gather_output_0"], p + "Gather").attribute.append(
                     helper.make_attribute("axis", 0))
        size0 = p + "Gather_output_0"
        if via_identity:
            add_node(g, "Identity", [size0], [p + "Identity_output_0"],
                     p + "Identity")
            size0 = p + "Identity_output_0"
        axes = add_constant(g, p + "Constant_1", [1], [0])
        add_node(g, "Unsqueeze", [size0, axes],
                 [p + "Unsqueeze_output_0"], p + "Unsqueeze")
        minus1 = add_constant(g, p + "Constant_2", [1], [-1])
        kk = add_constant(g, p + "Constant_3", [1], [k])
        add_node(g, "Concat", [p + "Unsqueeze_output_0", minus1, kk],
                 [p + "Concat_output_0"], p + "Concat").attribute.append(
                     helper.make_attribute("axis", 0))
        add_node(g, "Reshape", [r, p + "Concat_output_0"],
                 [p + "Reshape_output_0"], p + "Reshape")
        h = p + "Reshape_output_0"
        k_prev = k
    out = g.output.add()
    out.CopyFrom(helper.make_tensor_value_info(
        h, TensorProto.FLOAT, ["batch", ELEMS // k_prev, k_prev]))
    return model, blocks, per_block


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description="deep view-chain graphs")
    p.add_argument("nodes", nargs="*", type=int, default=[10000, 100000])
    p.add_argument("--out", default=os.path.join(here, "out"))
    p.add_argument("--via-identity", action="store_true",
                   help="pass x.size(0) through an Identity")
    p.add_argument("--check", action="store_true",
                   help="run onnx.checker and strict shape inference")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for n in args.nodes:
        t = time.time()
        model, blocks, per_block = build(n, args.via_identity)
        name = f"{n // 1000}k" if n >= 1000 else str(n)
        kind = "view_chain_identity" if args.via_identity else "view_chain"
        path = os.path.join(args.out, f"{kind}_{name}.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        if args.check:
            onnx.checker.check_model(model)
            onnx.shape_inference.infer_shapes(model, check_type=True,
                                              strict_mode=True, data_prop=True)
        print(f"{path}: {blocks * per_block} nodes ({blocks} blocks), "
              f"{os.path.getsize(path) / 1e6:.1f} MB ({time.time() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
