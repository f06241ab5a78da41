#!/usr/bin/python3
"""A YOLOv5-style detection head, static and dynamic.

For make-dynamic's in-place slice assignments (issue 30). YOLOv5's Detect
decodes boxes in place, `y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + grid) *
stride` and `y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * anchor_grid`, with the
grids built from `arange(ny)`, `arange(nx)`. The TorchScript exporter
writes each assignment as a ScatterND whose index tuples it builds from
aranges of the traced sizes, and the static twin bakes them and the grids.
make-dynamic refused the static twin (the tuples pinned the sizes); it now
reads each ScatterND as the slice it writes (SliceWrites.cpp) and rebuilds
the grids. Exported with Debian's python3-torch 1.13 (random weights,
fixed seed), opset 13:

  detect_{static,dynamic}.onnx
      images [1, 3, 64, 64] through two strided convs (8 and 16) to two
      levels of 3 anchors and 7 outputs (2 classes); output [1, 240, 7];
      the dynamic twin has batch, height and width dynamic.

    /usr/bin/python3 test/models/gen_detect_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import os

import torch
from torch import nn

from gen_dynamic_twins import export, out_dir_from_args, seeded, shape_str

from manifest_entries import replace_entries

SEED = 20261209
GENERATOR = "test/models/gen_detect_twins.py"


class Detector(nn.Module):
    """Two strided convs and YOLOv5's Detect over their maps."""

    def __init__(self, classes=2, anchors=3):
        super().__init__()
        self.na, self.no = anchors, classes + 5
        self.down8 = nn.Sequential(nn.Conv2d(3, 8, 3, 8, 1), nn.SiLU())
        self.down16 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU())
        self.heads = nn.ModuleList(
            nn.Conv2d(c, self.no * anchors, 1) for c in (8, 16))
        self.strides = (8, 16)
        self.register_buffer("anchors", torch.tensor(
            [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]]).float()
            .view(2, anchors, 2))

    def grids(self, nx, ny, i):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx),
                                indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(1, self.na, ny, nx, 2).float()
        anchor_grid = (self.anchors[i] * self.strides[i]).view(
            1, self.na, 1, 1, 2).expand(1, self.na, ny, nx, 2)
        return grid, anchor_grid

    def forward(self, images):
        p8 = self.down8(images)
        levels = (p8, self.down16(p8))
        boxes = []
        for i, x in enumerate(levels):
            x = self.heads[i](x)
            bs, _, ny, nx = x.shape
            x = x.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)
            x = x.contiguous()
            grid, anchor_grid = self.grids(nx, ny, i)
            y = x.sigmoid()
            y[..., 0:2] = (y[..., 0:2] * 2 - 0.5 + grid) * self.strides[i]
            y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * anchor_grid
            boxes.append(y.view(bs, -1, self.no))
        return torch.cat(boxes, 1)


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    gen = seeded(SEED)
    model = Detector().eval()
    images = torch.randn(1, 3, 64, 64, generator=gen)
    axes = {"images": {0: "batch", 2: "height", 3: "width"},
            "boxes": {0: "batch", 1: "anchors"}}
    entries = []
    for kind, dyn, shapes in (
            ("static", None, [(1, 3, 64, 64)]),
            ("dynamic", axes, [(1, 3, 64, 64), (2, 3, 96, 48)])):
        file = f"detect_{kind}.onnx"
        path = os.path.join(out, file)
        export(model, (images,), path, ["images"], ["boxes"], 13, dyn)
        entries.append({
            "name": f"detect_{kind}",
            "file": file,
            "generator": GENERATOR,
            "opset": 13,
            "inputs": ["images"],
            "outputs": ["boxes"],
            "dynamic_axes": dyn or {},
            "shape_sets": [{"images": shape_str(s)} for s in shapes],
            "purpose": f"{kind} twin: YOLOv5's Detect with in-place box decoding",
        })
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
