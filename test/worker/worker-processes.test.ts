// Real `signet worker` processes on one PostgreSQL: two workers share 50 queued tasks and run each
// exactly once; a worker killed with SIGKILL mid-task leaves a lease that expires, and the task is
// finished by another worker instead of staying `running`; SIGTERM gives the current task back.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { systemClock } from '../../src/config/clock.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import { createTask, type TaskContext } from '../../src/tasks/tasks.ts';
import * as store from '../../src/tasks/tasks.store.ts';
import { SIGNET_BIN } from '../helpers/cli.ts';
import { postgresDatabase, type TestDatabase } from '../helpers/databases.ts';
import { plainPdf } from '../helpers/pdfs.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { startLibreTranslateServer, type FakeServer } from '../helpers/translation-servers.ts';

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

type Worker = { child: ChildProcess; lines: string[]; exited: Promise<number | null> };

describe('signet worker processes on one PostgreSQL', { skip: pgSkip }, () => {
  let database: TestDatabase & { dispose(): Promise<void> };
  let storageDir: string;
  let ctx: TaskContext & { sub: string };
  let translator: FakeServer;
  const workers: Worker[] = [];

  before(async () => {
    database = await postgresDatabase();
    storageDir = mkdtempSync(path.join(tmpdir(), 'signet-workers-objects-'));
    translator = await startLibreTranslateServer();
    const person = await createAccount(database.db, systemClock, { email: 'ada@example.com', password: 'correct horse battery' });
    ctx = {
      db: database.db,
      dialect: database.dialect,
      clock: systemClock,
      objects: openObjectStore(parseStorageUrl(`file:${storageDir}`)),
      // the API side checks a translator is configured; the workers bring their own (same server)
      translator: createTranslator({ engine: 'libretranslate', url: translator.url, model: undefined, apiKey: undefined }),
      uploadMaxBytes: 50 * 1024 * 1024,
      sub: person.sub,
    };
  });
  after(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    await translator.close();
    await database.dispose();
  });

  function startWorker(env: Record<string, string> = {}): Worker {
    const child = spawn(process.execPath, [SIGNET_BIN, 'worker', '--only', 'tasks'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        SIGNET_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'signet-worker-data-')),
        SIGNET_DATABASE_URL: (database.settings as { url: string }).url,
        SIGNET_STORAGE_URL: `file:${storageDir}`,
        SIGNET_SECRET: 'worker-test-secret-worker-test-secret-0123',
        SIGNET_LOG_LEVEL: 'info',
        SIGNET_METRICS_ADDR: 'off',
        SIGNET_TRANSLATE_ENGINE: 'libretranslate',
        SIGNET_TRANSLATE_URL: translator.url,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      const text = partial + d.toString();
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    child.stderr!.on('data', (d: Buffer) => lines.push(d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const worker = { child, lines, exited };
    workers.push(worker);
    return worker;
  }

  async function queue(kind: 'docparse' | 'translate', pdf: Buffer): Promise<string> {
    const view = await createTask(ctx, {
      sub: ctx.sub,
      kind,
      locale: 'en',
      upload: { fileName: 'plain.pdf', file: Readable.from([pdf]), tooLarge: () => false },
      options: async () => (kind === 'translate' ? { source: 'en', target: 'es' } : undefined),
    });
    return view.id;
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 90_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test('"two workers on one PostgreSQL with 50 queued tasks: each runs exactly once"', async () => {
    const pdf = await plainPdf(1);
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await queue('docparse', pdf));
    const a = startWorker();
    const b = startWorker();
    await until('all 50 tasks to end', async () => {
      const rows = await database.db.selectFrom('tasks').select(['status']).where('id', 'in', ids).execute();
      return rows.every((r) => r.status === 'finished' || r.status === 'failed') ? true : undefined;
    });
    const rows = await database.db.selectFrom('tasks').selectAll().where('id', 'in', ids).execute();
    assert.deepEqual([...new Set(rows.map((r) => r.status))], ['finished']);
    assert.ok(rows.every((r) => r.attempts === 1), 'no task was claimed twice');
    const starts = [...a.lines, ...b.lines].filter((l) => l.includes('"task started"')).map((l) => (JSON.parse(l) as { task: string }).task);
    assert.equal(starts.length, 50, 'fifty runs in all');
    assert.equal(new Set(starts).size, 50, 'each task ran once');
    const perWorker = [a, b].map((w) => w.lines.filter((l) => l.includes('"task started"')).length);
    assert.ok(perWorker.every((n) => n > 0), `both workers took work: ${perWorker}`);
    for (const w of [a, b]) w.child.kill('SIGTERM');
    assert.deepEqual(await Promise.all([a.exited, b.exited]), [0, 0]);
  });

  test('"a worker killed with SIGKILL mid-task: the task does not stay running" — another worker finishes it after the lease expires', async () => {
    translator.troubleNext({ kind: 'stall' }, 1);
    const id = await queue('translate', await plainPdf(1));
    const doomed = startWorker({ SIGNET_WORKER_LEASE_SECONDS: '2' });
    await until('the task to run', async () => ((await store.findTask(database.db, id))?.status === 'running' ? true : undefined));
    await until('the stalled translation request', async () => (translator.requestsTo('/translate').length > 0 ? true : undefined));
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    assert.equal((await store.findTask(database.db, id))?.status, 'running', 'a dead worker cannot clean up: only its lease can expire');
    startWorker({ SIGNET_WORKER_LEASE_SECONDS: '2' });
    const row = await until('the task to end', async () => {
      const r = await store.findTask(database.db, id);
      return r && (r.status === 'finished' || r.status === 'failed') ? r : undefined;
    });
    assert.equal(row.status, 'finished', row.error ?? '');
    assert.equal(row.attempts, 2, 'claimed again after the lease expired');
  });

  test('"SIGTERM: finish or give back the current task, then exit" — a stalled task is given back without using up an attempt', async () => {
    // Keep other workers away from this task: stop the ones still running.
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    translator.troubleNext({ kind: 'stall' }, 1);
    const id = await queue('translate', await plainPdf(1));
    const worker = startWorker();
    await until('the task to run', async () => ((await store.findTask(database.db, id))?.status === 'running' ? true : undefined));
    await until('the stalled translation request', async () => (translator.requestsTo('/translate').length > 0 ? true : undefined));
    worker.child.kill('SIGTERM');
    assert.equal(await worker.exited, 0);
    const row = await store.findTask(database.db, id);
    assert.equal(row?.status, 'queued');
    assert.equal(row?.attempts, 0);
    assert.equal(row?.lease_owner, null);
  });
});
