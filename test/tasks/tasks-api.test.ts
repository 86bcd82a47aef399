// The first-party task API through the real app: creation by upload, refusals that leave nothing
// behind, authentication, ownership, cancel and delete-record as the spec states them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { testApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { notAPdf, corruptPdf, plainPdf } from '../helpers/pdfs.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const HOST = new URL(TEST_BASE_URL).host;
const ORIGIN = TEST_BASE_URL;

/** A multipart body by hand, so a test controls field order, names and bytes exactly. */
function multipart(parts: Array<{ name: string; value: string | Buffer; filename?: string; type?: string }>): { body: Buffer; contentType: string } {
  const boundary = '----signet' + Math.random().toString(16).slice(2);
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.filename !== undefined ? `Content-Type: ${part.type ?? 'application/pdf'}\r\n` : ''}\r\n`));
    chunks.push(Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value));
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

type Fixture = TestApp & {
  objects: ObjectStore;
  cookie: string;
  otherCookie: string;
  upload(kind: string, parts: Parameters<typeof multipart>[0], headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  call(method: 'GET' | 'DELETE', url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  objectKeys(): Promise<string[]>;
  taskCount(): Promise<number>;
};

async function fixture(database: TestDatabase, env: Record<string, string> = {}): Promise<Fixture> {
  const objects = openObjectStore(parseStorageUrl(`file:${mkdtempSync(path.join(tmpdir(), 'signet-task-objects-'))}`));
  const t = await testApp(database, env, undefined, { objects });
  const { db, clock, keys } = t.deps;
  const person = await createAccount(db, clock, { email: 'ada@example.com', password: 'correct horse battery' });
  const other = await createAccount(db, clock, { email: 'bob@example.com', password: 'correct horse battery' });
  const session = await startSession(db, keys.tokenHash, clock, { sub: person.sub, origin: ORIGIN });
  const otherSession = await startSession(db, keys.tokenHash, clock, { sub: other.sub, origin: ORIGIN });
  const cookie = `signet_session=${session.id}`;
  return {
    ...t,
    objects,
    cookie,
    otherCookie: `signet_session=${otherSession.id}`,
    upload(kind, parts, headers = {}) {
      const { body, contentType } = multipart(parts);
      return t.app.inject({ method: 'POST', url: `/api/v1/${kind}/tasks`, headers: { host: HOST, origin: ORIGIN, cookie, 'content-type': contentType, ...headers }, payload: body });
    },
    call(method, url, headers = {}) {
      return t.app.inject({ method, url, headers: { host: HOST, origin: ORIGIN, cookie, ...headers } });
    },
    objectKeys: () => objects.list('tasks/'),
    async taskCount() {
      const row = await db.selectFrom('tasks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

forEachDatabase('task API', (open) => {
  test('a PDF upload creates a queued task owned by the caller, with its source stored', async () => {
    const f = await fixture(await open());
    const res = await f.upload('docparse', [{ name: 'file', value: await plainPdf(3), filename: 'report.pdf' }]);
    assert.equal(res.statusCode, 201, res.body);
    const task = res.json();
    assert.equal(task.kind, 'docparse');
    assert.equal(task.status, 'queued');
    assert.deepEqual(task.progress, { done: 0, total: 3, unit: 'pages' });
    assert.equal(task.source.name, 'report.pdf');
    assert.equal(task.source.pages, 3);
    assert.match(task.id, /^[0-9a-f-]{36}$/, 'task ids are UUIDs: safe on a command line (never a leading "-")');
    assert.deepEqual(await f.objectKeys(), [`tasks/${task.id}/source.pdf`]);
    const read = await f.call('GET', `/api/v1/docparse/tasks/${task.id}`);
    assert.equal(read.statusCode, 200);
    assert.equal(read.json().id, task.id);
  });

  test('translation options may come before or after the file; a missing target language is 400 and leaves nothing; a missing source language is told from the text', async () => {
    const f = await fixture(await open(), { SIGNET_TRANSLATE_ENGINE: 'libretranslate', SIGNET_TRANSLATE_URL: 'http://127.0.0.1:9' });
    const pdf = await plainPdf(1);
    const before = await f.upload('translate', [{ name: 'source_lang', value: 'en' }, { name: 'target_lang', value: 'es' }, { name: 'file', value: pdf, filename: 'a.pdf' }]);
    // The app was built without a translator object: the API records the task as failed at once (see below),
    // so the shape of the options is what this test reads.
    assert.equal(before.statusCode, 201, before.body);
    assert.deepEqual(before.json().options, { source_lang: 'en', target_lang: 'es' });
    const after = await f.upload('translate', [{ name: 'file', value: pdf, filename: 'b.pdf' }, { name: 'source_lang', value: 'en' }, { name: 'target_lang', value: 'es' }]);
    assert.equal(after.statusCode, 201, after.body);
    const missing = await f.upload('translate', [{ name: 'file', value: pdf, filename: 'c.pdf' }, { name: 'source_lang', value: 'en' }]);
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error, 'missing_language');
    assert.equal(await f.taskCount(), 2);
    assert.equal((await f.objectKeys()).length, 2, 'the refused upload left no object');
    // The source language may be left out: the worker tells it from the text (as translate_pdf and signet translate do).
    const told = await f.upload('translate', [{ name: 'file', value: pdf, filename: 'd.pdf' }, { name: 'target_lang', value: 'es' }]);
    assert.equal(told.statusCode, 201, told.body);
    assert.deepEqual(told.json().options, { source_lang: '', target_lang: 'es' });
  });

  test('issue 18: an optional glossary of {"term":"translation"} pairs is validated, stored on the task and shown in its options', async () => {
    const f = await fixture(await open(), { SIGNET_TRANSLATE_ENGINE: 'libretranslate', SIGNET_TRANSLATE_URL: 'http://127.0.0.1:9' });
    const pdf = await plainPdf(1);
    const fields = [{ name: 'source_lang', value: 'en' }, { name: 'target_lang', value: 'es' }];
    const good = await f.upload('translate', [...fields, { name: 'glossary', value: '{"invoice": "factura", " credit  note ": "nota de crédito"}' }, { name: 'file', value: pdf, filename: 'a.pdf' }]);
    assert.equal(good.statusCode, 201, good.body);
    assert.deepEqual(good.json().options, { source_lang: 'en', target_lang: 'es', glossary: { invoice: 'factura', 'credit note': 'nota de crédito' } });
    const read = await f.call('GET', `/api/v1/translate/tasks/${good.json().id}`);
    assert.deepEqual(read.json().options.glossary, { invoice: 'factura', 'credit note': 'nota de crédito' });
    for (const bad of ['not json', '["invoice"]', '{"invoice": 5}', '{"": "x"}', JSON.stringify(Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`t${i}`, 'x'])))]) {
      const res = await f.upload('translate', [{ name: 'file', value: pdf, filename: 'b.pdf' }, ...fields, { name: 'glossary', value: bad }]);
      assert.equal(res.statusCode, 400, bad);
      assert.equal(res.json().error, 'invalid_glossary');
    }
    assert.equal(await f.taskCount(), 1, 'a refused glossary leaves no task');
    assert.equal((await f.objectKeys()).length, 1, 'and no object');
  });

  test('"no engine configured: the task fails at once with a message that names the setting to add"', async () => {
    const f = await fixture(await open());
    const res = await f.upload('translate', [{ name: 'source_lang', value: 'en' }, { name: 'target_lang', value: 'es' }, { name: 'file', value: await plainPdf(1), filename: 'a.pdf' }]);
    assert.equal(res.statusCode, 201);
    assert.equal(res.json().status, 'failed');
    assert.match(res.json().error, /SIGNET_TRANSLATE_ENGINE/);
    const notes = await f.deps.db.selectFrom('notifications').selectAll().execute();
    assert.equal(notes.length, 1, 'the failure notifies its owner');
    assert.equal(notes[0]!.category, 'translation');
  });

  test('"the file must really be a PDF": not a PDF → 415, a PDF that does not open → 422; no record, no object', async () => {
    const f = await fixture(await open());
    const text = await f.upload('docparse', [{ name: 'file', value: notAPdf(), filename: 'notes.pdf' }]);
    assert.equal(text.statusCode, 415, text.body);
    assert.equal(text.json().error, 'not_a_pdf');
    const big = Buffer.concat([Buffer.from('this is not a pdf'), Buffer.alloc(200_000, 0x41)]);
    assert.equal((await f.upload('docparse', [{ name: 'file', value: big, filename: 'big.pdf' }])).statusCode, 415, 'refused at its first bytes');
    const broken = await f.upload('docparse', [{ name: 'file', value: corruptPdf(), filename: 'broken.pdf' }]);
    assert.equal(broken.statusCode, 422, broken.body);
    assert.match(broken.json().message, /\S/);
    assert.equal(await f.taskCount(), 0);
    assert.deepEqual(await f.objectKeys(), []);
  });

  test('"an upload over the limit → 413 and no object left"', async () => {
    const f = await fixture(await open(), { SIGNET_UPLOAD_MAX_MB: '1' });
    const pdf = await plainPdf(1);
    const oversized = Buffer.concat([pdf, Buffer.alloc(1024 * 1024 + 10, 0x20)]);
    const res = await f.upload('docparse', [{ name: 'file', value: oversized, filename: 'huge.pdf' }]);
    assert.equal(res.statusCode, 413, res.body);
    assert.equal(res.json().error, 'file_too_large');
    assert.equal(await f.taskCount(), 0);
    assert.deepEqual(await f.objectKeys(), []);
  });

  test('an access token Signet never issued on a task endpoint: 401 (issue 40: only a live one with scope documents is taken); no credential: 401', async () => {
    const f = await fixture(await open());
    for (const url of ['/api/v1/docparse/tasks', '/api/v1/translate/tasks']) {
      const bearer = await f.app.inject({ method: 'GET', url, headers: { host: HOST, authorization: 'Bearer ' + 'a'.repeat(43) + '=' } });
      assert.equal(bearer.statusCode, 401);
      assert.match(bearer.json().message, /unknown, expired or revoked/);
      assert.equal((await f.app.inject({ method: 'GET', url, headers: { host: HOST } })).statusCode, 401);
    }
  });

  test('"state-changing calls require an Origin equal to the serving host\'s base URL, else 403"', async () => {
    const f = await fixture(await open());
    const pdf = await plainPdf(1);
    assert.equal((await f.upload('docparse', [{ name: 'file', value: pdf, filename: 'a.pdf' }], { origin: 'https://evil.example' })).statusCode, 403);
    const created = (await f.upload('docparse', [{ name: 'file', value: pdf, filename: 'a.pdf' }])).json();
    assert.equal((await f.call('DELETE', `/api/v1/docparse/tasks/${created.id}`, { origin: 'https://evil.example' })).statusCode, 403);
    const noOrigin = await f.app.inject({ method: 'DELETE', url: `/api/v1/docparse/tasks/${created.id}`, headers: { host: HOST, cookie: f.cookie } });
    assert.equal(noOrigin.statusCode, 403);
    assert.equal((await f.call('GET', `/api/v1/docparse/tasks/${created.id}`)).json().status, 'queued', 'nothing changed');
  });

  test('"another person\'s task is 404" on every route; a task read under the other kind is 404 too', async () => {
    const f = await fixture(await open());
    const created = (await f.upload('docparse', [{ name: 'file', value: await plainPdf(1), filename: 'a.pdf' }])).json();
    const other = { cookie: f.otherCookie };
    for (const [method, url] of [
      ['GET', `/api/v1/docparse/tasks/${created.id}`],
      ['GET', `/api/v1/docparse/tasks/${created.id}/files/source.pdf`],
      ['DELETE', `/api/v1/docparse/tasks/${created.id}`],
      ['DELETE', `/api/v1/docparse/tasks/${created.id}/record`],
    ] as const) {
      assert.equal((await f.call(method, url, other)).statusCode, 404, `${method} ${url}`);
    }
    assert.equal((await f.call('GET', `/api/v1/translate/tasks/${created.id}`)).statusCode, 404);
    assert.deepEqual((await f.call('GET', '/api/v1/docparse/tasks', other)).json().tasks, []);
  });

  test('listing is newest first with a cursor', async () => {
    const f = await fixture(await open());
    const pdf = await plainPdf(1);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await f.upload('docparse', [{ name: 'file', value: pdf, filename: `f${i}.pdf` }])).json().id);
      f.clock.advance(1000);
    }
    const first = (await f.call('GET', '/api/v1/docparse/tasks?limit=2')).json();
    assert.deepEqual(first.tasks.map((t: { id: string }) => t.id), [ids[4], ids[3]]);
    const second = (await f.call('GET', `/api/v1/docparse/tasks?limit=2&cursor=${first.next_cursor}`)).json();
    assert.deepEqual(second.tasks.map((t: { id: string }) => t.id), [ids[2], ids[1]]);
    const third = (await f.call('GET', `/api/v1/docparse/tasks?limit=2&cursor=${second.next_cursor}`)).json();
    assert.deepEqual(third.tasks.map((t: { id: string }) => t.id), [ids[0]]);
    assert.equal(third.next_cursor, null);
    assert.equal((await f.call('GET', '/api/v1/docparse/tasks?cursor=bogus')).statusCode, 400);
  });

  test('spec: cancel "DELETE …/tasks/:id" → cancelled; on a task that already ended it is 409', async () => {
    const f = await fixture(await open());
    const created = (await f.upload('docparse', [{ name: 'file', value: await plainPdf(1), filename: 'a.pdf' }])).json();
    const cancelled = await f.call('DELETE', `/api/v1/docparse/tasks/${created.id}`);
    assert.equal(cancelled.statusCode, 200);
    assert.equal(cancelled.json().status, 'cancelled');
    const again = await f.call('DELETE', `/api/v1/docparse/tasks/${created.id}`);
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().error, 'task_ended');
  });

  test('spec: "delete-record call on a running task → 400"; on a terminal task the record and every object go, permanently', async () => {
    const f = await fixture(await open());
    const created = (await f.upload('docparse', [{ name: 'file', value: await plainPdf(1), filename: 'a.pdf' }])).json();
    const early = await f.call('DELETE', `/api/v1/docparse/tasks/${created.id}/record`);
    assert.equal(early.statusCode, 400);
    assert.equal(early.json().error, 'task_in_flight');
    await f.deps.db.updateTable('tasks').set({ status: 'running' }).where('id', '=', created.id).execute();
    assert.equal((await f.call('DELETE', `/api/v1/docparse/tasks/${created.id}/record`)).statusCode, 400, 'running is in flight too');
    // Finished, with results stored beside the source.
    await f.objects.put(`tasks/${created.id}/document.md`, Buffer.from('# Hello'));
    await f.deps.db
      .updateTable('tasks')
      .set({ status: 'finished', files: JSON.stringify([{ name: 'document.md', size: 7, content_type: 'text/markdown; charset=utf-8' }]) })
      .where('id', '=', created.id)
      .execute();
    const download = await f.call('GET', `/api/v1/docparse/tasks/${created.id}/files/document.md`);
    assert.equal(download.statusCode, 200);
    assert.equal(download.body, '# Hello');
    assert.match(String(download.headers['content-disposition']), /attachment; filename="?a\.md"?/);
    const deleted = await f.call('DELETE', `/api/v1/docparse/tasks/${created.id}/record`);
    assert.equal(deleted.statusCode, 204);
    assert.deepEqual(await f.objectKeys(), []);
    assert.equal(await f.taskCount(), 0);
    assert.equal((await f.call('GET', `/api/v1/docparse/tasks/${created.id}`)).statusCode, 404);
  });

  test('issue 17: "language choice from a task option or auto" — docparse takes source_lang en or zh for scanned pages, nothing else', async () => {
    const f = await fixture(await open());
    const pdf = await plainPdf(1);
    const zh = await f.upload('docparse', [{ name: 'source_lang', value: 'zh' }, { name: 'file', value: pdf, filename: 'a.pdf' }]);
    assert.equal(zh.statusCode, 201);
    assert.deepEqual(zh.json().options, { source_lang: 'zh' });
    const auto = await f.upload('docparse', [{ name: 'file', value: pdf, filename: 'a.pdf' }]);
    assert.deepEqual(auto.json().options, {});
    const french = await f.upload('docparse', [{ name: 'file', value: pdf, filename: 'a.pdf' }, { name: 'source_lang', value: 'fr' }]);
    assert.equal(french.statusCode, 400);
    assert.equal(french.json().error, 'invalid_language');
    const target = await f.upload('docparse', [{ name: 'target_lang', value: 'es' }, { name: 'file', value: pdf, filename: 'a.pdf' }]);
    assert.equal(target.statusCode, 400);
    assert.equal(await f.taskCount(), 2, 'refusals leave no record');
  });

  test('issue 17: "the file endpoint serves them" — pictures/ result files download by their listed name, and no other path (no traversal)', async () => {
    const f = await fixture(await open());
    const created = (await f.upload('docparse', [{ name: 'file', value: await plainPdf(1), filename: 'a.pdf' }])).json();
    const png = Buffer.from('\x89PNG\r\n\x1a\n-picture', 'latin1');
    await f.objects.put(`tasks/${created.id}/pictures/page-1-1.png`, png);
    await f.deps.db
      .updateTable('tasks')
      .set({ status: 'finished', files: JSON.stringify([{ name: 'pictures/page-1-1.png', size: png.length, content_type: 'image/png' }]) })
      .where('id', '=', created.id)
      .execute();
    const view = (await f.call('GET', `/api/v1/docparse/tasks/${created.id}`)).json();
    assert.equal(view.files[0].url, `/api/v1/docparse/tasks/${created.id}/files/pictures/page-1-1.png`);
    for (const url of [view.files[0].url, `/api/v1/docparse/tasks/${created.id}/files/pictures%2Fpage-1-1.png`]) {
      const res = await f.call('GET', url);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers['content-type'], 'image/png');
      assert.deepEqual(res.rawPayload, png);
      assert.match(String(res.headers['content-disposition']), /filename="?a\.pictures-page-1-1\.png"?/);
    }
    for (const name of ['pictures/../source.pdf', 'pictures/%2e%2e/source.pdf', '..%2F..%2Fsecrets', 'pictures/page-1-2.png', 'pictures/']) {
      const res = await f.call('GET', `/api/v1/docparse/tasks/${created.id}/files/${name}`);
      // A dot-dot segment is resolved by URL parsing before routing: it can at most name this task's own source.
      const dotDot = name.startsWith('pictures/..') || name.startsWith('pictures/%2e');
      assert.ok(res.statusCode === 404 || (dotDot && res.statusCode === 200 && res.body.startsWith('%PDF')), `${name}: ${res.statusCode}`);
    }
    // Another person's task's pictures are not theirs to read.
    const res = await f.app.inject({ method: 'GET', url: view.files[0].url, headers: { host: HOST, cookie: f.otherCookie } });
    assert.equal(res.statusCode, 404);
  });

  test('a download honours one byte range (206 with Content-Range)', async () => {
    const f = await fixture(await open());
    const pdf = await plainPdf(1);
    const created = (await f.upload('docparse', [{ name: 'file', value: pdf, filename: 'a.pdf' }])).json();
    const res = await f.call('GET', `/api/v1/docparse/tasks/${created.id}/files/source.pdf`, { range: 'bytes=0-4' });
    assert.equal(res.statusCode, 206);
    assert.equal(res.body, '%PDF-');
    assert.equal(res.headers['content-range'], `bytes 0-4/${pdf.length}`);
    assert.equal((await f.call('GET', `/api/v1/docparse/tasks/${created.id}/files/source.pdf`, { range: `bytes=${pdf.length + 5}-` })).statusCode, 416);
  });
});
