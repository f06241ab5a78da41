#!/usr/bin/python3
"""A U-Net-style static/dynamic export twin: decoder steps that interpolate to a skip's size.

For make-dynamic's Resize repair through a Concat (issue 30): a decoder step
`cat([interpolate(x, size=skip.shape[2:]), skip], 1)`, as U-Net, FPN-style
heads and Segformer's all-MLP head write it. The static export (no
dynamic_axes, constants folded) bakes the skip's size into the Resize's
`sizes`; the skip's dims are H/2 and H/4 of the input, never an input size,
so only the Concat says what the sizes become. Exported with PyTorch 1.13
like gen_dynamic_twins.py (whose export helpers it uses), fixed seeds:

  unet_skip_static.onnx    the example shape 1x3x32x48 baked in
  unet_skip_dynamic.onnx   batch, height and width dynamic: the twin

    /usr/bin/python3 test/models/gen_unet_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import argparse
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from gen_dynamic_twins import export, seeded, shape_str

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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    out = parser.parse_args().out_dir
    torch.set_num_threads(1)
    gen = seeded(SEED)
    model = UnetSkip().eval()
    example = torch.randn(1, 3, 32, 48, generator=gen)
    axes = {"input": {0: "batch", 2: "height", 3: "width"},
            "logits": {0: "batch", 2: "out_h", 3: "out_w"}}
    new_shapes = [(2, 3, 64, 40), (1, 3, 24, 72)]
    entries = []
    for kind, dyn in (("static", None), ("dynamic", axes)):
        file = f"unet_skip_{kind}.onnx"
        path = os.path.join(out, file)
        export(model, (example,), path, ["input"], ["logits"], 13, dyn)
        shapes = [tuple(example.shape)] + (new_shapes if dyn else [])
        entries.append({
            "name": f"unet_skip_{kind}",
            "file": file,
            "generator": GENERATOR,
            "opset": 13,
            "inputs": ["input"],
            "outputs": ["logits"],
            "dynamic_axes": dyn or {},
            "shape_sets": [{"input": shape_str(s)} for s in shapes],
            "purpose": f"{kind} twin: U-Net-style decoder, interpolate to "
                       "skip.shape[2:] then cat with the skip",
        })
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    manifest_path = os.path.join(out, "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["models"] = [m for m in manifest["models"]
                          if m.get("generator") != GENERATOR] + entries
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
