#!/usr/bin/python3
"""A relative-position attention score with Transformer-XL's shift, static and dynamic.

For make-dynamic's vanished-symbol check (issue 30). The scores of each
position against relative positions -(T-1)..T-1 read a position table sliced
to 2*T-1 rows, `pe[:, :2*T-1]`, and are shifted into place by the pad-and-view
trick (Transformer-XL, Conformer): pad one column, view as [B, h, 2*T, T],
drop the first row, view as [B, h, T, 2*T-1], keep T columns. The static twin
folds the sliced table into a [1, 19, 16] constant at T = 10: nothing ties
its rows to T, so made dynamic in T the model would run with 10 in T's place.
make-dynamic refuses T there and keeps it with allow-partial. Exported with
Debian's python3-torch 1.13 (random weights, fixed seed), opset 13:

  relshift_{static,dynamic}.onnx
      input [1, 10, 16] (batch, length, width), 2 heads, output [1, 10, 10];
      the dynamic twin has batch and length dynamic.

    /usr/bin/python3 test/models/gen_relshift_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import math
import os

import torch
import torch.nn.functional as F
from torch import nn

from gen_dynamic_twins import export_image_pair, out_dir_from_args, seeded

from manifest_entries import replace_entries

SEED = 20261207
GENERATOR = "test/models/gen_relshift_twins.py"


class RelativeScores(nn.Module):
    """Softmax of queries against relative positions, summed over heads."""

    def __init__(self, width=16, heads=2, rows=64):
        super().__init__()
        self.query = nn.Linear(width, width)
        self.position = nn.Linear(width, width)
        self.table = nn.Parameter(torch.randn(1, rows, width))
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        h = self.heads
        q = self.query(x).view(b, t, h, d // h).transpose(1, 2)
        pe = self.position(self.table[:, :2 * t - 1])
        pe = pe.view(1, 2 * t - 1, h, d // h).transpose(1, 2)
        scores = q @ pe.transpose(-1, -2) / math.sqrt(d // h)
        shifted = F.pad(scores, (1, 0)).view(b, h, 2 * t, t)[:, :, 1:]
        shifted = shifted.reshape(b, h, t, 2 * t - 1)[:, :, :, :t]
        return shifted.softmax(-1).sum(1)


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    entries = []
    axes = {"input": {0: "batch", 1: "length"},
            "scores": {0: "batch", 1: "length", 2: "length"}}
    gen = seeded(SEED)
    model = RelativeScores().eval()
    example = torch.randn(1, 10, 16, generator=gen)
    export_image_pair(model, example, "relshift", GENERATOR, "scores", axes,
                      [(2, 7, 16), (3, 20, 16)],
                      "Transformer-XL's relative shift over a table sliced to 2*T-1 rows",
                      out, entries)
    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
