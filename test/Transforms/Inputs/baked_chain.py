#!/usr/bin/python3
# Prints a static model of N blocks, each `h = relu(h.view(1, 16, 4))` then
# `h = h.view(1, 64)` with both targets baked at batch 1, as onnx-opt's text
# format: make-dynamic repairs one block per round (each block's targets
# wait for the block before to be inferred again), so N > 64 needs more
# rounds than the former cap (make-dynamic-rounds.test).
import sys

n = int(sys.argv[1])
print('<ir_version: 8, opset_import: ["" : 17]>')
print('chain (float[1,64] x) => (float[1,64] y) '
      '<int64[3] a = {1, 16, 4}, int64[2] b = {1, 64}> {')
h = 'x'
for i in range(n):
    print(f'  v{i} = Reshape ({h}, a)')
    print(f'  r{i} = Relu (v{i})')
    out = 'y' if i == n - 1 else f'h{i}'
    print(f'  {out} = Reshape (r{i}, b)')
    h = out
print('}')
