#!/usr/bin/python3
#===- gen_llm.py - The LLM-shaped decoder at bench size (issue 14) --------===#
#
# Writes bench/out/llm_<N>.onnx (default N = 32 layers): the Llama-style
# decoder of test/models/gen_llm_decoder.py (KV cache inputs and outputs,
# dynamic batch, seq and past, hidden 32) with N layers instead of the test
# model's 2. The generator is shared so that the bench measures the graph the
# tests check; only the layer count differs. Not committed (bench/out/ is
# git-ignored).
#
#   /usr/bin/python3 bench/gen_llm.py [LAYERS...]
#
#===------------------------------------------------------------------------===#
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
generator = os.path.join(here, "..", "test", "models", "gen_llm_decoder.py")
out_dir = os.environ.get("BENCH_OUT", os.path.join(here, "out"))
for layers in sys.argv[1:] or ["32"]:
    subprocess.run([sys.executable, generator, "--layers", layers, "--no-manifest",
                    "--out", os.path.join(out_dir, f"llm_{layers}.onnx")], check=True)
