#!/usr/bin/python3
"""Exporter-made models for the conditions a model runs under (dim constraints).

Each architecture here fixes, bounds or pins some of its input dims, the way
real exports do, so that the shape passes must refuse what would not run:

    /usr/bin/python3 test/models/gen_constraint_models.py [--out-dir test/models]

Writes (all with torch.onnx.export, PyTorch 1.13, fixed seeds):

  linear_head_dynamic.onnx   conv stack + Linear sized for 32x32; dynamic batch,
                             height, width (so H and W are fixed by the head)
  linear_head_static.onnx    the same module exported static at 1x3x32x32
  priors_dynamic.onnx        conv detector head whose boxes add priors made for
                             a 32x32 image (a buffer); dynamic batch only
  priors_static.onnx         the same exported static at 1x3x32x32
  causal_static.onnx         one self-attention block with a baked 16x16 causal
                             mask, static at 1x16x32
  causal_dynamic.onnx        the same, dynamic batch only
  gated_if.onnx              a scripted branch on `x[:, 0].sum() > 0` computed
                             per batch row (bool[N] condition: N must be 1)
  frontend_1d.onnx           audio frontend: Conv1d kernel 64 stride 32 over
                             `samples` (dynamic), so samples >= 64
"""

import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20261201


class LinearHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.conv2 = nn.Conv2d(8, 8, 3, stride=2, padding=1)
        self.fc = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        return self.fc(x.flatten(1))


class PriorsHead(nn.Module):
    """A detector head with one prior per cell of the 8x8 feature map of a
    32x32 image: the priors are a constant of that size."""

    def __init__(self):
        super().__init__()
        self.body = nn.Conv2d(3, 8, 3, stride=4, padding=1)
        self.loc = nn.Conv2d(8, 4, 1)
        ys, xs = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
        priors = torch.stack([xs, ys, xs + 1, ys + 1], dim=-1).reshape(1, 64, 4)
        self.register_buffer("priors", priors * 4.0 + torch.rand(1, 64, 4))

    def forward(self, x):
        f = F.relu(self.body(x))
        loc = self.loc(f).permute(0, 2, 3, 1).reshape(x.shape[0], -1, 4)
        return loc + self.priors


class CausalBlock(nn.Module):
    def __init__(self, length=16, dim=32):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        mask = torch.full((length, length), float("-inf")).triu(1)
        self.register_buffer("mask", mask)
        self.dim = dim

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        att = q @ k.transpose(1, 2) / (self.dim ** 0.5) + self.mask
        return self.out(att.softmax(-1) @ v)


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)

    def forward(self, x):
        if bool(x[:, 0] > 0):
            return self.a(x)
        return self.b(x)


class Frontend(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(1, 8, 64, stride=32)
        self.proj = nn.Conv1d(8, 8, 3, padding=1)

    def forward(self, x):
        return self.proj(F.relu(self.conv(x)))


def export(module, args, path, inputs, outputs, dynamic_axes=None, opset=13):
    module.eval()
    torch.onnx.export(
        module, args, path, input_names=inputs, output_names=outputs,
        dynamic_axes=dynamic_axes, opset_version=opset, do_constant_folding=True)
    print("wrote", path)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    out = p.parse_args().out_dir

    torch.manual_seed(SEED)
    head = LinearHead()
    img = torch.randn(1, 3, 32, 32)
    export(head, (img,), f"{out}/linear_head_dynamic.onnx", ["input"], ["logits"],
           {"input": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}})
    export(head, (img,), f"{out}/linear_head_static.onnx", ["input"], ["logits"])

    torch.manual_seed(SEED + 1)
    priors = PriorsHead()
    export(priors, (img,), f"{out}/priors_dynamic.onnx", ["input"], ["boxes"],
           {"input": {0: "batch"}, "boxes": {0: "batch"}})
    export(priors, (img,), f"{out}/priors_static.onnx", ["input"], ["boxes"])

    torch.manual_seed(SEED + 2)
    causal = CausalBlock()
    seq = torch.randn(1, 16, 32)
    export(causal, (seq,), f"{out}/causal_static.onnx", ["x"], ["y"], opset=14)
    export(causal, (seq,), f"{out}/causal_dynamic.onnx", ["x"], ["y"],
           {"x": {0: "batch"}, "y": {0: "batch"}}, opset=14)

    torch.manual_seed(SEED + 3)
    gated = torch.jit.script(Gated())
    export(gated, (torch.randn(1, 4),), f"{out}/gated_if.onnx", ["x"], ["y"],
           {"x": {0: "batch"}, "y": {0: "batch"}})

    torch.manual_seed(SEED + 4)
    export(Frontend(), (torch.randn(1, 1, 1600),), f"{out}/frontend_1d.onnx",
           ["audio"], ["features"],
           {"audio": {0: "batch", 2: "samples"}, "features": {0: "batch", 2: "frames"}})


if __name__ == "__main__":
    main()
