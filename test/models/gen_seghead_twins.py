#!/usr/bin/python3
"""Segmentation-head static/dynamic export twins: resizes that follow a partner.

For make-dynamic's Resize repairs (issue 30). Exported with PyTorch 1.13 like
gen_dynamic_twins.py (whose export helpers it uses), fixed seed; the static
twin (no dynamic_axes, constants folded) bakes the Resize sizes that the
dynamic one reads from Shape. Both written the way torchvision's heads are
(tiny channels, random weights):

  aspp_head_{static,dynamic}.onnx
      DeepLabV3's ASPP at 1x3x48x64 (stride 8): 1x1 and dilated 3x3 branches
      and the image-pooling branch (AdaptiveAvgPool2d(1), 1x1 Conv, then
      `F.interpolate(x, size=feature.shape[-2:])`), concatenated on the
      channels, then the logits interpolated to the input size. The static
      twin bakes the pooling branch's sizes [1,8,6,8]: its input is 1x1, so
      only the Concat says they are the feature map's H and W.
  lraspp_head_{static,dynamic}.onnx
      LRASPP at 1x3x64x96: `high_classifier(interpolate(high * scale,
      size=low.shape[-2:])) + low_classifier(low)`, the Resize's result
      meeting its partner after a 1x1 Conv, the partner computed after the
      Resize (another branch). The static twin bakes [1,8,8,12].

    /usr/bin/python3 test/models/gen_seghead_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_dynamic_twins import export_image_pair, out_dir_from_args, seeded

from manifest_entries import replace_entries

SEED = 20261208
GENERATOR = "test/models/gen_seghead_twins.py"


def stage(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.ReLU())


class AsppHead(nn.Module):
    """A stride-8 encoder and torchvision's DeepLabHead (ASPP, 3x3, 1x1)."""

    def __init__(self, classes=3):
        super().__init__()
        self.encoder = nn.Sequential(stage(3, 8, 2), stage(8, 16, 2), stage(16, 16, 2))
        self.b0 = nn.Sequential(nn.Conv2d(16, 8, 1), nn.ReLU())
        self.b1 = nn.Sequential(nn.Conv2d(16, 8, 3, padding=2, dilation=2), nn.ReLU())
        self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(16, 8, 1), nn.ReLU())
        self.project = nn.Sequential(nn.Conv2d(24, 8, 1), nn.ReLU())
        self.classifier = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        f = self.encoder(x)
        p = F.interpolate(self.pool(f), size=f.shape[-2:], mode="bilinear",
                          align_corners=False)
        y = self.project(torch.cat([self.b0(f), self.b1(f), p], 1))
        return F.interpolate(self.classifier(y), size=x.shape[-2:], mode="bilinear",
                             align_corners=False)


class LrasppHead(nn.Module):
    """A stride-8/16 encoder and torchvision's LRASPPHead."""

    def __init__(self, classes=3):
        super().__init__()
        self.low = nn.Sequential(stage(3, 8, 2), stage(8, 8, 2), stage(8, 8, 2))
        self.high = stage(8, 16, 2)
        self.cbr = nn.Sequential(nn.Conv2d(16, 8, 1), nn.ReLU())
        self.scale = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(16, 8, 1), nn.Sigmoid())
        self.low_classifier = nn.Conv2d(8, classes, 1)
        self.high_classifier = nn.Conv2d(8, classes, 1)

    def forward(self, x):
        low = self.low(x)
        high = self.high(low)
        h = self.cbr(high) * self.scale(high)
        h = F.interpolate(h, size=low.shape[-2:], mode="bilinear", align_corners=False)
        out = self.low_classifier(low) + self.high_classifier(h)
        return F.interpolate(out, size=x.shape[-2:], mode="bilinear", align_corners=False)


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    entries = []
    axes = {"input": {0: "batch", 2: "height", 3: "width"},
            "logits": {0: "batch", 2: "height", 3: "width"}}
    for cls, seed, name, shape, new_shapes, purpose in (
            (AsppHead, SEED, "aspp_head", (1, 3, 48, 64), [(2, 3, 64, 40), (1, 3, 45, 50)],
             "DeepLabV3's ASPP with the image-pooling branch resized to the feature map"),
            (LrasppHead, SEED + 1, "lraspp_head", (1, 3, 64, 96), [(2, 3, 96, 64), (1, 3, 45, 50)],
             "LRASPP: the high branch resized to the low one's size, meeting it after a 1x1 Conv")):
        gen = seeded(seed)
        model = cls().eval()
        example = torch.randn(*shape, generator=gen)
        export_image_pair(model, example, name, GENERATOR, "logits", axes, new_shapes,
                          purpose, out, entries)
    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
