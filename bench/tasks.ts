// `npm run bench:tasks` (issue 21): tasks per second and pages per second of real `signet worker`
// processes, for 1, 2 and 3 workers, on SQLite + local files and on PostgreSQL + S3 (s3rver on
// loopback), with where each task's time went (the workers' "task ended" lines carry per-stage
// milliseconds: claim, read source, engine, store results, record outcome).
// With --kind translate the tasks are translations through an OpenAI-compatible engine on loopback
// that answers each request after --latency-ms (a remote model's latency), for each worker
// concurrency in --concurrency (SIGNET_WORKER_CONCURRENCY): what running translations side by side buys.
//   node bench/tasks.ts [--tasks 30] [--workers 1,2,3] [--targets sqlite,postgres] [--json FILE]
//   node bench/tasks.ts --kind translate --tasks 12 --workers 1 --concurrency 1,4 --latency-ms 500
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/accounts/accounts.ts';
import { systemClock } from '../src/config/clock.ts';
import { openObjectStore, parseStorageUrl } from '../src/storage/open.ts';
import { createTask, type TaskContext } from '../src/tasks/tasks.ts';
import { createTranslator } from '../src/documents/translate/create.ts';
import { SIGNET_BIN } from '../test/helpers/cli.ts';
import { postgresDatabase, sqliteDatabase, type TestDatabase } from '../test/helpers/databases.ts';
import { plainPdf } from '../test/helpers/pdfs.ts';
import { startS3, type TestS3 } from '../test/helpers/s3.ts';
import { startOpenAiServer } from '../test/helpers/translation-servers.ts';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '30' },
    workers: { type: 'string', default: '1,2,3' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    json: { type: 'string' },
    kind: { type: 'string', default: 'docparse' },
    concurrency: { type: 'string', default: '1' },
    'latency-ms': { type: 'string', default: '500' },
  },
});
const KIND = values.kind === 'translate' ? 'translate' : 'docparse';
const engine = KIND === 'translate' ? await startOpenAiServer({ latencyMs: Number(values['latency-ms']) }) : undefined;
const TASKS = Number(values.tasks);
const PAGES = 3;
const STAGES = ['claimMs', 'readMs', 'engineMs', 'storeMs', 'recordMs'] as const;
type Stage = (typeof STAGES)[number];

type Target = { name: string; database: TestDatabase & { dispose(): Promise<void> }; storageUrl: string; databaseUrl: string; dataDir: string; s3?: TestS3 };

async function openTarget(name: string): Promise<Target> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signet-bench-tasks-'));
  if (name === 'sqlite') {
    const database = await sqliteDatabase();
    return { name: 'SQLite + files', database, storageUrl: `file:${path.join(dataDir, 'objects')}`, databaseUrl: `sqlite:${(database.settings as { file: string }).file}`, dataDir };
  }
  const database = await postgresDatabase();
  const s3 = await startS3('signet-bench');
  return { name: 'PostgreSQL + S3 (s3rver)', database, storageUrl: s3.url, databaseUrl: (database.settings as { url: string }).url, dataDir, s3 };
}

type Worker = { child: ChildProcess; ended: Array<Record<string, number>>; exited: Promise<void> };

function startWorker(target: Target, concurrency: number): Worker {
  const child = spawn(process.execPath, [SIGNET_BIN, 'worker', '--only', 'tasks'], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      SIGNET_DATA_DIR: target.dataDir,
      SIGNET_DATABASE_URL: target.databaseUrl,
      SIGNET_STORAGE_URL: target.storageUrl,
      SIGNET_SECRET: 'bench-tasks-secret-bench-tasks-secret-0123',
      SIGNET_LOG_LEVEL: 'info',
      SIGNET_METRICS_ADDR: 'off',
      SIGNET_WORKER_CONCURRENCY: String(concurrency),
      ...(engine ? { SIGNET_TRANSLATE_ENGINE: 'openai', SIGNET_TRANSLATE_URL: engine.url, SIGNET_TRANSLATE_MODEL: 'bench-model' } : {}),
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? 'S3RVER',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? 'S3RVER',
      AWS_REGION: 'us-east-1',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ended: Array<Record<string, number>> = [];
  let partial = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.includes('"task ended"')) continue;
      const record = JSON.parse(line) as { stages?: Record<string, number> };
      if (record.stages) ended.push(record.stages);
    }
  });
  return { child, ended, exited: new Promise((resolve) => child.once('exit', () => resolve())) };
}

async function run(target: Target, workerCount: number, concurrency: number, pdf: Buffer): Promise<Record<string, unknown>> {
  const { db, dialect } = target.database;
  const person = await createAccount(db, systemClock, { email: `bench-${workerCount}-${Date.now()}@example.com`, password: 'correct horse battery' });
  const ctx: TaskContext = { db, dialect, clock: systemClock, objects: openObjectStore(parseStorageUrl(target.storageUrl)), translator: engine ? createTranslator({ engine: 'openai', url: engine.url, model: 'bench-model', apiKey: undefined }) : undefined, uploadMaxBytes: 50 * 1024 * 1024 };
  // Workers first, given 3 s to start (Node, the schema check, a warm PDF reader): the figure is
  // throughput, not start-up. The clock runs from the first upload to the last task's end.
  const workers = Array.from({ length: workerCount }, () => startWorker(target, concurrency));
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const started = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < TASKS; i += 1) {
    const task = await createTask(ctx, {
      sub: person.sub,
      kind: KIND,
      locale: 'en',
      upload: { fileName: `t${i}.pdf`, file: Readable.from([pdf]), tooLarge: () => false },
      options: async () => (KIND === 'translate' ? { source: 'en', target: 'es' } : undefined),
    });
    ids.push(task.id);
  }
  let done = 0;
  let failed = 0;
  while (done < TASKS) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const rows = await db.selectFrom('tasks').select(['status', 'error']).where('id', 'in', ids).execute();
    const firstError = rows.find((r) => r.status === 'failed')?.error;
    if (firstError && failed === 0) console.error(`a task failed: ${firstError}`);
    done = rows.filter((r) => r.status === 'finished' || r.status === 'failed').length;
    failed = rows.filter((r) => r.status === 'failed').length;
    if (performance.now() - started > 300_000) throw new Error(`only ${done} of ${TASKS} tasks ended in 300 s`);
  }
  const seconds = (performance.now() - started) / 1000;
  const notifications = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('sub', '=', person.sub).executeTakeFirst();
  for (const w of workers) w.child.kill('SIGTERM');
  await Promise.all(workers.map((w) => w.exited));
  const stages = workers.flatMap((w) => w.ended);
  const mean = (stage: Stage) => Math.round((stages.reduce((sum, s) => sum + (s[stage] ?? 0), 0) / Math.max(1, stages.length)) * 10) / 10;
  return {
    target: target.name,
    kind: KIND,
    workers: workerCount,
    concurrency,
    tasks: TASKS,
    seconds: Math.round(seconds * 100) / 100,
    tasks_per_s: Math.round((TASKS / seconds) * 100) / 100,
    pages_per_s: Math.round(((TASKS * PAGES) / seconds) * 10) / 10,
    failed,
    notifications: Number(notifications?.n ?? 0),
    mean_ms: Object.fromEntries(STAGES.map((stage) => [stage.replace(/Ms$/, ''), mean(stage)])),
  };
}

const pdf = await plainPdf(PAGES);
const results: Array<Record<string, unknown>> = [];
for (const name of values.targets.split(',')) {
  const target = await openTarget(name);
  try {
    for (const count of values.workers.split(',').map(Number)) {
      for (const concurrency of values.concurrency.split(',').map(Number)) {
        const result = await run(target, count, concurrency, pdf);
        results.push(result);
        console.log(JSON.stringify(result));
      }
    }
  } finally {
    await target.s3?.dispose();
    await target.database.dispose();
    rmSync(target.dataDir, { recursive: true, force: true });
  }
}
await engine?.close();
console.log('\n| target | kind | workers | concurrency | tasks | seconds | tasks/s | pages/s | claim | read | engine | store | record (mean ms per task) |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const r of results) {
  const m = r.mean_ms as Record<string, number>;
  console.log(`| ${String(r.target)} | ${String(r.kind)} | ${String(r.workers)} | ${String(r.concurrency)} | ${String(r.tasks)} | ${String(r.seconds)} | ${String(r.tasks_per_s)} | ${String(r.pages_per_s)} | ${m.claim} | ${m.read} | ${m.engine} | ${m.store} | ${m.record} |`);
}
if (values.json) writeFileSync(values.json, `${JSON.stringify({ at: new Date().toISOString(), results }, null, 2)}\n`);
process.exit(0);
