#!/usr/bin/env node
//===- ort_session.js - Time ONNX Runtime session creation ----------------===//
//
// Prints the wall time (ms) of creating an onnxruntime-node InferenceSession
// for each model given, the median of RUNS (default 3) creations, on one
// line each: "<ms> <model>". Optimizations are ORT's defaults (all): that is
// where the time of a torch-style graph goes (its graph transformers walk
// every Shape -> ... -> Reshape chain).
//
//   node bench/ort_session.js MODEL.onnx...
//
//===----------------------------------------------------------------------===//
'use strict';
const path = require('path');
const ort = require(path.join(__dirname, '..', 'node_modules', 'onnxruntime-node'));

async function timeOne(file) {
  const t = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(file, { intraOpNumThreads: 1 });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (s.release) await s.release();
  return ms;
}

async function main() {
  const runs = Number(process.env.RUNS || 3);
  for (const file of process.argv.slice(2)) {
    const times = [];
    for (let i = 0; i < runs; ++i) times.push(await timeOne(file));
    times.sort((a, b) => a - b);
    console.log(`${times[Math.floor(times.length / 2)].toFixed(0)} ${file}`);
  }
}

main().catch((e) => {
  console.error(`ort_session: ${e.message}`);
  process.exit(1);
});
