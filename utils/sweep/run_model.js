#!/usr/bin/env node
//===- run_model.js - Load and run an ONNX model on ONNX Runtime ----------===//
//
// Loads a model with onnxruntime-node and runs it on seeded random inputs at
// concrete input shapes, optionally comparing every output with a reference
// model run on the same inputs:
//
//   node utils/sweep/run_model.js model.onnx [--dim N=2] [--dim H=64]
//       [--shape input=1x3x64x64] [--default-dim 1] [--ref orig.onnx]
//       [--data dir/test_data_set_0] [--seed 1] [--rtol X] [--atol X]
//   node utils/sweep/run_model.js --info model.onnx
//
// Input shapes: static dims as declared, symbols from --dim (unnamed or
// unlisted ones take --default-dim, default 1); --shape sets a whole input.
// Float inputs are N(0,1), integer ones uniform in [0,10) (--int-range
// name=LO:HI), bool fair coins. With --data, an input_K.pb of an ONNX test
// data set whose dims match the chosen shape is used instead of random data;
// at another shape an integer input repeats the test data's values.
//
// Exit status: 0 the model loads and runs (and matches --ref), 1 it fails to
// load or run (the ORT message is printed), or its outputs differ from --ref,
// 2 usage error.
//
// The sweep (sweep.js) uses this file as a module and as an IPC worker
// (--serve), so that ONNX Runtime is loaded once per worker, not per run.
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');

let ortCache = null;
function ort() {
  if (!ortCache)
    ortCache = require(path.join(__dirname, '..', '..', 'node_modules', 'onnxruntime-node'));
  return ortCache;
}

//===----------------------------------------------------------------------===//
// Minimal protobuf reader (TensorProto of test data, ModelProto metadata)
//===----------------------------------------------------------------------===//

class Reader {
  constructor(buf, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }
  done() { return this.pos >= this.end; }
  varint() {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end)
        throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80))
        break;
      shift += 7n;
      if (shift > 70n)
        throw new Error('bad varint');
    }
    return result;
  }
  // Returns [field, wireType, value]; value is a BigInt (varint), a
  // [start, end) pair (length-delimited) or a [start, end) pair (fixed).
  next() {
    const key = Number(this.varint());
    const field = key >>> 3;
    const wire = key & 7;
    switch (wire) {
    case 0: return [field, wire, this.varint()];
    case 1: { const s = this.pos; this.pos += 8; this.check(); return [field, wire, [s, this.pos]]; }
    case 2: {
      const len = Number(this.varint());
      const s = this.pos;
      this.pos += len;
      this.check();
      return [field, wire, [s, this.pos]];
    }
    case 5: { const s = this.pos; this.pos += 4; this.check(); return [field, wire, [s, this.pos]]; }
    default: throw new Error(`unsupported wire type ${wire}`);
    }
  }
  check() {
    if (this.pos > this.end)
      throw new Error('truncated field');
  }
}

const ONNX_TYPES = {
  1: 'float32', 2: 'uint8', 3: 'int8', 4: 'uint16', 5: 'int16', 6: 'int32',
  7: 'int64', 8: 'string', 9: 'bool', 10: 'float16', 11: 'float64',
  12: 'uint32', 13: 'uint64',
};
const TYPED = {
  float32: Float32Array, uint8: Uint8Array, int8: Int8Array, uint16: Uint16Array,
  int16: Int16Array, int32: Int32Array, int64: BigInt64Array, bool: Uint8Array,
  float16: Uint16Array, float64: Float64Array, uint32: Uint32Array,
  uint64: BigUint64Array,
};

/// Decodes a TensorProto file into {name, type, dims, data}, or null when the
/// file is not a plain tensor (sequences, optionals, external data).
function readTensorPb(file) {
  const buf = fs.readFileSync(file);
  const r = new Reader(buf);
  const dims = [];
  let dataType = 0;
  let name = '';
  let raw = null;
  const floats = [], doubles = [], ints = [], strings = [];
  try {
    while (!r.done()) {
      const [f, w, v] = r.next();
      if (f === 1) {
        if (w === 0) dims.push(Number(BigInt.asIntN(64, v)));
        else if (w === 2) { const s = new Reader(buf, v[0], v[1]); while (!s.done()) dims.push(Number(BigInt.asIntN(64, s.varint()))); }
        else return null;
      } else if (f === 2 && w === 0) {
        dataType = Number(v);
      } else if (f === 4) {
        if (w === 5) floats.push(buf.readFloatLE(v[0]));
        else if (w === 2) for (let p = v[0]; p < v[1]; p += 4) floats.push(buf.readFloatLE(p));
      } else if (f === 10) {
        if (w === 1) doubles.push(buf.readDoubleLE(v[0]));
        else if (w === 2) for (let p = v[0]; p < v[1]; p += 8) doubles.push(buf.readDoubleLE(p));
      } else if (f === 5 || f === 7 || f === 11) {
        if (w === 0) ints.push(v);
        else if (w === 2) { const s = new Reader(buf, v[0], v[1]); while (!s.done()) ints.push(s.varint()); }
      } else if (f === 6 && w === 2) {
        strings.push(buf.toString('utf8', v[0], v[1]));
      } else if (f === 8 && w === 2) {
        name = buf.toString('utf8', v[0], v[1]);
      } else if (f === 9 && w === 2) {
        raw = buf.subarray(v[0], v[1]);
      } else if (f === 13 || f === 14) {
        return null; // external data
      }
    }
  } catch (e) {
    return null;
  }
  const type = ONNX_TYPES[dataType];
  if (!type)
    return null;
  const n = dims.reduce((a, b) => a * b, 1);
  let data;
  if (type === 'string') {
    if (strings.length !== n) return null;
    data = strings;
  } else if (raw) {
    const Ctor = TYPED[type];
    if (raw.length !== n * Ctor.BYTES_PER_ELEMENT) return null;
    const copy = new Uint8Array(raw.length);
    copy.set(raw);
    data = new Ctor(copy.buffer);
  } else {
    const Ctor = TYPED[type];
    const src = type === 'float32' ? floats : type === 'float64' ? doubles : ints;
    if (src.length !== n) return null;
    data = new Ctor(n);
    for (let i = 0; i < n; ++i) {
      if (type === 'int64') data[i] = BigInt.asIntN(64, src[i]);
      else if (type === 'uint64') data[i] = BigInt.asUintN(64, src[i]);
      else if (type === 'float32' || type === 'float64') data[i] = src[i];
      else data[i] = Number(BigInt.asIntN(32, src[i]));
    }
  }
  return {name, type, dims, data};
}

/// Reads ModelProto.metadata_props (field 14) into a plain object.
function readMetadata(file) {
  const buf = fs.readFileSync(file);
  const r = new Reader(buf);
  const out = {};
  try {
    while (!r.done()) {
      const [f, w, v] = r.next();
      if (f !== 14 || w !== 2)
        continue;
      const s = new Reader(buf, v[0], v[1]);
      let key = '', value = '';
      while (!s.done()) {
        const [g, gw, gv] = s.next();
        if (gw !== 2) continue;
        if (g === 1) key = buf.toString('utf8', gv[0], gv[1]);
        if (g === 2) value = buf.toString('utf8', gv[0], gv[1]);
      }
      out[key] = value;
    }
  } catch (e) {
    // Not a binary model: no metadata.
  }
  return out;
}

/// Parses onnx_opt.dim_ranges ("v1;N=1:16:1;H=256:1024") into {N: [1, 16]};
/// a least value with no range ("v2;rel:H>=7") gives {H: [7, Infinity]}.
function parseDimRanges(meta) {
  const text = meta['onnx_opt.dim_ranges'];
  const ranges = {};
  if (!text)
    return ranges;
  const least = {};
  for (const part of text.split(';').slice(1)) {
    const m = /^(.+)=(\d+):(\d+)(?::(\d+))?$/.exec(part);
    if (m)
      ranges[m[1]] = [Number(m[2]), Number(m[3])];
    const l = /^rel:(.+)>=(\d+)$/.exec(part);
    if (l)
      least[l[1]] = Number(l[2]);
  }
  for (const [s, v] of Object.entries(least))
    ranges[s] = ranges[s] ? [Math.max(ranges[s][0], v), ranges[s][1]] : [v, Infinity];
  return ranges;
}

/// The stored relations `rel:H%8=0` as {H: [8, 0]}: the sizes a symbol
/// may take beside its range.
function parseDimModuli(meta) {
  const text = meta['onnx_opt.dim_ranges'];
  const mods = {};
  for (const part of (text || '').split(';').slice(1)) {
    const m = /^rel:([^%]+)%(\d+)=(\d+)$/.exec(part);
    if (m)
      mods[m[1]] = [Number(m[2]), Number(m[3])];
  }
  return mods;
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

function hashString(text, h = 0x811c9dc5) {
  for (let i = 0; i < text.length; ++i) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function makeRng(seed) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const normal = () => {
    const u1 = 1 - next();
    const u2 = next();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  };
  return {next, normal};
}

function f32ToF16Bits(v) {
  const f = new Float32Array([v]);
  const x = new Uint32Array(f.buffer)[0];
  const sign = (x >>> 16) & 0x8000;
  let exp = ((x >>> 23) & 0xff) - 127 + 15;
  const mant = x & 0x7fffff;
  if (exp <= 0) return sign;
  if (exp >= 31) return sign | 0x7c00;
  return sign | (exp << 10) | (mant >>> 13);
}

function randomTensor(type, dims, rng, intRange) {
  const T = ort().Tensor;
  const n = dims.reduce((a, b) => a * b, 1);
  const [lo, hi] = intRange || [0, 10];
  switch (type) {
  case 'float32':
  case 'float64': {
    const data = new TYPED[type](n);
    for (let i = 0; i < n; ++i) data[i] = rng.normal();
    return new T(type, data, dims);
  }
  case 'float16': {
    const data = new Uint16Array(n);
    for (let i = 0; i < n; ++i) data[i] = f32ToF16Bits(rng.normal());
    return new T(type, data, dims);
  }
  case 'int64':
  case 'uint64': {
    const data = new TYPED[type](n);
    for (let i = 0; i < n; ++i) data[i] = BigInt(lo + Math.floor(rng.next() * (hi - lo)));
    return new T(type, data, dims);
  }
  case 'int8': case 'uint8': case 'int16': case 'uint16': case 'int32': case 'uint32': {
    const data = new TYPED[type](n);
    for (let i = 0; i < n; ++i) data[i] = lo + Math.floor(rng.next() * (hi - lo));
    return new T(type, data, dims);
  }
  case 'bool': {
    const data = new Uint8Array(n);
    for (let i = 0; i < n; ++i) data[i] = rng.next() < 0.5 ? 1 : 0;
    return new T('bool', data, dims);
  }
  case 'string': {
    const data = [];
    for (let i = 0; i < n; ++i) data.push((rng.normal() * 10).toFixed(3)); // parses as a number
    return new T('string', data, dims);
  }
  default:
    throw new Error(`unsupported input type ${type}`);
  }
}

/// Test data tensors of dir (input_0.pb, ...), by graph input name and order.
function loadTestData(dir) {
  const out = [];
  if (!dir || !fs.existsSync(dir))
    return out;
  for (let k = 0; ; ++k) {
    const file = path.join(dir, `input_${k}.pb`);
    if (!fs.existsSync(file))
      break;
    out.push(readTensorPb(file));
  }
  return out;
}

/// Concrete dims of one declared input: static dims as declared, symbols from
/// `dims`, the rest `defaultDim`.
function resolveDims(declared, dims, defaultDim) {
  return declared.map((d) => {
    if (typeof d === 'number' && d >= 0)
      return d;
    if (typeof d === 'string' && d && d in dims)
      return dims[d];
    return defaultDim;
  });
}

function isInteger(type) {
  return /^u?int(8|16|32|64)$/.test(type);
}

function sameDims(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

/// Builds the feeds of `session` at `shapes` ({name: dims}).
function makeFeeds(session, shapes, opts) {
  const data = opts.testData || [];
  const feeds = {};
  session.inputMetadata.forEach((meta, k) => {
    if (!meta.isTensor)
      throw new Error(`input '${meta.name}' is not a tensor`);
    const dims = shapes[meta.name];
    if (!dims)
      throw new Error(`no shape for input '${meta.name}'`);
    const ex = data.find((t) => t && t.name === meta.name) ||
               (data[k] && !data[k].name ? data[k] : null);
    if (ex && ex.type === meta.type && sameDims(ex.dims, dims)) {
      feeds[meta.name] = new (ort().Tensor)(ex.type, ex.data, ex.dims);
      return;
    }
    // At another shape, integer inputs (indices into a table, token ids)
    // repeat the test data's values: those are valid for the model,
    // random ones may not be (an Embedding of 4 rows given 8).
    if (ex && ex.type === meta.type && isInteger(ex.type) && ex.data.length &&
        !(opts.intRanges || {})[meta.name]) {
      const n = dims.reduce((a, b) => a * b, 1);
      const out = new ex.data.constructor(n);
      for (let i = 0; i < n; ++i) out[i] = ex.data[i % ex.data.length];
      feeds[meta.name] = new (ort().Tensor)(ex.type, out, dims);
      return;
    }
    const rng = makeRng(hashString(`${opts.seed || 1}/${meta.name}/${dims.join('x')}`));
    feeds[meta.name] = randomTensor(meta.type, dims, rng, (opts.intRanges || {})[meta.name]);
  });
  return feeds;
}

//===----------------------------------------------------------------------===//
// Running and comparing
//===----------------------------------------------------------------------===//

const sessions = new Map(); // file -> session, for the worker's current job

async function open(file, opts) {
  return ort().InferenceSession.create(file, {
    graphOptimizationLevel: opts.ortOpt || 'disabled',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  });
}

function firstLine(e) {
  return String(e && e.message ? e.message : e).split('\n').map((l) => l.trim()).filter(Boolean)
      .join(' | ').slice(0, 400);
}

function isFloat(type) {
  return type === 'float32' || type === 'float64' || type === 'float16';
}

function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * Math.pow(2, -24);
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * Math.pow(2, e - 15);
}

function compareTensors(a, b, rtol, atol) {
  if (!a || !b) return 'missing output';
  if (a.type !== b.type) return `type ${a.type} vs ${b.type}`;
  if (!sameDims(a.dims, b.dims)) return `shape [${a.dims}] vs [${b.dims}]`;
  const x = a.data, y = b.data;
  let bad = 0, first = -1, maxAbs = 0;
  for (let i = 0; i < x.length; ++i) {
    let xi = x[i], yi = y[i];
    if (a.type === 'float16') { xi = f16ToF32(xi); yi = f16ToF32(yi); }
    if (!isFloat(a.type)) {
      if (xi !== yi && bad++ === 0) first = i;
      continue;
    }
    if (Number.isNaN(xi) && Number.isNaN(yi)) continue;
    if (xi === yi) continue;
    const diff = Math.abs(xi - yi);
    if (!(diff <= atol + rtol * Math.abs(yi))) {
      if (bad++ === 0) first = i;
      if (diff > maxAbs) maxAbs = diff;
    }
  }
  if (!bad) return null;
  return `${bad}/${x.length} elements differ, first at ${first}: ${x[first]} vs ${y[first]}` +
         (isFloat(a.type) ? ` (max abs diff ${maxAbs.toExponential(2)})` : '');
}

function compareOutputs(out, ref, names, rtol, atol) {
  const problems = [];
  for (const name of names) {
    if (!(name in ref)) continue;
    const why = compareTensors(out[name], ref[name], rtol, atol);
    if (why) problems.push(`${name}: ${why}`);
  }
  return problems;
}

/// Runs one job: {model, ref?, sets: [{shapes: {name: dims}} | {dims, defaultDim}],
/// testDataDir?, seed?, rtol?, atol?, intRanges?}. Returns {load, sets: [...]}
/// where load is null or the load error, and each set gets
/// {shapes, run: 'ok' | error, compare: null | 'ok' | problems | 'ref-failed: ...'}.
async function runJob(job) {
  const opts = {
    seed: job.seed || 1,
    intRanges: job.intRanges || {},
    testData: loadTestData(job.testDataDir),
  };
  const rtol = job.rtol !== undefined ? job.rtol : 1e-3;
  const atol = job.atol !== undefined ? job.atol : 1e-4;
  const result = {load: null, sets: []};
  let session;
  try {
    session = await open(job.model, job);
  } catch (e) {
    result.load = firstLine(e);
    return result;
  }
  let refSession = null;
  let refLoad = null;
  if (job.ref) {
    try {
      refSession = await open(job.ref, job);
    } catch (e) {
      refLoad = firstLine(e);
    }
  }
  for (const set of job.sets || [{}]) {
    const entry = {shapes: null, run: 'ok', compare: null};
    result.sets.push(entry);
    let shapes = {};
    try {
      for (const meta of session.inputMetadata) {
        if (set.shapes && set.shapes[meta.name])
          shapes[meta.name] = set.shapes[meta.name];
        else
          shapes[meta.name] = resolveDims(meta.isTensor ? meta.shape : [], set.dims || {},
                                          set.defaultDim || 1);
      }
      entry.shapes = shapes;
      const feeds = makeFeeds(session, shapes, opts);
      let out;
      try {
        out = await session.run(feeds);
      } catch (e) {
        entry.run = firstLine(e);
        continue;
      }
      if (!job.ref)
        continue;
      if (!refSession) {
        entry.compare = `ref-failed: ${refLoad}`;
        continue;
      }
      const refFeeds = {};
      for (const name of refSession.inputNames) {
        if (!(name in feeds)) { entry.compare = `ref-failed: no feed for ref input '${name}'`; break; }
        refFeeds[name] = feeds[name];
      }
      if (entry.compare)
        continue;
      let ref;
      try {
        ref = await refSession.run(refFeeds);
      } catch (e) {
        entry.compare = `ref-failed: ${firstLine(e)}`;
        continue;
      }
      const missing = refSession.outputNames.filter((n) => !session.outputNames.includes(n));
      if (missing.length) {
        entry.compare = [`outputs missing from the model: ${missing.join(', ')}`];
        continue;
      }
      const problems = compareOutputs(out, ref, refSession.outputNames, rtol, atol);
      if (problems.length) {
        // A reference that differs from itself is nondeterministic (random ops).
        const again = await refSession.run(refFeeds);
        if (compareOutputs(again, ref, refSession.outputNames, 0, 0).length) {
          entry.compare = 'nondeterministic';
          continue;
        }
        entry.compare = problems;
      } else {
        entry.compare = 'ok';
      }
    } catch (e) {
      entry.run = firstLine(e);
    }
  }
  try { await session.release(); } catch (e) { /* ignore */ }
  if (refSession) try { await refSession.release(); } catch (e) { /* ignore */ }
  return result;
}

/// Declared inputs, outputs and metadata of a model (null shape: not a tensor).
async function modelInfo(file) {
  const info = {load: null, inputs: [], outputs: [], metadata: readMetadata(file)};
  info.dimRanges = parseDimRanges(info.metadata);
  info.dimModuli = parseDimModuli(info.metadata);
  let s;
  try {
    s = await open(file, {});
  } catch (e) {
    info.load = firstLine(e);
    return info;
  }
  const dims = (m) => (m.isTensor ? m.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : (typeof d === 'string' && d ? d : null))) : null);
  info.inputs = s.inputMetadata.map((m) => ({name: m.name, type: m.isTensor ? m.type : 'non-tensor', dims: dims(m)}));
  info.outputs = s.outputMetadata.map((m) => ({name: m.name, type: m.isTensor ? m.type : 'non-tensor', dims: dims(m)}));
  try { await s.release(); } catch (e) { /* ignore */ }
  return info;
}

//===----------------------------------------------------------------------===//
// Command line and worker
//===----------------------------------------------------------------------===//

const USAGE = `usage: run_model.js model.onnx [--dim SYM=V]... [--shape NAME=1x3x64x64]...
                   [--default-dim V] [--ref ref.onnx] [--data DIR] [--seed N]
                   [--int-range NAME=LO:HI] [--rtol X] [--atol X]
       run_model.js --info model.onnx`;

function parseCli(argv) {
  const job = {model: null, sets: [{dims: {}, shapes: {}, defaultDim: 1}], intRanges: {}};
  let info = false;
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} expects a value`);
      return argv[++i];
    };
    if (a === '--dim') {
      const m = /^(.+)=(\d+)$/.exec(val());
      if (!m) throw new Error('--dim expects SYM=VALUE');
      job.sets[0].dims[m[1]] = Number(m[2]);
    } else if (a === '--shape') {
      const m = /^(.+)=((?:\d+x)*\d+)?$/.exec(val());
      if (!m) throw new Error('--shape expects NAME=1x3x64x64');
      job.sets[0].shapes[m[1]] = m[2] ? m[2].split('x').map(Number) : [];
    } else if (a === '--default-dim') {
      job.sets[0].defaultDim = Number(val());
    } else if (a === '--ref') {
      job.ref = val();
    } else if (a === '--data') {
      job.testDataDir = val();
    } else if (a === '--seed') {
      job.seed = Number(val());
    } else if (a === '--rtol') {
      job.rtol = Number(val());
    } else if (a === '--atol') {
      job.atol = Number(val());
    } else if (a === '--int-range') {
      const m = /^(.+)=(-?\d+):(-?\d+)$/.exec(val());
      if (!m) throw new Error('--int-range expects NAME=LO:HI');
      job.intRanges[m[1]] = [Number(m[2]), Number(m[3])];
    } else if (a === '--info') {
      info = true;
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (a.startsWith('-')) {
      throw new Error(`unknown option '${a}'`);
    } else if (!job.model) {
      job.model = a;
    } else {
      throw new Error(`unexpected argument '${a}'`);
    }
  }
  if (!job.model) throw new Error('expected a model file');
  return {job, info};
}

async function cli() {
  let parsed;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`run_model: error: ${e.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const {job, info} = parsed;
  if (info) {
    process.stdout.write(JSON.stringify(await modelInfo(job.model), null, 1) + '\n');
    return 0;
  }
  const r = await runJob(job);
  if (r.load) {
    process.stdout.write(`LOAD FAILED: ${r.load}\n`);
    return 1;
  }
  let ok = true;
  for (const s of r.sets) {
    const shapes = s.shapes ? Object.keys(s.shapes).map((n) => `${n}=${s.shapes[n].join('x')}`).join(',') : '?';
    let line = `${shapes}: ${s.run === 'ok' ? 'ran' : 'RUN FAILED: ' + s.run}`;
    if (s.run !== 'ok') ok = false;
    if (s.compare !== null) {
      if (Array.isArray(s.compare)) { ok = false; line += `; MISMATCH vs ref: ${s.compare.join('; ')}`; }
      else line += `; vs ref: ${s.compare}`;
    }
    process.stdout.write(line + '\n');
  }
  return ok ? 0 : 1;
}

function serve() {
  // One job at a time, from the parent over IPC.
  process.on('message', async (msg) => {
    let reply;
    try {
      reply = msg.kind === 'info' ? await modelInfo(msg.model) : await runJob(msg.job);
    } catch (e) {
      reply = {error: firstLine(e)};
    }
    process.send({id: msg.id, reply});
  });
}

module.exports = {runJob, modelInfo, readTensorPb, readMetadata, parseDimRanges, loadTestData};

if (require.main === module) {
  if (process.argv[2] === '--serve')
    serve();
  else
    cli().then((code) => process.exit(code), (e) => {
      process.stderr.write(`run_model: error: ${firstLine(e)}\n`);
      process.exit(1);
    });
}
