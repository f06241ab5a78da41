#!/usr/bin/python3
"""Swin-style window attention as a static dynamo export bakes it, and its twin.

For make-dynamic's merged-dim reading (issue 30). torch 2's dynamo exporter
is not in Debian 12, so the graphs are written here with python3-onnx in the
op pattern such an export has (every view a Reshape with allowzero = 1, its
target a literal list): one Swin block over an [B,8,8,4] feature map with
4x4 windows and `heads` heads, then the shifted windows' roll (Slice +
Concat on H and W) and the patch merging (four strided Slices, Concat,
[B,16,16], LayerNorm, Linear). Written:

  swin_windows_static1.onnx  batch 1, two heads: every B*nW literal is 4,
                             told from the heads only by the views that merged
                             the windows ([1,2,4,2,4,4] -> [4,16,4]).
  swin_windows_static1h.onnx batch 1, one head: the q/k/v view [4,16,3,1,4]
                             holds a 1 that is the head, not the batch.
  swin_windows_static3.onnx  batch 3, two heads.
  swin_windows_dynamic.onnx  the twin of the two-head models: -1 where the
  swin_windows_dynamic1h.onnx    static ones bake B or B*nW (one head).

Weights are random with a fixed seed; the shifted windows' mask is random too
(only its shape matters here).

    /usr/bin/python3 test/models/gen_swin_windows.py [--out-dir test/models/handwritten]

Replaces this generator's entries in ../manifest.json and keeps the others.
"""

import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

from manifest_entries import replace_entries

GENERATOR = "test/models/gen_swin_windows.py"
SIDE, WIN, CH = 8, 4, 4          # feature map side, window side, channels
NW = (SIDE // WIN) ** 2          # windows per image
N = WIN * WIN                    # tokens per window


class Graph:
    """Nodes and initializers of one model, with a target helper that
    bakes or leaves the batch as the twin needs."""

    def __init__(self, batch, seed):
        self.batch, self.nodes, self.inits = batch, [], []
        self.rng = np.random.default_rng(seed)

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def weight(self, name, shape, scale=0.3):
        return self.const(name, (self.rng.standard_normal(shape) * scale).astype(np.float32))

    def node(self, op, inputs, outputs, **attrs):
        outputs = [outputs] if isinstance(outputs, str) else outputs
        self.nodes.append(helper.make_node(op, inputs, outputs, **attrs))
        return outputs[0]

    def view(self, x, name, dims, per_image):
        """Reshape x to [lead, *dims]; lead is batch * per_image, baked by a
        static export, -1 in the dynamic twin."""
        lead = -1 if self.batch is None else self.batch * per_image
        target = self.const(name, np.array([lead] + dims, np.int64))
        return self.node("Reshape", [x, target], name + "_out", allowzero=1)


def build(batch, heads, seed):
    g = Graph(batch, seed)
    hd = CH // heads
    # window partition: [B,8,8,C] -> [B,2,4,2,4,C] -> [B*nW, N, C]
    x = g.view("x", "t_part", [SIDE // WIN, WIN, SIDE // WIN, WIN, CH], 1)
    x = g.node("Transpose", [x], "part_t", perm=[0, 1, 3, 2, 4, 5])
    win = g.view(x, "t_win", [N, CH], NW)
    # attention: qkv viewed [B*nW, N, 3, heads, hd] and split
    qkv = g.node("MatMul", [win, g.weight("w_qkv", (CH, 3 * CH))], "qkv")
    qkv = g.view(qkv, "t_qkv", [N, 3, heads, hd], NW)
    qkv = g.node("Transpose", [qkv], "qkv_t", perm=[2, 0, 3, 1, 4])
    g.node("Split", [qkv], ["q5", "k5", "v5"], axis=0, num_outputs=3)
    axis0 = g.const("axis0", np.array([0], np.int64))
    q, k, v = (g.node("Squeeze", [t + "5", axis0], t + "4") for t in "qkv")
    kt = g.node("Transpose", [k], "k_t", perm=[0, 1, 3, 2])
    scores = g.node("MatMul", [q, kt], "scores")
    scores = g.node("Mul", [scores, g.const("scale", np.array([hd ** -0.5], np.float32))], "scaled")
    scores = g.node("Add", [scores, g.weight("rel_bias", (1, heads, N, N), 1.0)], "biased")
    # the shifted windows' mask: [B, nW, heads, N, N] + [1, nW, 1, N, N]
    scores = g.view(scores, "t_mask", [NW, heads, N, N], 1)
    scores = g.node("Add", [scores, g.weight("shift_mask", (1, NW, 1, N, N), 1.0)], "masked")
    scores = g.view(scores, "t_unmask", [heads, N, N], NW)
    probs = g.node("Softmax", [scores], "probs", axis=-1)
    out = g.node("MatMul", [probs, v], "attn")
    out = g.node("Transpose", [out], "attn_t", perm=[0, 2, 1, 3])
    out = g.view(out, "t_merge", [N, CH], NW)
    out = g.node("MatMul", [out, g.weight("w_proj", (CH, CH))], "proj")
    # window reverse: [B*nW, N, C] -> [B,2,2,4,4,C] -> [B,8,8,C]
    out = g.view(out, "t_rev", [SIDE // WIN, SIDE // WIN, WIN, WIN, CH], 1)
    out = g.node("Transpose", [out], "rev_t", perm=[0, 1, 3, 2, 4, 5])
    out = g.view(out, "t_img", [SIDE, SIDE, CH], 1)
    # roll by 2 along H and W
    two, end, zero = (g.const(n, np.array([v], np.int64))
                      for n, v in (("two", 2), ("end", SIDE), ("zero", 0)))
    for axis in (1, 2):
        ax = g.const(f"roll_axis{axis}", np.array([axis], np.int64))
        hi = g.node("Slice", [out, two, end, ax], f"roll{axis}_hi")
        lo = g.node("Slice", [out, zero, two, ax], f"roll{axis}_lo")
        out = g.node("Concat", [hi, lo], f"rolled{axis}", axis=axis)
    # patch merging: x[:, i::2, j::2, :] for the four (i, j), concatenated
    axes = g.const("hw_axes", np.array([1, 2], np.int64))
    steps = g.const("hw_steps", np.array([2, 2], np.int64))
    ends = g.const("hw_ends", np.array([SIDE, SIDE], np.int64))
    parts = []
    for i, j in ((0, 0), (1, 0), (0, 1), (1, 1)):
        start = g.const(f"start{i}{j}", np.array([i, j], np.int64))
        parts.append(g.node("Slice", [out, start, ends, axes, steps], f"quarter{i}{j}"))
    out = g.node("Concat", parts, "merged4", axis=-1)
    out = g.view(out, "t_tokens", [(SIDE // 2) ** 2, 4 * CH], 1)
    out = g.node("LayerNormalization",
                 [out, g.const("ln_g", np.ones(4 * CH, np.float32)),
                  g.const("ln_b", np.zeros(4 * CH, np.float32))], "normed", axis=-1)
    g.node("MatMul", [out, g.weight("w_reduce", (4 * CH, 2 * CH))], "y")

    lead = "batch" if batch is None else batch
    graph = helper.make_graph(
        g.nodes, "swin_windows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [lead, SIDE, SIDE, CH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [lead, (SIDE // 2) ** 2, 2 * CH])],
        g.inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                             ir_version=10, producer_name=GENERATOR)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--out-dir", default=os.path.join(here, "handwritten"))
    out = parser.parse_args().out_dir
    entries = []
    for file, batch, heads, purpose in (
            ("swin_windows_static1.onnx", 1, 2, "batch 1, two heads"),
            ("swin_windows_static1h.onnx", 1, 1, "batch 1, one head"),
            ("swin_windows_static3.onnx", 3, 2, "batch 3, two heads"),
            ("swin_windows_dynamic.onnx", None, 2, "dynamic twin, two heads"),
            ("swin_windows_dynamic1h.onnx", None, 1, "dynamic twin, one head")):
        path = os.path.join(out, file)
        save(build(batch, heads, seed=30 + heads), path)
        lead = 3 if batch == 3 else 1
        entries.append({
            "name": file[:-5],
            "file": "handwritten/" + file,
            "generator": GENERATOR,
            "opset": 18,
            "inputs": ["x"],
            "outputs": ["y"],
            "dynamic_axes": {"x": {"0": "batch"}, "y": {"0": "batch"}} if batch is None else {},
            "shape_sets": [{"x": f"{lead}x{SIDE}x{SIDE}x{CH}"}] +
                          ([{"x": f"5x{SIDE}x{SIDE}x{CH}"}] if batch is None else []),
            "purpose": f"Swin-style window attention as a static dynamo export bakes it, {purpose}",
            "rtol": 0.0001,
            "atol": 1e-05,
        })
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    replace_entries(os.path.join(out, "..", "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
