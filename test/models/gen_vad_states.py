#!/usr/bin/python3
"""A voice-activity detector whose LSTM states pass through If branches.

The shape of silero-VAD-style exports (PyTorch 1.12/1.13, torch.jit.script):
the LSTM's h and c are model inputs [2, batch, 32] and outputs, and they
travel through If nodes whose branches read outer-scope values:

  - `if h.size(0) != 2`: reset the states to zeros, else pass them through.
    The condition is a number after shape inference (dim 0 of h is 2), so
    the If takes the else branch's types; both branches are rank 3.
  - `if x.shape[1] == 512`: the 16 kHz encoder, else the 8 kHz one (same
    frame rate here, other weights), each followed by the shared 2-layer
    LSTM, whose per-layer states are sliced from the outer h and c and
    concatenated back inside the branch. The condition is a number once
    `sequence` is frozen to 512.

    /usr/bin/python3 test/models/gen_vad_states.py [--out-dir test/models]

Writes vad_states.onnx (opset 12, fixed seed, about 60 KB). With
--enc8-stride16, writes vad_states_enc8.onnx instead (about 95 KB): the 8 kHz
encoder has kernel 32, stride 16, so its frame count differs from the 16 kHz
one's, and torch 1.13 still gives both branches' results one dim name (the
If-branch conditions of docs/constraints.md).
"""

import argparse
import os

import torch
import torch.nn as nn

SEED = 20261205


class VadStates(nn.Module):
    def __init__(self, enc8_stride16=False):
        super().__init__()
        self.enc16 = nn.Conv1d(1, 16, 64, stride=32)
        if enc8_stride16:
            self.enc8 = nn.Conv1d(1, 16, 32, stride=16)
        else:
            self.enc8 = nn.Conv1d(1, 16, 64, stride=32)
        self.lstm = nn.LSTM(16, 32, num_layers=2)
        self.dec = nn.Conv1d(32, 1, 1)

    def forward(self, x, h, c):
        if h.size(0) != 2:
            h = torch.zeros(2, x.shape[0], 32)
            c = torch.zeros(2, x.shape[0], 32)
        if x.shape[1] == 512:
            f = self.enc16(x.unsqueeze(1))
            out, (hn, cn) = self.lstm(f.permute(2, 0, 1), (h, c))
        else:
            f = self.enc8(x.unsqueeze(1))
            out, (hn, cn) = self.lstm(f.permute(2, 0, 1), (h, c))
        y = torch.sigmoid(self.dec(out.permute(1, 2, 0))).mean(2)
        return y, hn, cn


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    p.add_argument("--enc8-stride16", action="store_true",
                   help="8 kHz encoder with kernel 32, stride 16")
    args = p.parse_args()
    out = args.out_dir

    torch.manual_seed(SEED)
    model = torch.jit.script(VadStates(args.enc8_stride16).eval())
    x = torch.randn(1, 512)
    h = torch.randn(2, 1, 32)
    c = torch.randn(2, 1, 32)
    name = "vad_states_enc8" if args.enc8_stride16 else "vad_states"
    path = f"{out}/{name}.onnx"
    torch.onnx.export(
        model, (x, h, c), path, input_names=["input", "h", "c"],
        output_names=["output", "hn", "cn"],
        dynamic_axes={"input": {0: "batch", 1: "sequence"}, "h": {1: "batch"},
                      "c": {1: "batch"}, "output": {0: "batch"},
                      "hn": {1: "batch"}, "cn": {1: "batch"}},
        opset_version=12, do_constant_folding=True)
    print("wrote", path)


if __name__ == "__main__":
    main()
