// Summarises a V8 CPU profile (node --cpu-prof, or `npm run bench -- --profile DIR`): where the busy
// time went by area (Node's HTTP and sockets, crypto, each package, each folder of src/, GC), the
// functions with the most self time, and the lines of Signet's own code (src/) with the most inclusive
// time, i.e. time spent in them and everything they called.
//
// Percentages are of the *busy* samples (idle left out), counted from the first request the server
// answered (start-up — module loading, migrations — is left out unless --with-startup); with
// --requests N (how many requests the profiled process answered) each line also says µs per request.
// Inclusive figures of a hook include what ran after it synchronously (fastify's `done()` calls the
// next hook, then the handler): read them with the self-time list beside them.
//
//   node bench/profile-summary.mjs FILE.cpuprofile [--top N] [--under /src/] [--requests N] [--with-startup]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, under: { type: 'string', default: '/src/' }, requests: { type: 'string' }, 'with-startup': { type: 'boolean', default: false } },
});
const top = Number(values.top);
const requests = values.requests === undefined ? undefined : Number(values.requests);
const profile = JSON.parse(readFileSync(positionals[0], 'utf8'));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const stackHas = (id, test) => {
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) if (test(nodes.get(cur).callFrame)) return true;
  return false;
};

// The first sample inside Node's HTTP server: the server was listening, start-up was over.
let first = 0;
if (!values['with-startup']) {
  first = profile.samples.findIndex((id) => stackHas(id, (f) => f.functionName === 'parserOnIncoming'));
  if (first < 0) first = 0;
}

// Self time per node from the samples and their time deltas; idle apart.
const self = new Map();
let idle = 0;
for (let i = first; i < profile.samples.length; i++) {
  const id = profile.samples[i];
  const t = profile.timeDeltas[i] ?? 0;
  if (nodes.get(id).callFrame.functionName === '(idle)') idle += t;
  else self.set(id, (self.get(id) ?? 0) + t);
}
const busy = [...self.values()].reduce((a, b) => a + b, 0);

const fileOf = (frame) => (frame.url ? frame.url.replace(/^file:\/\//, '') : '');
const where = (frame) => {
  const file = fileOf(frame);
  const short = file.includes('/node_modules/') ? file.slice(file.lastIndexOf('/node_modules/') + 14) : file ? path.relative(process.cwd(), file) : '';
  return `${frame.functionName || '(anonymous)'} ${short ? `${short}:${frame.lineNumber + 1}` : ''}`.trim();
};

/** The area a frame's code belongs to; undefined for a native frame without a script (counted with its caller's). */
function areaOf(frame) {
  const name = frame.functionName;
  if (name === '(garbage collector)') return 'GC';
  if (name === '(program)') return '(program: V8 and native code outside JS)';
  const file = fileOf(frame);
  if (!file) return undefined;
  if (file.startsWith('node:')) {
    if (/^node:internal\/crypto/.test(file)) return 'node: crypto';
    if (/^node:(_http|http|net|internal\/(http|stream_base|net|streams|js_stream)|stream|internal\/streams)/.test(file)) return 'node: HTTP, sockets, streams';
    if (/^node:internal\/(process\/task_queues|timers|async_hooks)|^node:timers|^node:events/.test(file)) return 'node: ticks, timers, events';
    return `node: other (${file.replace(/^node:(internal\/)?/, '').split('/')[0]})`;
  }
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 14).split('/');
    return `npm: ${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  const src = file.indexOf('/src/');
  if (src >= 0) return `src/${path.dirname(file.slice(src + 5))}`;
  return path.relative(process.cwd(), file);
}

const bySelf = new Map();
const byArea = new Map();
for (const [id, t] of self) {
  const key = where(nodes.get(id).callFrame);
  bySelf.set(key, (bySelf.get(key) ?? 0) + t);
  let area;
  for (let cur = id; cur !== undefined && area === undefined; cur = parent.get(cur)) area = areaOf(nodes.get(cur).callFrame);
  area ??= '(native, no caller)';
  byArea.set(area, (byArea.get(area) ?? 0) + t);
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

const perRequest = (t) => (requests ? `  ${(t / requests).toFixed(1).padStart(6)} µs/req` : '');
const show = (title, map, n = top) => {
  console.log(title);
  for (const [key, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`  ${((100 * t) / busy).toFixed(1).padStart(5)}%${perRequest(t)}  ${key}`);
};
console.log(
  `${path.basename(positionals[0])}: ${(busy / 1000).toFixed(0)} ms busy, ${(idle / 1000).toFixed(0)} ms idle${first > 0 ? ' (from the first request on)' : ''}` +
    (requests ? `; ${requests} requests, ${(busy / requests).toFixed(1)} µs of CPU each (sampled, profiler on)` : ''),
);
console.log('');
show('busy time by area', byArea, 40);
console.log('');
show('self time', bySelf);
console.log('');
show(`inclusive time in ${values.under}`, inclusive);
