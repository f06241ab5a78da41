#!/usr/bin/env node
//===- inferred_shapes.js - Inferred output shapes vs ONNX Runtime --------===//
//
//   inferred_shapes.js --onnx-opt BIN MODEL.onnx --shapes 'X=2x3,Y=4'
//       [--shapes ...] [--int-range NAME=LO:HI]
//
// Reads the graph signature of MODEL as onnx-opt prints it (the declared,
// e.g. inferred, types of the graph inputs and outputs), runs MODEL with
// ONNX Runtime on random inputs of each shape set, and checks every output
// against its declared shape: the rank, every static dim, and one value per
// dim name across inputs and outputs. Unlike ONNX Runtime's own output
// metadata (which quietly replaces a declared dim that contradicts its
// inference), this compares with the shapes of the tensors actually
// computed. Every output must have a declared shape (an output that
// inference left without one fails). Exit 0 if every check holds, 1 on a
// mismatch, 2 on usage or runtime errors.
//
//===----------------------------------------------------------------------===//
'use strict';

const path = require('path');
const {spawnSync} = require('child_process');

function die(message) {
  process.stderr.write(`inferred_shapes: error: ${message}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = {model: null, onnxOpt: null, shapeSets: [], intRanges: {}};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '--onnx-opt')
      opts.onnxOpt = argv[++i];
    else if (a === '--shapes')
      opts.shapeSets.push(argv[++i]);
    else if (a === '--int-range') {
      const m = /^(.+)=(-?\d+):(-?\d+)$/.exec(argv[++i] || '');
      if (!m)
        die(`bad --int-range '${argv[i]}'`);
      opts.intRanges[m[1]] = [Number(m[2]), Number(m[3])];
    } else if (!opts.model)
      opts.model = a;
    else
      die(`unexpected argument '${a}'`);
  }
  if (!opts.model || !opts.onnxOpt || !opts.shapeSets.length)
    die('usage: inferred_shapes.js --onnx-opt BIN MODEL --shapes SET...');
  return opts;
}

/// "X=2x3,Y=" -> {X: [2, 3], Y: []}.
function parseShapeSet(text) {
  const set = {};
  for (const part of text.split(',')) {
    const [name, dims] = part.split('=');
    set[name.trim()] = dims.trim() === '' ? [] : dims.split('x').map(Number);
  }
  return set;
}

/// Splits "a[1,2] x, b y" at top-level commas.
function splitTop(text) {
  const parts = [];
  let depth = 0, cur = '';
  for (const c of text) {
    if (c === '[' || c === '(')
      ++depth;
    if (c === ']' || c === ')')
      --depth;
    if (c === ',' && depth === 0) {
      parts.push(cur.trim());
      cur = '';
    } else {
      cur += c;
    }
  }
  if (cur.trim())
    parts.push(cur.trim());
  return parts;
}

/// Inverse of onnx-opt's name encoding in text: `__` + the name with each
/// byte that is not an identifier character written `_xHH`.
function decodeName(name) {
  if (!name.startsWith('__'))
    return name;
  return name.slice(2).replace(/_x([0-9A-F]{2})/g,
                               (m, hex) => String.fromCharCode(parseInt(hex, 16)));
}

/// One signature entry: {name, dims} where dims is null (no shape) or an
/// array of numbers, names and '?'. As onnx-opt prints types: `float X` is
/// a scalar, `float[] X` has no shape, a bare `X` has no type.
function parseEntry(text) {
  const m = /^(\w+)(?:\[([^\]]*)\])?\s+(\S+)$/.exec(text);
  if (!m)
    return /^\S+$/.test(text) ? {elem: null, name: decodeName(text), dims: null}
                               : null;
  const dims = m[2] === undefined
      ? []
      : (m[2].trim() === '' ? null : m[2].split(',').map((d) => {
          d = d.trim();
          return /^-?\d+$/.test(d) ? Number(d) : d;
        }));
  return {elem: m[1], name: decodeName(m[3]), dims};
}

function readSignature(onnxOpt, model) {
  const r = spawnSync(onnxOpt, [model, '--no-verify'],
                      {encoding: 'utf8', maxBuffer: 1 << 30});
  if (r.status !== 0)
    die(`${onnxOpt} ${model} failed: ${r.error || r.stderr}`);
  const line = r.stdout.split('\n').find((l) => /\) => \(/.test(l));
  if (!line)
    die('no graph signature in the printed model');
  const m = /^\s*\S+\s*\((.*)\) => \((.*)\)/.exec(line);
  return {
    inputs: splitTop(m[1]).map(parseEntry).filter(Boolean),
    outputs: splitTop(m[2]).map(parseEntry).filter(Boolean),
  };
}

function makeRng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

function makeInput(ort, meta, dims, rng, range) {
  const n = dims.reduce((a, b) => a * b, 1);
  const [lo, hi] = range || [0, 3];
  switch (meta.type) {
  case 'float32':
    return new ort.Tensor('float32',
                          Float32Array.from({length: n}, () => rng() * 2 - 1),
                          dims);
  case 'int64':
    return new ort.Tensor(
        'int64',
        BigInt64Array.from({length: n},
                           () => BigInt(lo + Math.floor(rng() * (hi - lo)))),
        dims);
  case 'int32':
    return new ort.Tensor(
        'int32',
        Int32Array.from({length: n}, () => lo + Math.floor(rng() * (hi - lo))),
        dims);
  case 'uint8':
    return new ort.Tensor(
        'uint8',
        Uint8Array.from({length: n}, () => lo + Math.floor(rng() * (hi - lo))),
        dims);
  case 'bool':
    return new ort.Tensor('bool',
                          Uint8Array.from({length: n}, () => rng() < 0.5),
                          dims);
  default:
    die(`input '${meta.name}' has unsupported type ${meta.type}`);
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require(path.resolve(__dirname, '..', '..', 'node_modules',
                               'onnxruntime-node'));
  } catch (e) {
    die('cannot load onnxruntime-node: ' + e.message.split('\n')[0]);
  }
  const sig = readSignature(opts.onnxOpt, opts.model);
  let session;
  try {
    session = await ort.InferenceSession.create(opts.model, {logSeverityLevel: 3});
  } catch (e) {
    die(`cannot load ${opts.model}: ${e.message}`);
  }
  let failures = 0;
  for (let s = 0; s < opts.shapeSets.length; ++s) {
    const shapes = parseShapeSet(opts.shapeSets[s]);
    const rng = makeRng(1 + s);
    const feeds = {};
    for (const meta of session.inputMetadata) {
      if (!(meta.name in shapes))
        die(`no shape for input '${meta.name}' in '${opts.shapeSets[s]}'`);
      feeds[meta.name] = makeInput(ort, meta, shapes[meta.name], rng,
                                   opts.intRanges[meta.name]);
    }
    let out;
    try {
      out = await session.run(feeds);
    } catch (e) {
      die(`run at ${opts.shapeSets[s]}: ${e.message}`);
    }
    const bound = new Map();
    const problems = [];
    const bind = (entry, dims, kind) => {
      if (!entry.dims) {
        problems.push(`${kind} '${entry.name}' has no declared shape`);
        return;
      }
      if (entry.dims.length !== dims.length) {
        problems.push(`${kind} '${entry.name}' is declared with rank ` +
                      `${entry.dims.length}, runtime gives [${dims}]`);
        return;
      }
      entry.dims.forEach((d, i) => {
        if (typeof d === 'number') {
          if (d !== dims[i])
            problems.push(`${kind} '${entry.name}' dim ${i} is declared ${d}, ` +
                          `runtime gives ${dims[i]}`);
        } else if (d !== '?') {
          const prev = bound.get(d);
          if (prev === undefined)
            bound.set(d, dims[i]);
          else if (prev !== dims[i])
            problems.push(`dim '${d}' is ${prev} and ${dims[i]} ` +
                          `('${entry.name}' dim ${i})`);
        }
      });
    };
    for (const e of sig.inputs)
      if (e.name in feeds)
        bind(e, feeds[e.name].dims.map(Number), 'input');
    const parts = [];
    for (const e of sig.outputs) {
      if (!(e.name in out))
        die(`the runtime computed no output '${e.name}'`);
      const dims = out[e.name].dims.map(Number);
      bind(e, dims, 'output');
      parts.push(`${e.name}[${dims}]`);
    }
    const ok = problems.length === 0;
    failures += ok ? 0 : 1;
    process.stdout.write(`${opts.shapeSets[s]}: ${parts.join(' ')}` +
                         (ok ? ' OK' : ` MISMATCH: ${problems.join('; ')}`) +
                         '\n');
  }
  process.exit(failures ? 1 : 0);
}

main().catch((e) => die(e.stack || String(e)));
