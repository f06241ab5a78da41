#!/usr/bin/python3
"""Regenerates the binary inputs of test/IO (run with Debian's /usr/bin/python3).

The lit tests only read the files written here; they never need Python.
"""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def add_model(w_name="w", x_type=TensorProto.FLOAT, w_array=None, ir=8, opset=17,
              name="adds"):
    if w_array is None:
        w_array = np.arange(4, dtype=np.float32)
    w = numpy_helper.from_array(w_array, name=w_name)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], name,
        [helper.make_tensor_value_info("x", x_type, [4])],
        [helper.make_tensor_value_info("y", x_type, [4])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="make_inputs")
    model.ir_version = ir
    return model


def set_external(tensor, location, offset, length):
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = tensor.external_data.add()
            entry.key, entry.value = key, str(value)


def save(model, name):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


# ext.onnx: its weight lives at offset 16 of ext.bin.
weights = np.arange(4, dtype=np.float32)
with open(os.path.join(HERE, "ext.bin"), "wb") as f:
    f.write(b"\0" * 16 + weights.tobytes())
m = add_model()
set_external(m.graph.initializer[0], "ext.bin", 16, 16)
save(m, "ext.onnx")

# ext-out-of-range.onnx: reads past the end of ext.bin.
m = add_model()
set_external(m.graph.initializer[0], "ext.bin", 24, 16)
save(m, "ext-out-of-range.onnx")

# ext-missing.onnx: the data file does not exist.
m = add_model()
set_external(m.graph.initializer[0], "no-such-file.bin", 0, 16)
save(m, "ext-missing.onnx")

# newer.onnx: IR 10 / opset 18, newer than ONNX 1.12 can check.
save(add_model(ir=10, opset=18), "newer.onnx")

# undefined-input.onnx: Add reads "foo", which nothing defines.
m = add_model()
m.graph.node[0].input[1] = "foo"
save(m, "undefined-input.onnx")

# duplicate-name.onnx: the initializer and the node output are both "y".
m = add_model()
m.graph.initializer[0].name = "y"
m.graph.node[0].input[1] = "y"
save(m, "duplicate-name.onnx")

# bad-types.onnx: Add(float, int64) passes the IR verifier but not ONNX's
# strict type checking.
save(add_model(w_array=np.arange(4, dtype=np.int64)), "bad-types.onnx")

# --- Hostile inputs (issue 12): each must end in a clear error. ---

# ext-parent.onnx: its data file is one directory up ("../ext.bin").
m = add_model()
set_external(m.graph.initializer[0], "../ext.bin", 16, 16)
save(m, "ext-parent.onnx")

# ext-absolute.onnx: an absolute location (which does not exist).
m = add_model()
set_external(m.graph.initializer[0], "/nonexistent-onnxopt-dir/ext.bin", 16, 16)
save(m, "ext-absolute.onnx")

# raw-short.onnx: raw_data of 12 bytes for a float[4].
m = add_model()
m.graph.initializer[0].raw_data = m.graph.initializer[0].raw_data[:12]
save(m, "raw-short.onnx")

# huge-dims.onnx: an input dim of 2^62.
m = add_model()
m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1 << 62
save(m, "huge-dims.onnx")

# huge-tensor.onnx: an initializer whose dims need more than 2^64 bytes.
m = add_model()
t = m.graph.initializer[0]
t.ClearField("raw_data")
del t.dims[:]
t.dims.extend([1 << 40, 1 << 40])
save(m, "huge-tensor.onnx")

# ext-offset-overflow.onnx: offset + length does not fit 64 bits.
m = add_model()
set_external(m.graph.initializer[0], "ext.bin", (1 << 64) - 8, 16)
save(m, "ext-offset-overflow.onnx")

