#!/usr/bin/python3
"""Decoder static/dynamic export twins: feature maps interpolated to another's size.

For make-dynamic's Resize and Reshape repairs (issue 30). Exported with
PyTorch 1.13 like gen_dynamic_twins.py (whose export helpers it uses), fixed
seeds; the static twin (no dynamic_axes, constants folded) bakes what the
dynamic one computes from Shape:

  unet_skip_{static,dynamic}.onnx
      U-Net-style: decoder steps `cat([interpolate(x, size=skip.shape[2:]),
      skip], 1)` at 1x3x32x48. The static twin bakes the skips' sizes into
      the Resize sizes; they are H/2 and H/4, never an input size, so only
      the Concat says what they become.
  segformer_mini_{static,dynamic}.onnx
      Segformer-style at 1x3x64x96: tokens `[B, H*W, C]` reshaped back to
      images `[B, C, H, W]` (spatial-reduction attention, Mix-FFN), baked as
      [1,8,16,24]: the split of H*W reads H and W off the patch Conv. The
      all-MLP head interpolates every stage to stage 1's size (stage 1 to
      its own, written Concat(Shape(x)[0:2], [16,24])) and concatenates.

    /usr/bin/python3 test/models/gen_unet_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_dynamic_twins import export_image_pair, out_dir_from_args, seeded

from manifest_entries import replace_entries

SEED = 20261206
GENERATOR = "test/models/gen_unet_twins.py"


class UnetSkip(nn.Module):
    """Two stride-2 stages down, two decoder steps up, each concatenating the
    interpolated features with the skip of the same stage."""

    def __init__(self):
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU())
        self.down2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU())
        self.down3 = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())
        self.up2 = nn.Sequential(nn.Conv2d(32, 8, 3, 1, 1), nn.ReLU())
        self.up1 = nn.Conv2d(16, 4, 3, 1, 1)

    def forward(self, x):
        s1 = self.down1(x)   # H/2
        s2 = self.down2(s1)  # H/4
        b = self.down3(s2)   # H/8
        u2 = F.interpolate(b, size=s2.shape[2:], mode="bilinear", align_corners=False)
        u2 = self.up2(torch.cat([u2, s2], 1))
        u1 = F.interpolate(u2, size=s1.shape[2:], mode="nearest")
        return self.up1(torch.cat([u1, s1], 1))


class Stage(nn.Module):
    def __init__(self, cin, c, stride, sr):
        super().__init__()
        self.patch = nn.Conv2d(cin, c, 3, stride, 1)
        self.norm = nn.LayerNorm(c)
        self.q = nn.Linear(c, c); self.kv = nn.Linear(c, 2 * c)
        self.sr = nn.Conv2d(c, c, sr, sr) if sr > 1 else None
        self.srnorm = nn.LayerNorm(c)
        self.proj = nn.Linear(c, c)
        self.fc1 = nn.Linear(c, 2 * c); self.dw = nn.Conv2d(2 * c, 2 * c, 3, 1, 1, groups=2 * c); self.fc2 = nn.Linear(2 * c, c)
        self.heads = 2
    def forward(self, x):
        x = self.patch(x)
        B, C, H, W = x.shape
        t = self.norm(x.flatten(2).transpose(1, 2))  # B, HW, C
        q = self.q(t).reshape(B, H * W, self.heads, C // self.heads).permute(0, 2, 1, 3)
        if self.sr is not None:
            r = t.permute(0, 2, 1).reshape(B, C, H, W)
            r = self.sr(r).reshape(B, C, -1).permute(0, 2, 1)
            r = self.srnorm(r)
        else:
            r = t
        kv = self.kv(r).reshape(B, -1, 2, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        k, v = kv[0], kv[1]
        a = (q @ k.transpose(-2, -1)) * 0.5
        a = a.softmax(-1)
        o = (a @ v).transpose(1, 2).reshape(B, H * W, C)
        t = t + self.proj(o)
        h = self.fc1(t)
        h = h.transpose(1, 2).view(B, 2 * C, H, W)
        h = self.dw(h).flatten(2).transpose(1, 2)
        t = t + self.fc2(F.gelu(h))
        return t.permute(0, 2, 1).reshape(B, C, H, W)

class SegformerMini(nn.Module):
    """Three Segformer stages (overlapping patch Conv, attention whose keys
    come through a strided spatial-reduction Conv, a Mix-FFN whose depthwise
    Conv sees the tokens as an image), then the all-MLP head: each stage's
    tokens through a Linear, back to [B, C, H_i, W_i], interpolated to
    stage 1's size and concatenated."""

    def __init__(self):
        super().__init__()
        self.s1 = Stage(3, 8, 4, 4); self.s2 = Stage(8, 16, 2, 2); self.s3 = Stage(16, 16, 2, 1)
        self.mlps = nn.ModuleList([nn.Linear(8, 8), nn.Linear(16, 8), nn.Linear(16, 8)])
        self.fuse = nn.Conv2d(24, 8, 1); self.cls = nn.Conv2d(8, 3, 1)
    def forward(self, x):
        f1 = self.s1(x); f2 = self.s2(f1); f3 = self.s3(f2)
        outs = []
        for f, mlp in zip([f1, f2, f3], self.mlps):
            B, C, H, W = f.shape
            e = mlp(f.flatten(2).transpose(1, 2)).permute(0, 2, 1).reshape(B, -1, H, W)
            e = F.interpolate(e, size=f1.size()[2:], mode="bilinear", align_corners=False)
            outs.append(e)
        y = self.fuse(torch.cat(outs[::-1], dim=1))
        return self.cls(F.relu(y))


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    entries = []
    twins(UnetSkip, SEED, "unet_skip", (1, 3, 32, 48),
          [(2, 3, 64, 40), (1, 3, 24, 72)],
          "U-Net-style decoder, interpolate to skip.shape[2:] then cat with the skip",
          out, entries)
    twins(SegformerMini, SEED + 1, "segformer_mini", (1, 3, 64, 96),
          [(2, 3, 128, 64), (1, 3, 100, 76)],
          "Segformer-style: tokens reshaped to images (spatial reduction, Mix-FFN), "
          "all-MLP head interpolating every stage to stage 1's size, concatenated",
          out, entries)

    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


def twins(cls, seed, name, example_shape, new_shapes, purpose, out, entries):
    """Exports one module instance static and dynamic; a manifest entry each."""
    gen = seeded(seed)
    model = cls().eval()
    example = torch.randn(*example_shape, generator=gen)
    axes = {"input": {0: "batch", 2: "height", 3: "width"},
            "logits": {0: "batch", 2: "out_h", 3: "out_w"}}
    export_image_pair(model, example, name, GENERATOR, "logits", axes, new_shapes,
                      purpose, out, entries)

if __name__ == "__main__":
    main()
