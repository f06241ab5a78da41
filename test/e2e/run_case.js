#!/usr/bin/env node
//===- run_case.js - Run one end-to-end case for ctest --------------------===//
//
//   run_case.js pipeline --onnx-opt BIN --work-dir DIR MODEL CASE
//       runs `BIN test/models/MODEL ARGS -o DIR/...onnx` with the case's
//       onnx-opt arguments from cases.txt, then the oracle on the original
//       and the result at the manifest's shape sets (on the case's `--twin`
//       model and the result instead, where it names one); with --range-sweep in
//       the case's oracle arguments, at the ends and middle of the ranges the
//       output stores instead (range_sweep.js)
//   run_case.js sweep MODEL [ORACLE-ARGS...]
//       the range sweep of one model alone, at its stored ranges
//   run_case.js sensitivity MODEL
//       the oracle's --check-sensitivity on MODEL at its shape sets
//   run_case.js expect-mismatch ORACLE-ARGS...
//       runs the oracle and passes only if it reports a mismatch (exit 1):
//       a crash or a missing runtime still fails the test
//
// Exit status 0 means the test passed.
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');
const {spawnSync} = require('child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const MODELS = path.join(ROOT, 'test', 'models');
const ORACLE = path.join(ROOT, 'utils', 'oracle', 'oracle.js');
const TABLE = path.join(__dirname, 'cases.txt');

function die(message) {
  process.stderr.write(`run_case: error: ${message}\n`);
  process.exit(2);
}

/// Splits a command line like a POSIX shell: whitespace separates words,
/// single quotes are literal, double quotes and backslashes escape.
function splitArgs(text) {
  const words = [];
  let word = '';
  let inWord = false;
  let quote = null;
  for (let i = 0; i < text.length; ++i) {
    const c = text[i];
    if (quote === "'") {
      if (c === "'")
        quote = null;
      else
        word += c;
      continue;
    }
    if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
      continue;
    }
    if (quote === '"') {
      if (c === '"')
        quote = null;
      else
        word += c;
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      continue;
    }
    if (/\s/.test(c)) {
      if (inWord)
        words.push(word);
      word = '';
      inWord = false;
      continue;
    }
    word += c;
    inWord = true;
  }
  if (quote)
    die(`unterminated ${quote} quote in '${text}'`);
  if (inWord)
    words.push(word);
  return words;
}

/// Reads cases.txt into [{name, model, optArgs, oracleArgs, line}].
function readTable() {
  const cases = [];
  fs.readFileSync(TABLE, 'utf8').split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#'))
      return;
    const fields = line.split('|').map((f) => f.trim());
    if (fields.length < 3 || fields.length > 4)
      die(`cases.txt:${i + 1}: expected 3 or 4 '|'-separated fields`);
    cases.push({
      name: fields[0],
      model: fields[1],
      optArgs: splitArgs(fields[2]),
      oracleArgs: splitArgs(fields[3] || ''),
      line: i + 1,
    });
  });
  return cases;
}

function readManifestEntry(model) {
  const manifest = JSON.parse(fs.readFileSync(path.join(MODELS, 'manifest.json'), 'utf8'));
  const entry = manifest.models.find((m) => m.file === model);
  if (!entry)
    die(`model '${model}' is not in test/models/manifest.json`);
  return entry;
}

/// Oracle options from the manifest; explicit --shapes in `extra` replace the
/// manifest's shape sets, everything else is appended (later options win).
function oracleOptions(entry, extra) {
  const args = [];
  if (!extra.some((a) => a === '--shapes' || a.startsWith('--shapes=')))
    for (const set of entry.shape_sets)
      args.push('--shapes', Object.entries(set).map(([n, s]) => `${n}=${s}`).join(','));
  if (entry.rtol !== undefined)
    args.push('--rtol', String(entry.rtol));
  if (entry.atol !== undefined)
    args.push('--atol', String(entry.atol));
  for (const [name, [lo, hi]] of Object.entries(entry.int_ranges || {}))
    args.push('--int-range', `${name}=${lo}:${hi}`);
  return args.concat(extra);
}

function quote(args) {
  return args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a}'`)).join(' ');
}

/// Runs a command with inherited output; returns its exit status.
function run(cmd, args) {
  process.stdout.write(`$ ${quote([cmd, ...args])}\n`);
  const r = spawnSync(cmd, args, {stdio: 'inherit'});
  if (r.error)
    die(`cannot run ${cmd}: ${r.error.message}`);
  if (r.signal)
    return 128 + (require('os').constants.signals[r.signal] || 0);
  return r.status;
}

function runOracle(args) {
  return run(process.execPath, [ORACLE, ...args]);
}

function takeOption(argv, flag) {
  const i = argv.indexOf(flag);
  if (i < 0 || i + 1 >= argv.length)
    die(`missing ${flag}`);
  const value = argv[i + 1];
  argv.splice(i, 2);
  return value;
}

function cmdPipeline(argv) {
  const onnxOpt = takeOption(argv, '--onnx-opt');
  const workDir = takeOption(argv, '--work-dir');
  if (argv.length !== 2)
    die('usage: run_case.js pipeline --onnx-opt BIN --work-dir DIR MODEL CASE');
  const [model, caseName] = argv;
  const c = readTable().find((x) => x.model === model && x.name === caseName);
  if (!c)
    die(`no case '${caseName}' for model '${model}' in test/e2e/cases.txt`);
  const entry = readManifestEntry(model);
  const input = path.join(MODELS, model);
  const outDir = path.join(workDir, path.basename(model, '.onnx'));
  fs.mkdirSync(outDir, {recursive: true});
  const output = path.join(outDir, `${caseName}.onnx`);
  fs.rmSync(output, {force: true});

  const optStatus = run(onnxOpt, [input, ...c.optArgs, '-o', output]);
  if (optStatus !== 0) {
    process.stdout.write(`FAIL: onnx-opt exited with ${optStatus}\n`);
    return 1;
  }
  if (!fs.existsSync(output)) {
    process.stdout.write(`FAIL: onnx-opt succeeded but wrote no ${output}\n`);
    return 1;
  }
  // `--twin M` (a model in test/models): the result is compared with M
  // instead of the input, at the case's shapes: a static export made
  // dynamic against the exporter's dynamic twin, at shapes the static one
  // cannot run.
  const oracleArgs = c.oracleArgs.slice();
  const twinAt = oracleArgs.indexOf('--twin');
  let reference = input;
  if (twinAt >= 0) {
    if (twinAt + 1 >= oracleArgs.length)
      die(`cases.txt:${c.line}: --twin needs a model`);
    reference = path.join(MODELS, oracleArgs[twinAt + 1]);
    oracleArgs.splice(twinAt, 2);
  }
  if (oracleArgs.includes('--range-sweep'))
    return rangeSweep(input, output, entry,
                      oracleArgs.filter((a) => a !== '--range-sweep'));
  const status = runOracle([reference, output, ...oracleOptions(entry, oracleArgs)]);
  process.stdout.write(status === 0 ? 'PASS\n' : `FAIL: oracle exited with ${status}\n`);
  return status === 0 ? 0 : 1;
}

/// The oracle at the shapes of the output's stored ranges (range_sweep.js):
/// compared with the original where its declared inputs admit the shape,
/// run alone (with the declared-shape check) where only the output does.
/// Without an original (\p input null) every set runs the output alone,
/// and \p entry may be null (a symbol without a range then has no value).
async function rangeSweep(input, output, entry, extra) {
  const {modelInfo, readMetadata} =
      require(path.join(ROOT, 'utils', 'sweep', 'run_model.js'));
  const sweep = require('./range_sweep.js');
  const meta = readMetadata(output);
  const text = meta['onnx_opt.dim_ranges'];
  if (!text) {
    process.stdout.write('FAIL: the output stores no onnx_opt.dim_ranges to sweep\n');
    return 1;
  }
  const outInfo = await modelInfo(output);
  const inInfo = input ? await modelInfo(input) : {load: 'no original'};
  if (outInfo.load) {
    process.stdout.write(`FAIL: ONNX Runtime cannot load the output: ${outInfo.load}\n`);
    return 1;
  }
  const fallback = {};
  for (const [name, dims] of Object.entries((entry && entry.shape_sets[0]) || {}))
    fallback[name] = dims.split('x').map(Number);
  const sets = sweep.shapeSets(outInfo.inputs,
                               sweep.pickPoints(sweep.parseRanges(text)), fallback);
  if (meta['onnx_opt.dim_gears'])
    for (const set of sweep.parseGears(meta['onnx_opt.dim_gears']))
      sets.push({label: 'gear', set});
  const format = (set) => Object.entries(set).map(([n, d]) => `${n}=${d.join('x')}`).join(',');
  const compared = [], alone = [];
  for (const {label, set} of sets) {
    const both = !inInfo.load && sweep.admits(inInfo, set);
    process.stdout.write(`sweep ${label}: ${format(set)}${both ? '' : ' (output only)'}\n`);
    (both ? compared : alone).push('--shapes', format(set));
  }
  let status = 0;
  if (compared.length)
    status = runOracle([input, output, ...oracleOptions(entry, [...compared, ...extra])]);
  if (alone.length && status === 0)
    status = runOracle([output, ...(entry ? oracleOptions(entry, [...alone, ...extra]) :
                                              [...alone, ...extra])]);
  process.stdout.write(status === 0 ? `PASS: ${sets.length} shape set(s) in the stored ranges\n` :
                                      `FAIL: oracle exited with ${status}\n`);
  return status === 0 ? 0 : 1;
}

/// run_case.js sweep MODEL [ORACLE-ARGS...]: the range sweep of one model
/// file on its own (the lit tests check that it fails where a stored range
/// holds a shape ONNX Runtime cannot run).
function cmdSweep(argv) {
  if (argv.length < 1)
    die('usage: run_case.js sweep MODEL [ORACLE-ARGS...]');
  return rangeSweep(null, argv[0], null, argv.slice(1));
}

function cmdSensitivity(argv) {
  if (argv.length !== 1)
    die('usage: run_case.js sensitivity MODEL');
  const entry = readManifestEntry(argv[0]);
  const status = runOracle([path.join(MODELS, argv[0]), '--check-sensitivity',
                            ...oracleOptions(entry, [])]);
  return status === 0 ? 0 : 1;
}

function cmdExpectMismatch(argv) {
  const args = argv.map((a) => (a.endsWith('.onnx') && !path.isAbsolute(a) ?
                                    path.join(MODELS, a) : a));
  const status = runOracle(args);
  if (status === 1) {
    process.stdout.write('PASS: the oracle reported the expected mismatch\n');
    return 0;
  }
  process.stdout.write(status === 0 ?
      'FAIL: the oracle accepted a model it must reject\n' :
      `FAIL: the oracle failed with exit status ${status} instead of reporting a mismatch\n`);
  return 1;
}

function main() {
  const [command, ...argv] = process.argv.slice(2);
  switch (command) {
  case 'pipeline':
    return cmdPipeline(argv);
  case 'sensitivity':
    return cmdSensitivity(argv);
  case 'sweep':
    return cmdSweep(argv);
  case 'expect-mismatch':
    return cmdExpectMismatch(argv);
  default:
    die('usage: run_case.js pipeline|sensitivity|sweep|expect-mismatch ...');
  }
}

// A pipeline with --range-sweep answers with a promise (ONNX Runtime loads
// the models to read their inputs).
Promise.resolve(main()).then((code) => process.exit(code), (e) => {
  process.stderr.write(`run_case: error: ${e.message}\n`);
  process.exit(2);
});
