#!/usr/bin/env python3
"""Rewrites an exported ONNX model (ai.onnx opset 13-17) to opset 18 or
newer, changing only the ops whose signature changed at 18:

- ReduceMean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare: the `axes`
  attribute becomes a second input (an int64 initializer);
- Split without a `split` input: `num_outputs` = the number of outputs
  (Split-18 requires either);
- Split with a `split` attribute (opset < 13): the attribute becomes an input;
- Squeeze/Unsqueeze with an `axes` attribute (opset < 13): likewise.

Every other op keeps its meaning from opset 13 to 23 for what these models
use, so the opset import is raised and nothing else changes. Ops of an
opset older than 13 other than these are refused rather than guessed.

    /usr/bin/python3 test/models/to_opset18.py IN.onnx OUT.onnx [--opset 18]
"""
import argparse
import sys

import onnx
from onnx import helper, numpy_helper
import numpy as np

REDUCE_18 = {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
             "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"}
AXES_13 = {"Squeeze", "Unsqueeze", "ReduceSum"}
# Ops whose inputs or attributes changed between opsets 11 and 13 other than
# the ones rewritten here: a model using them at an older opset is refused.
CHANGED_BEFORE_13 = {"Resize", "Pad", "Clip", "TopK", "Upsample"}


def move_attribute_to_input(graph, node, attr_name, names):
    attrs = [a for a in node.attribute if a.name == attr_name]
    if not attrs:
        return
    values = list(attrs[0].ints)
    node.attribute.remove(attrs[0])
    name = names.fresh(f"{node.output[0]}_{attr_name}")
    graph.initializer.append(
        numpy_helper.from_array(np.array(values, dtype=np.int64), name))
    if len(node.input) == 1:
        node.input.append(name)
    else:
        node.input[1] = name


class Names:
    def __init__(self, graph):
        self.used = set()
        for v in list(graph.input) + list(graph.output) + list(graph.value_info):
            self.used.add(v.name)
        for t in graph.initializer:
            self.used.add(t.name)
        for n in graph.node:
            self.used.update(n.input)
            self.used.update(n.output)

    def fresh(self, base):
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name


def convert_graph(graph, old_opset, names):
    for node in graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                convert_graph(a.g, old_opset, Names(a.g))
        if node.op_type in REDUCE_18:
            move_attribute_to_input(graph, node, "axes", names)
        elif node.op_type in AXES_13 and old_opset < 13:
            move_attribute_to_input(graph, node, "axes", names)
        elif node.op_type == "Split":
            if old_opset < 13:
                move_attribute_to_input(graph, node, "split", names)
            if len(node.input) < 2 or not node.input[1]:
                node.attribute.append(
                    helper.make_attribute("num_outputs", len(node.output)))
        elif node.op_type in CHANGED_BEFORE_13 and old_opset < 13:
            sys.exit(f"to_opset18: error: {node.op_type} at opset {old_opset} "
                     "is not converted")


def convert(input_path, output_path, opset):
    """Converts one model file; exits with a message on what it refuses."""
    if not 18 <= opset <= 23:
        sys.exit("to_opset18: error: --opset must be 18..23")
    model = onnx.load(input_path)
    old = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not old or old[0].version < 7 or old[0].version > 17:
        sys.exit("to_opset18: error: the model's ai.onnx opset must be 7..17")
    old_opset = old[0].version
    convert_graph(model.graph, old_opset, Names(model.graph))
    old[0].version = opset
    # IR versions of the opsets: 18 -> 8, 19/20 -> 9, 21/22 -> 10, 23 -> 11.
    model.ir_version = max(model.ir_version,
                           {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11}[opset])
    onnx.save(model, output_path)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--opset", type=int, default=18)
    args = p.parse_args()
    convert(args.input, args.output, args.opset)


if __name__ == "__main__":
    main()
