#!/usr/bin/python3
"""A small torchvision Swin Transformer exported static and dynamic in H and W.

For the dim algebra's modulo and make-dynamic (issue 30). torchvision's Swin
pads each stage's map to whole windows, `F.pad(x, (0, 0, 0, (7 - W % 7) % 7,
0, (7 - H % 7) % 7))`, and patch merging pads to an even size, `W % 2`; the
TorchScript exporter writes these as Mod on shape data and the pads as a
[4, 2] table reversed by a Slice of step -1 and a Transpose. The dynamic twin
reads them from Shape; the static one bakes them. Exported with Debian's
python3-torch 1.13 and python3-torchvision 0.14 (SwinTransformer with tiny
widths, random weights, fixed seed), opset 13:

  swin_mini_{static,dynamic}.onnx
      patch 4, embed 8, depths [2, 2], heads [1, 2], window 7, 10 classes,
      at 1x3x64x96 (a 16x24 map padded to 21x28, then 8x12 padded to 14x14);
      the dynamic twin has batch, height and width dynamic.

    /usr/bin/python3 test/models/gen_swin_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import os

import torch
from torchvision.models.swin_transformer import SwinTransformer

from gen_dynamic_twins import export_image_pair, out_dir_from_args, seeded

from manifest_entries import replace_entries

SEED = 20261207
GENERATOR = "test/models/gen_swin_twins.py"


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    entries = []
    axes = {"input": {0: "batch", 2: "height", 3: "width"}, "logits": {0: "batch"}}
    gen = seeded(SEED)
    model = SwinTransformer(patch_size=[4, 4], embed_dim=8, depths=[2, 2],
                            num_heads=[1, 2], window_size=[7, 7],
                            stochastic_depth_prob=0.0, num_classes=10).eval()
    example = torch.randn(1, 3, 64, 96, generator=gen)
    export_image_pair(model, example, "swin_mini", GENERATOR, "logits", axes,
                      [(2, 3, 100, 130), (1, 3, 65, 97)],
                      "torchvision's Swin: window pads (7 - W % 7) % 7 and patch merging's W % 2",
                      out, entries)
    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
