//===- range_sweep.js - Shapes at the ends and inside of stored ranges ----===//
//
// A model that set-dim-range or make-dynamic certifies must run at every
// shape its stored ranges allow (issue 31). This module turns the model's
// `onnx_opt.dim_ranges` (and `onnx_opt.dim_gears`) metadata into concrete
// shape sets: every symbol at its least value, at its greatest, in the
// middle, and (with two or more free symbols) alternately at its least and
// greatest, all kept inside the stored relations (`W=H`, `H%32=0`,
// `P+T<=16`). run_case.js (--range-sweep) runs ONNX Runtime at them.
//
// The formats are those of include/onnxopt/Analysis/DimRanges.h:
//   v1;H=256:1024:640;N=1:16
//   v2;H=256:1024;W=256:1024;rel:W=H;rel:H%32=0;rel:P+T<=16
//   v1;ids[1,10],feats[1,10,8];ids[2,20],feats[2,20,8]      (gears)
//
//===----------------------------------------------------------------------===//
'use strict';

/// Parses the ranges text into {ranges: {sym: [min, max]}, equal: [[a, b]],
/// multiple: {sym: d}, least: {sym: n}, sums: [{terms: [[sym, coef]],
/// bound}]}. Throws on
/// an entry it cannot read, so that a format change fails the test rather
/// than silently sweeping less.
function parseRanges(text) {
  const spec = {ranges: {}, equal: [], multiple: {}, least: {}, sums: []};
  const parts = text.split(';');
  if (parts[0] !== 'v1' && parts[0] !== 'v2')
    throw new Error(`unknown dim_ranges version '${parts[0]}'`);
  for (const part of parts.slice(1)) {
    let m;
    if (!part.startsWith('rel:')) {
      m = /^(.+)=(\d+):(\d+)(?::(\d+))?$/.exec(part);
      if (!m)
        throw new Error(`cannot read range '${part}'`);
      spec.ranges[m[1]] = [Number(m[2]), Number(m[3])];
      continue;
    }
    const rel = part.slice(4);
    if ((m = /^([^%=<]+)%(\d+)=0$/.exec(rel))) {
      spec.multiple[m[1]] = Number(m[2]);
    } else if ((m = /^([^=<>]+)>=(\d+)$/.exec(rel))) {
      spec.least[m[1]] = Math.max(spec.least[m[1]] || 0, Number(m[2]));
    } else if ((m = /^(.+)<=(\d+)$/.exec(rel))) {
      const terms = m[1].split('+').map((t) => {
        const tm = /^(?:(\d+)\*)?(.+)$/.exec(t);
        return [tm[2], tm[1] ? Number(tm[1]) : 1];
      });
      spec.sums.push({terms, bound: Number(m[2])});
    } else if ((m = /^([^=]+)=([^=]+)$/.exec(rel))) {
      spec.equal.push([m[1], m[2]]);
    } else {
      throw new Error(`cannot read relation '${part}'`);
    }
  }
  return spec;
}

function gcd(a, b) { return b ? gcd(b, a % b) : a; }

/// Symbols made one by `W=H`: each class with the intersection of its
/// members' ranges and the lcm of their divisors, as [lo, hi, step] where
/// lo and hi are the least and greatest multiples of step inside. A symbol
/// with no range of its own (`rel:past+seq<=64` alone) is at least 1, as
/// the constraint engine assumes, and at most what a sum bound leaves it.
function symbolClasses(spec) {
  const parent = {};
  const find = (s) => (parent[s] === undefined || parent[s] === s ? s : (parent[s] = find(parent[s])));
  const syms = new Set(Object.keys(spec.ranges));
  const sumCap = {};
  for (const {terms, bound} of spec.sums)
    for (const [sym, coef] of terms) {
      syms.add(sym);
      sumCap[sym] = Math.min(sumCap[sym] ?? Infinity, Math.floor(bound / coef));
    }
  for (const [a, b] of spec.equal) {
    syms.add(a);
    syms.add(b);
    const ra = find(a), rb = find(b);
    if (ra !== rb)
      parent[ra > rb ? ra : rb] = ra > rb ? rb : ra;
  }
  const classes = new Map(); // representative -> {members, lo, hi, step}
  for (const s of [...syms].sort()) {
    const rep = find(s);
    if (!classes.has(rep))
      classes.set(rep, {members: [], lo: null, hi: Infinity, step: 1});
    const c = classes.get(rep);
    c.members.push(s);
    if (spec.ranges[s]) {
      c.lo = Math.max(c.lo ?? 0, spec.ranges[s][0]);
      c.hi = Math.min(c.hi, spec.ranges[s][1]);
    }
    // A least value narrows a symbol the sweep already has; alone it
    // gives no range to sweep.
    if (spec.least[s] !== undefined)
      c.lo = Math.max(c.lo ?? 1, spec.least[s]);
    if (sumCap[s] !== undefined)
      c.hi = Math.min(c.hi, sumCap[s]);
    const d = spec.multiple[s] || 1;
    c.step = (c.step * d) / gcd(c.step, d);
  }
  for (const [rep, c] of classes) {
    c.rep = rep;
    c.lo = c.lo ?? 1;
    if (c.hi === Infinity)
      throw new Error(`symbol '${rep}' has a relation but no range`);
    c.lo = Math.ceil(c.lo / c.step) * c.step;
    c.hi = Math.floor(c.hi / c.step) * c.step;
    if (c.lo > c.hi)
      throw new Error(`no value of '${c.members.join('=')}' is inside its range and relations`);
  }
  return classes;
}

/// Lowers the values of a point (rep -> value) until every sum bound holds,
/// the greatest term first, keeping each class on its step and at or above
/// its least value. Returns false when that cannot be done.
function fitSums(point, classes, spec) {
  const repOf = {};
  for (const [rep, c] of classes)
    for (const m of c.members)
      repOf[m] = rep;
  for (const {terms, bound} of spec.sums) {
    const weight = new Map(); // rep -> summed coefficient
    for (const [sym, coef] of terms)
      weight.set(repOf[sym], (weight.get(repOf[sym]) || 0) + coef);
    const total = () => [...weight].reduce((s, [rep, w]) => s + w * point[rep], 0);
    for (let guard = 0; total() > bound && guard < 64; ++guard) {
      const reps = [...weight.keys()].filter((r) => point[r] > classes.get(r).lo);
      if (!reps.length)
        return false;
      reps.sort((a, b) => point[b] * weight.get(b) - point[a] * weight.get(a));
      const rep = reps[0], c = classes.get(rep), w = weight.get(rep);
      const lowered = point[rep] - Math.ceil((total() - bound) / w);
      point[rep] = Math.max(c.lo, Math.floor(lowered / c.step) * c.step);
    }
    if (total() > bound)
      return false;
  }
  return true;
}

/// The points to run: [{label, values: {symbol: value}}], distinct.
function pickPoints(spec) {
  const classes = symbolClasses(spec);
  const reps = [...classes.keys()];
  const mid = (c) => c.lo + Math.floor((c.hi - c.lo) / (2 * c.step)) * c.step;
  const choices = [
    ['min', () => (c) => c.lo],
    ['max', () => (c) => c.hi],
    ['mid', () => mid],
  ];
  // Alternating over the widest ranges first, so that two image sides
  // (H:64:320, W:64:320 beside N:1:2) take different ends.
  const byWidth = [...reps].sort((a, b) => {
    const ca = classes.get(a), cb = classes.get(b);
    return (cb.hi - cb.lo) - (ca.hi - ca.lo) || (a < b ? -1 : a > b ? 1 : 0);
  });
  if (reps.length > 1)
    choices.push(['alternate', () => (c) => (byWidth.indexOf(c.rep) % 2 ? c.hi : c.lo)]);
  const points = [];
  const seen = new Set();
  for (const [label, make] of choices) {
    const pick = make();
    const point = {};
    for (const rep of reps)
      point[rep] = pick(classes.get(rep));
    if (!fitSums(point, classes, spec))
      continue;
    const values = {};
    for (const [rep, c] of classes)
      for (const m of c.members)
        values[m] = point[rep];
    const key = JSON.stringify(values);
    if (seen.has(key))
      continue;
    seen.add(key);
    points.push({label, values});
  }
  return points;
}

/// Gears as shape sets: [{input: [dims]}].
function parseGears(text) {
  const parts = text.split(';');
  if (parts[0] !== 'v1')
    throw new Error(`unknown dim_gears version '${parts[0]}'`);
  return parts.slice(1).map((gear) => {
    const set = {};
    for (const m of gear.matchAll(/([^,\[\]]+)\[([\d,]*)\]/g))
      set[m[1]] = m[2] ? m[2].split(',').map(Number) : [];
    return set;
  });
}

/// One shape set per point: every input with a non-static dim, its symbols
/// at the point's values; a symbol without a range takes its value from
/// \p fallback ({input: [dims]}, the manifest's first shape set).
function shapeSets(inputs, points, fallback) {
  return points.map(({label, values}) => {
    const set = {};
    for (const input of inputs) {
      if (!input.dims || input.dims.every((d) => typeof d === 'number'))
        continue;
      set[input.name] = input.dims.map((d, i) => {
        if (typeof d === 'number')
          return d;
        if (d !== null && values[d] !== undefined)
          return values[d];
        const old = fallback[input.name];
        if (!old || old[i] === undefined)
          throw new Error(`no value for dim ${i} ('${d}') of input '${input.name}'`);
        return old[i];
      });
    }
    return {label, set};
  });
}

/// True when \p info's declared inputs admit \p set (static dims equal).
function admits(info, set) {
  return info.inputs.every((input) => {
    const dims = set[input.name];
    if (!dims)
      return true;
    return input.dims && input.dims.length === dims.length &&
        input.dims.every((d, i) => typeof d !== 'number' || d === dims[i]);
  });
}

module.exports = {parseRanges, pickPoints, parseGears, shapeSets, admits};
