// Summarises a V8 CPU profile (node --cpu-prof, or `npm run bench -- --profile DIR`): the functions
// with the most self time, and the lines of Signet's own code (src/) with the most inclusive time,
// i.e. time spent in them and everything they called.
//
//   node bench/profile-summary.mjs FILE.cpuprofile [--top N] [--under src/]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, under: { type: 'string', default: '/src/' } } });
const top = Number(values.top);
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node from the samples and their time deltas.
const self = new Map();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const where = (frame) => {
  const file = frame.url ? frame.url.replace(/^file:\/\//, '') : '';
  const short = file.includes('/node_modules/') ? file.slice(file.lastIndexOf('/node_modules/') + 14) : file ? path.relative(process.cwd(), file) : '';
  return `${frame.functionName || '(anonymous)'} ${short ? `${short}:${frame.lineNumber + 1}` : ''}`.trim();
};

const bySelf = new Map();
for (const [id, t] of self) {
  const key = where(nodes.get(id).callFrame);
  bySelf.set(key, (bySelf.get(key) ?? 0) + t);
}

// Inclusive time per src/ frame: each sample counts once for every distinct src/ frame on its stack.
const inclusive = new Map();
for (const [id, t] of self) {
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const frame = nodes.get(cur).callFrame;
    if (!frame.url.includes(values.under)) continue;
    const key = where(frame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + t);
  }
}

const show = (title, map) => {
  console.log(`${title} (of ${(total / 1000).toFixed(0)} ms sampled)`);
  for (const [key, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${((100 * t) / total).toFixed(1).padStart(5)}%  ${key}`);
};
show('self time', bySelf);
console.log('');
show(`inclusive time in ${values.under}`, inclusive);
