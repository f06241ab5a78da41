#!/usr/bin/python3
#===- gen_dynamo_llm.py - A Llama decoder in the dynamo exporter's pattern ===#
#
# Writes bench/out/dynamo_llm_<size>.onnx and its external data file
# dynamo_llm_<size>.onnx.data: a Llama-shaped decoder laid out the way
# torch.onnx.export(dynamo=True) (torch 2.9+, opset 18) writes one, built
# with Debian's python3-onnx only (torch 2 is not in Debian 12). Issue 30 and
# 32: the model onnx-opt must simplify in bounded memory.
#
# The op pattern follows the exporter's, as seen in the exports of
# ../shared/models/modern/ (mistral_dyn.onnx):
#   - one shape tensor per layer, computed once from the hidden state with
#     Shape <start, end> slices and a Concat with constants, shared by the
#     q/k/v Reshapes (allowzero = 1);
#   - RMSNorm as Pow, ReduceMean (axes as an input, opset 18), Add eps,
#     Sqrt, Reciprocal, Mul, Mul weight;
#   - rotary embedding from cos/sin tables gathered at position_ids, the
#     halves rotated with Slice, Neg, Concat;
#   - SDPA as MatMul, Mul by the scale, Add of the mask, Softmax, MatMul;
#   - SwiGLU MLP: Sigmoid, Mul, Mul, MatMul;
#   - weights as [in, out] initializers of MatMul, every one distinct
#     (random bytes), so that no deduplication can shrink them.
#
# Sizes (parameters counted over the initializers):
#   1b   hidden 2048, 16 layers, intermediate 8192, vocab 32000, 32 heads,
#        float32: 4.9 GB   (~1.2 B parameters)
#   7b   hidden 4096, 32 layers, intermediate 11008, vocab 32000, 32 heads,
#        float16: 13.5 GB  (~6.7 B parameters)
#   tiny hidden 64, 2 layers, intermediate 128, vocab 100, 4 heads, float32
#        (for checking the generator itself)
#   deep80  as tiny with 80 layers: bench/run_make_dynamic.sh freezes it at
#        batch 1 and makes it dynamic again (a round per layer)
#
# The data file is written tensor by tensor: memory stays at one tensor.
#
#   /usr/bin/python3 bench/gen_dynamo_llm.py [1b|7b|tiny|deep80 ...]
#
#===------------------------------------------------------------------------===#
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

SIZES = {
    "tiny": dict(hidden=64, layers=2, inter=128, vocab=100, heads=4, dtype="float32"),
    "deep80": dict(hidden=64, layers=80, inter=128, vocab=100, heads=4, dtype="float32"),
    "1b": dict(hidden=2048, layers=16, inter=8192, vocab=32000, heads=32, dtype="float32"),
    "7b": dict(hidden=4096, layers=32, inter=11008, vocab=32000, heads=32, dtype="float16"),
}
MAX_POS = 4096


class Builder:
    def __init__(self, data_path, dtype):
        self.nodes = []
        self.inits = []
        self.data_path = data_path
        self.data_name = os.path.basename(data_path)
        self.data = open(data_path, "wb")
        self.offset = 0
        self.dtype = np.dtype(dtype)
        self.elem = onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[self.dtype]
        self.rng = np.random.default_rng(0)
        self.count = 0

    def name(self, hint):
        self.count += 1
        return f"{hint}_{self.count}"

    def op(self, op_type, inputs, hint, **attrs):
        out = self.name(hint)
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=f"node_{out}", **attrs))
        return out

    def const(self, values, hint, dtype=np.int64):
        name = self.name(hint)
        self.inits.append(onnx.numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def weight(self, name, shape, scale=0.02):
        """An external initializer of random values, written at once."""
        # Random bytes reinterpreted would hold NaNs; draw real numbers in
        # blocks instead, so that memory stays at one block.
        t = TensorProto()
        t.name = name
        t.data_type = self.elem
        t.dims.extend(shape)
        # 64 KiB alignment, as onnx-opt and onnx write large tensors.
        pad = (-self.offset) % 65536
        if pad:
            self.data.write(b"\0" * pad)
            self.offset += pad
        start = self.offset
        n = int(np.prod(shape))
        block = 1 << 24
        for i in range(0, n, block):
            m = min(block, n - i)
            vals = (self.rng.standard_normal(m, dtype=np.float32) * scale).astype(self.dtype)
            self.data.write(vals.tobytes())
        length = n * self.dtype.itemsize
        self.offset += length
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", self.data_name), ("offset", str(start)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.inits.append(t)
        return name


def build(size, out_dir):
    cfg = SIZES[size]
    hidden, heads, inter, vocab = cfg["hidden"], cfg["heads"], cfg["inter"], cfg["vocab"]
    head_dim = hidden // heads
    path = os.path.join(out_dir, f"dynamo_llm_{size}.onnx")
    b = Builder(path + ".data", cfg["dtype"])
    fdt = cfg["dtype"]
    one_f = lambda v, hint: b.const(np.array(v, dtype=fdt), hint, dtype=fdt)

    embed = b.weight("model.embed_tokens.weight", [vocab, hidden])
    # cos/sin tables [MAX_POS, head_dim], small and inline in the model.
    inv = 1.0 / (10000 ** (np.arange(0, head_dim, 2) / head_dim))
    ang = np.outer(np.arange(MAX_POS), inv)
    ang = np.concatenate([ang, ang], axis=-1)
    cos_t = b.const(np.cos(ang).astype(fdt), "cos_cached", dtype=fdt)
    sin_t = b.const(np.sin(ang).astype(fdt), "sin_cached", dtype=fdt)

    x = b.op("Gather", [embed, "input_ids"], "embedding")
    # position_ids [batch, seq] -> cos/sin [batch, 1, seq, head_dim]
    axes1 = b.const([1], "axes")
    cos = b.op("Unsqueeze", [b.op("Gather", [cos_t, "position_ids"], "cos"), axes1], "cos")
    sin = b.op("Unsqueeze", [b.op("Gather", [sin_t, "position_ids"], "sin"), axes1], "sin")
    # The causal mask from the attention mask: [batch, 1, seq, seq].
    mask_f = b.op("Cast", ["attention_mask"], "mask", to=b.elem)
    mask4 = b.op("Unsqueeze", [mask_f, b.const([1, 2], "axes")], "mask")
    inv_mask = b.op("Sub", [one_f(1.0, "one"), mask4], "mask")
    add_mask = b.op("Mul", [inv_mask, one_f(-10000.0, "neg")], "mask")
    scale = one_f(1.0 / np.sqrt(head_dim), "scale")
    eps = one_f(1e-6, "eps")
    two = one_f(2.0, "two")
    last = b.const([-1], "axes")

    def rms_norm(v, weight_name):
        p = b.op("Pow", [v, two], "pow")
        m = b.op("ReduceMean", [p, last], "mean", keepdims=1)
        r = b.op("Reciprocal", [b.op("Sqrt", [b.op("Add", [m, eps], "add")], "sqrt")], "rsqrt")
        n = b.op("Mul", [v, r], "mul")
        return b.op("Mul", [n, b.weight(weight_name, [hidden], 1.0)], "mul")

    def rotate(t):
        h = head_dim // 2
        x1 = b.op("Slice", [t, b.const([0], "s"), b.const([h], "e"), b.const([3], "a"), b.const([1], "st")], "slice")
        x2 = b.op("Slice", [t, b.const([h], "s"), b.const([head_dim], "e"), b.const([3], "a"), b.const([1], "st")], "slice")
        r = b.op("Concat", [b.op("Neg", [x2], "neg"), x1], "cat", axis=-1)
        return b.op("Add", [b.op("Mul", [t, cos], "mul"), b.op("Mul", [r, sin], "mul")], "rope")

    for i in range(cfg["layers"]):
        pre = f"model.layers.{i}"
        h = rms_norm(x, f"{pre}.input_layernorm.weight")
        # The one shape tensor of the layer: [batch, seq, heads, head_dim].
        d0 = b.op("Shape", [h], "shape", start=0, end=1)
        d1 = b.op("Shape", [h], "shape", start=1, end=2)
        heads_shape = b.op("Concat", [d0, d1, b.const([heads, head_dim], "c")], "cat", axis=0)
        flat_shape = b.op("Concat", [d0, d1, b.const([hidden], "c")], "cat", axis=0)

        def proj(v, wname, hint):
            q = b.op("MatMul", [v, b.weight(f"{pre}.self_attn.{wname}.weight", [hidden, hidden])], hint)
            r = b.op("Reshape", [q, heads_shape], "view", allowzero=1)
            return b.op("Transpose", [r], "transpose", perm=[0, 2, 1, 3])

        q = rotate(proj(h, "q_proj", "q"))
        k = rotate(proj(h, "k_proj", "k"))
        v = proj(h, "v_proj", "v")
        kt = b.op("Transpose", [k], "transpose", perm=[0, 1, 3, 2])
        s = b.op("Mul", [b.op("MatMul", [q, kt], "scores"), scale], "mul")
        p = b.op("Softmax", [b.op("Add", [s, add_mask], "add")], "softmax", axis=-1)
        a = b.op("Transpose", [b.op("MatMul", [p, v], "attn")], "transpose", perm=[0, 2, 1, 3])
        a = b.op("Reshape", [a, flat_shape], "view", allowzero=1)
        o = b.op("MatMul", [a, b.weight(f"{pre}.self_attn.o_proj.weight", [hidden, hidden])], "o")
        x = b.op("Add", [x, o], "add")
        h = rms_norm(x, f"{pre}.post_attention_layernorm.weight")
        g = b.op("MatMul", [h, b.weight(f"{pre}.mlp.gate_proj.weight", [hidden, inter])], "gate")
        u = b.op("MatMul", [h, b.weight(f"{pre}.mlp.up_proj.weight", [hidden, inter])], "up")
        silu = b.op("Mul", [g, b.op("Sigmoid", [g], "sigmoid")], "silu")
        d = b.op("MatMul", [b.op("Mul", [silu, u], "mul"), b.weight(f"{pre}.mlp.down_proj.weight", [inter, hidden])], "down")
        x = b.op("Add", [x, d], "add")

    x = rms_norm(x, "model.norm.weight")
    logits = b.op("MatMul", [x, b.weight("lm_head.weight", [hidden, vocab])], "lm_head")
    b.nodes.append(helper.make_node("Identity", [logits], ["logits"], name="node_logits"))
    b.data.close()

    graph = helper.make_graph(
        b.nodes, "main_graph",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", b.elem, ["batch", "seq", vocab])],
        initializer=b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)],
                              producer_name="pytorch", producer_version="2.11.0")
    model.ir_version = 10
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    params = sum(int(np.prod(t.dims)) for t in b.inits)
    print(f"{path}: {len(b.nodes)} nodes, {params / 1e9:.2f} B parameters, "
          f"{os.path.getsize(path + '.data') / 2**30:.2f} GiB of external data")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = os.environ.get("BENCH_OUT", os.path.join(here, "out"))
    os.makedirs(out_dir, exist_ok=True)
    for size in sys.argv[1:] or ["1b"]:
        if size not in SIZES:
            sys.exit(f"gen_dynamo_llm.py: unknown size '{size}' (1b, 7b, tiny, deep80)")
        build(size, out_dir)


if __name__ == "__main__":
    main()
