#!/usr/bin/python3
#===- gen_large.py - Large models for the I/O benchmark ---------------------===#
#
# Writes two models into bench/out/ (or --out DIR):
#
#   large_single.onnx   one file, >= 500 MB of float initializers, thousands of
#                       nodes (residual MatMul/Add/Relu/Add blocks), checked.
#   large_external.onnx + large_external.data
#                       >= 2.5 GB of weights with data_location=EXTERNAL in one
#                       data file beside the model. Weights are written chunk by
#                       chunk, so generating it needs only a few MB of RAM.
#
# Run with Debian's interpreter (it has onnx 1.12 and numpy):
#   /usr/bin/python3 bench/gen_large.py [--out DIR] [--single-mb 520]
#                                       [--external-mb 2600] [--only single|external]
#
#===------------------------------------------------------------------------===#

import argparse
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8


def block_nodes(i, x, w, b):
    """One residual block: y = x + relu(x @ W + b). Returns (nodes, output)."""
    mm, add, relu, res = (f"b{i}_{s}" for s in ("mm", "add", "relu", "res"))
    nodes = [
        helper.make_node("MatMul", [x, w], [mm], name=mm),
        helper.make_node("Add", [mm, b], [add], name=add),
        helper.make_node("Relu", [add], [relu], name=relu),
        helper.make_node("Add", [x, relu], [res], name=res),
    ]
    return nodes, res


def random_floats(rng, count):
    # Small values so the residual chain stays finite if someone runs it.
    return (rng.standard_normal(count, dtype=np.float32) * 0.01).astype(
        np.float32, copy=False)


def make_model(nodes, inits, hidden, name, last):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", hidden])
    y = helper.make_tensor_value_info(last, TensorProto.FLOAT, ["N", hidden])
    graph = helper.make_graph(nodes, name, [x], [y], initializer=inits)
    model = helper.make_model(graph, producer_name="onnx-opt-bench",
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model


def gen_single(out_dir, target_mb, hidden, rng):
    """All weights inline: one .onnx file under protobuf's 2 GB limit."""
    per_block = hidden * hidden * 4 + hidden * 4
    blocks = -(-target_mb * 1024 * 1024 // per_block)
    nodes, inits, x = [], [], "X"
    for i in range(blocks):
        w = numpy_helper.from_array(
            random_floats(rng, hidden * hidden).reshape(hidden, hidden),
            f"b{i}_W")
        b = numpy_helper.from_array(random_floats(rng, hidden), f"b{i}_B")
        inits += [w, b]
        ns, x = block_nodes(i, x, w.name, b.name)
        nodes += ns
    model = make_model(nodes, inits, hidden, "large_single", x)
    path = os.path.join(out_dir, "large_single.onnx")
    onnx.checker.check_model(model)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    init_bytes = blocks * per_block
    return path, blocks, len(nodes), init_bytes


def external_tensor(name, dims, location, offset, length):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)),
                       ("length", str(length))):
        entry = t.external_data.add()
        entry.key = key
        entry.value = value
    return t


def gen_external(out_dir, target_mb, hidden, rng):
    """Weight matrices go to one .data file, streamed; biases stay inline."""
    per_w = hidden * hidden * 4
    blocks = -(-target_mb * 1024 * 1024 // per_w)
    data_name = "large_external.data"
    nodes, inits, x = [], [], "X"
    offset = 0
    with open(os.path.join(out_dir, data_name), "wb") as data:
        for i in range(blocks):
            data.write(random_floats(rng, hidden * hidden).tobytes())
            w = external_tensor(f"b{i}_W", [hidden, hidden], data_name, offset,
                                per_w)
            offset += per_w
            b = numpy_helper.from_array(random_floats(rng, hidden), f"b{i}_B")
            inits += [w, b]
            ns, x = block_nodes(i, x, w.name, b.name)
            nodes += ns
    model = make_model(nodes, inits, hidden, "large_external", x)
    path = os.path.join(out_dir, "large_external.onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    # The path form checks that every external file exists beside the model.
    onnx.checker.check_model(path)
    return path, blocks, len(nodes), offset


def mb(n):
    return f"{n / 1e6:.0f} MB"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=os.path.join(here, "out"))
    p.add_argument("--single-mb", type=int, default=520,
                   help="MiB of initializers in the single-file model")
    p.add_argument("--single-hidden", type=int, default=384)
    p.add_argument("--external-mb", type=int, default=2600,
                   help="MiB of external weights")
    p.add_argument("--external-hidden", type=int, default=1024)
    p.add_argument("--only", choices=["single", "external"])
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(args.seed)

    if args.only in (None, "single"):
        t = time.time()
        path, blocks, n, size = gen_single(args.out, args.single_mb,
                                           args.single_hidden, rng)
        print(f"{path}: {blocks} blocks, {n} nodes, {mb(size)} initializers, "
              f"file {mb(os.path.getsize(path))} ({time.time() - t:.1f} s)")
    if args.only in (None, "external"):
        t = time.time()
        path, blocks, n, size = gen_external(args.out, args.external_mb,
                                             args.external_hidden, rng)
        print(f"{path}: {blocks} blocks, {n} nodes, {mb(size)} external "
              f"weights, model {mb(os.path.getsize(path))} "
              f"({time.time() - t:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
