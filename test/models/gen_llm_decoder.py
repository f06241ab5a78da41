#!/usr/bin/python3
"""A small Llama-style decoder with a KV cache, exported by torch (issue 14, 16).

What an LLM export looks like to onnx-opt's shape passes, at a size that fits in
the repository: the forward below is written the way Hugging Face's Llama
(transformers 4.30, the last one whose export torch 1.13 can trace) computes
shapes at run time, so the graph carries the same shape arithmetic:

  input_ids [batch, seq] (int64)  and, per layer i,
  past_k_i, past_v_i [batch, heads, past, head_dim]  (the KV cache)

  position_ids  arange(past, past + seq), as LlamaModel makes them when the
                caller gives none: a Range with symbolic start and limit
  attention     LlamaModel's default all-ones mask over past + seq
                (ConstantOfShape of a symbolic length), expanded and inverted
                with masked_fill (Where), plus the causal mask of
                _make_causal_mask: full((seq, seq), min), masked_fill of
                arange(seq) < arange(seq) + 1 viewed as a column, zeros(seq,
                past) concatenated in front, expanded to [batch, 1, seq,
                past + seq]
  RMSNorm       pow(2).mean(-1, keepdim).rsqrt, times a weight
  rotary        cos/sin tables [1, 1, MAX_POS, head_dim] precomputed as
                buffers, sliced to [:, :, :past + seq] (a Slice whose end is
                a sum of two dims) and gathered at position_ids
  heads         q/k/v projections, view(b, s, h, dk).transpose(1, 2), the
                cache concatenated on axis 2, attn @ v transposed back and
                reshaped to (b, s, hidden)
  MLP           SwiGLU: down(silu(gate(x)) * up(x))
  LM head       logits [batch, seq, vocab]

Outputs: logits and present_k_i, present_v_i [batch, heads, past + seq,
head_dim]. dynamic_axes name batch, seq and past on the inputs; the outputs'
cache length is called `past_seq` (the exporter cannot write an expression;
unify-dims should find that it is past + seq).

The example traced has past = 3 > 0, so the `if past > 0` of _make_causal_mask
takes the concatenating branch, which also runs at past = 0 (a [seq, 0] block).

    /usr/bin/python3 test/models/gen_llm_decoder.py              # 2 layers, here
    /usr/bin/python3 test/models/gen_llm_decoder.py --layers 32 \
        --out bench/out/llm_32.onnx --no-manifest                 # bench/gen_llm.py

Without --no-manifest it writes llm_decoder.onnx beside this file and replaces
its own entry in manifest.json (the entry carries "generator"). Output is the
same bytes on every run with the same torch build (fixed seed, one thread).
"""

import argparse
import json
import math
import os

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20261214
GENERATOR = "test/models/gen_llm_decoder.py"
VOCAB = 64
HIDDEN = 32
HEADS = 4
HEAD_DIM = HIDDEN // HEADS
INTERMEDIATE = 48
MAX_POS = 64  # rows of the rotary tables: past + seq must stay below this
OPSET = 14
NEG = torch.finfo(torch.float32).min


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        # Random around 1, not ones: equal initializers would be merged by the
        # exporter into one tensor shared by every norm.
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(d))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


class Rotary(nn.Module):
    """Precomputed cos/sin tables; forward slices them to the cache length."""

    def __init__(self, dim, max_pos=MAX_POS, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
        t = torch.arange(max_pos).float()
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos()[None, None, :, :], persistent=False)
        self.register_buffer("sin_cached", emb.sin()[None, None, :, :], persistent=False)

    def forward(self, seq_len):
        return self.cos_cached[:, :, :seq_len, ...], self.sin_cached[:, :, :seq_len, ...]


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(q, k, cos, sin, position_ids):
    cos = cos.squeeze(1).squeeze(0)[position_ids].unsqueeze(1)  # [b, 1, s, dk]
    sin = sin.squeeze(1).squeeze(0)[position_ids].unsqueeze(1)
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o_proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.rotary = Rotary(HEAD_DIM)

    def forward(self, x, mask, position_ids, past_k, past_v):
        b, s, _ = x.size()
        q = self.q_proj(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(x).view(b, s, HEADS, HEAD_DIM).transpose(1, 2)
        kv_len = k.shape[-2] + past_k.shape[-2]
        cos, sin = self.rotary(kv_len)
        q, k = apply_rotary(q, k, cos, sin, position_ids)
        k = torch.cat([past_k, k], dim=2)
        v = torch.cat([past_v, v], dim=2)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HEAD_DIM)
        w = w + mask
        w = torch.max(w, torch.tensor(NEG))
        w = F.softmax(w, dim=-1, dtype=torch.float32)
        out = torch.matmul(w, v).transpose(1, 2).reshape(b, s, HIDDEN)
        return self.o_proj(out), k, v


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(HIDDEN)
        self.self_attn = Attention()
        self.post_attention_layernorm = RMSNorm(HIDDEN)
        self.mlp = MLP()

    def forward(self, x, mask, position_ids, past_k, past_v):
        a, k, v = self.self_attn(self.input_layernorm(x), mask, position_ids, past_k, past_v)
        x = x + a
        return x + self.mlp(self.post_attention_layernorm(x)), k, v


def causal_mask(bsz, tgt_len, past):
    """_make_causal_mask: 0 on and below the diagonal, min above it, with a
    block of zeros in front for the cached positions."""
    mask = torch.full((tgt_len, tgt_len), NEG)
    cond = torch.arange(mask.size(-1))
    mask = mask.masked_fill(cond < (cond + 1).view(mask.size(-1), 1), 0.0)
    if past > 0:  # traced with past > 0: the Concat stays in the graph
        mask = torch.cat([torch.zeros(tgt_len, past), mask], dim=-1)
    return mask[None, None, :, :].expand(bsz, 1, tgt_len, tgt_len + past)


def expand_mask(mask, tgt_len):
    """_expand_mask: [b, src] of 1/0 to [b, 1, tgt, src] of 0/min."""
    bsz, src_len = mask.size()
    expanded = mask[:, None, None, :].expand(bsz, 1, tgt_len, src_len).to(torch.float32)
    inverted = 1.0 - expanded
    return inverted.masked_fill(inverted.to(torch.bool), NEG)


class LlamaDecoder(nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Layer() for _ in range(layers))
        self.norm = RMSNorm(HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, input_ids, *past):
        b, s = input_ids.shape
        past_len = past[0].shape[2]
        position_ids = torch.arange(past_len, s + past_len, dtype=torch.long)
        position_ids = position_ids.unsqueeze(0).view(-1, s)
        attention_mask = torch.ones((b, s + past_len), dtype=torch.bool)
        mask = expand_mask(attention_mask, s) + causal_mask(b, s, past_len)
        x = self.embed_tokens(input_ids)
        presents = []
        for i, layer in enumerate(self.layers):
            x, k, v = layer(x, mask, position_ids, past[2 * i], past[2 * i + 1])
            presents += [k, v]
        return (self.lm_head(self.norm(x)), *presents)


def io_names(layers):
    past = [f"past_{kv}_{i}" for i in range(layers) for kv in "kv"]
    present = [f"present_{kv}_{i}" for i in range(layers) for kv in "kv"]
    return ["input_ids"] + past, ["logits"] + present


def export(layers, path):
    torch.manual_seed(SEED)
    gen = torch.Generator().manual_seed(SEED + 1)
    model = LlamaDecoder(layers).eval()
    batch, seq, past = 2, 5, 3
    ids = torch.randint(0, VOCAB, (batch, seq), generator=gen)
    cache = [torch.randn(batch, HEADS, past, HEAD_DIM, generator=gen) for _ in range(2 * layers)]
    inputs, outputs = io_names(layers)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    for name in inputs[1:]:
        axes[name] = {0: "batch", 2: "past"}
    for name in outputs[1:]:
        axes[name] = {0: "batch", 2: "past_seq"}
    torch.onnx.export(model, (ids, *cache), path, input_names=inputs, output_names=outputs,
                      opset_version=OPSET, dynamic_axes=axes, do_constant_folding=True)
    proto = onnx.load(path)
    onnx.checker.check_model(proto)
    onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    print(f"wrote {path} ({os.path.getsize(path)} bytes, {len(proto.graph.node)} nodes)")
    return inputs, outputs, axes


def shape_set(layers, batch, seq, past):
    shapes = {"input_ids": f"{batch}x{seq}"}
    for name in io_names(layers)[0][1:]:
        shapes[name] = f"{batch}x{HEADS}x{past}x{HEAD_DIM}"
    return shapes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(here, "llm_decoder.onnx"))
    parser.add_argument("--no-manifest", action="store_true",
                        help="do not touch manifest.json (for bench models)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    inputs, outputs, axes = export(args.layers, args.out)
    if args.no_manifest:
        return
    file = os.path.basename(args.out)
    entry = {
        "name": os.path.splitext(file)[0],
        "file": file,
        "generator": GENERATOR,
        "opset": OPSET,
        "inputs": inputs,
        "outputs": outputs,
        "dynamic_axes": axes,
        # The traced example, a prompt with an empty cache, and a decode step.
        "shape_sets": [shape_set(args.layers, 2, 5, 3), shape_set(args.layers, 1, 7, 0),
                       shape_set(args.layers, 3, 1, 9)],
        "purpose": f"Llama-style decoder, {args.layers} layers, hidden {HIDDEN}, {HEADS} heads, "
                   f"vocab {VOCAB}: KV cache inputs/outputs, rotary tables sliced to past+seq, "
                   "HF-style causal and padding masks built from the runtime shapes",
        "int_ranges": {"input_ids": [0, VOCAB]},
        "rtol": 1e-3,
        "atol": 1e-4,
    }
    manifest_path = os.path.join(os.path.dirname(os.path.abspath(args.out)), "manifest.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    manifest["models"] = [m for m in manifest["models"] if m.get("generator") != GENERATOR]
    manifest["models"].append(entry)
    with open(manifest_path, "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=False)
        f.write("\n")


if __name__ == "__main__":
    main()
