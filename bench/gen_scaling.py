#!/usr/bin/python3
#===- gen_scaling.py - Graph families that expose super-linear passes -----===#
#
# Writes bench/out/scaling_<family>_<N>.onnx: small graphs shaped to make a
# per-item search or copy show (each was quadratic in some pass once; see
# RESULTS.md, "Linear on adversarial families"). run_scaling.sh times every
# pass at N and 2N nodes; linear means about 2x.
#
#   /usr/bin/python3 bench/gen_scaling.py [--out DIR] FAMILY N [FAMILY N ...]
#   /usr/bin/python3 bench/gen_scaling.py --list
#
#===------------------------------------------------------------------------===#

import argparse
import os

import onnx
from onnx import TensorProto as TP, helper as H

OPSET = 17


def model(nodes, inputs, outputs, inits=()):
    g = H.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return H.make_model(g, opset_imports=[H.make_opsetid("", OPSET)])


def tensor_in(name, shape, t=TP.FLOAT):
    return H.make_tensor_value_info(name, t, shape)


def i64(name, vals, dims):
    return H.make_tensor(name, TP.INT64, dims, vals)


def reduce_blocks(n, per, block):
    """n/per blocks, each value reduced and summed, so nothing is dead."""
    nodes, inits, acc = [], [], None
    for i in range(max(1, n // per)):
        t = block(i, nodes, inits)
        nodes.append(H.make_node("ReduceSum", [t], [f"r{i}"], keepdims=0))
        if acc is not None:
            nodes.append(H.make_node("Add", [acc, f"r{i}"], [f"acc{i}"]))
            acc = f"acc{i}"
        else:
            acc = f"r{i}"
    return nodes, inits, acc


def distinct_constants(n):
    """Constant nodes of different values (the save's inference memo)."""
    def block(i, nodes, inits):
        nodes.append(H.make_node("Constant", [], [f"c{i}"],
                                 value=H.make_tensor("", TP.FLOAT, [1], [i])))
        nodes.append(H.make_node("Add", ["x", f"c{i}"], [f"t{i}"]))
        return f"t{i}"
    nodes, inits, acc = reduce_blocks(n, 4, block)
    return model(nodes, [tensor_in("x", [1])],
                 [tensor_in(acc, [])], inits)


def distinct_shapes(n):
    """ConstantOfShape reading its own shape initializer (memo buckets;
    constant-fold's dead initializers)."""
    def block(i, nodes, inits):
        inits.append(i64(f"s{i}", [i % 97 + 1, 2], [2]))
        nodes.append(H.make_node("ConstantOfShape", [f"s{i}"], [f"t{i}"],
                                 value=H.make_tensor("", TP.FLOAT, [1], [1])))
        return f"t{i}"
    nodes, inits, acc = reduce_blocks(n, 3, block)
    return model(nodes, [], [tensor_in(acc, [])], inits)


def range_casts(n):
    """Range -> Cast chains (the dim analysis' greatest-element map)."""
    def block(i, nodes, inits):
        inits.append(i64(f"b{i}", [i % 97 + 1], []))
        nodes.append(H.make_node("Range", ["zero", f"b{i}", "one"], [f"q{i}"]))
        nodes.append(H.make_node("Cast", [f"q{i}"], [f"t{i}"], to=TP.FLOAT))
        return f"t{i}"
    nodes, inits, acc = reduce_blocks(n, 4, block)
    inits += [i64("zero", [0], []), i64("one", [1], [])]
    return model(nodes, [], [tensor_in(acc, [])], inits)


def wide_concat(n):
    """One Concat of n inputs, each with its own symbol (signatures, sums)."""
    ins = [tensor_in(f"x{i}", [f"S{i}", 4]) for i in range(n)]
    nodes = [H.make_node("Concat", [f"x{i}" for i in range(n)], ["y"], axis=0),
             H.make_node("Relu", ["y"], ["z"])]
    return model(nodes, ins, [tensor_in("z", None)])


def input_symbols(n):
    """n/2 inputs with their own symbols, unified by an Add chain
    (unify-dims' choice of a name among the input symbols)."""
    k = n // 2 + 1
    ins = [tensor_in(f"x{i}", [f"S{i}", 4]) for i in range(k)]
    nodes, prev = [], "x0"
    for i in range(1, k):
        nodes.append(H.make_node("Add", [prev, f"x{i}"], [f"a{i}"]))
        prev = f"a{i}"
    return model(nodes, ins, [tensor_in(prev, None)])


def many_outputs(n):
    """One value read by n Identity nodes, each a graph output (the
    summary table, per-name lookups)."""
    nodes = [H.make_node("Relu", ["x"], ["v"])]
    outs = []
    for i in range(n):
        nodes.append(H.make_node("Identity", ["v"], [f"o{i}"]))
        outs.append(tensor_in(f"o{i}", ["N", 4]))
    return model(nodes, [tensor_in("x", ["N", 4])], outs)


def constant_chain(n):
    """c -> Add(c, 1) -> Add ... : constant-fold erases every step's inputs."""
    inits = [H.make_tensor("c0", TP.FLOAT, [4], [0, 1, 2, 3]),
             H.make_tensor("one", TP.FLOAT, [1], [1])]
    nodes, prev = [], "c0"
    for i in range(n):
        nodes.append(H.make_node("Add", [prev, "one"], [f"c{i + 1}"]))
        prev = f"c{i + 1}"
    nodes.append(H.make_node("Add", ["x", prev], ["y"]))
    return model(nodes, [tensor_in("x", [4])], [tensor_in("y", [4])], inits)


FAMILIES = {f.__name__: f for f in (distinct_constants, distinct_shapes,
                                     range_casts, wide_concat, input_symbols,
                                     many_outputs, constant_chain)}


def main():
    ap = argparse.ArgumentParser(description="graph families for run_scaling.sh")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                  "out"))
    ap.add_argument("--list", action="store_true")
    ap.add_argument("pairs", nargs="*", help="FAMILY N ...")
    a = ap.parse_args()
    if a.list:
        print("\n".join(FAMILIES))
        return
    os.makedirs(a.out, exist_ok=True)
    for fam, n in zip(a.pairs[::2], a.pairs[1::2]):
        path = os.path.join(a.out, f"scaling_{fam}_{n}.onnx")
        onnx.save(FAMILIES[fam](int(n)), path)
        print(path)


if __name__ == "__main__":
    main()
