// The worker facing hostile and scanned files (issue 17): a content failure fails the task on its
// first attempt with a message (never three leases), the worker keeps running the next task, and a
// page without text is named in the task record's notes when no OCR engine is installed.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { systemClock } from '../../src/config/clock.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { createTask, getTask, type TaskContext } from '../../src/tasks/tasks.ts';
import * as store from '../../src/tasks/tasks.store.ts';
import { createLogger } from '../../src/web/logging.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { plainPdf } from '../helpers/pdfs.ts';
import { deflatedZeros, joinPdfs, pdfWithContent, prosePdf, scanPdf, scanToolsMissing } from '../helpers/scans.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';

const silent = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));

async function setup() {
  const database = await sqliteDatabase();
  const objects = openObjectStore(parseStorageUrl(`file:${mkdtempSync(path.join(tmpdir(), 'signet-hostile-objects-'))}`));
  const person = await createAccount(database.db, systemClock, { email: 'ada@example.com', password: 'correct horse battery' });
  const ctx: TaskContext = { db: database.db, dialect: database.dialect, clock: systemClock, objects, translator: undefined, uploadMaxBytes: 50 * 1024 * 1024 };
  const queue = (pdf: Buffer, name: string) =>
    createTask(ctx, { sub: person.sub, kind: 'docparse', locale: 'en', upload: { fileName: name, file: Readable.from([pdf]), tooLarge: () => false }, options: async () => undefined });
  const until = async (id: string) => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const row = await store.findTask(database.db, id);
      if (row && (row.status === 'finished' || row.status === 'failed')) return row;
      if (Date.now() > deadline) throw new Error(`task ${id} is still ${row?.status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { database, ctx, sub: person.sub, queue, until };
}

test('issue 17: "a content failure is a TaskFailure, not a retry" — a decompression bomb fails on its first attempt and the worker runs the next task', async () => {
  const { database, ctx, queue, until } = await setup();
  const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50, maxAttempts: 3 });
  try {
    const bomb = await queue(pdfWithContent(await deflatedZeros(1.5 * 1024 * 2 ** 20)), 'bomb.pdf');
    const failed = await until(bomb.id);
    assert.equal(failed.status, 'failed');
    assert.equal(failed.attempts, 1, 'the lease was taken once');
    assert.match(failed.error ?? '', /needed more than 1024 MB of memory/);
    const next = await queue(await plainPdf(2), 'next.pdf');
    assert.equal((await until(next.id)).status, 'finished', 'the worker survived and runs the next task');
  } finally {
    await runner.stop();
    await database.dispose();
  }
});

test('issue 17: without an OCR engine "the task record says, in words a person understands, which pages had no text and why"', { skip: skipUnlessAvailable('poppler (pdftoppm)', scanToolsMissing()) }, async () => {
  const { database, ctx, sub, queue, until } = await setup();
  const runner = startTaskRunner({ ...ctx, logger: silent, ocr: null }, { pollMs: 20, heartbeatMs: 50 });
  try {
    const prose = await prosePdf('A heading', ['A paragraph of text that has a text layer.']);
    const task = await queue(await joinPdfs(prose, await scanPdf(prose, 100)), 'mixed.pdf');
    assert.equal((await until(task.id)).status, 'finished');
    const view = await getTask(ctx, sub, 'docparse', task.id);
    assert.equal(view.notes.length, 1);
    assert.match(view.notes[0] ?? '', /^Page 2 has no text layer .*no OCR engine is installed/);
  } finally {
    await runner.stop();
    await database.dispose();
  }
});
