// `npm run bench` — the whole benchmark in one command; `npm run bench -- --quick` in under three
// minutes. See bench/README.md for what is measured and how to read the table.
//
//   node bench/run.ts [--quick] [--rounds N] [--duration SECONDS] [--warmup SECONDS] [--connections N]
//                     [--workloads userinfo,refresh,…] [--targets signet-sqlite,…] [--profile DIR]
//                     [--node-args='--flag …'] [--bundle] [--out FILE] [--no-startup]
import { execFile } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs, promisify } from 'node:util';
import { runBench, type BenchRun } from './harness.ts';
import { bar, latestJson, summaries, table } from './report.ts';
import { TARGET_NAMES, type TargetName } from './targets.ts';
import { WORKLOAD_NAMES, type WorkloadName } from './workloads.ts';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '32' },
    workloads: { type: 'string' },
    targets: { type: 'string' },
    profile: { type: 'string' },
    'node-args': { type: 'string' },
    out: { type: 'string' },
    'no-startup': { type: 'boolean', default: false },
    bundle: { type: 'boolean', default: false },
  },
});

function list<T extends string>(value: string | undefined, known: readonly T[], what: string): T[] {
  if (value === undefined) return [...known];
  const names = value.split(',').map((s) => s.trim());
  for (const n of names) if (!known.includes(n as T)) throw new Error(`unknown ${what} "${n}"; known: ${known.join(', ')}`);
  return names as T[];
}

const quick = values.quick;
const workloads = list<WorkloadName>(values.workloads, WORKLOAD_NAMES, 'workload');
const targets = list<TargetName>(values.targets, TARGET_NAMES, 'target');
const options = {
  workloads,
  targets,
  connections: Number(values.connections),
  rounds: Number(values.rounds ?? (quick ? 2 : 3)),
  durationMs: Number(values.duration ?? (quick ? 2 : 10)) * 1000,
  warmupMs: Number(values.warmup ?? (quick ? 0.5 : 2)) * 1000,
  profileDir: values.profile ? path.resolve(values.profile) : undefined,
  bundle: values.bundle,
  nodeArgs: values['node-args']?.split(' ').filter(Boolean),
};
const complete = workloads.length === WORKLOAD_NAMES.length && targets.length === TARGET_NAMES.length;
const resultsDir = path.join(import.meta.dirname, 'results');
const out = values.out ? path.resolve(values.out) : complete ? path.join(resultsDir, 'latest.json') : undefined;

/** How long one small write + fdatasync takes where the targets keep their data: what a durable commit costs here. */
function fsyncLatencyMs(samples = 40): number {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'signet-bench-fsync-'));
  const fd = openSync(path.join(dir, 'probe'), 'w');
  const times: number[] = [];
  try {
    for (let i = 0; i < samples; i++) {
      const t = performance.now();
      writeSync(fd, Buffer.alloc(4096, i));
      fdatasyncSync(fd);
      times.push(performance.now() - t);
    }
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)]! * 100) / 100;
}

function machine() {
  const cpus = os.cpus();
  return {
    cpu: `${cpus[0]?.model ?? 'unknown'} × ${cpus.length}`,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
    loadavg: os.loadavg().map((n) => Math.round(n * 100) / 100),
  };
}

/** Which code was measured: the commit, and whether src/ or bin/ had uncommitted changes. */
async function revision(): Promise<{ commit: string; uncommitted_changes: boolean }> {
  const git = (args: string[]) => promisify(execFile)('git', args, { cwd: path.join(import.meta.dirname, '..') }).then((r) => r.stdout.trim(), () => '');
  return { commit: await git(['rev-parse', 'HEAD']), uncommitted_changes: (await git(['status', '--porcelain', '--', 'src', 'bin'])) !== '' };
}

async function startup(runs: number): Promise<Record<string, { min_ms: number; median_ms: number; max_ms: number }>> {
  const { stdout } = await promisify(execFile)(process.execPath, [path.join(import.meta.dirname, 'startup.mjs'), '--json', '--runs', String(runs)], { maxBuffer: 1 << 20 });
  return (JSON.parse(stdout) as { results: Record<string, { min_ms: number; median_ms: number; max_ms: number }> }).results;
}

const log = (line: string) => process.stdout.write(line + '\n');
const started = performance.now();
const before = machine();
const fsyncMs = fsyncLatencyMs();
const measured = await revision();
log(`Signet benchmark${quick ? ' (quick)' : ''}: ${options.rounds} rounds × ${options.durationMs / 1000} s per target and workload, ${options.connections} connections`);
log(`commit ${measured.commit.slice(0, 12)}${measured.uncommitted_changes ? ' with uncommitted changes in src/ or bin/' : ''}`);
log(`${before.cpu}, ${before.memory_gb} GB, ${before.kernel}, node ${before.node}; load average ${before.loadavg.join(' ')}; fdatasync ${fsyncMs} ms`);

const run: BenchRun = await runBench({ ...options, log });
const startupFigures = values['no-startup'] ? undefined : await startup(quick ? 3 : 7);
const after = machine();

log('');
log(table(run));
log('');
log('The bar (ratios within this run):');
for (const line of bar(run)) log(line);
for (const [target, reason] of Object.entries(run.skipped)) log(`  ${target} skipped: ${reason}`);
log('');
log('Durability:');
for (const [target, how] of Object.entries(run.durability)) log(`  ${target.padEnd(16)} ${how}`);
if (startupFigures) {
  log('');
  log('Start-up (bench/startup.mjs):');
  for (const [name, r] of Object.entries(startupFigures)) log(`  ${name.padEnd(22)} min ${String(r.min_ms).padStart(5)} ms   median ${String(r.median_ms).padStart(5)} ms   max ${String(r.max_ms).padStart(5)} ms`);
}
log('');
log(`load average after: ${after.loadavg.join(' ')}; took ${Math.round((performance.now() - started) / 1000)} s`);

if (out) {
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(latestJson(run), null, 2) + '\n');
  const details = out.replace(/\.json$/, '') + '-details.json';
  const { cells, ...rest } = run;
  writeFileSync(
    details,
    JSON.stringify(
      {
        ...rest,
        revision: measured,
        machine: { ...before, loadavg_after: after.loadavg, fdatasync_ms: fsyncMs },
        startup: startupFigures ?? null,
        summaries: summaries(run),
        rounds: Object.fromEntries(Object.entries(cells).map(([w, byTarget]) => [w, Object.fromEntries(Object.entries(byTarget ?? {}).map(([t, cell]) => [t, cell.rounds]))])),
      },
      null,
      2,
    ) + '\n',
  );
  log(`wrote ${path.relative(process.cwd(), out)} and ${path.relative(process.cwd(), details)}`);
}
