#!/usr/bin/env node
//===- oracle.js - Numeric equivalence oracle on ONNX Runtime -------------===//
//
// Runs model A (and optionally model B) on the same seeded random inputs, for
// each shape set, and compares every output by name:
//
//   node utils/oracle/oracle.js A.onnx [B.onnx] --shapes 'input=1x3x640x640'
//       [--shapes 'input=2x3x320x480'] [--rtol 1e-4] [--atol 1e-5] [--seed 1]
//       [--int-range ids=0:100] [--check-sensitivity]
//
// An element passes when |a - b| <= atol + rtol * |b| (b is model B's value).
// The declared shapes of both models' inputs and outputs must also hold at
// run time: static dims as declared, one value per dim name.
// Exit status: 0 all equal, 1 a numeric or shape mismatch (or an input the
// model ignores, with --check-sensitivity), 2 a usage, load or runtime error.
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');

const EXIT_MISMATCH = 1;
const EXIT_ERROR = 2;

const USAGE = `usage: oracle.js A.onnx [B.onnx] [options]

Runs A (and B) on seeded random inputs and compares their outputs by name.
With one model, runs it and prints its output shapes.

options:
  --shapes SET            input shapes, e.g. 'input=1x3x640x640' or
                          'a=1x16,b=1x16x64'; repeat for several shape sets;
                          inputs left out use their declared static shape
  --rtol X                relative tolerance (default 1e-4)
  --atol X                absolute tolerance (default 1e-5)
  --seed N                seed of the input generator (default 1)
  --int-range NAME=LO:HI  integer input NAME drawn from [LO, HI) (default 0:10)
  --check-sensitivity     also run A on a second random input and fail if an
                          output does not change with it
  --sensitivity X         smallest relative change that counts (default 1e-3)
  --no-shape-check        do not check the declared input and output shapes
                          (static dims, and one value per dim name) against
                          the runtime's
  --ort-opt LEVEL         ONNX Runtime graph optimization: disabled (default),
                          basic, extended, all
  --threads N             intra-op threads (default 1)
  -h, --help              show this help`;

class UsageError extends Error {}

function fail(code, message) {
  process.stderr.write(`oracle: error: ${message}\n`);
  process.exit(code);
}

function loadRuntime() {
  try {
    return require('onnxruntime-node');
  } catch (e) {
    fail(EXIT_ERROR,
         'cannot load onnxruntime-node (' + e.message.split('\n')[0] +
             '); run `npm ci` at the repository root (.npmrc turns install ' +
             'scripts off)');
  }
}

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

function parseNumber(flag, text) {
  const v = Number(text);
  if (text === undefined || text === '' || !Number.isFinite(v))
    throw new UsageError(`${flag} expects a number, got '${text}'`);
  return v;
}

/// Parses "a=1x3x640x640,b=2x16" into {a: [1,3,640,640], b: [2,16]}. A name
/// with an empty shape ("s=") is a scalar.
function parseShapeSet(text) {
  const set = {};
  for (const part of text.split(/[,;]/)) {
    const item = part.trim();
    if (!item)
      continue;
    const eq = item.lastIndexOf('=');
    if (eq <= 0)
      throw new UsageError(`bad shape '${item}' (expected name=1x3x224x224)`);
    const name = item.slice(0, eq).trim();
    const dimsText = item.slice(eq + 1).trim();
    const dims = dimsText === '' ? [] : dimsText.split('x').map((d) => {
      if (!/^\d+$/.test(d))
        throw new UsageError(`bad dim '${d}' in shape '${item}'`);
      return Number(d);
    });
    if (name in set)
      throw new UsageError(`input '${name}' given twice in shape set '${text}'`);
    set[name] = dims;
  }
  return set;
}

function parseIntRange(text) {
  const m = /^(.+)=(-?\d+):(-?\d+)$/.exec(text || '');
  if (!m)
    throw new UsageError(`bad --int-range '${text}' (expected name=LO:HI)`);
  const lo = Number(m[2]);
  const hi = Number(m[3]);
  if (hi <= lo)
    throw new UsageError(`empty --int-range '${text}'`);
  return [m[1], [lo, hi]];
}

function parseArgs(argv) {
  const opts = {
    models: [],
    shapeSets: [],
    rtol: 1e-4,
    atol: 1e-5,
    seed: 1,
    intRanges: {},
    checkSensitivity: false,
    checkShapes: true,
    sensitivity: 1e-3,
    ortOpt: 'disabled',
    threads: 1,
  };
  for (let i = 0; i < argv.length; ++i) {
    let arg = argv[i];
    let value;
    const eq = arg.indexOf('=');
    if (arg.startsWith('--') && eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const next = () => {
      if (value !== undefined)
        return value;
      if (i + 1 >= argv.length)
        throw new UsageError(`${arg} expects a value`);
      return argv[++i];
    };
    switch (arg) {
    case '-h':
    case '--help':
      process.stdout.write(USAGE + '\n');
      process.exit(0);
      break;
    case '--shapes':
      opts.shapeSets.push(parseShapeSet(next()));
      break;
    case '--rtol':
      opts.rtol = parseNumber(arg, next());
      break;
    case '--atol':
      opts.atol = parseNumber(arg, next());
      break;
    case '--seed':
      opts.seed = parseNumber(arg, next()) >>> 0;
      break;
    case '--int-range': {
      const [name, range] = parseIntRange(next());
      opts.intRanges[name] = range;
      break;
    }
    case '--check-sensitivity':
      opts.checkSensitivity = true;
      break;
    case '--no-shape-check':
      opts.checkShapes = false;
      break;
    case '--sensitivity':
      opts.sensitivity = parseNumber(arg, next());
      break;
    case '--ort-opt':
      opts.ortOpt = next();
      if (!['disabled', 'basic', 'extended', 'all'].includes(opts.ortOpt))
        throw new UsageError(`unknown --ort-opt level '${opts.ortOpt}'`);
      break;
    case '--threads':
      opts.threads = parseNumber(arg, next());
      break;
    default:
      if (arg.startsWith('-'))
        throw new UsageError(`unknown option '${arg}'`);
      opts.models.push(arg);
    }
  }
  if (opts.models.length < 1 || opts.models.length > 2)
    throw new UsageError('expected one or two model files');
  for (const m of opts.models)
    if (!fs.existsSync(m))
      throw new UsageError(`no such file '${m}'`);
  return opts;
}

//===----------------------------------------------------------------------===//
// Seeded inputs
//===----------------------------------------------------------------------===//

/// 32-bit FNV-1a, to derive one stream per (seed, shape set, input, variant).
function hashString(text, h = 0x811c9dc5) {
  for (let i = 0; i < text.length; ++i) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/// mulberry32: small, fast and the same on every platform.
function makeRng(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  let spare = null;
  const normal = () => {
    if (spare !== null) {
      const v = spare;
      spare = null;
      return v;
    }
    const u1 = 1 - next(); // (0, 1]: log stays finite
    const u2 = next();
    const r = Math.sqrt(-2 * Math.log(u1));
    spare = r * Math.sin(2 * Math.PI * u2);
    return r * Math.cos(2 * Math.PI * u2);
  };
  return {next, normal};
}

function elementCount(dims) {
  return dims.reduce((a, b) => a * b, 1);
}

function makeInput(ort, meta, dims, rng, intRange) {
  const n = elementCount(dims);
  switch (meta.type) {
  case 'float32':
  case 'float64': {
    const data = meta.type === 'float32' ? new Float32Array(n) : new Float64Array(n);
    for (let i = 0; i < n; ++i)
      data[i] = rng.normal();
    return new ort.Tensor(meta.type, data, dims);
  }
  case 'int64':
  case 'int32':
  case 'int8':
  case 'uint8': {
    const [lo, hi] = intRange || [0, 10];
    const span = hi - lo;
    if (meta.type === 'int64') {
      const data = new BigInt64Array(n);
      for (let i = 0; i < n; ++i)
        data[i] = BigInt(lo + Math.floor(rng.next() * span));
      return new ort.Tensor('int64', data, dims);
    }
    const Ctor = {int32: Int32Array, int8: Int8Array, uint8: Uint8Array}[meta.type];
    const data = new Ctor(n);
    for (let i = 0; i < n; ++i)
      data[i] = lo + Math.floor(rng.next() * span);
    return new ort.Tensor(meta.type, data, dims);
  }
  case 'bool': {
    const data = new Uint8Array(n);
    for (let i = 0; i < n; ++i)
      data[i] = rng.next() < 0.5 ? 1 : 0;
    return new ort.Tensor('bool', data, dims);
  }
  default:
    throw new Error(`input '${meta.name}' has unsupported type ${meta.type}`);
  }
}

/// Concrete shape of every input of `session` for one shape set: given ones
/// win; the rest must be fully static in the model.
function resolveShapes(session, shapeSet) {
  const shapes = {};
  for (const meta of session.inputMetadata) {
    if (!meta.isTensor)
      throw new Error(`input '${meta.name}' is not a tensor`);
    if (meta.name in shapeSet) {
      const given = shapeSet[meta.name];
      if (meta.shape.length !== given.length)
        throw new Error(`input '${meta.name}' has rank ${meta.shape.length}, ` +
                        `shape set gives ${formatDims(given)}`);
      meta.shape.forEach((d, i) => {
        if (typeof d === 'number' && d >= 0 && d !== given[i])
          throw new Error(`input '${meta.name}' has static dim ${i} = ${d}, ` +
                          `shape set gives ${formatDims(given)}`);
      });
      shapes[meta.name] = given;
      continue;
    }
    if (meta.shape.some((d) => typeof d !== 'number' || d < 0))
      throw new Error(`input '${meta.name}' has dynamic shape ` +
                      `[${meta.shape.join(',')}]; give it with --shapes`);
    shapes[meta.name] = meta.shape.slice();
  }
  for (const name of Object.keys(shapeSet))
    if (!session.inputNames.includes(name))
      throw new Error(`shape set names '${name}', which is not an input of the ` +
                      `model (inputs: ${session.inputNames.join(', ')})`);
  return shapes;
}

function makeFeeds(ort, session, shapes, opts, setIndex, variant) {
  const feeds = {};
  for (const meta of session.inputMetadata) {
    const key = `${opts.seed}/${setIndex}/${variant}/${meta.name}`;
    const rng = makeRng(hashString(key));
    feeds[meta.name] = makeInput(ort, meta, shapes[meta.name], rng,
                                 opts.intRanges[meta.name]);
  }
  return feeds;
}

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

function formatDims(dims) {
  return '[' + dims.join(',') + ']';
}

function formatNum(x) {
  if (x === 0)
    return '0';
  if (!Number.isFinite(x))
    return String(x);
  return x.toExponential(2);
}

function isFloatType(type) {
  return type === 'float32' || type === 'float64';
}

/// Elementwise |a - b| <= atol + rtol * |b|. Reports the max absolute
/// difference, and the max relative one over elements with |b| >= atol (near
/// zero the absolute tolerance is what decides).
function compareTensors(a, b, rtol, atol) {
  const res = {ok: true, maxAbs: 0, maxRel: 0, bad: 0, firstBad: -1, why: ''};
  if (a.type !== b.type) {
    res.ok = false;
    res.why = `type ${a.type} vs ${b.type}`;
    return res;
  }
  if (a.dims.length !== b.dims.length || a.dims.some((d, i) => d !== b.dims[i])) {
    res.ok = false;
    res.why = `shape ${formatDims(a.dims)} vs ${formatDims(b.dims)}`;
    return res;
  }
  const x = a.data;
  const y = b.data;
  const float = isFloatType(a.type);
  for (let i = 0; i < x.length; ++i) {
    if (!float) {
      if (x[i] !== y[i]) {
        const diff = Math.abs(Number(x[i]) - Number(y[i]));
        res.maxAbs = Math.max(res.maxAbs, diff);
        if (res.bad++ === 0)
          res.firstBad = i;
      }
      continue;
    }
    const xi = x[i];
    const yi = y[i];
    if (Number.isNaN(xi) || Number.isNaN(yi)) {
      if (!(Number.isNaN(xi) && Number.isNaN(yi)) && res.bad++ === 0)
        res.firstBad = i;
      continue;
    }
    if (xi === yi)
      continue; // also equal infinities
    const diff = Math.abs(xi - yi);
    const mag = Math.abs(yi);
    res.maxAbs = Math.max(res.maxAbs, diff);
    if (mag >= atol)
      res.maxRel = Math.max(res.maxRel, diff / mag);
    if (!(diff <= atol + rtol * mag) && res.bad++ === 0)
      res.firstBad = i;
  }
  if (res.bad > 0) {
    res.ok = false;
    const i = res.firstBad;
    res.why = `${res.bad}/${x.length} elements out of tolerance, first at ` +
              `flat index ${i}: ${x[i]} vs ${y[i]}`;
  }
  return res;
}

/// Relative change of one output between two inputs: max |a1 - a2| over max |a1|.
function relativeChange(t1, t2) {
  if (!isFloatType(t1.type)) {
    const same = t1.dims.join() === t2.dims.join() &&
                 t1.data.every((v, i) => v === t2.data[i]);
    return same ? 0 : Infinity;
  }
  if (t1.dims.join() !== t2.dims.join())
    return Infinity;
  let maxDiff = 0;
  let maxMag = 0;
  for (let i = 0; i < t1.data.length; ++i) {
    maxDiff = Math.max(maxDiff, Math.abs(t1.data[i] - t2.data[i]));
    maxMag = Math.max(maxMag, Math.abs(t1.data[i]));
  }
  if (maxDiff === 0)
    return 0;
  return maxMag === 0 ? Infinity : maxDiff / maxMag;
}

/// Checks the declared graph input and output shapes against a run: a static
/// dim must equal the runtime's, and every use of a dim name must take one
/// value (ONNX: equal dim_params denote equal dims). ONNX Runtime only warns
/// about either, so a pass that records a wrong dim would go unnoticed.
function checkDeclaredShapes(session, feeds, outputs, modelName) {
  const problems = [];
  const bound = new Map(); // dim name -> [value, where]
  const check = (meta, dims, kind) => {
    if (!meta.isTensor || !meta.shape.length)
      return;
    if (meta.shape.length !== dims.length) {
      problems.push(`${modelName}: ${kind} '${meta.name}' is declared with rank ` +
                    `${meta.shape.length}, runtime gives ${formatDims(dims)}`);
      return;
    }
    meta.shape.forEach((d, i) => {
      const where = `${kind} '${meta.name}' dim ${i}`;
      if (typeof d === 'number') {
        if (d >= 0 && d !== dims[i])
          problems.push(`${modelName}: ${where} is declared ${d}, runtime gives ${dims[i]}`);
        return;
      }
      if (!d)
        return; // unknown dim
      const prev = bound.get(d);
      if (!prev)
        bound.set(d, [dims[i], where]);
      else if (prev[0] !== dims[i])
        problems.push(`${modelName}: dim '${d}' is ${prev[0]} at ${prev[1]} but ` +
                      `${dims[i]} at ${where}`);
    });
  };
  for (const meta of session.inputMetadata)
    if (feeds[meta.name])
      check(meta, feeds[meta.name].dims, 'input');
  for (const meta of session.outputMetadata)
    check(meta, outputs[meta.name].dims, 'output');
  return problems;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

async function createSession(ort, file, opts) {
  try {
    return await ort.InferenceSession.create(file, {
      graphOptimizationLevel: opts.ortOpt,
      intraOpNumThreads: opts.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 3,
    });
  } catch (e) {
    throw new Error(`cannot load '${file}': ${e.message}`);
  }
}

async function runSession(session, feeds, label) {
  try {
    return await session.run(feeds);
  } catch (e) {
    throw new Error(`${label} failed to run: ${e.message}`);
  }
}

function describeShapeSet(shapes) {
  return Object.keys(shapes).map((n) => `${n}=${shapes[n].join('x')}`).join(',');
}

/// Checks that A and B agree on the names of inputs and outputs.
function checkInterfaces(a, b, fileA, fileB) {
  const problems = [];
  for (const name of b.inputNames)
    if (!a.inputNames.includes(name))
      problems.push(`input '${name}' of ${fileB} is not an input of ${fileA}`);
  for (const name of a.outputNames)
    if (!b.outputNames.includes(name))
      problems.push(`output '${name}' of ${fileA} is missing from ${fileB}`);
  for (const name of b.outputNames)
    if (!a.outputNames.includes(name))
      problems.push(`output '${name}' of ${fileB} is not an output of ${fileA}`);
  return problems;
}

function sensitivityLine(outA, outA2, names, threshold) {
  const parts = [];
  const unchanged = [];
  for (const name of names) {
    const change = relativeChange(outA[name], outA2[name]);
    if (!(change > threshold))
      unchanged.push(name);
    parts.push(`${name} ${formatNum(change)}`);
  }
  let text = `sensitivity: ${parts.join(', ')}`;
  if (unchanged.length)
    text += ` (${unchanged.join(', ')} changed by at most ${formatNum(threshold)} ` +
            'with a different input: the model ignores its input)';
  return {ok: unchanged.length === 0, text};
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (e instanceof UsageError)
      fail(EXIT_ERROR, `${e.message}\n${USAGE}`);
    throw e;
  }
  const ort = loadRuntime();
  const [fileA, fileB] = opts.models;
  const nameA = path.basename(fileA);
  const nameB = fileB ? path.basename(fileB) : '';

  const sessA = await createSession(ort, fileA, opts);
  const sessB = fileB ? await createSession(ort, fileB, opts) : null;
  if (sessB) {
    const problems = checkInterfaces(sessA, sessB, nameA, nameB);
    if (problems.length) {
      for (const p of problems)
        process.stdout.write(`MISMATCH: ${p}\n`);
      return EXIT_MISMATCH;
    }
  }

  const shapeSets = opts.shapeSets.length ? opts.shapeSets : [{}];
  const total = shapeSets.length;
  let mismatches = 0;
  for (let s = 0; s < total; ++s) {
    const shapes = resolveShapes(sessA, shapeSets[s]);
    const label = `[${s + 1}/${total}] ${describeShapeSet(shapes)}`;
    const feeds = makeFeeds(ort, sessA, shapes, opts, s, 0);
    const outA = await runSession(sessA, feeds, `${nameA} at ${label}`);
    const parts = [];
    const shapeProblems = [];
    let ok = true;
    if (opts.checkShapes)
      shapeProblems.push(...checkDeclaredShapes(sessA, feeds, outA, nameA));

    if (!sessB) {
      for (const name of sessA.outputNames)
        parts.push(`${name}${formatDims(outA[name].dims)}`);
    } else {
      const feedsB = {};
      for (const name of sessB.inputNames)
        feedsB[name] = feeds[name];
      const outB = await runSession(sessB, feedsB, `${nameB} at ${label}`);
      if (opts.checkShapes)
        shapeProblems.push(...checkDeclaredShapes(sessB, feedsB, outB, nameB));
      for (const name of sessA.outputNames) {
        const r = compareTensors(outA[name], outB[name], opts.rtol, opts.atol);
        let text = `${name}${formatDims(outA[name].dims)} abs=${formatNum(r.maxAbs)} ` +
                   `rel=${formatNum(r.maxRel)}`;
        if (!r.ok) {
          ok = false;
          text += ` (${r.why})`;
        }
        parts.push(text);
      }
    }

    if (opts.checkSensitivity) {
      const feeds2 = makeFeeds(ort, sessA, shapes, opts, s, 1);
      const outA2 = await runSession(sessA, feeds2, `${nameA} at ${label} (second input)`);
      const sens = sensitivityLine(outA, outA2, sessA.outputNames, opts.sensitivity);
      parts.push(sens.text);
      ok = ok && sens.ok;
    }

    if (shapeProblems.length) {
      ok = false;
      parts.push(`declared shapes: ${shapeProblems.join('; ')}`);
    }

    const checked = sessB || opts.checkSensitivity || opts.checkShapes;
    const verdict = checked ? (ok ? ' OK' : ' MISMATCH') : '';
    process.stdout.write(`${label}: ${parts.join('; ')}${verdict}\n`);
    if (!ok)
      ++mismatches;
  }

  if (mismatches) {
    process.stdout.write(`${mismatches} of ${total} shape sets failed\n`);
    return EXIT_MISMATCH;
  }
  return 0;
}

main().then((code) => process.exit(code), (e) => fail(EXIT_ERROR, e.message));
