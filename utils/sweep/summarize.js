#!/usr/bin/env node
//===- summarize.js - Summary of a sweep's results.jsonl ------------------===//
//
//   node utils/sweep/summarize.js /tmp/sweep    (writes /tmp/sweep/summary.md)
//
// Counts per pipeline, then every violation, crash and timeout with the
// command to reproduce, grouped by a signature of the error (the pipeline
// family, the problem kind and the error text with names and numbers
// blanked out).
//
//===----------------------------------------------------------------------===//
'use strict';

const fs = require('fs');
const path = require('path');

const dir = process.argv[2] || '/tmp/sweep';
const recs = fs.readFileSync(path.join(dir, 'results.jsonl'), 'utf8')
    .split('\n').filter(Boolean).map((l) => JSON.parse(l));

const short = (m) => m.replace('/usr/share/libonnx-testdata/data/', 'debian:').replace(/\/model\.onnx$/, '')
    .replace(/^.*\/test\/models\//, 'test/models/');
const family = (p) => p.replace(/#\d+/, '#k');

const baseline = recs.filter((r) => r.pipeline === 'baseline');
const baseOk = new Map(baseline.filter((r) => r.verdict === 'ok').map((r) => [r.model, r]));
const runs = recs.filter((r) => r.pipeline !== 'baseline');

const cols = ['ok', 'violation', 'refused', 'crash', 'timeout', 'refused-but-wrote', 'exit0-no-output'];
const table = new Map();
for (const r of runs) {
  const f = family(r.pipeline);
  if (!table.has(f)) table.set(f, Object.fromEntries(cols.map((c) => [c, 0])));
  table.get(f)[r.verdict] = (table.get(f)[r.verdict] || 0) + 1;
}

const lines = [];
const p = (s = '') => lines.push(s);
p('# onnx-opt shape-pass sweep');
p();
p(`Models: ${baseline.length}; baseline ok: ${baseOk.size}; baseline failures (ORT cannot run the original; skipped): ${baseline.length - baseOk.size}.`);
p(`Dynamic models (symbolic or unknown input dims): ${[...baseOk.values()].filter((r) => r.dynamic).length}.`);
p();
p('Counts per pipeline (one row per (model, pipeline); freeze-dims#k counts both value choices):');
p();
p('| pipeline | exit 0 + runs | exit 0 + fails = VIOLATION | exit 1 refusal | crash | timeout | exit 1 but wrote output | exit 0, no output |');
p('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const [f, c] of table)
  p(`| ${f} | ${c.ok} | ${c.violation} | ${c.refused} | ${c.crash} | ${c.timeout} | ${c['refused-but-wrote']} | ${c['exit0-no-output']} |`);
p();

// Violations by signature.
function signature(r) {
  const text = (r.verdict === 'violation' ? (r.ortErr || '') : (r.err || `signal ${r.signal} exit ${r.exit}`))
      .replace(/^\S+: (error|warning|remark|note): /, '')
      .replace(/'[^']*'/g, "'_'").replace(/\{[^}]*\}/g, '{_}').replace(/\[[^\]]*\]/g, '[_]')
      .replace(/\d+/g, 'N').slice(0, 140);
  const kind = r.verdict === 'violation' ? r.kind : r.verdict;
  let sub = '';
  if (r.verdict === 'violation' && r.problems && r.problems.some((q) => /new size/.test(q.why || '')))
    sub = '';
  return `${family(r.pipeline)} | ${kind} | ${text}${sub}`;
}

const bad = runs.filter((r) => ['violation', 'crash', 'timeout', 'refused-but-wrote', 'exit0-no-output'].includes(r.verdict));
const groups = new Map();
for (const r of bad) {
  const s = signature(r);
  if (!groups.has(s)) groups.set(s, []);
  groups.get(s).push(r);
}
p(`## Violations, crashes and timeouts (${bad.length} runs, ${groups.size} signatures)`);
p();
p('Grouped by pipeline, kind and error text (names and numbers blanked). Each entry: the onnx-opt command,');
p('then the ONNX Runtime check that fails (run it after the onnx-opt command; --ref compares with the original).');
p('Kinds: load = ORT cannot load the output; run = it loads but fails at shapes where the original runs');
p('(for make-dynamic: at the old size or the new size); mismatch = it runs but computes other values than the');
p('original; not-static = check-static exited 0 with symbolic inputs left; crash = onnx-opt exit code not 0/1.');
p();
for (const [s, rs] of [...groups].sort((a, b) => b[1].length - a[1].length)) {
  p(`### ${s} (${rs.length})`);
  p();
  for (const r of rs) {
    const b = baseOk.get(r.model);
    const ints = b && b.intInputs && b.intInputs.length ? ` (integer inputs: ${b.intInputs.join(', ')})` : '';
    p(`- **${short(r.model)}** \`${r.pipeline}\`${ints}`);
    p(`  - \`${r.cmd.replace(/-o \S+$/, '-o /tmp/x.onnx')}\``);
    if (r.verdict === 'violation') {
      for (const q of r.problems || [{kind: r.kind, ortErr: r.ortErr}]) {
        const run = (r.runs || []).find((x) => x.shapes === q.shapes);
        const where = q.shapes ? ` at ${q.shapes}${run && run.why ? ` (${run.why})` : ''}` : '';
        p(`  - ${q.kind}${where}: ${q.ortErr}`);
        if (q.repro) p(`  - \`${q.repro.replace(r.kept, '/tmp/x.onnx')}\``);
      }
      if (r.kind === 'load') p(`  - \`node utils/sweep/run_model.js /tmp/x.onnx\``);
    } else {
      p(`  - exit ${r.exit} signal ${r.signal}: ${r.err}`);
    }
  }
  p();
}

p('## Baseline failures');
p();
const bgroups = new Map();
for (const r of baseline.filter((x) => x.verdict !== 'ok')) {
  const s = String(r.err).replace(/^[^:]*=[^:]*: /, '').replace(/'[^']*'/g, "'_'").replace(/\d+/g, 'N').slice(0, 100);
  if (!bgroups.has(s)) bgroups.set(s, []);
  bgroups.get(s).push(short(r.model));
}
for (const [s, ms] of [...bgroups].sort((a, b) => b[1].length - a[1].length))
  p(`- (${ms.length}) ${s}: ${ms.slice(0, 8).join(', ')}${ms.length > 8 ? ', ...' : ''}`);
p();

fs.writeFileSync(path.join(dir, 'summary.md'), lines.join('\n') + '\n');
process.stdout.write(`${bad.length} violations/crashes/timeouts in ${groups.size} groups; ${path.join(dir, 'summary.md')}\n`);
