#!/usr/bin/python3
"""Twins of static test models whose initializers are also graph inputs.

Before IR 4 every initializer had to be listed in graph.input, and PyTorch
exports kept the habit long after (keep_initializers_as_inputs=True): weights,
baked grids and Reshape targets all look like inputs a caller could feed,
though nobody does. The shape passes read them as constants unless the user
names one (include/onnxopt/Ops/OpFacts.h; issue 31, item 1), so make-dynamic
must repair or refuse each twin exactly as it does the original
(test/Transforms/make-dynamic-init-inputs.test). Written from the committed
static models of gen_dynamic_twins.py; no torch needed:

  <name>_init_inputs_ir3.onnx   IR 3, every initializer listed as an input
                                (Constant nodes stay: older PyTorch wrote them)
  <name>_init_inputs_ir7.onnx   IR 7, every Constant node lifted into an
                                initializer first, as onnx-simplifier leaves
                                a model, then every initializer listed as an
                                input (torch's keep_initializers_as_inputs)

    /usr/bin/python3 test/models/gen_init_inputs.py [--out-dir test/models]

Not in manifest.json: the twins compute what their originals compute, whose
e2e cases cover them.
"""

import argparse
import os

import onnx
from onnx import helper

HERE = os.path.dirname(os.path.abspath(__file__))

# (static model, IR versions of its twins)
TWINS = [
    ("yolo_head_static.onnx", (3, 7)),
    ("decoder_static.onnx", (3,)),
    ("ssd_priors_static.onnx", (3, 7)),
]


def lift_constants(graph):
    """Moves each main-graph Constant node holding a `value` tensor into an
    initializer of the same name."""
    kept = []
    for node in graph.node:
        if (node.op_type == "Constant" and node.domain in ("", "ai.onnx")
                and len(node.attribute) == 1
                and node.attribute[0].name == "value"):
            tensor = onnx.TensorProto()
            tensor.CopyFrom(node.attribute[0].t)
            tensor.name = node.output[0]
            graph.initializer.append(tensor)
            continue
        kept.append(node)
    del graph.node[:]
    graph.node.extend(kept)


def list_initializers_as_inputs(graph):
    listed = {i.name for i in graph.input}
    for init in graph.initializer:
        if init.name not in listed:
            graph.input.append(
                helper.make_tensor_value_info(init.name, init.data_type,
                                              list(init.dims)))


def make_twin(src, ir_version):
    model = onnx.load(src)
    if ir_version >= 4:
        lift_constants(model.graph)
    list_initializers_as_inputs(model.graph)
    model.ir_version = ir_version
    onnx.checker.check_model(model)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=HERE)
    args = parser.parse_args()
    for name, versions in TWINS:
        for ir in versions:
            model = make_twin(os.path.join(HERE, name), ir)
            out = os.path.join(
                args.out_dir,
                name.replace("_static.onnx", "_init_inputs_ir%d.onnx" % ir))
            onnx.save(model, out)
            print(out, os.path.getsize(out))


if __name__ == "__main__":
    main()
