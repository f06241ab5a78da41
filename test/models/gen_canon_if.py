#!/usr/bin/python3
"""Exports canon_if.onnx: canonicalize's If inlining and Slice merging.

A scripted module (torch.jit.script, so torch 1.13 exports the Python `if`
as an If node) whose branch tests `x.size(1) != 16`. Only the batch and time
dims are dynamic, so the condition becomes a constant once fold-shapes and
constant-fold have run, and canonicalize inlines the taken (else) branch.
The else branch's result is declared with a fresh torch dim name, not the
If's own, which the inlining must accept. After the If:

  - `h[:, 2:][:, :5]`: two Slices on the channel axis with steps 1 and
    non-negative bounds, merged into one (channels 2..6);
  - `[:, :, 1:][:, ::2]`: a time Slice and a strided channel Slice on
    disjoint axes, merged into one;
  - `[:, :, :-1]` after a time Slice: a negative end on the shared axis,
    which must stay two Slices.

The Conv's weights are random (fixed seed); the output depends on the input
everywhere. Adds or replaces its entry in manifest.json (marked with this
generator). Run with /usr/bin/python3 (torch 1.13).
"""
import json
import os

import torch
import torch.nn as nn

GENERATOR = "test/models/gen_canon_if.py"
SEED = 20261234


class CanonIf(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(16, 16, 3, padding=1)

    def forward(self, x):
        if x.size(1) != 16:
            h = torch.zeros(x.size(0), 16, x.size(2))
        else:
            h = torch.relu(self.conv(x))
        a = h[:, 2:][:, :5]
        b = h[:, :, 1:][:, ::2]
        c = torch.tanh(h)[:, :, 2:][:, :, :-1]
        return a, b, c


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(SEED)
    model = torch.jit.script(CanonIf().eval())
    path = os.path.join(out, "canon_if.onnx")
    axes = {"x": {0: "batch", 2: "time"}}
    torch.onnx.export(model, (torch.randn(1, 16, 20),), path, opset_version=13,
                      input_names=["x"], output_names=["a", "b", "c"],
                      dynamic_axes=axes)
    entry = {
        "name": "canon_if", "file": "canon_if.onnx",
        "generator": GENERATOR, "opset": 13, "inputs": ["x"],
        "outputs": ["a", "b", "c"],
        "dynamic_axes": {k: {str(a): n for a, n in v.items()}
                         for k, v in axes.items()},
        # The export used 1x16x20; the others are shapes it never saw.
        "shape_sets": [{"x": "1x16x20"}, {"x": "3x16x7"}, {"x": "2x16x64"}],
        "purpose": "canonicalize: an If on x.size(1) (constant once folded) "
                   "inlined, consecutive Slices merged (one axis, disjoint "
                   "axes) and kept (a negative end)",
        "rtol": 0.001,
        "atol": 0.0001,
    }
    manifest_path = os.path.join(out, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["models"] = [m for m in manifest["models"]
                          if m.get("generator") != GENERATOR] + [entry]
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=False)
        f.write("\n")
    print("wrote", path, "and updated", manifest_path)


if __name__ == "__main__":
    main()
