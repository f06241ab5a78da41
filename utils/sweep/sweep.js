#!/usr/bin/env node
//===- sweep.js - Check onnx-opt's shape-pass promise on many models ------===//
//
// For each model: run the original on ONNX Runtime (baseline), then every
// pipeline of PIPELINES; for each run of onnx-opt that exits 0, load and run
// the output at the shapes the original runs at (and, for make-dynamic, at a
// new size) and compare its outputs with the original's on the same inputs.
// Normally started by sweep.sh; see README.md.
//
//   node utils/sweep/sweep.js --bin /tmp/sweep/bin/onnx-opt --out /tmp/sweep
//        [--list FILE] [--every K] [--filter REGEX] [--timeout 60]
//        [--each-input] [model...]
//
// --each-input also makes every other static input dynamic alone
// (make-dynamic#k, strict): an input that other inputs must match (a
// second operand of one shape, indices into a fixed table) must then be
// refused or still run at the new size.
//
// --refreeze turns each dynamic model into a static export of itself and
// back (refreeze#k: freeze-dims at a shape it runs at, --simplify, which
// bakes the sizes into literals as a static export does, then make-dynamic
// with the model's own symbols): the result must be refused or equal the
// original at every shape the original runs at, the other shapes included
// (the original is the static model's dynamic twin).
//
// Writes OUT/results.jsonl (one record per model and pipeline) and
// OUT/summary.md (via summarize.js); keeps the outputs that violate the
// promise in OUT/keep/.
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const {spawnSync, fork} = require('child_process');
const {readMetadata, parseDimRanges, loadTestData} = require('./run_model.js');

const REPO = path.resolve(__dirname, '..', '..');
const RUN_MODEL = path.join(__dirname, 'run_model.js');

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

function parseArgs(argv) {
  const o = {bin: '/tmp/sweep/bin/onnx-opt', out: '/tmp/sweep', list: null, every: 1,
             filter: null, timeout: 60, models: [], append: false};
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === '--bin') o.bin = v();
    else if (a === '--out') o.out = v();
    else if (a === '--list') o.list = v();
    else if (a === '--every') o.every = Number(v());
    else if (a === '--filter') o.filter = new RegExp(v());
    else if (a === '--only') o.only = new RegExp(v());
    else if (a === '--timeout') o.timeout = Number(v());
    else if (a === '--append') o.append = true;
    else if (a === '--each-input') o.eachInput = true;
    else if (a === '--refreeze') o.refreeze = true;
    else if (a === '--refreeze-partial') { o.refreeze = true; o.refreezePartial = true; }
    else if (a === '--refreeze-at') { o.refreeze = true; o.refreezeAt = v().split(',').map(Number); }
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else o.models.push(a);
  }
  if (o.list)
    o.models.push(...fs.readFileSync(o.list, 'utf8').split('\n').map((s) => s.trim()).filter(Boolean));
  if (o.every > 1)
    o.models = o.models.filter((_, i) => i % o.every === 0);
  if (o.filter)
    o.models = o.models.filter((m) => o.filter.test(m));
  return o;
}

//===----------------------------------------------------------------------===//
// ONNX Runtime worker (a child process: a crash or hang costs one job)
//===----------------------------------------------------------------------===//

class Worker {
  constructor(timeoutMs) {
    this.timeoutMs = timeoutMs;
    this.child = null;
    this.seq = 0;
  }
  start() {
    this.child = fork(RUN_MODEL, ['--serve'], {stdio: ['ignore', 'ignore', 'ignore', 'ipc']});
  }
  stop() {
    if (this.child) {
      this.child.removeAllListeners();
      this.child.kill('SIGKILL');
      this.child = null;
    }
  }
  call(msg) {
    if (!this.child)
      this.start();
    const child = this.child;
    const id = ++this.seq;
    return new Promise((resolve) => {
      const done = (value) => {
        clearTimeout(timer);
        child.removeListener('message', onMsg);
        child.removeListener('exit', onExit);
        resolve(value);
      };
      const onMsg = (m) => { if (m.id === id) done(m.reply); };
      const onExit = (code, signal) => {
        this.child = null;
        done({crashed: `ONNX Runtime worker died (${signal || 'exit ' + code})`});
      };
      const timer = setTimeout(() => {
        this.stop();
        done({crashed: `ONNX Runtime timed out after ${this.timeoutMs / 1000} s`});
      }, this.timeoutMs);
      child.on('message', onMsg);
      child.on('exit', onExit);
      child.send({...msg, id});
    });
  }
  info(model) { return this.call({kind: 'info', model}); }
  run(job) { return this.call({kind: 'run', job}); }
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

const isStaticDim = (d) => typeof d === 'number';
const fmt = (dims) => dims.join('x');
const shapesKey = (s) => Object.keys(s).sort().map((n) => `${n}=${fmt(s[n])}`).join(',');

function isDynamic(info) {
  return info.inputs.some((i) => i.dims && i.dims.some((d) => !isStaticDim(d)));
}

/// Concrete shapes of every input: static dims as declared, symbol s -> f(s).
function uniformShapes(info, valueOf) {
  const s = {};
  for (const i of info.inputs)
    s[i.name] = (i.dims || []).map((d) => (isStaticDim(d) ? d : valueOf(d)));
  return s;
}

/// Candidate shape sets of the original, best first.
function candidateSets(info, ctx) {
  const sets = [];
  const ranges = info.dimRanges || {};
  if (Object.keys(ranges).length) {
    const lo = (d) => (d && ranges[d] ? ranges[d][0] : 1);
    // A least value alone has no upper end: its least value stands in.
    const hi = (d) => (d && ranges[d] ? (Number.isFinite(ranges[d][1]) ? ranges[d][1] : ranges[d][0]) : 1);
    sets.push(uniformShapes(info, lo), uniformShapes(info, hi));
  }
  if (ctx.manifest && ctx.manifest.shape_sets) {
    for (const ss of ctx.manifest.shape_sets) {
      const s = uniformShapes(info, () => 1);
      for (const [n, t] of Object.entries(ss))
        s[n] = t === '' ? [] : t.split('x').map(Number);
      sets.push(s);
    }
  }
  if (ctx.testData.length) {
    // The test data's shapes (inputs without data: symbols = 1).
    const s = uniformShapes(info, () => 1);
    info.inputs.forEach((inp, k) => {
      const t = ctx.testData.find((x) => x && x.name === inp.name) || ctx.testData[k];
      if (t && inp.dims && t.dims.length === inp.dims.length &&
          inp.dims.every((d, j) => !isStaticDim(d) || d === t.dims[j]))
        s[inp.name] = t.dims;
    });
    sets.push(s);
  }
  if (!isDynamic(info)) {
    if (!sets.length) sets.push(uniformShapes(info, () => 1));
  } else {
    for (const v of [1, 3, 2, 4, 8, 16, 32, 64])
      sets.push(uniformShapes(info, () => v));
  }
  const seen = new Set();
  return sets.filter((s) => { const k = shapesKey(s); if (seen.has(k)) return false; seen.add(k); return true; });
}

//===----------------------------------------------------------------------===//
// onnx-opt
//===----------------------------------------------------------------------===//

function shq(s) {
  return /^[\w@%+=:,./\[\]-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function errorLine(stderr, exit) {
  const lines = stderr.split('\n').filter((l) => l.trim());
  let e = lines.find((l) => / error: /.test(l)) || lines.find((l) => /error|fatal|assert|abort|terminate/i.test(l));
  if (!e) e = exit === 0 ? (lines.find((l) => / warning: /.test(l)) || '') : (lines[lines.length - 1] || '');
  return e.slice(0, 500);
}

function runOpt(o, model, flags, out) {
  try { fs.unlinkSync(out); } catch (e) { /* none */ }
  const args = [model, ...flags, '-o', out];
  const t0 = Date.now();
  const r = spawnSync(o.bin, args, {timeout: o.timeout * 1000, killSignal: 'SIGKILL',
                                    encoding: 'utf8', maxBuffer: 64 << 20});
  const res = {cmd: [o.bin, ...args].map(shq).join(' '), exit: r.status, signal: r.signal,
               ms: Date.now() - t0, err: errorLine((r.stderr || '') + (r.error ? String(r.error) : ''), r.status)};
  if (r.signal === 'SIGKILL' && Date.now() - t0 >= o.timeout * 1000 - 100)
    res.timeout = true;
  res.wrote = fs.existsSync(out);
  return res;
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

const SIMPLE = [
  ['infer-shapes', ['--infer-shapes']],
  ['infer-shapes+unify-dims', ['--infer-shapes', '--unify-dims']],
  ['fold-shapes+cse+dce', ['--fold-shapes', '--cse', '--dce']],
  ['simplify', ['--simplify']],
  ['constant-fold', ['--constant-fold']],
  ['eliminate-identity+nop-transpose+dce', ['--eliminate-identity', '--eliminate-nop-transpose', '--dce']],
  ['topo-sort', ['--topo-sort']],
  ['check-static', ['--check-static']],
];

function freezeSpec(info, shapes) {
  return info.inputs.filter((i) => i.dims && i.dims.length)
      .map((i) => `${i.name}:${fmt(shapes[i.name])}`).join(',');
}

/// make-dynamic target: the first input of rank >= 2 (or \p inp), every
/// dim but dim 1 a fresh symbol (a rank-1 input: its only dim).
function makeDynamicTarget(info, inp) {
  if (isDynamic(info))
    return null;
  inp = inp || info.inputs.find((i) => i.dims && i.dims.length >= 2 && i.type !== 'non-tensor');
  if (!inp || !inp.dims || !inp.dims.length || inp.type === 'non-tensor')
    return null;
  const r = inp.dims.length;
  const names = r === 4 ? ['N', null, 'H', 'W'] : inp.dims.map((_, k) => (k === 0 ? 'N' : k === 1 ? null : `S${k}`));
  const syms = inp.dims.map((d, k) => (k === 1 ? String(d) : names[k]));
  // dim 0 + 1, the others + 32 (+ 1 when that would make a huge tensor).
  let newDims = inp.dims.map((d, k) => (k === 1 ? d : k === 0 ? d + 1 : d + 32));
  if (newDims.reduce((a, b) => a * b, 1) > (1 << 22))
    newDims = inp.dims.map((d, k) => (k === 1 ? d : d + 1));
  return {input: inp.name, spec: `${inp.name}[${syms.join(',')}]`, oldDims: inp.dims.slice(), newDims};
}

/// Why a worker job on one shape set failed (it crashed, the model did not
/// load, or the set did not run), or null when it ran.
function jobError(r) {
  const s = r.sets ? r.sets[0] : null;
  return r.crashed || r.error || r.load || (s && s.run !== 'ok' ? s.run : null);
}

/// True if \p shapes keeps the dim ranges and modulo relations \p outInfo
/// stores (a symbol's range is what the output promises to run at).
function insideRanges(outInfo, shapes) {
  const ranges = outInfo.dimRanges || {};
  const mods = outInfo.dimModuli || {};
  for (const i of outInfo.inputs)
    for (const [k, d] of (i.dims || []).entries()) {
      const sym = d !== null && !isStaticDim(d);
      const r = sym ? ranges[d] : null;
      const m = sym ? mods[d] : null;
      const v = (shapes[i.name] || [])[k];
      if (r && v !== undefined && (v < r[0] || v > r[1]))
        return false;
      if (m && v !== undefined && v % m[0] !== m[1])
        return false;
    }
  return true;
}

/// make-dynamic's shapes= that gives each input of a dynamic model its own
/// symbols back (an unknown dim a fresh one); null when a symbol is not a
/// plain name shapes= can carry.
function ownSymbolsSpec(info) {
  const parts = [];
  let fresh = 0;
  for (const i of info.inputs) {
    if (!i.dims || !i.dims.length || !i.dims.some((d) => !isStaticDim(d)))
      continue;
    const dims = i.dims.map((d) => (isStaticDim(d) ? String(d) : d === null ? `unk_${++fresh}` : d));
    if (dims.some((d) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(d) && !/^\d+$/.test(d)))
      return null;
    parts.push(`${i.name}[${dims.join(',')}]`);
  }
  return parts.length ? parts.join(',') : null;
}

/// The other static inputs, each a target of its own (--each-input).
function eachInputTargets(info, first) {
  if (isDynamic(info))
    return [];
  return info.inputs.filter((i) => !first || i.name !== first.input)
      .map((i) => makeDynamicTarget(info, i)).filter(Boolean);
}

/// The shape sets a make-dynamic result of \p target runs at: the old
/// shapes (compared with the original) and the new size, each dim the
/// output made dynamic in the target input at its new value (a symbol
/// shared with other inputs follows it; a stored dim range caps it).
function makeDynamicSets(outInfo, target, old) {
  const ranges = outInfo.dimRanges || {};
  const t = outInfo.inputs.find((i) => i.name === target.input);
  const symVal = {};
  if (t && t.dims)
    t.dims.forEach((d, k) => {
      if (isStaticDim(d) || d === null)
        return;
      const r = ranges[d];
      symVal[d] = r ? Math.max(r[0], Math.min(r[1], target.newDims[k])) : target.newDims[k];
    });
  const fresh = {};
  for (const i of outInfo.inputs) {
    const oldDims = old[i.name] || [];
    fresh[i.name] = (i.dims || []).map((d, k) => {
      if (isStaticDim(d)) return d;
      if (d !== null && d in symVal) return symVal[d];
      if (i.name === target.input) return target.newDims[k];
      return oldDims[k];
    });
  }
  const sets = [{shapes: old, compare: true, why: 'old size'}];
  if (shapesKey(fresh) !== shapesKey(old))
    sets.push({shapes: fresh, compare: false, why: 'new size'});
  return sets;
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

function loadManifest() {
  const byFile = {};
  try {
    const m = JSON.parse(fs.readFileSync(path.join(REPO, 'test', 'models', 'manifest.json'), 'utf8'));
    for (const e of m.models) byFile[e.file] = e;
  } catch (e) { /* none */ }
  return byFile;
}

function reproRun(model, ref, shapes, ctx) {
  const parts = ['node', RUN_MODEL, model];
  for (const [n, d] of Object.entries(shapes || {}))
    parts.push('--shape', `${n}=${fmt(d)}`);
  if (ref) parts.push('--ref', ref);
  if (ctx.testDataDir) parts.push('--data', ctx.testDataDir);
  for (const [n, r] of Object.entries(ctx.intRanges || {})) parts.push('--int-range', `${n}=${r[0]}:${r[1]}`);
  return parts.map(shq).join(' ');
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const tmp = path.join(o.out, 'tmp');
  const keep = path.join(o.out, 'keep');
  fs.mkdirSync(tmp, {recursive: true});
  fs.mkdirSync(keep, {recursive: true});
  const resultsFile = path.join(o.out, 'results.jsonl');
  if (!o.append) fs.writeFileSync(resultsFile, '');
  const manifest = loadManifest();
  const worker = new Worker(o.timeout * 1000);
  const t0 = Date.now();
  let keepId = 0;

  for (let mi = 0; mi < o.models.length; ++mi) {
    const model = o.models[mi];
    const tModel = Date.now();
    const emit = (rec) => fs.appendFileSync(resultsFile, JSON.stringify({model, ...rec}) + '\n');
    const testDataDir = path.join(path.dirname(model), 'test_data_set_0');
    const man = manifest[path.basename(model)] && model.startsWith(path.join(REPO, 'test', 'models')) ? manifest[path.basename(model)] : null;
    const ctx = {
      testDataDir: fs.existsSync(testDataDir) ? testDataDir : null,
      testData: fs.existsSync(testDataDir) ? loadTestData(testDataDir) : [],
      manifest: man,
      intRanges: (man && man.int_ranges) || {},
    };
    const jobBase = {testDataDir: ctx.testDataDir, intRanges: ctx.intRanges,
                     rtol: (man && man.rtol) || 1e-3, atol: (man && man.atol) || 1e-4};

    // Baseline.
    const info = await worker.info(model);
    if (info.crashed || info.error || info.load) {
      emit({pipeline: 'baseline', verdict: 'baseline-failure', err: info.crashed || info.error || info.load});
      continue;
    }
    if (info.inputs.some((i) => i.type === 'non-tensor') || info.outputs.some((i) => i.type === 'non-tensor')) {
      emit({pipeline: 'baseline', verdict: 'baseline-failure', err: 'non-tensor input or output (sequence/map/optional)'});
      continue;
    }
    const runnable = [];
    const baseErrors = [];
    const dynamic = isDynamic(info);
    for (const s of candidateSets(info, ctx)) {
      if (runnable.length >= 2) break;
      const r = await worker.run({...jobBase, model, sets: [{shapes: s}]});
      const err = jobError(r);
      if (err) baseErrors.push(`${shapesKey(s)}: ${err}`);
      else runnable.push(s);
      if (!dynamic) break;
    }
    if (!runnable.length) {
      emit({pipeline: 'baseline', verdict: 'baseline-failure', err: baseErrors[0] || 'no shape set runs', tried: baseErrors.length});
      continue;
    }
    emit({pipeline: 'baseline', verdict: 'ok', dynamic, intInputs: info.inputs.filter((i) => /int/.test(i.type)).map((i) => i.name), sets: runnable.map(shapesKey), failedSets: baseErrors.slice(0, 3)});

    // Runs one pipeline and checks its output.
    // checkSets: [{shapes, compare: bool, why}], or a function of the output's info.
    const out = path.join(tmp, 'out.onnx');
    const doPipeline = async (name, flags, checkSetsFn, extra = {}) => {
      if (o.only && !o.only.test(name))
        return;
      const opt = runOpt(o, model, flags, out);
      const rec = {pipeline: name, cmd: opt.cmd, exit: opt.exit, signal: opt.signal, ms: opt.ms, err: opt.err, ...extra};
      if (opt.timeout) {
        rec.verdict = 'timeout';
      } else if (opt.exit !== 0 && opt.exit !== 1) {
        rec.verdict = 'crash';
      } else if (opt.exit === 1) {
        rec.verdict = opt.wrote ? 'refused-but-wrote' : 'refused';
      } else if (!opt.wrote) {
        rec.verdict = 'exit0-no-output';
      } else {
        const outInfo = await worker.info(out);
        if (outInfo.crashed || outInfo.error || outInfo.load) {
          rec.verdict = 'violation';
          rec.kind = 'load';
          rec.ortErr = outInfo.crashed || outInfo.error || outInfo.load;
        } else {
          const checks = checkSetsFn(outInfo);
          rec.runs = [];
          const problems = [];
          if (checks.notStatic) problems.push({kind: 'not-static', ortErr: checks.notStatic});
          for (const c of checks.sets) {
            const r = await worker.run({...jobBase, model: out, ref: c.compare ? model : undefined, sets: [{shapes: c.shapes}]});
            const s = r.sets ? r.sets[0] : null;
            const err = jobError(r);
            const run = {shapes: shapesKey(c.shapes), why: c.why, run: err || 'ok',
                         compare: s ? s.compare : null};
            rec.runs.push(run);
            const repro = reproRun('OUT.onnx', c.compare ? model : null, c.shapes, ctx);
            if (err) {
              if (c.mayFail) run.note = 'original cannot run here either';
              else problems.push({kind: r.load ? 'load' : 'run', ortErr: err, shapes: run.shapes, repro});
            } else if (Array.isArray(s.compare)) {
              problems.push({kind: 'mismatch', ortErr: s.compare.join('; ').slice(0, 600), shapes: run.shapes, repro});
            }
          }
          if (problems.length) {
            rec.verdict = 'violation';
            rec.kind = problems[0].kind;
            rec.ortErr = problems[0].ortErr;
            rec.problems = problems;
          } else {
            rec.verdict = 'ok';
          }
        }
        if (rec.verdict === 'violation') {
          const kept = path.join(keep, `v${++keepId}.onnx`);
          fs.copyFileSync(out, kept);
          rec.kept = kept;
          for (const p of rec.problems || []) if (p.repro) p.repro = p.repro.replace('OUT.onnx', kept);
        }
      }
      emit(rec);
    };
    const sameShapes = (c) => ({sets: runnable.map((s) => ({shapes: s, compare: true, why: 'declared'}))});

    for (const [name, flags] of SIMPLE)
      await doPipeline(name, flags, sameShapes);

    // freeze-dims at the runnable sets (and at 7 when only one set runs).
    const freezeSets = runnable.map((s) => ({shapes: s, mayFail: false}));
    if (dynamic && runnable.length < 2)
      freezeSets.push({shapes: uniformShapes(info, () => 7), mayFail: true});
    for (let k = 0; k < freezeSets.length; ++k) {
      const fs_ = freezeSets[k];
      const spec = freezeSpec(info, fs_.shapes);
      if (!spec) break;
      await doPipeline(`freeze-dims#${k + 1}+check-static`, [`--freeze-dims=shapes=${spec}`, '--check-static'], (outInfo) => {
        const dyn = outInfo.inputs.filter((i) => i.dims && i.dims.some((d) => !isStaticDim(d)));
        return {
          notStatic: dyn.length ? `inputs still dynamic after check-static: ${dyn.map((i) => `${i.name}[${i.dims}]`).join(' ')}` : null,
          sets: [{shapes: fs_.shapes, compare: true, why: 'frozen', mayFail: fs_.mayFail}],
        };
      }, {frozen: shapesKey(fs_.shapes)});
    }

    // make-dynamic, strict and partial.
    const target = makeDynamicTarget(info);
    if (target) {
      for (const partial of [false, true]) {
        const flags = partial ? [`--pass-pipeline=make-dynamic{shapes=${target.spec} allow-partial=true}`]
                              : [`--make-dynamic=shapes=${target.spec}`];
        await doPipeline(partial ? 'make-dynamic(allow-partial)' : 'make-dynamic', flags,
                         (outInfo) => ({sets: makeDynamicSets(outInfo, target, runnable[0])}),
                         {spec: target.spec});
      }
    }
    if (o.eachInput) {
      const others = eachInputTargets(info, target);
      for (let k = 0; k < others.length; ++k)
        await doPipeline(`make-dynamic#${k + 1}`, [`--make-dynamic=shapes=${others[k].spec}`],
                         (outInfo) => ({sets: makeDynamicSets(outInfo, others[k], runnable[0])}),
                         {spec: others[k].spec});
    }
    if (o.refreeze && dynamic) {
      // Besides the runnable sets, one where the symbols take distinct
      // sizes above 1 (a static export's usual sizes: size 1 and sizes
      // shared by two symbols read several ways), when the original runs
      // there.
      const syms = [...new Set(info.inputs.flatMap((i) => (i.dims || []).filter((d) => !isStaticDim(d) && d !== null)))];
      const base = Math.max(2, ...runnable.map((s) => Math.max(...Object.values(s).flat().filter((v) => v > 0), 2)));
      const distinct = uniformShapes(info, (d) => base + 1 + Math.max(0, syms.indexOf(d)));
      // And as most static exports are made: a leading symbol (the batch)
      // at 1, the others at distinct sizes well above the runnable ones
      // (an image large enough that no feature map shrinks to one pixel).
      const leading = new Set(info.inputs.map((i) => (i.dims || [])[0]).filter((d) => d && !isStaticDim(d)));
      const batchOne = uniformShapes(info, (d) => (leading.has(d) ? 1 : Math.max(2 * base + 3, 40) + 5 * Math.max(0, syms.indexOf(d))));
      // --refreeze-at adds sets where every symbol takes one size: sizes
      // shared by the symbols and by static dims (a head count, the
      // channels) are where a static export reads several ways.
      const sets = runnable.slice();
      const extra = [distinct, batchOne, ...(o.refreezeAt || []).map((v) => uniformShapes(info, () => v))];
      for (const s of extra) {
        if (sets.some((t) => shapesKey(t) === shapesKey(s)))
          continue;
        const r = await worker.run({...jobBase, model, sets: [{shapes: s}]});
        if (!jobError(r))
          sets.push(s);
      }
      const back = ownSymbolsSpec(info);
      for (let k = 0; back && k < sets.length; ++k) {
        const spec = freezeSpec(info, sets[k]);
        if (!spec) break;
        await doPipeline(`refreeze#${k + 1}`,
                         [`--freeze-dims=shapes=${spec}`, '--simplify', `--make-dynamic=shapes=${back}`],
                         (outInfo) => ({sets: sets.filter((s) => insideRanges(outInfo, s)).map((s) => ({
                           shapes: s, compare: true, why: shapesKey(s) === shapesKey(sets[k]) ? 'frozen' : 'other shape'}))}),
                         {frozen: shapesKey(sets[k])});
      }
      // --refreeze-partial: an export that kept one symbol dynamic and
      // baked the others (a dynamic length at batch 1), made dynamic
      // again in all of them; frozen at the first and the last set and at
      // the distinct and batch-1 sets (where no two symbols share a size).
      const valueOf = (set, sym) => {
        for (const i of info.inputs)
          for (const [j, d] of (i.dims || []).entries())
            if (d === sym && set[i.name] && set[i.name][j] !== undefined)
              return set[i.name][j];
        return undefined;
      };
      const at = (x) => sets.findIndex((t) => shapesKey(t) === shapesKey(x));
      const ends = o.refreezePartial && syms.length > 1
        ? [...new Set([0, at(distinct), at(batchOne), sets.length - 1])].filter((k) => k >= 0).sort((a, b) => a - b)
        : [];
      for (const k of ends)
        for (const kept of syms) {
          const fixed = syms.filter((x) => x !== kept).map((x) => [x, valueOf(sets[k], x)]);
          if (!back || fixed.some(([x, v]) => v === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(x)))
            continue;
          await doPipeline(`refreeze-keep-${kept}#${k + 1}`,
                           [`--pass-pipeline=freeze-dims{dims=${fixed.map(([x, v]) => `${x}:${v}`).join(',')}}`,
                            '--simplify', `--make-dynamic=shapes=${back}`],
                           (outInfo) => ({sets: sets.filter((s) => insideRanges(outInfo, s)).map((s) => ({
                             shapes: s, compare: true, why: 'other shape'}))}),
                           {frozen: fixed.map(([x, v]) => `${x}=${v}`).join(',')});
        }
      // And the other way round, as most partial exports are made: the
      // leading symbols (the batch) frozen at 1, the others kept dynamic.
      const lead = syms.filter((x) => leading.has(x));
      if (o.refreezePartial && back && lead.length && lead.length < syms.length &&
          lead.every((x) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(x)))
        await doPipeline('refreeze-batch1',
                         [`--pass-pipeline=freeze-dims{dims=${lead.map((x) => `${x}:1`).join(',')}}`,
                          '--simplify', `--make-dynamic=shapes=${back}`],
                         (outInfo) => ({sets: sets.filter((s) => insideRanges(outInfo, s)).map((s) => ({
                           shapes: s, compare: true, why: 'other shape'}))}),
                         {frozen: lead.map((x) => `${x}=1`).join(',')});
    }
    const dt = (Date.now() - tModel) / 1000;
    process.stderr.write(`[${mi + 1}/${o.models.length}] ${model} ${dt.toFixed(1)}s (total ${((Date.now() - t0) / 1000).toFixed(0)}s)\n`);
  }
  worker.stop();
}

main().catch((e) => {
  process.stderr.write(`sweep: error: ${e.stack || e}\n`);
  process.exit(2);
});
