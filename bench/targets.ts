// The four servers under test, each in its own process on loopback:
//   signet-sqlite    `signet serve` on its own data dir (the default: SQLite, durable)
//   signet-postgres  `signet serve` on a fresh PostgreSQL database, when one is reachable
//   oidc-provider    node-oidc-provider 9 in its best case (bench/oidc-provider-server.mjs)
//   bare-node        node:http answering a userinfo-sized JSON body (bench/bare-node-server.mjs)
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { BENCH_REDIRECT_URI, BENCH_VERIFIER, openSignetMinter, type Credentials, type MintKind } from './signet-minter.ts';
import { forkWithIpc, freePort, type IpcChild } from './processes.ts';
import { s256Challenge } from '../src/oauth/pkce.ts';

export const TARGET_NAMES = ['signet-sqlite', 'signet-postgres', 'oidc-provider', 'bare-node'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export type Target = {
  name: TargetName;
  origin: string;
  /** the server process (its VmHWM is the peak RSS reported) */
  pid: number;
  paths: { userinfo: string; token: string };
  credentials: Credentials;
  /** how a commit is made durable on this target, for the report */
  durability: string;
  /** other processes doing this target's work (its PostgreSQL backends), counted in its CPU; asked before and after each round */
  helperPids?(): Promise<number[]>;
  mint(kind: MintKind, count: number): Promise<string[]>;
  stop(): Promise<void>;
};

const ROOT = path.join(import.meta.dirname, '..');
/** application_name of the PostgreSQL connections of a Signet server under test (bench/README.md, "server CPU"). */
export const SERVER_APPLICATION_NAME = 'signet-bench-server';
export const POSTGRES_ADMIN_URL = process.env.SIGNET_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function waitForOk(url: string, child: ChildProcess, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with ${child.exitCode} before answering`);
    const ok = await fetch(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (Date.now() - started > timeoutMs) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

export type SignetOptions = { postgresUrl?: string; profileDir?: string; nodeArgs?: string[]; bundle?: boolean | undefined };

/** A real `signet serve` process (bin/signet.js), with minting through the service layer on its database. */
export async function startSignet(name: 'signet-sqlite' | 'signet-postgres', options: SignetOptions = {}): Promise<Target> {
  const dataDir = mkdtempSync(path.join(tmpdir(), `${name}-`));
  const port = await freePort();
  const secret = randomBytes(32).toString('base64url');
  const origin = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    SIGNET_DATA_DIR: dataDir,
    SIGNET_BASE_URL: origin,
    SIGNET_LOG_LEVEL: 'warn',
    SIGNET_METRICS_ADDR: 'off',
    // The admin API's fixed default port would collide between the two Signet targets.
    SIGNET_ADMIN_ADDR: 'off',
    SIGNET_SECRET: secret,
    // --bundle: from bin/serve-bundle.js's bundle (bench/README.md, "Memory"); a profiled server runs
    // from the sources, so that bench/profile-summary.mjs can name the lines of src/ where the time goes.
    SIGNET_SERVE_BUNDLE: options.bundle && !options.profileDir ? '1' : '0',
  };
  if (options.postgresUrl) {
    // The server's connections carry their own application_name, so its PostgreSQL backends can be told
    // from the minter's (same database) when their CPU is counted.
    const serverUrl = new URL(options.postgresUrl);
    serverUrl.searchParams.set('application_name', SERVER_APPLICATION_NAME);
    env.SIGNET_DATABASE_URL = serverUrl.toString();
  }
  const nodeArgs = [...(options.nodeArgs ?? []), ...(options.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`, `--cpu-prof-name=${name}.cpuprofile`] : [])];
  // cwd is the data dir, so a developer's .env in the checkout does not change what is measured.
  const child = spawn(process.execPath, [...nodeArgs, path.join(ROOT, 'bin/signet.js'), 'serve'], { cwd: dataDir, env, stdio: ['ignore', 'inherit', 'inherit'] });
  try {
    await waitForOk(`${origin}/readyz`, child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  const database = options.postgresUrl
    ? { kind: 'postgres' as const, url: options.postgresUrl, poolSize: 4 }
    : { kind: 'sqlite' as const, file: path.join(dataDir, 'signet.sqlite') };
  const minter = await openSignetMinter(database, secret);
  return {
    name,
    origin,
    pid: child.pid!,
    paths: { userinfo: '/oauth/userinfo', token: '/oauth/token' },
    credentials: minter.credentials,
    durability: options.postgresUrl ? 'PostgreSQL commit (see fsync / synchronous_commit)' : 'SQLite WAL; every acknowledged commit is fsynced (src/db/database.ts)',
    mint: (kind, count) => minter.mint(kind, count),
    async stop() {
      await minter.close();
      await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** undefined when PostgreSQL answers, else why not. */
export async function postgresUnavailableReason(adminUrl = POSTGRES_ADMIN_URL): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

/** A fresh database for the run and how the server makes commits durable; dropped by stop(). */
export async function startSignetOnPostgres(options: SignetOptions = {}): Promise<Target> {
  const dbName = `signet_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  let settings = '';
  try {
    await admin.query(`create database "${dbName}"`);
    const show = async (name: string) => ((await admin.query(`show ${name}`)).rows[0] as Record<string, string>)[name];
    settings = `fsync=${await show('fsync')}, synchronous_commit=${await show('synchronous_commit')}`;
  } finally {
    await admin.end();
  }
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${dbName}`;
  const dropDatabase = async () => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await client.connect();
    await client.query(`drop database if exists "${dbName}" with (force)`);
    await client.end();
  };
  let target: Target;
  try {
    target = await startSignet('signet-postgres', { ...options, postgresUrl: url.toString() });
  } catch (error) {
    await dropDatabase();
    throw error;
  }
  return {
    ...target,
    durability: `PostgreSQL ${settings}`,
    async helperPids() {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      try {
        // Only the backends serving the server's pool: the minter's connections to the same database
        // are idle during a round, and the query asking this runs on another database.
        const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and application_name = $2', [dbName, SERVER_APPLICATION_NAME]);
        return rows.map((r) => r.pid);
      } finally {
        await client.end();
      }
    },
    async stop() {
      await target.stop();
      await dropDatabase();
    },
  };
}

export async function startOidcProvider(): Promise<Target> {
  const { ipc, ready } = await forkWithIpc(path.join(import.meta.dirname, 'oidc-provider-server.mjs'), [BENCH_VERIFIER, s256Challenge(BENCH_VERIFIER)]);
  const clients = ready.clients as { confidential: { client_id: string; client_secret: string }; publicClientId: string; redirectUri: string };
  return {
    name: 'oidc-provider',
    origin: `http://127.0.0.1:${String(ready.port)}`,
    pid: ipc.child.pid!,
    paths: { userinfo: '/me', token: '/token' },
    credentials: {
      clientId: clients.confidential.client_id,
      clientSecret: clients.confidential.client_secret,
      publicClientId: clients.publicClientId,
      redirectUri: clients.redirectUri,
      verifier: BENCH_VERIFIER,
    },
    durability: 'none (in-memory adapter)',
    async mint(kind, count) {
      const tokens: string[] = [];
      // Chunks keep each IPC message small.
      while (tokens.length < count) {
        const reply = await ipc.request<{ tokens: string[] }>('mint', { kind, count: Math.min(5000, count - tokens.length) });
        tokens.push(...reply.tokens);
      }
      return tokens;
    },
    stop: () => ipc.stop(),
  };
}

export async function startBareNode(): Promise<Target> {
  const { ipc, ready } = await forkWithIpc(path.join(import.meta.dirname, 'bare-node-server.mjs'));
  const dummy = 'x'.repeat(43) + '=';
  return {
    name: 'bare-node',
    origin: `http://127.0.0.1:${String(ready.port)}`,
    pid: (ipc as IpcChild).child.pid!,
    paths: { userinfo: '/oauth/userinfo', token: '/oauth/token' },
    credentials: { clientId: 'bare', clientSecret: 'bare', publicClientId: 'bare', redirectUri: BENCH_REDIRECT_URI, verifier: BENCH_VERIFIER },
    durability: 'none',
    mint: async (_kind, count) => Array.from({ length: count }, () => dummy),
    stop: () => ipc.stop(),
  };
}
