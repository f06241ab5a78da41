#!/usr/bin/python3
"""Exports canon_dynamic.onnx, the canonicalize pass's exporter-made model.

Conv + BatchNormalization (plain and grouped), ConvTranspose +
BatchNormalization, a Mul by ones and a LayerNorm with gamma = 1 and beta = 0
(decomposed at opset 13: its Mul by ones and Add of zeros stay in the
graph). Exported with TrainingMode.PRESERVE from eval mode, so torch's own
eval peephole does not fold the BatchNorms first. The BatchNorm statistics
are calibrated by a train-mode pass on random input (random statistics let a
deep model ignore its input: docs/testing.md). Adds or replaces its entry in
manifest.json (marked with this generator). Run with /usr/bin/python3
(torch 1.13).
"""
import json
import os

import torch
import torch.nn as nn

GENERATOR = "test/models/gen_canon_model.py"


class CanonNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2, groups=2)
        self.bn3 = nn.BatchNorm2d(4)
        self.norm = nn.LayerNorm(4)
        self.register_buffer("ones", torch.ones(1, 8, 1, 1))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y)) * self.ones
        y = torch.relu(self.bn3(self.up(y)))
        # Channels last, normalized over the channels.
        return self.norm(y.permute(0, 2, 3, 1))


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    torch.manual_seed(0)
    model = CanonNet()
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(4, 3, 32, 32))
    model.eval()
    path = os.path.join(out, "canon_dynamic.onnx")
    axes = {"input": {0: "batch", 2: "height", 3: "width"},
            "output": {0: "batch", 1: "height2", 2: "width2"}}
    torch.onnx.export(model, torch.randn(1, 3, 32, 32), path, opset_version=13,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes=axes,
                      training=torch.onnx.TrainingMode.PRESERVE)
    entry = {
        "name": "canon_dynamic", "file": "canon_dynamic.onnx",
        "generator": GENERATOR, "opset": 13, "inputs": ["input"],
        "outputs": ["output"],
        "dynamic_axes": {k: {str(a): n for a, n in v.items()}
                         for k, v in axes.items()},
        "shape_sets": [{"input": "1x3x32x32"}, {"input": "2x3x48x40"},
                       {"input": "1x3x16x64"}],
        "purpose": "canonicalize: Conv+BN (plain, grouped), ConvTranspose+BN, "
                   "Mul by ones, LayerNorm with gamma 1 and beta 0",
        # Folding a BatchNorm into float32 weights rounds differently (as
        # every runtime's own fusion does), and the LayerNorm's division by
        # a small deviation magnifies it to ~2e-5 absolute.
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
