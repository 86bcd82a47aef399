// What one shared counter update costs on PostgreSQL — the question behind "PostgreSQL or Redis for
// rate-limit and lockout state" (docs/deployment.md, "Running at scale"). Runs the real statements of
// src/accounts/throttle.store.ts (one INSERT … ON CONFLICT DO UPDATE … RETURNING per counted failure)
// on a fresh database, next to the argon2id check every sign-in attempt pays anyway.
//
//   node bench/counter-cost.ts [--n 2000] [--concurrency 32]
//
// Prints one JSON object. PostgreSQL at SIGNET_BENCH_POSTGRES_URL (default 127.0.0.1:5432, user postgres).
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import pg from 'pg';
import { hashPassword, verifyPassword } from '../src/accounts/passwords.ts';
import { recordFailure } from '../src/accounts/throttle.ts';
import { countEvent } from '../src/accounts/throttle.store.ts';
import { migrate, openDatabase, type Db } from '../src/db/database.ts';

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const N = option('n', 2000);
const CONCURRENCY = option('concurrency', 32);
const ADMIN_URL = process.env.SIGNET_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const WINDOW_MS = 15 * 60_000;

type Summary = { ops: number; ops_per_s: number; mean_ms: number; p50_ms: number; p99_ms: number };

function summarize(latencies: number[], wallMs: number): Summary {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3));
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return { ops: sorted.length, ops_per_s: Math.round((sorted.length / wallMs) * 1000), mean_ms: Number(mean.toFixed(3)), p50_ms: at(0.5), p99_ms: at(0.99) };
}

/** `n` operations in `concurrency` loops; latency of each, and the wall time of all. */
async function measure(n: number, concurrency: number, operation: (i: number) => Promise<unknown>): Promise<Summary> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t = performance.now();
        await operation(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return summarize(latencies, performance.now() - started);
}

const name = `signet_counter_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: ADMIN_URL });
await admin.connect();
await admin.query(`create database "${name}"`);
const url = new URL(ADMIN_URL);
url.pathname = `/${name}`;
const database = openDatabase({ kind: 'postgres', url: url.toString(), poolSize: CONCURRENCY });
try {
  const db: Db = database.db;
  await migrate(db);
  const settings = await admin.query<{ name: string; setting: string }>(`select name, setting from pg_settings where name in ('synchronous_commit', 'fsync', 'max_connections', 'shared_buffers')`);
  const clock = () => Date.now();
  const address = (i: number) => `198.51.100.${i % 250}`;

  // Warm up the pool and the prepared statements.
  await measure(200, CONCURRENCY, (i) => countEvent(db, `warmup:${i % 20}`, Date.now(), WINDOW_MS));

  const result = {
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version },
    postgres: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
    // one statement, one connection at a time: the latency a sign-in attempt adds per counter
    one_counter_sequential: await measure(N, 1, (i) => countEvent(db, `address:${address(i)}`, Date.now(), WINDOW_MS)),
    // many processes counting different keys at once
    distinct_counters_concurrent: await measure(N, CONCURRENCY, (i) => countEvent(db, `account:${randomUUID()}`, Date.now(), WINDOW_MS)),
    // the worst case: every update on one row (one address spraying), serialized by its row lock
    one_hot_counter_concurrent: await measure(N, CONCURRENCY, () => countEvent(db, 'address:203.0.113.7', Date.now(), WINDOW_MS)),
    // what a failed sign-in does: three counters, and a lock when one is due
    failed_signin_counters: await measure(N, CONCURRENCY, (i) => recordFailure(db, clock, { account: `stand-in-${i % 500}`, address: address(i) })),
  };
  const passwordHash = await hashPassword('correct horse battery staple');
  const argon2 = await measure(40, 1, () => verifyPassword(passwordHash, 'wrong horse battery staple'));
  process.stdout.write(JSON.stringify({ ...result, argon2id_verify_sequential: argon2 }, null, 2) + '\n');
} finally {
  await database.close();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
}
