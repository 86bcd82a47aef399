// One benchmark run: start the targets and the load generator, then for each workload run every target
// in alternation (A B C D, A B C D, …) so drift and other people's load spread over all of them.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { forkWithIpc, machineCpuSeconds, peakRssMb, processCpuSeconds, resetPeakRss, type IpcChild } from './processes.ts';
import {
  postgresUnavailableReason,
  startBareNode,
  startOidcProvider,
  startSignet,
  startSignetOnPostgres,
  TARGET_NAMES,
  type Target,
  type TargetName,
} from './targets.ts';
import { prepareJob, USERINFO_TOKENS, WORKLOAD_NAMES, type LoadJob, type WorkloadName } from './workloads.ts';

export type BenchOptions = {
  workloads: readonly WorkloadName[];
  targets: readonly TargetName[];
  connections: number;
  rounds: number;
  durationMs: number;
  warmupMs: number;
  /** Write a CPU profile of each Signet server into this folder (node --cpu-prof). */
  profileDir?: string | undefined;
  /** extra Node flags for the Signet servers (e.g. V8 heap sizes), to try them under load */
  nodeArgs?: string[] | undefined;
  /** run the Signet servers from bin/serve-bundle.js's bundle (SIGNET_SERVE_BUNDLE=1) */
  bundle?: boolean | undefined;
  /** The rate single-use lists are sized for before any round has been measured (default 3,000/s). */
  firstGuessRps?: number | undefined;
  log?: (line: string) => void;
};

/** What the load generator reports for one round (bench/load-generator.mjs). */
export type LoadResult = {
  ok: number;
  non2xx: number;
  socketErrors: number;
  errors: number;
  seconds: number;
  rps: number;
  exhausted: boolean;
  histogram: Record<string, number>;
  statusCounts: Record<string, number>;
  perKind: Record<string, { ok: number; non2xx: number }>;
  errorSamples: Array<{ kind: string; status: number; body: string }>;
  loadgenCpu: number;
  loadgenElu: number;
};

export type RoundSample = Omit<LoadResult, 'histogram'> & {
  round: number;
  rssMb: number;
  /** cores the server used during the round, its database backends included */
  serverCpu: number;
  /** of those, cores used by its PostgreSQL backends */
  helperCpu: number;
  /** cores used by everything that is neither the server, the load generator nor the harness */
  foreignCpu: number;
  minted: number;
  mintSeconds: number;
};

export type Cell = {
  rounds: RoundSample[];
  histogram: Record<string, number>;
};

export type BenchRun = {
  startedAt: string;
  finishedAt: string;
  options: Omit<BenchOptions, 'log'>;
  skipped: Partial<Record<TargetName, string>>;
  durability: Partial<Record<TargetName, string>>;
  cells: Partial<Record<WorkloadName, Partial<Record<TargetName, Cell>>>>;
};

/** First guess of a target's rate, for sizing the single-use lists of a warm-up. */
const FIRST_GUESS_RPS = 3000;
/** Lists are sized for at least this rate, so a slow warm-up (a busy machine) does not starve the next round. */
const SIZING_FLOOR_RPS = 1000;
/** Single-use lists hold this many times what the best rate seen so far would consume. */
const MARGIN = 1.6;

async function startTarget(name: TargetName, options: BenchOptions): Promise<Target> {
  switch (name) {
    case 'signet-sqlite':
      return startSignet('signet-sqlite', { profileDir: options.profileDir, nodeArgs: options.nodeArgs, bundle: options.bundle });
    case 'signet-postgres':
      return startSignetOnPostgres({ profileDir: options.profileDir, nodeArgs: options.nodeArgs, bundle: options.bundle });
    case 'oidc-provider':
      return startOidcProvider();
    case 'bare-node':
      return startBareNode();
  }
}

export async function runBench(options: BenchOptions): Promise<BenchRun> {
  const log = options.log ?? (() => {});
  const startedAt = new Date().toISOString();
  const skipped: BenchRun['skipped'] = {};
  const targets: Target[] = [];
  const cells: BenchRun['cells'] = {};
  const { ipc: loadgen } = await forkWithIpc(path.join(import.meta.dirname, 'load-generator.mjs'));
  try {
    for (const name of TARGET_NAMES.filter((t) => options.targets.includes(t))) {
      if (name === 'signet-postgres') {
        const reason = await postgresUnavailableReason();
        if (reason) {
          skipped[name] = `PostgreSQL not reachable: ${reason}`;
          log(`skipping signet-postgres: ${reason}`);
          continue;
        }
      }
      targets.push(await startTarget(name, options));
      log(`started ${name} at ${targets.at(-1)!.origin}`);
    }
    const userinfoTokens = new Map<TargetName, string[]>();
    for (const target of targets) userinfoTokens.set(target.name, await target.mint('access', USERINFO_TOKENS));

    for (const workload of WORKLOAD_NAMES.filter((w) => options.workloads.includes(w))) {
      const byTarget: Partial<Record<TargetName, Cell>> = {};
      cells[workload] = byTarget;
      const bestRps = new Map<TargetName, number>();
      const prepare = (target: Target, durationMs: number, margin: number) =>
        prepareJob(target, workload, {
          connections: options.connections,
          durationMs,
          expectedRps: Math.max(bestRps.get(target.name) ?? options.firstGuessRps ?? FIRST_GUESS_RPS, Math.min(SIZING_FLOOR_RPS, options.firstGuessRps ?? SIZING_FLOOR_RPS)),
          margin,
          userinfoTokens: userinfoTokens.get(target.name)!,
        });
      if (options.warmupMs > 0) {
        for (const target of targets) {
          const { job } = await prepare(target, options.warmupMs, 1);
          const result = await runLoad(loadgen, job);
          bestRps.set(target.name, result.rps);
        }
      }
      for (let round = 1; round <= options.rounds; round++) {
        for (const target of targets) {
          const mintStarted = performance.now();
          const { job, minted } = await prepare(target, options.durationMs, MARGIN);
          const mintSeconds = (performance.now() - mintStarted) / 1000;
          const { result, sample } = await measuredRound(loadgen, target, job);
          bestRps.set(target.name, Math.max(bestRps.get(target.name) ?? 0, result.rps));
          const cell = (byTarget[target.name] ??= { rounds: [], histogram: {} });
          const { histogram, ...rest } = result;
          cell.rounds.push({ ...rest, ...sample, round, minted, mintSeconds });
          for (const [bucket, count] of Object.entries(histogram)) cell.histogram[bucket] = (cell.histogram[bucket] ?? 0) + count;
          log(
            `${workload.padEnd(9)} round ${round}/${options.rounds} ${target.name.padEnd(15)} ${Math.round(result.rps).toString().padStart(6)} req/s` +
              `  errors ${result.errors}${result.exhausted ? '  (a token list ran out: shorter window)' : ''}` +
              `  loadgen ${Math.round(result.loadgenCpu * 100)}% cpu  server ${Math.round(sample.serverCpu * 100)}%  others ${Math.round(sample.foreignCpu * 100)}%`,
          );
          for (const e of result.errorSamples.slice(0, 2)) log(`    ${e.kind} ${e.status}: ${e.body}`);
        }
      }
    }
    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      options: { ...options, log: undefined } as BenchRun['options'],
      skipped,
      durability: Object.fromEntries(targets.map((t) => [t.name, t.durability])),
      cells,
    };
  } finally {
    for (const target of targets) await target.stop().catch((error: unknown) => log(`stopping ${target.name}: ${String(error)}`));
    await loadgen.stop();
  }
}

function runLoad(loadgen: IpcChild, job: LoadJob): Promise<LoadResult> {
  return loadgen.request<{ result: LoadResult }>('run', { job }).then((reply) => reply.result);
}

/** One round with the server's peak RSS reset first, and where the machine's CPU went meanwhile. */
async function measuredRound(loadgen: IpcChild, target: Target, job: LoadJob) {
  resetPeakRss(target.pid);
  const loadgenPid = loadgen.child.pid!;
  // The server's CPU includes its database backends (PostgreSQL): those connected before the round,
  // counted from their CPU then, and those that connected during it (the pool grew), counted whole.
  const helpersBefore = (await target.helperPids?.()) ?? [];
  const helperCpuBefore = new Map(helpersBefore.map((pid) => [pid, processCpuSeconds(pid) || 0]));
  const before = { machine: machineCpuSeconds(), server: processCpuSeconds(target.pid), loadgen: processCpuSeconds(loadgenPid), self: process.cpuUsage() };
  const started = performance.now();
  const result = await runLoad(loadgen, job);
  const seconds = (performance.now() - started) / 1000;
  const machine = machineCpuSeconds();
  const helpersAfter = (await target.helperPids?.()) ?? [];
  // A backend gone by now (its connection closed) is not counted for this round.
  const helpers = helpersAfter.reduce((sum, pid) => sum + Math.max(0, (processCpuSeconds(pid) || 0) - (helperCpuBefore.get(pid) ?? 0)), 0);
  const server = processCpuSeconds(target.pid) - before.server + helpers;
  const load = processCpuSeconds(loadgenPid) - before.loadgen;
  const self = process.cpuUsage(before.self);
  const ours = server + load + (self.user + self.system) / 1e6;
  const sample = {
    rssMb: peakRssMb(target.pid),
    serverCpu: server / seconds,
    /** of serverCpu, the share of the database backends (PostgreSQL) */
    helperCpu: helpers / seconds,
    foreignCpu: Math.max(0, (machine.busy - before.machine.busy - ours) / seconds),
  };
  return { result, sample };
}
