// The benchmark's CI smoke: every workload for about two seconds against Signet on SQLite (a real
// `signet serve` process, tokens minted through the service layer, autocannon in its own process).
// It checks that the harness and the server agree — every request answered 2xx, every request kind
// exercised — not how fast anything is. The real run is `npm run bench` (bench/README.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runBench } from '../../bench/harness.ts';
import { latestJson } from '../../bench/report.ts';
import { WORKLOAD_NAMES, WORKLOADS } from '../../bench/workloads.ts';

test('each workload runs against signet-sqlite for 2 s with zero errors', { timeout: 120_000 }, async () => {
  const run = await runBench({
    workloads: WORKLOAD_NAMES,
    targets: ['signet-sqlite'],
    connections: 8,
    rounds: 1,
    durationMs: 2000,
    warmupMs: 0,
    firstGuessRps: 800,
  });
  for (const workload of WORKLOAD_NAMES) {
    const round = run.cells[workload]?.['signet-sqlite']?.rounds[0];
    assert.ok(round, `${workload}: no round was measured`);
    const detail = `${workload}: ${JSON.stringify({ statusCounts: round.statusCounts, errorSamples: round.errorSamples })}`;
    assert.equal(round.errors, 0, detail);
    assert.ok(round.ok > 0, detail);
    // mixed: userinfo, refresh and code each got their 2xx answers.
    for (const kind of new Set(WORKLOADS[workload].pattern)) assert.ok((round.perKind[kind]?.ok ?? 0) > 0, `${workload}: no 2xx for ${kind}; ${detail}`);
    // Issue 20: "latest.json gains per_cpu_s for every workload and target".
    const figures = latestJson(run)[workload]['signet-sqlite'];
    assert.ok(figures && Number.isFinite(figures.per_cpu_s) && figures.per_cpu_s > 0, `${workload}: per_cpu_s ${JSON.stringify(figures)}`);
    // Issue 44: "The bench report shows each workload's CPU-µs per request".
    assert.ok(Number.isFinite(figures.cpu_us) && figures.cpu_us > 0, `${workload}: cpu_us ${JSON.stringify(figures)}`);
  }
});
