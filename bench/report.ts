// Turning rounds into figures: per workload and target the median rate over rounds, latency
// percentiles over every round's responses, errors summed, the highest peak RSS; then the table with
// each target's ratio to oidc-provider and to bare node, the bar, and bench/results/latest.json.
import type { BenchRun, Cell } from './harness.ts';
import { TARGET_NAMES, type TargetName } from './targets.ts';
import { WORKLOAD_NAMES, type WorkloadName } from './workloads.ts';

export type Figures = {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  errors: number;
  rss_mb: number;
  /** requests per CPU-second of the server, its PostgreSQL backends included (the measure) */
  per_cpu_s: number;
  /** its inverse: microseconds of server CPU per request (issue 44: the fixed cost, beside bare node's) */
  cpu_us: number;
};

export type Summary = Figures & {
  /** lowest and highest round, as a share of the median: how noisy the cell was */
  spread: number;
  loadgenCpu: number;
  serverCpu: number;
  /** of serverCpu, the PostgreSQL backends */
  helperCpu: number;
  foreignCpu: number;
  exhaustedRounds: number;
};

/** The shape of bench/results/latest.json. */
export type LatestJson = Record<WorkloadName, Record<TargetName, Figures | null>>;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Inverse of the load generator's bucketOf: the middle of a bucket, in ms. */
function bucketMs(bucket: number): number {
  return bucket < 5000 ? (bucket * 10 + 5) / 1000 : 50 + (bucket - 5000) + 0.5;
}

export function percentile(histogram: Record<string, number>, p: number): number {
  const entries = Object.entries(histogram)
    .map(([b, n]) => [Number(b), n] as const)
    .sort((a, b) => a[0] - b[0]);
  const total = entries.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return NaN;
  let seen = 0;
  for (const [bucket, n] of entries) {
    seen += n;
    if (seen >= total * p) return bucketMs(bucket);
  }
  return bucketMs(entries.at(-1)![0]);
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export function summarize(cell: Cell): Summary {
  const rates = cell.rounds.map((r) => r.rps);
  const rps = median(rates);
  return {
    rps: Math.round(rps),
    p50_ms: round2(percentile(cell.histogram, 0.5)),
    p99_ms: round2(percentile(cell.histogram, 0.99)),
    errors: cell.rounds.reduce((sum, r) => sum + r.errors, 0),
    rss_mb: Math.round(Math.max(...cell.rounds.map((r) => r.rssMb))),
    spread: rps > 0 ? (Math.max(...rates) - Math.min(...rates)) / rps : NaN,
    loadgenCpu: median(cell.rounds.map((r) => r.loadgenCpu)),
    serverCpu: median(cell.rounds.map((r) => r.serverCpu)),
    helperCpu: median(cell.rounds.map((r) => r.helperCpu ?? 0)),
    per_cpu_s: Math.round(median(cell.rounds.map((r) => r.rps / r.serverCpu))),
    cpu_us: Math.round(1e6 / median(cell.rounds.map((r) => r.rps / r.serverCpu))),
    foreignCpu: cell.rounds.reduce((sum, r) => sum + r.foreignCpu, 0) / cell.rounds.length,
    exhaustedRounds: cell.rounds.filter((r) => r.exhausted).length,
  };
}

export function summaries(run: BenchRun): Partial<Record<WorkloadName, Partial<Record<TargetName, Summary>>>> {
  const out: Partial<Record<WorkloadName, Partial<Record<TargetName, Summary>>>> = {};
  for (const [workload, byTarget] of Object.entries(run.cells) as Array<[WorkloadName, Partial<Record<TargetName, Cell>>]>) {
    out[workload] = Object.fromEntries(Object.entries(byTarget).map(([target, cell]) => [target, summarize(cell)]));
  }
  return out;
}

export function latestJson(run: BenchRun): LatestJson {
  const all = summaries(run);
  const out = {} as LatestJson;
  for (const workload of WORKLOAD_NAMES) {
    out[workload] = {} as Record<TargetName, Figures | null>;
    for (const target of TARGET_NAMES) {
      const s = all[workload]?.[target];
      out[workload][target] = s ? { rps: s.rps, p50_ms: s.p50_ms, p99_ms: s.p99_ms, errors: s.errors, rss_mb: s.rss_mb, per_cpu_s: s.per_cpu_s, cpu_us: s.cpu_us } : null;
    }
  }
  return out;
}

const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);
const fmtRatio = (r: number | undefined) => (r === undefined ? '—' : `${r.toFixed(2)}×`);
const pct = (n: number) => `${Math.round(n * 100)}%`;

/** Load generator at or near one full core: the target may be faster than the figure says. */
export const LOADGEN_BOUND = 0.9;

/** Bare node's CPU-µs per request in this workload (it answers every request alike), else in userinfo: the floor of HTTP here. */
function bareCpuUs(all: ReturnType<typeof summaries>, workload: WorkloadName): number | undefined {
  return (all[workload]?.['bare-node'] ?? all.userinfo?.['bare-node'])?.cpu_us;
}

export function table(run: BenchRun): string {
  const all = summaries(run);
  const head = ['workload', 'target', 'req/s', 'spread', 'p50 ms', 'p99 ms', 'errors', 'peak RSS MB', 'server CPU', 'of it DB', 'req/CPU-s', 'CPU-µs/req', '× bare CPU-µs', '× oidc per CPU-s', 'loadgen CPU', 'others CPU', '× oidc-provider', '× bare node'];
  const rows: string[][] = [];
  for (const [workload, byTarget] of Object.entries(all) as Array<[WorkloadName, Partial<Record<TargetName, Summary>>]>) {
    for (const target of TARGET_NAMES) {
      const s = byTarget[target];
      if (!s) continue;
      rows.push([
        workload,
        target,
        s.rps.toLocaleString('en-US'),
        `±${pct(s.spread / 2)}`,
        s.p50_ms.toFixed(2),
        s.p99_ms.toFixed(2),
        String(s.errors) + (s.exhaustedRounds ? ` (${s.exhaustedRounds} short)` : ''),
        String(s.rss_mb),
        pct(s.serverCpu),
        pct(s.helperCpu),
        s.per_cpu_s.toLocaleString('en-US'),
        String(s.cpu_us),
        fmtRatio(ratio(s.cpu_us, bareCpuUs(all, workload))),
        fmtRatio(ratio(s.per_cpu_s, byTarget['oidc-provider']?.per_cpu_s)),
        pct(s.loadgenCpu) + (s.loadgenCpu >= LOADGEN_BOUND ? ' BOUND' : ''),
        pct(s.foreignCpu),
        fmtRatio(ratio(s.rps, byTarget['oidc-provider']?.rps)),
        fmtRatio(ratio(s.rps, byTarget['bare-node']?.rps)),
      ]);
    }
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The bar, each line with the figure it was judged on. */
export function bar(run: BenchRun): string[] {
  const all = summaries(run);
  const get = (w: WorkloadName, t: TargetName) => all[w]?.[t];
  const lines: string[] = [];
  const check = (label: string, value: number | undefined, ok: (v: number) => boolean, shown: (v: number) => string) => {
    lines.push(value === undefined || Number.isNaN(value) ? `  ?  ${label}: not measured in this run` : `  ${ok(value) ? 'ok' : 'NO'}  ${label}: ${shown(value)}`);
  };
  // Issue 20: requests per CPU-second of the server (PostgreSQL: with its backends), as a ratio to oidc-provider's.
  const perCpu = (w: WorkloadName, t: TargetName) => ratio(get(w, t)?.per_cpu_s, get(w, 'oidc-provider')?.per_cpu_s);
  const bars: Array<[WorkloadName, TargetName, number, string]> = [
    ['userinfo', 'signet-sqlite', 3, 'userinfo on SQLite'],
    ['userinfo', 'signet-postgres', 1, 'userinfo on PostgreSQL'],
    ['refresh', 'signet-sqlite', 1, 'refresh on SQLite (every rotation durable)'],
    ['refresh', 'signet-postgres', 0.6, 'refresh on PostgreSQL'],
    ['code', 'signet-sqlite', 1, 'code on SQLite'],
  ];
  for (const [w, t, min, label] of bars) check(`${label} ≥ ${min}× oidc-provider per CPU-second`, perCpu(w, t), (v) => v >= min, fmtRatio);
  for (const [t, max] of [['signet-sqlite', 130], ['signet-postgres', 150]] as const) {
    check(`peak RSS of ${t} under mixed < ${max} MB`, get('mixed', t)?.rss_mb, (v) => v < max, (v) => `${v} MB`);
  }
  // Issue 44: what a request costs beyond HTTP itself — each workload's CPU-µs per request beside bare node's.
  const bare = bareCpuUs(all, 'userinfo');
  if (bare !== undefined) {
    const costs = (['userinfo', 'refresh', 'code'] as const).flatMap((w) =>
      (['signet-sqlite', 'signet-postgres', 'oidc-provider'] as const).flatMap((t) => {
        const s = get(w, t);
        return s ? [`${w} ${t} ${s.cpu_us} (${fmtRatio(s.cpu_us / bare)})`] : [];
      }),
    );
    lines.push(`  CPU-µs per request, bare node ${bare}: ${costs.join('; ')}`);
  }
  const errors = Object.values(all).flatMap((byTarget) => Object.values(byTarget ?? {})).reduce((sum, s) => sum + s.errors, 0);
  check('0 errors in every row', errors, (v) => v === 0, (v) => `${v} errors`);
  const bound = Object.entries(all).flatMap(([w, byTarget]) =>
    Object.entries(byTarget ?? {})
      .filter(([, s]) => s.loadgenCpu >= LOADGEN_BOUND)
      .map(([t]) => `${w}/${t}`),
  );
  if (bound.length) lines.push(`  load generator at ≥ ${pct(LOADGEN_BOUND)} of a core (the bottleneck; the server may be faster): ${bound.join(', ')}`);
  return lines;
}
