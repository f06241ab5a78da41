#!/usr/bin/python3
"""A causal text encoder pooled at each row's last token, static and dynamic.

For make-dynamic's gathers along flattened rows (issue 30). The pooling is
GPT-2's sequence classification: the last token before the first pad,
`argmax(ids == pad) - 1`, wrapped with `% ids.shape[-1]`, then
`logits[arange(B), last]`. The TorchScript exporter flattens [B, T, C] to
[B*T, C] and gathers at `last + arange(B) * T`; exported at batch 1 the
static twin folds arange(B) to [0] and the wrap to `% 9`. Made dynamic as
they stood, every row read row 0's block and the wrap kept 9 (make-dynamic
exited 0 with a wrong model); it now reads the [0] as each row's offset and
the 9 as T. Exported with Debian's python3-torch 1.13 (random weights, fixed
seed), opset 14 (Trilu):

  lastpool_{static,dynamic}.onnx
      ids [1, 9] (batch, length; pad 0 from position 6), one causal encoder
      layer of width 16, 3 classes, output [1, 3]; the dynamic twin has
      batch and length dynamic.

    /usr/bin/python3 test/models/gen_lastpool_twins.py [--out-dir test/models]

Replaces this generator's entries in manifest.json and keeps the others.
"""

import os

import torch
from torch import nn

from gen_dynamic_twins import export, out_dir_from_args, seeded, shape_str

from manifest_entries import replace_entries

SEED = 20261208
GENERATOR = "test/models/gen_lastpool_twins.py"
PAD = 0


class LastTokenClassifier(nn.Module):
    """Token and position embeddings, one causal layer, a linear head read
    at each row's last token before the padding."""

    def __init__(self, vocab=50, width=16, classes=3, rows=32):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Parameter(torch.randn(rows, width))
        self.layer = nn.TransformerEncoderLayer(width, 2, 32, batch_first=True)
        self.head = nn.Linear(width, classes)

    def forward(self, ids):
        b, t = ids.shape
        x = self.tokens(ids) + self.positions[:t]
        causal = torch.full((t, t), float("-inf")).triu(1)
        logits = self.head(self.layer(x, src_mask=causal))
        last = torch.eq(ids, PAD).int().argmax(-1) - 1
        last = last % ids.shape[-1]
        return logits[torch.arange(b), last]


def main():
    out = out_dir_from_args(__doc__, os.path.dirname(os.path.abspath(__file__)))
    gen = seeded(SEED)
    model = LastTokenClassifier().eval()
    ids = torch.randint(1, 50, (1, 9), generator=gen)
    ids[:, 6:] = PAD
    axes = {"ids": {0: "batch", 1: "length"}, "logits": {0: "batch"}}
    entries = []
    for kind, dyn, shapes in (("static", None, [(1, 9)]),
                              ("dynamic", axes, [(1, 9), (3, 9), (2, 14)])):
        file = f"lastpool_{kind}.onnx"
        path = os.path.join(out, file)
        export(model, (ids,), path, ["ids"], ["logits"], 14, dyn)
        entries.append({
            "name": f"lastpool_{kind}",
            "file": file,
            "generator": GENERATOR,
            "opset": 14,
            "inputs": ["ids"],
            "outputs": ["logits"],
            "dynamic_axes": dyn or {},
            "shape_sets": [{"ids": shape_str(s)} for s in shapes],
            "purpose": f"{kind} twin: GPT-2's last-token pooling over flattened rows",
            "int_ranges": {"ids": [0, 50]},
        })
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    replace_entries(os.path.join(out, "manifest.json"), GENERATOR, entries)


if __name__ == "__main__":
    main()
