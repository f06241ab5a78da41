#!/usr/bin/python3
"""Generate onnx-opt's exporter-made test models with torch.onnx.export.

Run with Debian's interpreter (python3-torch 1.13, python3-torchvision 0.14,
python3-onnx 1.12):

    /usr/bin/python3 test/models/generate.py [--out-dir test/models]

Writes the .onnx files, manifest.json and the perturbed classifier used by the
oracle's negative test. Output is deterministic for a given torch build: fixed
seeds, and every variant of one architecture exports the same module instance,
so the variants share their weights.

Random BatchNorm running statistics make deep random models nearly ignore their
input (outputs change by 1e-7..1e-5 between two inputs). Every model with
BatchNorm is therefore run in train mode on a few random batches first, so the
statistics match real activations, and only then put in eval mode.
"""

import argparse
import copy
import json
import os
import sys

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20240611


# --------------------------------------------------------------------------
# RetinaFace, MobileNet-0.25 backbone (layout of the widely used PyTorch port)
# --------------------------------------------------------------------------


def conv_bn(inp, oup, stride=1, leaky=0.0):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
        nn.BatchNorm2d(oup),
        nn.LeakyReLU(negative_slope=leaky, inplace=True),
    )


def conv_bn_no_relu(inp, oup, stride=1):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 3, stride, 1, bias=False),
        nn.BatchNorm2d(oup),
    )


def conv_bn1x1(inp, oup, stride=1, leaky=0.0):
    return nn.Sequential(
        nn.Conv2d(inp, oup, 1, stride, 0, bias=False),
        nn.BatchNorm2d(oup),
        nn.LeakyReLU(negative_slope=leaky, inplace=True),
    )


def conv_dw(inp, oup, stride, leaky=0.1):
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
        nn.BatchNorm2d(inp),
        nn.LeakyReLU(negative_slope=leaky, inplace=True),
        nn.Conv2d(inp, oup, 1, 1, 0, bias=False),
        nn.BatchNorm2d(oup),
        nn.LeakyReLU(negative_slope=leaky, inplace=True),
    )


class MobileNetV1_025(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(
            conv_bn(3, 8, 2, leaky=0.1),  # 1/2
            conv_dw(8, 16, 1),
            conv_dw(16, 32, 2),  # 1/4
            conv_dw(32, 32, 1),
            conv_dw(32, 64, 2),  # 1/8
            conv_dw(64, 64, 1),
        )
        self.stage2 = nn.Sequential(
            conv_dw(64, 128, 2),  # 1/16
            conv_dw(128, 128, 1),
            conv_dw(128, 128, 1),
            conv_dw(128, 128, 1),
            conv_dw(128, 128, 1),
            conv_dw(128, 128, 1),
        )
        self.stage3 = nn.Sequential(
            conv_dw(128, 256, 2),  # 1/32
            conv_dw(256, 256, 1),
        )

    def forward(self, x):
        c3 = self.stage1(x)
        c4 = self.stage2(c3)
        c5 = self.stage3(c4)
        return c3, c4, c5


class SSH(nn.Module):
    def __init__(self, in_channel, out_channel):
        super().__init__()
        leaky = 0.1 if out_channel <= 64 else 0.0
        self.conv3X3 = conv_bn_no_relu(in_channel, out_channel // 2)
        self.conv5X5_1 = conv_bn(in_channel, out_channel // 4, leaky=leaky)
        self.conv5X5_2 = conv_bn_no_relu(out_channel // 4, out_channel // 4)
        self.conv7X7_2 = conv_bn(out_channel // 4, out_channel // 4, leaky=leaky)
        self.conv7x7_3 = conv_bn_no_relu(out_channel // 4, out_channel // 4)

    def forward(self, x):
        conv3x3 = self.conv3X3(x)
        conv5x5_1 = self.conv5X5_1(x)
        conv5x5 = self.conv5X5_2(conv5x5_1)
        conv7x7_2 = self.conv7X7_2(conv5x5_1)
        conv7x7 = self.conv7x7_3(conv7x7_2)
        return F.relu(torch.cat([conv3x3, conv5x5, conv7x7], dim=1))


class FPN(nn.Module):
    def __init__(self, in_channels_list, out_channels):
        super().__init__()
        leaky = 0.1 if out_channels <= 64 else 0.0
        self.output1 = conv_bn1x1(in_channels_list[0], out_channels, leaky=leaky)
        self.output2 = conv_bn1x1(in_channels_list[1], out_channels, leaky=leaky)
        self.output3 = conv_bn1x1(in_channels_list[2], out_channels, leaky=leaky)
        self.merge1 = conv_bn(out_channels, out_channels, leaky=leaky)
        self.merge2 = conv_bn(out_channels, out_channels, leaky=leaky)

    def forward(self, feats):
        output1 = self.output1(feats[0])
        output2 = self.output2(feats[1])
        output3 = self.output3(feats[2])
        # Upsampling to the neighbour's runtime size is what makes exporters
        # emit Shape -> Slice -> Concat -> Resize chains.
        up3 = F.interpolate(output3, size=[output2.size(2), output2.size(3)], mode="nearest")
        output2 = self.merge2(output2 + up3)
        up2 = F.interpolate(output2, size=[output1.size(2), output1.size(3)], mode="nearest")
        output1 = self.merge1(output1 + up2)
        return [output1, output2, output3]


class Head(nn.Module):
    """One of ClassHead / BboxHead / LandmarkHead: a 1x1 conv, then the
    permute/contiguous/view that gives [N, H*W*anchors, k]."""

    def __init__(self, in_channels, num_anchors, k):
        super().__init__()
        self.k = k
        self.conv1x1 = nn.Conv2d(in_channels, num_anchors * k, kernel_size=1)

    def forward(self, x):
        out = self.conv1x1(x)
        out = out.permute(0, 2, 3, 1).contiguous()
        return out.view(out.shape[0], -1, self.k)


class RetinaFace(nn.Module):
    def __init__(self, out_channels=64, num_anchors=2):
        super().__init__()
        self.body = MobileNetV1_025()
        self.fpn = FPN([64, 128, 256], out_channels)
        self.ssh1 = SSH(out_channels, out_channels)
        self.ssh2 = SSH(out_channels, out_channels)
        self.ssh3 = SSH(out_channels, out_channels)
        self.ClassHead = nn.ModuleList([Head(out_channels, num_anchors, 2) for _ in range(3)])
        self.BboxHead = nn.ModuleList([Head(out_channels, num_anchors, 4) for _ in range(3)])
        self.LandmarkHead = nn.ModuleList([Head(out_channels, num_anchors, 10) for _ in range(3)])

    def forward(self, x):
        fpn = self.fpn(self.body(x))
        features = [self.ssh1(fpn[0]), self.ssh2(fpn[1]), self.ssh3(fpn[2])]
        boxes = torch.cat([h(f) for h, f in zip(self.BboxHead, features)], dim=1)
        scores = torch.cat([h(f) for h, f in zip(self.ClassHead, features)], dim=1)
        landmarks = torch.cat([h(f) for h, f in zip(self.LandmarkHead, features)], dim=1)
        return boxes, F.softmax(scores, dim=-1), landmarks


# --------------------------------------------------------------------------
# Small CNN classifier with the classic x.view(x.size(0), -1) flatten
# --------------------------------------------------------------------------


class Classifier(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1, bias=False),
            nn.BatchNorm2d(16),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1, bias=False),
            nn.BatchNorm2d(32),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        self.fc = nn.Linear(32 * 8 * 8, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


# --------------------------------------------------------------------------
# Small transformer encoder over token ids (learned positions)
# --------------------------------------------------------------------------


class TinyTransformer(nn.Module):
    def __init__(self, vocab=100, d_model=64, max_len=128, num_out=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, nhead=4, dim_feedforward=128, dropout=0.0, batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, num_out)

    def forward(self, ids):
        # Positions from the runtime sequence length: Shape -> Gather -> Range.
        positions = torch.arange(ids.size(1), device=ids.device).unsqueeze(0)
        x = self.tok(ids) + self.pos(positions)
        return self.head(self.encoder(x))


# --------------------------------------------------------------------------
# CRNN text recognizer: conv stack -> collapse height -> BiLSTM -> Linear
# --------------------------------------------------------------------------


class CRNN(nn.Module):
    def __init__(self, num_classes=37, hidden=32):
        super().__init__()

        def block(cin, cout, pool):
            return [
                nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(pool, pool),
            ]

        self.cnn = nn.Sequential(
            *block(1, 16, (2, 2)),  # 16 x W/2
            *block(16, 32, (2, 2)),  # 8 x W/4
            *block(32, 48, (2, 1)),  # 4 x W/4
            *block(48, 64, (2, 1)),  # 2 x W/4
        )
        self.rnn = nn.LSTM(64 * 2, hidden, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, num_classes)

    def forward(self, image):
        x = self.cnn(image)
        b, c, h, w = x.size()
        x = x.view(b, c * h, w)  # collapse height
        x = x.permute(2, 0, 1)  # [T, N, C]
        x, _ = self.rnn(x)
        x = self.fc(x)
        return x.permute(1, 0, 2)  # [N, T, classes]


# --------------------------------------------------------------------------
# Export helpers
# --------------------------------------------------------------------------


def seeded(seed):
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed + 1)


def calibrate_batchnorm(model, make_input, batches=4):
    """Give BatchNorm real running statistics, then switch to eval mode."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batches
    model.train()
    with torch.no_grad():
        for i in range(batches):
            model(make_input(i))
    model.eval()
    return model


def export(model, args, path, input_names, output_names, opset, dynamic_axes=None):
    torch.onnx.export(
        model,
        args,
        path,
        input_names=input_names,
        output_names=output_names,
        opset_version=opset,
        dynamic_axes=dynamic_axes,
        do_constant_folding=True,
    )
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)


def shape_str(shape):
    return "x".join(str(d) for d in shape)


def build_retinaface():
    gen = seeded(SEED)
    model = RetinaFace()
    return calibrate_batchnorm(
        model, lambda i: torch.randn(2, 3, 320, 320, generator=gen)
    )


def build_classifier():
    gen = seeded(SEED + 1)
    model = Classifier()
    return calibrate_batchnorm(model, lambda i: torch.randn(8, 3, 32, 32, generator=gen))


def build_transformer():
    seeded(SEED + 2)
    return TinyTransformer().eval()


def build_crnn():
    gen = seeded(SEED + 3)
    model = CRNN()
    return calibrate_batchnorm(model, lambda i: torch.randn(4, 1, 32, 128, generator=gen))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=os.path.dirname(os.path.abspath(__file__)))
    opts = parser.parse_args()
    out = opts.out_dir
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)

    manifest = {"generator": "test/models/generate.py", "torch": torch.__version__, "models": []}

    def add(model, example, name, opset, input_names, output_names, dynamic_axes, shapes,
            purpose, **extra):
        path = os.path.join(out, name + ".onnx")
        export(model, example, path, input_names, output_names, opset, dynamic_axes)
        entry = {
            "name": name,
            "file": name + ".onnx",
            "opset": opset,
            "inputs": input_names,
            "outputs": output_names,
            "dynamic_axes": dynamic_axes or {},
            "shape_sets": [
                {n: shape_str(s) for n, s in zip(input_names, shape_set)} for shape_set in shapes
            ],
            "purpose": purpose,
        }
        entry.update(extra)
        manifest["models"].append(entry)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
        return path

    rf_outputs = ["boxes", "scores", "landmarks"]
    rf_dynamic_shapes = [(1, 3, 640, 640), (2, 3, 320, 480), (1, 3, 480, 352)]
    rf_input_axes = {"input": {0: "batch", 2: "height", 3: "width"}}

    retinaface = build_retinaface()
    rf_example = torch.randn(1, 3, 640, 640, generator=seeded(SEED + 10))
    add(retinaface, rf_example, "retinaface_static", 13, ["input"], rf_outputs, None,
        [[(1, 3, 640, 640)]], "static export: the freeze/fold reference")
    add(retinaface, rf_example, "retinaface_dynamic_names", 13, ["input"], rf_outputs,
        {**rf_input_axes,
         "boxes": {0: "batch", 1: "dim1"},
         "scores": {0: "batch", 1: "dim2"},
         "landmarks": {0: "batch", 1: "dim3"}},
        [[s] for s in rf_dynamic_shapes],
        "one hand-written dim name per output (dim1/dim2/dim3 are the same anchor count)")
    add(retinaface, rf_example, "retinaface_dynamic_input", 13, ["input"], rf_outputs,
        rf_input_axes, [[s] for s in rf_dynamic_shapes],
        "dynamic axes on the input only: outputs get exporter-made dim names")
    add(retinaface, rf_example, "retinaface_dynamic_input_opset11", 11, ["input"], rf_outputs,
        rf_input_axes, [[s] for s in rf_dynamic_shapes],
        "opset 11 variant (Squeeze/Unsqueeze axes as attributes, Resize-11)")

    classifier = build_classifier()
    cls_example = torch.randn(1, 3, 32, 32, generator=seeded(SEED + 11))
    cls_axes = {"input": {0: "batch"}, "logits": {0: "batch"}}
    cls_dynamic_shapes = [[(1, 3, 32, 32)], [(4, 3, 32, 32)], [(7, 3, 32, 32)]]
    add(classifier, cls_example, "classifier_static", 13, ["input"], ["logits"], None,
        [[(1, 3, 32, 32)]], "static batch; x.view(x.size(0), -1) folds to constants")
    add(classifier, cls_example, "classifier_dynamic", 13, ["input"], ["logits"], cls_axes,
        cls_dynamic_shapes, "dynamic batch; flatten is a Shape/Gather/Concat/Reshape chain")
    add(classifier, cls_example, "classifier_dynamic_opset11", 11, ["input"], ["logits"],
        cls_axes, cls_dynamic_shapes, "opset 11 variant of classifier_dynamic")
    add(classifier, cls_example, "classifier_dynamic_opset17", 17, ["input"], ["logits"],
        cls_axes, cls_dynamic_shapes, "opset 17 variant of classifier_dynamic")

    transformer = build_transformer()
    ids_example = torch.randint(0, 100, (2, 16), generator=seeded(SEED + 12))
    add(transformer, ids_example, "transformer_encoder", 14, ["ids"], ["logits"],
        {"ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
        [[(1, 16)], [(3, 40)], [(2, 7)]],
        "2-layer nn.TransformerEncoder, d_model 64; positions from the runtime seq length",
        int_ranges={"ids": [0, 100]}, rtol=1e-3, atol=1e-4)

    crnn = build_crnn()
    img_example = torch.randn(1, 1, 32, 128, generator=seeded(SEED + 13))
    add(crnn, img_example, "crnn", 13, ["image"], ["logits"],
        {"image": {0: "batch", 3: "width"}, "logits": {0: "batch", 1: "steps"}},
        [[(1, 1, 32, 128)], [(2, 1, 32, 200)], [(3, 1, 32, 64)]],
        "conv stack, view(b, c*h, w), BiLSTM, Linear; dynamic batch and image width",
        rtol=1e-3, atol=1e-4)

    # Negative test for the oracle: negate the largest weight of the final Linear.
    src = onnx.load(os.path.join(out, "classifier_static.onnx"))
    perturbed = perturb_largest(src, "fc.weight")
    path = os.path.join(out, "classifier_static_perturbed.onnx")
    onnx.checker.check_model(perturbed)
    onnx.save(perturbed, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")
    # Negative test for --check-sensitivity: the trap DESIGN.md describes.
    # Huge BatchNorm running variances scale activations to ~1e-8, so the
    # logits are the fc bias and do not depend on the input.
    ignorant = copy.deepcopy(classifier)
    for m in ignorant.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_var.fill_(1e8)
    path = os.path.join(out, "classifier_ignores_input.onnx")
    export(ignorant, cls_example, path, ["input"], ["logits"], 13)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    # Negative test for the oracle's declared-shape check: the dynamic
    # classifier with its output declared [1, 10]. ONNX Runtime only warns.
    wrong = onnx.load(os.path.join(out, "classifier_dynamic.onnx"))
    batch_dim = wrong.graph.output[0].type.tensor_type.shape.dim[0]
    batch_dim.Clear()
    batch_dim.dim_value = 1
    path = os.path.join(out, "classifier_wrong_output_shape.onnx")
    onnx.checker.check_model(wrong)
    onnx.save(wrong, path)
    print(f"wrote {path} ({os.path.getsize(path)} bytes)")

    manifest["negative"] = [
        {
            "file": "classifier_static_perturbed.onnx",
            "original": "classifier_static.onnx",
            "change": "largest-magnitude element of fc.weight negated",
            "expect": "the oracle reports a mismatch against the original",
        },
        {
            "file": "classifier_ignores_input.onnx",
            "original": "classifier_static.onnx",
            "change": "BatchNorm running_var set to 1e8",
            "expect": "--check-sensitivity reports that the output ignores the input",
        },
        {
            "file": "classifier_wrong_output_shape.onnx",
            "original": "classifier_dynamic.onnx",
            "change": "output logits declared [1, 10] instead of [batch, 10]",
            "expect": "the oracle reports the declared shape at batch > 1",
        },
    ]

    # Entries another generator wrote (they name it in "generator", e.g.
    # gen_dynamic_twins.py) stay, after this generator's own.
    manifest_path = os.path.join(out, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old_models = json.load(f).get("models", [])
        manifest["models"] += [m for m in old_models
                               if m.get("generator", manifest["generator"]) != manifest["generator"]]
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=False)
        f.write("\n")
    return 0


def perturb_largest(model, initializer_name):
    from onnx import numpy_helper

    for i, init in enumerate(model.graph.initializer):
        if init.name != initializer_name:
            continue
        w = numpy_helper.to_array(init).copy()
        flat = w.reshape(-1)
        k = abs(flat).argmax()
        flat[k] = -flat[k]
        model.graph.initializer[i].CopyFrom(numpy_helper.from_array(w, init.name))
        return model
    raise SystemExit(f"initializer {initializer_name} not found")


if __name__ == "__main__":
    sys.exit(main())
