#!/usr/bin/python3
"""Anchor-free detector static/dynamic export twins: anchors concatenated across levels.

For make-dynamic's rebuild of constants that hold one piece per pyramid level
(issue 30). Exported with PyTorch 1.13 like gen_dynamic_twins.py (whose export
helpers it uses), fixed seed; the static twin (no dynamic_axes, constants
folded) bakes what the dynamic one computes from Shape:

  yolov8_head_{static,dynamic}.onnx
      YOLOv8-style head on 3 levels (stride 8, 16, 32) at 1x3x64x96: each
      level's [B, no, h, w] viewed as [B, no, h*w] and concatenated; the box
      branch decoded with DFL (softmax over 8 bins, a 1x1 Conv of arange
      weights) and dist2bbox against the anchor points, times the strides.
      ultralytics' make_anchors builds the anchor points (x + 0.5, y + 0.5 per
      cell, [2, A] after a transpose) and the stride per anchor ([1, A]) from
      the runtime feature sizes and concatenates the levels; the static twin
      bakes both as constants of A = 96 + 24 + 6 = 126 anchors, which are
      affine per level (and constant per level) but not along A as a whole.

    /usr/bin/python3 test/models/gen_anchor_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import os

import torch
import torch.nn as nn

from gen_dynamic_twins import export_image_pair, out_dir_from_args, seeded

from manifest_entries import replace_entries

SEED = 20261207
GENERATOR = "test/models/gen_anchor_twins.py"


def make_anchors(feats, strides, offset=0.5):
    """ultralytics.utils.tal.make_anchors: cell centres per level, concatenated."""
    points, stride_tensor = [], []
    for feat, stride in zip(feats, strides):
        _, _, h, w = feat.shape
        sx = torch.arange(w, dtype=feat.dtype) + offset
        sy = torch.arange(h, dtype=feat.dtype) + offset
        sy, sx = torch.meshgrid(sy, sx, indexing="ij")
        points.append(torch.stack((sx, sy), -1).view(-1, 2))
        stride_tensor.append(torch.full((h * w, 1), stride, dtype=feat.dtype))
    return torch.cat(points), torch.cat(stride_tensor)


class Yolov8Head(nn.Module):
    """Backbone to strides 8, 16, 32 and ultralytics' Detect head (inference)."""

    reg_max = 8
    nc = 3

    def __init__(self):
        super().__init__()
        self.no = self.nc + 4 * self.reg_max
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU(),  # stride 8
        )
        self.down1 = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU())  # 16
        self.down2 = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU())  # 32
        self.box = nn.ModuleList(nn.Conv2d(16, 4 * self.reg_max, 1) for _ in range(3))
        self.cls = nn.ModuleList(nn.Conv2d(16, self.nc, 1) for _ in range(3))
        self.dfl = nn.Conv2d(self.reg_max, 1, 1, bias=False).requires_grad_(False)
        self.dfl.weight.data[:] = torch.arange(self.reg_max, dtype=torch.float).view(
            1, self.reg_max, 1, 1)
        self.strides = (8.0, 16.0, 32.0)

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down1(p3)
        p5 = self.down2(p4)
        feats = [torch.cat((self.box[i](f), self.cls[i](f)), 1)
                 for i, f in enumerate((p3, p4, p5))]
        shape = feats[0].shape  # Python ints: the static export folds them
        x_cat = torch.cat([f.view(shape[0], self.no, -1) for f in feats], 2)
        anchors, strides = (t.transpose(0, 1) for t in make_anchors(feats, self.strides))
        box, cls = x_cat.split((self.reg_max * 4, self.nc), 1)
        b, _, a = box.shape
        dist = self.dfl(box.view(b, 4, self.reg_max, a).transpose(2, 1).softmax(1))
        dist = dist.view(b, 4, a)
        lt, rb = dist.chunk(2, 1)
        anchor_points = anchors.unsqueeze(0)
        x1y1 = anchor_points - lt
        x2y2 = anchor_points + rb
        boxes = torch.cat(((x1y1 + x2y2) / 2, x2y2 - x1y1), 1) * strides
        return torch.cat((boxes, cls.sigmoid()), 1)


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    entries = []
    gen = seeded(SEED)
    model = Yolov8Head().eval()
    example = torch.randn(1, 3, 64, 96, generator=gen)
    new_shapes = [(2, 3, 96, 64), (1, 3, 160, 128)]
    axes = {"input": {0: "batch", 2: "height", 3: "width"},
            "detections": {0: "batch", 2: "anchors"}}
    purpose = ("YOLOv8-style head on 3 levels, DFL box decoding against anchor points "
               "and strides that make_anchors concatenates across levels")
    export_image_pair(model, example, "yolov8_head", GENERATOR, "detections", axes,
                      new_shapes, purpose, out, entries)
    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
