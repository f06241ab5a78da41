#!/usr/bin/python3
"""Static/dynamic export twins: what a static export bakes in, and what it should be.

For make-dynamic's repairs of baked tensors (issue 11). Each architecture is one
module instance exported twice with torch.onnx.export (PyTorch 1.13, fixed seeds):

  <name>_static.onnx    no dynamic_axes, do_constant_folding=True: what a user
                        with a static export has. torch runs the forward at the
                        example shape and folds every tensor computed from
                        x.shape (grids, masks, priors, Reshape targets, Resize
                        sizes) into a constant of that shape.
  <name>_dynamic.onnx   dynamic_axes on the inputs and outputs: the same tensors
                        are computed from Shape at run time.

Both compute the same numbers at the example shape, so a static twin made
dynamic by onnx-opt must equal its dynamic twin at any shape the dynamic twin
accepts (test/Transforms/make-dynamic-twins.test). The forwards below are
written the way the original projects write them (YOLOv5's Detect._make_grid,
SSD's PriorBox, a GPT-style causal mask), so that the folded constants are the
ones real static exports carry:

  yolo_head     YOLOv5-style Detect head on 2 levels (stride 8 and 16): the grid
                `[1,3,ny,nx,2]` (affine in its indices) and the anchor grid
                `[1,3,ny,nx,2]` (constant along ny and nx)
  video3d       Conv3d stem, frames folded into the batch for a 2D head, then
                `view(b, t, -1)` with b, t Python ints: a Reshape target
                [1, 8, -1] over [b*t, 16, 4, 4] (the literal batch 1 and frame
                count 8 are not dims of the data)
  decoder       causal decoder (opset 14): a `[16,16]` causal mask and a 16-row
                prefix of the learned position table
  seg_interp    segmentation net that interpolates its logits to the input
                size: a Resize with the constant sizes `[1,C,64,48]`
  ssd_priors    SSD-like head whose priors (centres `(j+0.5)/fw`, sqrt'd sizes,
                aspect ratios, clamped, concatenated across levels) are not
                affine per level: make-dynamic must refuse them by name

    /usr/bin/python3 test/models/gen_dynamic_twins.py [--out-dir test/models]

Writes the ten .onnx files and replaces this generator's entries in
manifest.json (entries carry "generator": "test/models/gen_dynamic_twins.py";
generate.py keeps them when it rewrites the manifest). No BatchNorm anywhere,
so no calibration is needed for the outputs to depend on the input (see
README.md, "Models that ignore their input").
"""

import argparse
import json
import math
import os

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20261202
GENERATOR = "test/models/gen_dynamic_twins.py"


# --------------------------------------------------------------------------
# YOLOv5-style Detect head
# --------------------------------------------------------------------------


class YoloHead(nn.Module):
    """Three stride-2 convs to stride 8, one more to stride 16, and a Detect head.

    The head is YOLOv5's Detect.forward / _make_grid: grid and anchor_grid are
    built in forward from the runtime ny, nx (YOLOv5 caches them per shape; a
    traced export rebuilds them every call, which is what we want here).
    """

    na = 3  # anchors per level
    nc = 2  # classes
    no = nc + 5  # x, y, w, h, objectness, classes

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU(),
            nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU(),  # stride 8
        )
        self.down = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU())  # stride 16
        self.m = nn.ModuleList(nn.Conv2d(16, self.na * self.no, 1) for _ in range(2))
        # Default init gives logits near 0, where the sigmoid is flat and the
        # boxes are mostly grid * stride: scaled up, the outputs follow the input
        # (the oracle's sensitivity check) instead of the baked constants.
        with torch.no_grad():
            for conv in self.m:
                conv.weight.mul_(4.0)
        self.strides = (8.0, 16.0)
        # Anchors in pixels for a small image, stored in grid units as YOLOv5
        # does (anchors / stride); anchor_grid multiplies the stride back.
        pixels = torch.tensor([[[4.0, 5.0], [8.0, 10.0], [12.0, 9.0]],
                               [[10.0, 14.0], [16.0, 12.0], [20.0, 24.0]]])
        self.register_buffer("anchors", pixels / torch.tensor(self.strides).view(2, 1, 1))

    def _make_grid(self, nx, ny, i):
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).expand(1, self.na, ny, nx, 2).float()
        anchor_grid = (self.anchors[i] * self.strides[i]).view(1, self.na, 1, 1, 2) \
            .expand(1, self.na, ny, nx, 2)
        return grid, anchor_grid

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down(p3)
        z = []
        for i, feat in enumerate((p3, p4)):
            f = self.m[i](feat)
            bs, _, ny, nx = f.shape  # Python ints: the static export folds them
            f = f.view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            grid, anchor_grid = self._make_grid(nx, ny, i)
            y = f.sigmoid()
            xy = (y[..., 0:2] * 2 - 0.5 + grid) * self.strides[i]
            wh = (y[..., 2:4] * 2) ** 2 * anchor_grid
            y = torch.cat((xy, wh, y[..., 4:]), -1)
            z.append(y.view(bs, -1, self.no))
        return torch.cat(z, 1)


# --------------------------------------------------------------------------
# Conv3d video net with per-frame logits
# --------------------------------------------------------------------------


class Video3d(nn.Module):
    """[b, 3, t, 32, 32] -> per-frame logits [b, t, 10].

    A Conv3d stem (time keeps its length: stride 1, padding 1 along t), then
    the frames go into the batch for a per-frame 2D head, as CNN+temporal
    models do: `permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)`, Conv2d, pool
    to a fixed 4x4 (the Linear input stays 256), and `view(b, t, -1)` with b, t
    Python ints read from x.shape. The static export bakes that last view as
    the Reshape target [1, 8, -1] over data of shape [8, 16, 4, 4]: dim 0 of
    the data is b*t, so neither literal is a dim of the data at its position,
    and only the outputs say that 1 is the batch and 8 the frames.
    (A view(b, t, -1) straight after the permute, over [b, t, c, h, w], is
    repaired by the existing Reshape rule: each literal is the data's dim.)
    """

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv3d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv3d(8, 16, 3, stride=(1, 2, 2), padding=1)
        self.frame = nn.Conv2d(16, 16, 3, stride=2, padding=1)
        self.pool = nn.AvgPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))  # [b, 16, t, 16, 16]
        b, c, t, h, w = x.shape
        x = x.permute(0, 2, 1, 3, 4).reshape(b * t, c, h, w)
        x = self.pool(F.relu(self.frame(x)))  # [b*t, 16, 4, 4]
        return self.fc(x.view(b, t, -1))


# --------------------------------------------------------------------------
# Small causal decoder
# --------------------------------------------------------------------------

VOCAB = 50
MAX_POS = 64


class Decoder(nn.Module):
    """Token + learned position embedding, one pre-LN causal self-attention
    block, an MLP block and an LM head.

    The positions index nn.Embedding(64, d) with arange(T) and the mask is
    triu(full((T, T), -inf), 1), both in forward from the runtime T: a static
    export folds them to a [16, d] table prefix and a [16, 16] constant.
    """

    def __init__(self, d=32, heads=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d)
        self.pos = nn.Embedding(MAX_POS, d)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB)
        self.d, self.heads = d, heads
        # LayerNorm starts at weight 1, bias 0: identical tensors that the
        # exporter deduplicates into Identity nodes. Random ones keep the
        # three norms apart (and the twins test more than the default init).
        with torch.no_grad():
            for ln in (self.ln1, self.ln2, self.ln_f):
                ln.weight.normal_(1.0, 0.1)
                ln.bias.normal_(0.0, 0.1)

    def forward(self, ids):
        b, T = ids.shape
        hd = self.d // self.heads
        h = self.tok(ids) + self.pos(torch.arange(T))
        q, k, v = self.qkv(self.ln1(h)).split(self.d, dim=-1)
        q = q.view(b, T, self.heads, hd).transpose(1, 2)
        k = k.view(b, T, self.heads, hd).transpose(1, 2)
        v = v.view(b, T, self.heads, hd).transpose(1, 2)
        mask = torch.triu(torch.full((T, T), float("-inf")), 1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd)) + mask
        a = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, T, self.d)
        h = h + self.proj(a)
        h = h + self.mlp(self.ln2(h))
        return self.head(self.ln_f(h))


# --------------------------------------------------------------------------
# Segmentation net that interpolates to the input size
# --------------------------------------------------------------------------


class SegInterp(nn.Module):
    """Stride-4 encoder, 1x1 classifier, bilinear upsampling to x.shape[2:]."""

    def __init__(self, classes=5):
        super().__init__()
        self.enc = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, 1, 1), nn.ReLU(),
        )
        self.cls = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        logits = self.cls(self.enc(x))
        return F.interpolate(logits, size=x.shape[2:], mode="bilinear", align_corners=False)


# --------------------------------------------------------------------------
# SSD-like head with priors from the feature sizes
# --------------------------------------------------------------------------


class SsdPriors(nn.Module):
    """Two levels (stride 8 and 16), 4 priors per cell, box decoding.

    Priors follow SSD's PriorBox: per cell, centre ((j+0.5)/fw, (i+0.5)/fh) and
    the sizes s_k, sqrt(s_k * s_k+1), and s_k at aspect ratios 2 and 1/2, all
    clamped to [0, 1], flattened cell-major and concatenated across levels.
    Flattened that way the priors are not affine in their index (the centre
    repeats per prior and divides by the runtime fw), the sizes are clamped,
    and two levels of different sizes are concatenated: no general rule can
    rebuild them, so make-dynamic must refuse the static export by name.
    """

    A = 4  # priors per cell
    nc = 3

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU(),
            nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU(),  # stride 8
        )
        self.down = nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.ReLU())  # stride 16
        self.loc = nn.ModuleList(nn.Conv2d(16, self.A * 4, 3, padding=1) for _ in range(2))
        self.conf = nn.ModuleList(nn.Conv2d(16, self.A * self.nc, 3, padding=1) for _ in range(2))
        # Larger offsets, so the boxes depend on the input more than on the
        # priors (the oracle's sensitivity check).
        with torch.no_grad():
            for conv in self.loc:
                conv.weight.mul_(4.0)
        # Per-level (w, h) of the 4 priors, relative to the image. The second
        # level's size at aspect ratio 2 (0.75 * sqrt 2) exceeds 1, so the
        # clamp bites.
        sizes = (0.3, 0.75, 1.05)
        wh = []
        for k in range(2):
            s, s_next = sizes[k], sizes[k + 1]
            r = math.sqrt(2.0)
            wh.append([[s, s], [math.sqrt(s * s_next)] * 2, [s * r, s / r], [s / r, s * r]])
        self.register_buffer("prior_wh", torch.tensor(wh))  # [2, A, 2]

    def _priors(self, fh, fw, level):
        ys = (torch.arange(fh, dtype=torch.float32) + 0.5) / fh
        xs = (torch.arange(fw, dtype=torch.float32) + 0.5) / fw
        cy, cx = torch.meshgrid(ys, xs, indexing="ij")
        centres = torch.stack((cx, cy), -1).view(fh, fw, 1, 2).expand(fh, fw, self.A, 2)
        wh = self.prior_wh[level].view(1, 1, self.A, 2).expand(fh, fw, self.A, 2)
        return torch.cat((centres, wh), -1).reshape(1, -1, 4).clamp(0.0, 1.0)

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.down(p3)
        locs, confs, priors = [], [], []
        for i, feat in enumerate((p3, p4)):
            bs, _, fh, fw = feat.shape
            locs.append(self.loc[i](feat).permute(0, 2, 3, 1).reshape(bs, -1, 4))
            confs.append(self.conf[i](feat).permute(0, 2, 3, 1).reshape(bs, -1, self.nc))
            priors.append(self._priors(fh, fw, i))
        loc = torch.cat(locs, 1)
        pri = torch.cat(priors, 1)  # [1, P, 4]
        # SSD decoding with variances 0.1 / 0.2: the priors meet the offsets
        # in an Add and two Muls.
        cxcy = pri[..., :2] + loc[..., :2] * 0.1 * pri[..., 2:]
        wh = pri[..., 2:] * torch.exp(loc[..., 2:] * 0.2)
        boxes = torch.cat((cxcy, wh), -1)
        scores = torch.cat(confs, 1).softmax(-1)
        return boxes, scores


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------


def export(model, args, path, input_names, output_names, opset, dynamic_axes=None):
    torch.onnx.export(model, args, path, input_names=input_names,
                      output_names=output_names, opset_version=opset,
                      dynamic_axes=dynamic_axes, do_constant_folding=True)
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)


def out_dir_from_args(doc, default_dir):
    """The --out-dir of a twins generator (its folder by default), torch
    set to one thread so that the exports are the same on every machine."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--out-dir", default=default_dir)
    torch.set_num_threads(1)
    return parser.parse_args().out_dir


def export_image_pair(model, example, name, generator, output, axes, new_shapes,
                      purpose, out, entries):
    """Exports `model` (one image input named "input", one output) as
    <name>_static.onnx and, with `axes`, <name>_dynamic.onnx, opset 13; one
    manifest entry each. The static twin runs at the example shape only, the
    dynamic one at `new_shapes` too."""
    for kind, dyn in (("static", None), ("dynamic", axes)):
        file = f"{name}_{kind}.onnx"
        path = os.path.join(out, file)
        export(model, (example,), path, ["input"], [output], 13, dyn)
        shapes = [tuple(example.shape)] + (new_shapes if dyn else [])
        entries.append({
            "name": f"{name}_{kind}",
            "file": file,
            "generator": generator,
            "opset": 13,
            "inputs": ["input"],
            "outputs": [output],
            "dynamic_axes": dyn or {},
            "shape_sets": [{"input": shape_str(s)} for s in shapes],
            "purpose": f"{kind} twin: {purpose}",
        })
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")


def shape_str(shape):
    return "x".join(str(d) for d in shape)


def seeded(seed):
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed + 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    out = parser.parse_args().out_dir
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    entries = []

    def twins(model, example, name, opset, input_names, output_names, dynamic_axes,
              new_shapes, purpose, **extra):
        """Export `model` static and dynamic; one manifest entry each. The static
        twin runs only at the example shape; the dynamic one also at new_shapes."""
        model.eval()
        example_shapes = [tuple(example.shape)]
        for kind, axes, shapes in (("static", None, [example_shapes]),
                                   ("dynamic", dynamic_axes,
                                    [example_shapes] + [[s] for s in new_shapes])):
            file = f"{name}_{kind}.onnx"
            path = os.path.join(out, file)
            export(model, (example,), path, input_names, output_names, opset, axes)
            entry = {
                "name": f"{name}_{kind}",
                "file": file,
                "generator": GENERATOR,
                "opset": opset,
                "inputs": input_names,
                "outputs": output_names,
                "dynamic_axes": axes or {},
                "shape_sets": [
                    {n: shape_str(s) for n, s in zip(input_names, shape_set)}
                    for shape_set in shapes
                ],
                "purpose": f"{kind} twin: {purpose}",
            }
            entry.update(extra)
            entries.append(entry)
            print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    image_axes = {0: "batch", 2: "height", 3: "width"}

    gen = seeded(SEED)
    twins(YoloHead(), torch.randn(1, 3, 64, 64, generator=gen), "yolo_head", 13,
          ["input"], ["detections"],
          {"input": image_axes, "detections": {0: "batch", 1: "boxes"}},
          [(2, 3, 64, 96), (1, 3, 128, 64)],
          "YOLOv5-style Detect head, 2 levels (stride 8, 16), grid and anchor grid "
          "built from the runtime ny, nx")

    gen = seeded(SEED + 1)
    twins(Video3d(), torch.randn(1, 3, 8, 32, 32, generator=gen), "video3d", 13,
          ["video"], ["frame_logits"],
          {"video": {0: "batch", 2: "frames"}, "frame_logits": {0: "batch", 1: "frames"}},
          [(2, 3, 12, 32, 32), (3, 3, 5, 32, 32)],
          "Conv3d stem, permute + reshape(b*t, c, h, w), per-frame Conv2d, "
          "view(b, t, -1) with b, t from x.shape, Linear")

    gen = seeded(SEED + 2)
    twins(Decoder(), torch.randint(0, VOCAB, (1, 16), generator=gen), "decoder", 14,
          ["ids"], ["logits"],
          {"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
          [(2, 24), (1, 9)],
          f"causal decoder, nn.Embedding({MAX_POS}, 32) positions from arange(T), "
          "triu(-inf) mask from the runtime T",
          int_ranges={"ids": [0, VOCAB]}, rtol=1e-3, atol=1e-4)

    gen = seeded(SEED + 3)
    twins(SegInterp(), torch.randn(1, 3, 64, 48, generator=gen), "seg_interp", 13,
          ["input"], ["logits"],
          {"input": image_axes, "logits": image_axes},
          [(2, 3, 96, 64), (1, 3, 40, 72)],
          "stride-4 encoder, bilinear interpolate to x.shape[2:]")

    gen = seeded(SEED + 4)
    twins(SsdPriors(), torch.randn(1, 3, 64, 64, generator=gen), "ssd_priors", 13,
          ["input"], ["boxes", "scores"],
          {"input": image_axes, "boxes": {0: "batch", 1: "priors"},
           "scores": {0: "batch", 1: "priors"}},
          [(2, 3, 64, 96), (1, 3, 96, 64)],
          "SSD-like head, 2 levels, clamped non-affine priors from the runtime "
          "feature sizes, decoded with the offsets")

    # Replace this generator's entries in the manifest, keep everything else.
    manifest_path = os.path.join(out, "manifest.json")
    manifest = {"generator": "test/models/generate.py", "torch": torch.__version__,
                "models": []}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
    manifest["models"] = [m for m in manifest["models"]
                          if m.get("generator") != GENERATOR] + entries
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=False)
        f.write("\n")
    print("updated", manifest_path)


if __name__ == "__main__":
    main()
