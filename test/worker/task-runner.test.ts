// The worker's task side in-process, against real databases, real storage and real engines: a task
// goes queued → running → finished with its results; cancel reaches running work; a lease that
// expires is claimed again, and after the last attempt the task fails — never stuck in `running`.
import assert from 'node:assert/strict';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { createAccount } from '../../src/accounts/accounts.ts';
import { manualClock, systemClock } from '../../src/config/clock.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import type { Translator } from '../../src/documents/translate/translator.ts';
import { createTask, type TaskContext } from '../../src/tasks/tasks.ts';
import * as store from '../../src/tasks/tasks.store.ts';
import { createLogger } from '../../src/web/logging.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { apertiumMissing, skipUnlessAvailable } from '../helpers/services.ts';
import { plainPdf, samplePdf, SAMPLE } from '../helpers/pdfs.ts';
import { startLibreTranslateServer, startOpenAiServer } from '../helpers/translation-servers.ts';

const apertiumSkip = skipUnlessAvailable('Apertium (eng-spa)', apertiumMissing());

const silent = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));

type Setup = TaskContext & { sub: string; objects: ObjectStore };

async function setup(database: TestDatabase, translator?: Translator): Promise<Setup> {
  const objects = openObjectStore(parseStorageUrl(`file:${mkdtempSync(path.join(tmpdir(), 'signet-worker-objects-'))}`));
  const person = await createAccount(database.db, systemClock, { email: 'ada@example.com', password: 'correct horse battery' });
  return { db: database.db, dialect: database.dialect, clock: systemClock, objects, translator, uploadMaxBytes: 50 * 1024 * 1024, sub: person.sub };
}

async function queue(ctx: Setup, kind: 'docparse' | 'translate', pdf: Buffer, name = 'sample.pdf', pair = { source: 'en', target: 'es' }) {
  const { Readable } = await import('node:stream');
  return createTask(ctx, {
    sub: ctx.sub,
    kind,
    locale: 'en',
    upload: { fileName: name, file: Readable.from([pdf]), tooLarge: () => false },
    options: async () => (kind === 'translate' ? pair : undefined),
  });
}

/** Waits (by polling the database, not by sleeping a fixed time) until the task reaches a status. */
async function untilStatus(ctx: Setup, id: string, statuses: string[], timeoutMs = 60_000): Promise<store.TaskRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await store.findTask(ctx.db, id);
    if (row && statuses.includes(row.status)) return row;
    if (Date.now() > deadline) throw new Error(`task ${id} is ${row?.status}, not ${statuses.join('/')}, after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readText(objects: ObjectStore, key: string): Promise<string> {
  const { body } = await objects.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function pdfText(objects: ObjectStore, key: string): Promise<string> {
  const { body } = await objects.get(key);
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  const cMapUrl = path.join(path.dirname(new URL(import.meta.resolve('pdfjs-dist/package.json')).pathname), 'cmaps') + '/';
  const loading = getDocument({ data: new Uint8Array(Buffer.concat(chunks)), cMapUrl, cMapPacked: true, verbosity: 0 });
  const document = await loading.promise;
  let text = '';
  for (let n = 1; n <= document.numPages; n++) {
    const content = await (await document.getPage(n)).getTextContent();
    text += content.items.map((i) => ('str' in i ? i.str : '')).join(' ') + '\n';
  }
  await loading.destroy();
  return text;
}

forEachDatabase('worker: tasks', (open) => {
  test('docparse end to end: queued → finished; document.md has every page in reading order and the heading as a Markdown heading; document.json has the blocks; the owner is notified', async () => {
    const ctx = await setup(await open());
    const task = await queue(ctx, 'docparse', await samplePdf());
    const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
    try {
      const row = await untilStatus(ctx, task.id, ['finished', 'failed']);
      assert.equal(row.status, 'finished', row.error ?? '');
      assert.equal(row.progress_done, row.progress_total);
      const files = JSON.parse(row.files) as Array<{ name: string; content_type: string }>;
      assert.deepEqual(files.map((f) => f.name).sort(), ['document.html', 'document.json', 'document.md', 'document.txt'], 'issue 40: "HTML and plain-text outputs … the task\'s files"');
      assert.equal(files.find((f) => f.name === 'document.html')?.content_type, 'text/html; charset=utf-8');
      assert.equal(files.find((f) => f.name === 'document.txt')?.content_type, 'text/plain; charset=utf-8');
      const html = await readText(ctx.objects, `tasks/${task.id}/document.html`);
      assert.match(html, new RegExp(`<h1>${SAMPLE.title}</h1>`), 'the title as the HTML\'s <h1>');
      const text = await readText(ctx.objects, `tasks/${task.id}/document.txt`);
      assert.match(text, new RegExp(`^${SAMPLE.title}$`, 'm'), 'the title on a line of its own, without Markdown\'s #');
      assert.doesNotMatch(text, /^#/m);
      const md = await readText(ctx.objects, `tasks/${task.id}/document.md`);
      assert.match(md, new RegExp(`^# ${SAMPLE.title}$`, 'm'));
      const order = [SAMPLE.title, SAMPLE.columnsHeading, 'A1 alpha', 'A8 alpha', SAMPLE.tableHeading, SAMPLE.chineseHeading].map((s) => md.indexOf(s));
      assert.ok(order.every((i) => i >= 0), `every page's text is there: ${order}`);
      assert.deepEqual([...order].sort((a, b) => a - b), order, 'in reading order');
      const json = JSON.parse(await readText(ctx.objects, `tasks/${task.id}/document.json`)) as { texts: Array<{ text: string; label: string; prov: Array<{ page_no: number }> }> };
      assert.ok(json.texts.some((t) => t.text === SAMPLE.title && t.prov[0]?.page_no === 1));
      const notes = await ctx.db.selectFrom('notifications').selectAll().where('sub', '=', ctx.sub).execute();
      assert.equal(notes.length, 1);
      assert.equal(notes[0]!.category, 'docparse');
      assert.match(notes[0]!.title, /finished/);
    } finally {
      await runner.stop();
    }
  });

  test('translate end to end through a LibreTranslate-shaped server: translated.md and a translated.pdf whose text extracts', async () => {
    const server = await startLibreTranslateServer();
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'libretranslate', url: server.url, model: undefined, apiKey: 'k-123' }));
      const task = await queue(ctx, 'translate', await plainPdf(2), 'plain.pdf');
      const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
      try {
        const row = await untilStatus(ctx, task.id, ['finished', 'failed']);
        assert.equal(row.status, 'finished', row.error ?? '');
        const md = await readText(ctx.objects, `tasks/${task.id}/translated.md`);
        assert.match(md, /\[es\] Plain page 1\./);
        const html = await readText(ctx.objects, `tasks/${task.id}/translated.html`);
        assert.match(html, /<html lang="es">/, 'translated.html in the target language');
        assert.match(html, /<p>\[es\] Plain page 1\.<\/p>/);
        assert.match(await pdfText(ctx.objects, `tasks/${task.id}/translated.pdf`), /\[es\] Plain page 2\./);
        assert.match(await pdfText(ctx.objects, `tasks/${task.id}/bilingual.pdf`), /Plain page 1\.[\s\S]*\[es\] Plain page 1\.[\s\S]*Plain page 2\.[\s\S]*\[es\] Plain page 2\./);
        const notes = await ctx.db.selectFrom('notifications').selectAll().where('sub', '=', ctx.sub).execute();
        assert.equal(notes[0]!.category, 'translation', 'spec: "a PDF translation that finishes … notifies its owner"');
      } finally {
        await runner.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('issue 18: "if ghostscript is missing, the task says which file could not be produced and why, in words, and still delivers translated.md"', async () => {
    const server = await startLibreTranslateServer();
    // A PATH with prlimit and nothing else: ghostscript cannot be found, everything else runs in-process.
    const bin = mkdtempSync(path.join(tmpdir(), 'signet-no-gs-'));
    symlinkSync('/usr/bin/prlimit', path.join(bin, 'prlimit'));
    const savedPath = process.env.PATH;
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'libretranslate', url: server.url, model: undefined, apiKey: undefined }));
      const task = await queue(ctx, 'translate', await plainPdf(1), 'plain.pdf');
      process.env.PATH = bin;
      const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
      try {
        const row = await untilStatus(ctx, task.id, ['finished', 'failed']);
        assert.equal(row.status, 'finished', row.error ?? '');
        const names = (JSON.parse(row.files) as Array<{ name: string }>).map((f) => f.name);
        assert.deepEqual(names, ['translated.md', 'translated.html', 'translation-notes.txt']);
        assert.match(await readText(ctx.objects, `tasks/${task.id}/translated.md`), /\[es\] Plain page 1\./);
        assert.match(await readText(ctx.objects, `tasks/${task.id}/translation-notes.txt`), /translated\.pdf and bilingual\.pdf could not be produced: Ghostscript \(gs\) is not installed/);
      } finally {
        await runner.stop();
      }
    } finally {
      process.env.PATH = savedPath;
      await server.close();
    }
  });

  test('translate end to end with the real Apertium engine (eng-spa); translated.pdf opens and its text extracts', { skip: apertiumSkip }, async () => {
    const ctx = await setup(await open(), createTranslator({ engine: 'apertium', url: undefined, model: undefined, apiKey: undefined }));
    const task = await queue(ctx, 'translate', await plainPdf(2), 'plain.pdf');
    const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
    try {
      const row = await untilStatus(ctx, task.id, ['finished', 'failed']);
      assert.equal(row.status, 'finished', row.error ?? '');
      assert.match(await readText(ctx.objects, `tasks/${task.id}/translated.md`), /Página sencilla 1\./);
      assert.match(await pdfText(ctx.objects, `tasks/${task.id}/translated.pdf`), /Página sencilla 2\./);
    } finally {
      await runner.stop();
    }
  });

  test('translate through an OpenAI-shaped server', async () => {
    const server = await startOpenAiServer();
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'openai', url: server.url, model: 'test-model', apiKey: undefined }));
      const task = await queue(ctx, 'translate', await plainPdf(1), 'plain.pdf');
      const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
      try {
        const row = await untilStatus(ctx, task.id, ['finished', 'failed']);
        assert.equal(row.status, 'finished', row.error ?? '');
        assert.match(await readText(ctx.objects, `tasks/${task.id}/translated.md`), /\[es\] Plain page 1\./);
      } finally {
        await runner.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('issue 21: "a worker may run more than one task at a time where the engine waits on I/O" — SIGNET_WORKER_CONCURRENCY 3 runs three translations side by side, parsing stays one at a time', async () => {
    const server = await startOpenAiServer({ holdUntil: 3 });
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'openai', url: server.url, model: 'test-model', apiKey: undefined }));
      const translations = await Promise.all([0, 1, 2, 3, 4, 5].map(async (i) => queue(ctx, 'translate', await plainPdf(1), `t${i}.pdf`)));
      const parses = await Promise.all([0, 1].map(async (i) => queue(ctx, 'docparse', await plainPdf(1), `p${i}.pdf`)));
      const lines: Array<{ msg: string; task: string; kind?: string }> = [];
      const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(JSON.parse(chunk.toString()) as (typeof lines)[number]), done()) }));
      const runner = startTaskRunner({ ...ctx, logger }, { pollMs: 20, heartbeatMs: 50, concurrency: 3 });
      try {
        for (const task of [...translations, ...parses]) assert.equal((await untilStatus(ctx, task.id, ['finished', 'failed'])).status, 'finished');
        assert.equal(server.peakInFlight(), 3, 'three translation requests were waiting on the engine at once');
        // Parsing is CPU-bound: the log never shows a parse starting while another parse is running.
        const parseIds = new Set(parses.map((task) => task.id));
        let parsing = 0;
        for (const line of lines.filter((l) => parseIds.has(l.task))) {
          if (line.msg === 'task started') parsing += 1;
          if (line.msg === 'task ended') parsing -= 1;
          assert.ok(parsing <= 1, 'two parsing tasks ran at once');
        }
        assert.equal(lines.filter((l) => parseIds.has(l.task) && l.msg === 'task started').length, 2);
        const finished = await ctx.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('sub', '=', ctx.sub).executeTakeFirstOrThrow();
        assert.equal(Number(finished.n), 8, 'each task notified exactly once');
      } finally {
        await runner.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('issue 21: "default 1" — without SIGNET_WORKER_CONCURRENCY a worker waits on one translation at a time', async () => {
    const server = await startOpenAiServer({ holdUntil: 2, holdMs: 1_000 });
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'openai', url: server.url, model: 'test-model', apiKey: undefined }));
      const tasks = await Promise.all([0, 1, 2].map(async (i) => queue(ctx, 'translate', await plainPdf(1), `t${i}.pdf`)));
      const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
      try {
        for (const task of tasks) assert.equal((await untilStatus(ctx, task.id, ['finished', 'failed'])).status, 'finished');
        assert.equal(server.peakInFlight(), 1);
      } finally {
        await runner.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('a translation engine that keeps failing fails the task with a message, and the owner is notified', async () => {
    const server = await startLibreTranslateServer();
    server.troubleNext({ kind: 'status', status: 400, body: JSON.stringify({ error: 'bad pair' }) }, 10);
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'libretranslate', url: server.url, model: undefined, apiKey: undefined }));
      const task = await queue(ctx, 'translate', await plainPdf(1));
      const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
      try {
        const row = await untilStatus(ctx, task.id, ['finished', 'failed']);
        assert.equal(row.status, 'failed');
        assert.match(row.error ?? '', /\S/);
        assert.deepEqual(JSON.parse(row.files), []);
        assert.deepEqual(await ctx.objects.list(`tasks/${task.id}/`), [`tasks/${task.id}/source.pdf`], 'no partial results are kept');
        const notes = await ctx.db.selectFrom('notifications').selectAll().where('sub', '=', ctx.sub).execute();
        assert.match(notes[0]!.title, /failed/);
      } finally {
        await runner.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('"cancellation reaches a running task within a few seconds and stops its work"; nothing of the run is kept', async () => {
    const server = await startLibreTranslateServer();
    server.troubleNext({ kind: 'stall' }, 5);
    try {
      const ctx = await setup(await open(), createTranslator({ engine: 'libretranslate', url: server.url, model: undefined, apiKey: undefined }));
      const task = await queue(ctx, 'translate', await plainPdf(1));
      const runner = startTaskRunner({ ...ctx, logger: silent }, { pollMs: 20, heartbeatMs: 50 });
      try {
        await untilStatus(ctx, task.id, ['running']);
        while (server.requestsTo('/translate').length === 0) await new Promise((r) => setTimeout(r, 20));
        assert.equal(await store.cancelTask(ctx.db, task.id, Date.now()), true);
        const started = Date.now();
        // The runner notices at its next heartbeat, aborts the stalled request and discards the run.
        while ((await ctx.db.selectFrom('tasks').select('lease_owner').where('id', '=', task.id).executeTakeFirst())?.lease_owner !== null) await new Promise((r) => setTimeout(r, 20));
        const row = await untilStatus(ctx, task.id, ['cancelled']);
        assert.equal(row.status, 'cancelled');
        await runner.stop();
        assert.ok(Date.now() - started < 5_000, 'within a few seconds');
        assert.deepEqual(await ctx.objects.list(`tasks/${task.id}/`), [`tasks/${task.id}/source.pdf`]);
      } finally {
        await runner.stop();
      }
    } finally {
      await server.close();
    }
  });

  test('"a worker that dies leaves a lease that expires, and the task is retried (up to a limit) or failed — never stuck in running"', async () => {
    const database = await open();
    const ctx = await setup(database);
    const task = await queue(ctx, 'docparse', await plainPdf(1));
    const clock = manualClock(Date.now());
    const claim = (owner: string) => store.claimTask(ctx.db, ctx.dialect, { owner, now: clock(), leaseMs: 30_000, maxAttempts: 3, kinds: ['docparse'] });
    assert.equal((await claim('worker-a'))?.attempts, 1);
    assert.equal(await claim('worker-b'), undefined, 'a live lease is not taken');
    clock.advance(31_000);
    assert.equal((await claim('worker-b'))?.attempts, 2, 'the expired lease is claimed again');
    assert.equal(await store.heartbeat(ctx.db, { id: task.id, owner: 'worker-a', now: clock(), leaseMs: 30_000 }), false, 'the dead worker has lost it');
    clock.advance(31_000);
    assert.equal((await claim('worker-c'))?.attempts, 3);
    clock.advance(31_000);
    assert.equal(await claim('worker-d'), undefined, 'no attempts left');
    const failed = await store.failAbandonedTasks(ctx.db, { now: clock(), maxAttempts: 3, error: 'stopped' });
    assert.deepEqual(failed.map((r) => r.id), [task.id]);
    assert.equal((await store.findTask(ctx.db, task.id))?.status, 'failed');
  });
});
