// docling-serve's documented requests (docs/usage.md of docling-serve) against Signet's compatible API:
// multipart and JSON, sync and async, one and several files, the zip target, and the answer's shape.
// Conversions run as docparse tasks on a real task runner; json_content is validated against
// docling-core's published JSON Schema (test/fixtures/docling-core/).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { Ajv } from 'ajv';
import { unzipSync } from 'fflate';
import { DomUtils, parseDocument } from 'htmlparser2';
import type { LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.ts';
import { createApiKey } from '../../src/accounts/api-keys/api-keys.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { SECOND } from '../../src/config/clock.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { testApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { notAPdf, plainPdf, SAMPLE, samplePdf } from '../helpers/pdfs.ts';

const HOST = new URL(TEST_BASE_URL).host;
const schema = JSON.parse(readFileSync(path.join(import.meta.dirname, '../fixtures/docling-core/DoclingDocument.json'), 'utf8')) as Record<string, unknown>;
// The schema is pydantic's, written for Python's `re`: its named groups `(?P<name>…)` are `(?<name>…)` in JavaScript.
const pythonPatterns = Object.assign((pattern: string, flags: string) => new RegExp(pattern.replaceAll('(?P<', '(?<'), flags), { code: 'new RegExp' });
const validateDoclingDocument = new Ajv({ strict: false, allErrors: true, validateFormats: false, code: { regExp: pythonPatterns } }).compile(schema);

type Part = { name: string; value: string | Buffer; filename?: string; type?: string };

/** A multipart body as curl -F writes it (fields and files in the order given). */
function multipart(parts: Part[]): { body: Buffer; contentType: string } {
  const boundary = '------------------------' + Math.random().toString(16).slice(2, 18);
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
  key: string;
  otherKey: string;
  cookie: string;
  file(url: string, parts: Part[], headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  json(url: string, body: unknown, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  get(url: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
};

const runners: Array<{ stop(): Promise<void> }> = [];
after(async () => {
  await Promise.all(runners.map((r) => r.stop()));
});

async function fixture(database: TestDatabase, options: { worker?: boolean; env?: Record<string, string> } = {}): Promise<Fixture> {
  const t = await testApp(database, options.env ?? {});
  const { db, clock, keys, dialect, objects, translator, logger } = t.deps;
  const ada = await createAccount(db, clock, { email: 'ada@example.com', password: 'correct horse battery' });
  const bob = await createAccount(db, clock, { email: 'bob@example.com', password: 'correct horse battery' });
  const key = (await createApiKey(db, clock, keys.tokenHash, { sub: ada.sub, name: 'Open WebUI' })).key;
  const otherKey = (await createApiKey(db, clock, keys.tokenHash, { sub: bob.sub, name: 'scripts' })).key;
  const session = await startSession(db, keys.tokenHash, clock, { sub: ada.sub, origin: TEST_BASE_URL });
  // The workers run on the system clock; the app's clock (the sync wait's limit) only moves when a test moves it.
  if (options.worker !== false) runners.push(startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 50, heartbeatMs: 200, kinds: ['docparse'] }));
  return {
    ...t,
    key,
    otherKey,
    cookie: `signet_session=${session.id}`,
    file(url, parts, headers = {}) {
      const { body, contentType } = multipart(parts);
      return t.app.inject({ method: 'POST', url, headers: { host: HOST, accept: 'application/json', 'x-api-key': key, 'content-type': contentType, ...headers }, payload: body });
    },
    json(url, body, headers = {}) {
      return t.app.inject({ method: 'POST', url, headers: { host: HOST, accept: 'application/json', 'x-api-key': key, 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
    },
    get(url, headers = {}) {
      return t.app.inject({ method: 'GET', url, headers: { host: HOST, 'x-api-key': key, ...headers } });
    },
  };
}

const ANSWER_KEYS = ['document', 'errors', 'processing_time', 'status', 'timings'];
const DOCUMENT_KEYS = ['doctags_content', 'filename', 'html_content', 'json_content', 'md_content', 'text_content'];

forEachDatabase('docling-serve-compatible conversion', (open) => {
  let f: Fixture;
  let sample: Buffer;
  test('set-up: one app, two people with API keys, a task runner', async () => {
    f = await fixture(await open());
    sample = await samplePdf();
  });

  test('issue 43: "where a service token is accepted (the document APIs: tasks and conversions owned by the application\'s service identity)": a client_credentials token with scope documents converts at /v1/convert/file, and the task belongs to service-account-<client_id>, not to a person', async () => {
    const { client, clientSecret } = await registerClient(f.deps.db, f.clock, f.deps.keys.tokenHash, { name: 'Nightly converter', redirectUris: [], scopes: ['documents'], grants: ['client_credentials'] });
    const issued = await f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: clientSecret! }).toString() });
    assert.equal(issued.statusCode, 200, issued.body);
    const bearer = { authorization: `Bearer ${issued.json().access_token}` };
    const { body, contentType } = multipart([{ name: 'files', value: sample, filename: 'nightly.pdf' }]);
    const res = await f.app.inject({ method: 'POST', url: '/v1/convert/file', headers: { host: HOST, accept: 'application/json', 'content-type': contentType, ...bearer }, payload: body });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'success');
    const owners = (await f.deps.db.selectFrom('tasks').select(['sub', 'source_name']).where('source_name', '=', 'nightly.pdf').execute()).map((t) => t.sub);
    const service = (await f.deps.db.selectFrom('clients').select('service_sub').where('client_id', '=', client.clientId).executeTakeFirstOrThrow()).service_sub;
    assert.ok(service !== null);
    assert.deepEqual(owners, [service], 'the task is the service identity\'s');
    // The same token names no person: the sign-in half refuses it.
    const userinfo = await f.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: { host: HOST, authorization: bearer.authorization } });
    assert.equal(userinfo.statusCode, 401);
  });

  test('POST /v1/convert/file (one file, to_formats md and json) → {document{filename, md_content, json_content, …}, status: success, errors, processing_time, timings}; json_content validates against docling-core\'s JSON Schema', async () => {
    const res = await f.file('/v1/convert/file', [
      { name: 'from_formats', value: 'pdf' },
      { name: 'image_export_mode', value: 'placeholder' },
      { name: 'files', value: sample, filename: 'sample.pdf' },
      { name: 'to_formats', value: 'md' },
      { name: 'to_formats', value: 'json' },
      { name: 'do_ocr', value: 'true' },
      { name: 'ocr_engine', value: 'easyocr' },
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json();
    assert.deepEqual(Object.keys(answer).sort(), ANSWER_KEYS);
    assert.deepEqual(Object.keys(answer.document).sort(), DOCUMENT_KEYS);
    assert.equal(answer.status, 'success');
    assert.deepEqual(answer.errors, []);
    assert.equal(answer.document.filename, 'sample.pdf');
    assert.ok(answer.document.md_content.includes(SAMPLE.title), 'the Markdown holds the title');
    assert.equal(answer.document.html_content, null, 'html not asked for');
    assert.equal(answer.document.text_content, null);
    assert.equal(typeof answer.processing_time, 'number');
    assert.deepEqual(answer.timings, {});
    const valid = validateDoclingDocument(answer.document.json_content);
    assert.ok(valid, JSON.stringify(validateDoclingDocument.errors?.slice(0, 5)));
    assert.equal(answer.document.json_content.name, 'sample', 'named by the file\'s stem, as docling names it');
  });

  test('to_formats html and text → html_content (a standalone document, its table as <table> with header cells) and text_content, from the task\'s document.html and document.txt', async () => {
    const res = await f.json('/v1/convert/source', { options: { to_formats: ['md', 'html', 'text'] }, file_sources: [{ base64_string: sample.toString('base64'), filename: 'sample.pdf' }] });
    const answer = res.json();
    assert.equal(answer.status, 'success', res.body);
    const html: string = answer.document.html_content;
    assert.match(html, /^<!DOCTYPE html>/);
    const dom = parseDocument(html);
    const tables = DomUtils.getElementsByTagName('table', dom);
    assert.equal(tables.length, 1, 'the sample\'s one table');
    const headerCells = DomUtils.getElementsByTagName('th', tables[0]!).map((cell) => DomUtils.textContent(cell).trim());
    assert.deepEqual(headerCells.slice(0, SAMPLE.table[0]!.length), SAMPLE.table[0], 'the header row as <th>, as the Markdown\'s first row');
    assert.ok(answer.document.md_content.includes(`| ${SAMPLE.table[0]!.join(' | ')} |`), 'the same header row in the Markdown');
    assert.ok(answer.document.text_content.includes(SAMPLE.title));
    assert.ok(!answer.document.text_content.includes('|'), 'plain text, no Markdown table');
  });

  test('image_export_mode: placeholder → <!-- image --> (docling\'s); embedded → data: URIs in md, html and json; referenced (zip) → the PNGs beside the files', async () => {
    const pictures = readFileSync(path.join(import.meta.dirname, '../fixtures/public/picture_classification.pdf'));
    const file = (mode: string, extra: Part[] = []) => f.file('/v1/convert/file', [{ name: 'files', value: pictures, filename: 'charts.pdf' }, { name: 'image_export_mode', value: mode }, { name: 'to_formats', value: 'md' }, { name: 'to_formats', value: 'json' }, { name: 'to_formats', value: 'html' }, ...extra]);
    const placeholder = (await file('placeholder')).json().document;
    assert.ok(placeholder.md_content.includes('<!-- image -->'));
    assert.ok(!placeholder.md_content.includes('pictures/'));
    assert.ok(placeholder.json_content.pictures.length > 0 && placeholder.json_content.pictures.every((p: Record<string, unknown>) => !('image' in p)));
    const embedded = (await file('embedded')).json().document;
    assert.match(embedded.md_content, /!\[[^\]]*\]\(data:image\/png;base64,[A-Za-z0-9+/=]+\)/);
    assert.match(embedded.html_content, /<img src="data:image\/png;base64,/);
    assert.ok(embedded.json_content.pictures.every((p: { image: { uri: string } }) => p.image.uri.startsWith('data:image/png;base64,')));
    assert.ok(validateDoclingDocument(embedded.json_content), JSON.stringify(validateDoclingDocument.errors?.slice(0, 3)));
    const zip = unzipSync((await file('referenced', [{ name: 'target_type', value: 'zip' }])).rawPayload);
    const names = Object.keys(zip).sort();
    assert.ok(names.includes('charts.md') && names.includes('charts.json') && names.includes('charts.html'), names.join());
    const pngs = names.filter((n) => n.startsWith('charts/pictures/') && n.endsWith('.png'));
    assert.ok(pngs.length > 0);
    for (const link of Buffer.from(zip['charts.md']!).toString('utf8').matchAll(/\]\(([^)]+\.png)\)/g)) assert.ok(names.includes(decodeURIComponent(link[1]!)), `${link[1]} is in the zip`);
  });

  test('include_images false: no pictures cut; do_table_structure false: the table comes as its text, not a grid', async () => {
    const res = await f.json('/v1/convert/source', { options: { to_formats: ['md'], include_images: false, do_table_structure: false, page_range: [3, 3] }, file_sources: [{ base64_string: sample.toString('base64'), filename: 'flat.pdf' }] });
    const md: string = res.json().document.md_content;
    assert.ok(md.includes(SAMPLE.table[0]![0]!), 'the table\'s words are there');
    assert.ok(!md.includes(`| ${SAMPLE.table[0]!.join(' | ')} |`), 'but not as a table');
  });

  test('"every conversion is a docparse task of its owner": it shows in the task list of the key\'s person, not another person\'s', async () => {
    const mine = await f.get('/api/v1/docparse/tasks');
    assert.equal(mine.statusCode, 200, mine.body);
    assert.ok(mine.json().tasks.some((t: { source: { name: string } }) => t.source.name === 'sample.pdf'));
    const theirs = await f.get('/api/v1/docparse/tasks', { 'x-api-key': f.otherKey });
    assert.deepEqual(theirs.json().tasks, []);
  });

  test('several files → converted_docs.zip with <stem>.md per converted file, as docling-serve answers them; a broken file is left out, never a 500', async () => {
    const res = await f.file('/v1/convert/file', [
      { name: 'files', value: await plainPdf(1), filename: 'one.pdf' },
      { name: 'files', value: await plainPdf(2), filename: 'two.pdf' },
      { name: 'files', value: notAPdf(), filename: 'notes.pdf' },
    ]);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['content-type'], 'application/zip');
    assert.equal(res.headers['content-disposition'], 'attachment; filename="converted_docs.zip"');
    const entries = unzipSync(res.rawPayload);
    assert.deepEqual(Object.keys(entries).sort(), ['one.md', 'two.md']);
    assert.ok(Buffer.from(entries['two.md']!).toString('utf8').includes('Plain page 2.'));
  });

  test('a broken file alone → 200 with status: failure and an error entry that says why', async () => {
    const res = await f.file('/v1/convert/file', [{ name: 'files', value: notAPdf(), filename: 'notes.pdf' }]);
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json();
    assert.equal(answer.status, 'failure');
    assert.equal(answer.document.md_content, null);
    assert.equal(answer.errors.length, 1);
    assert.deepEqual(Object.keys(answer.errors[0]).sort(), ['component_type', 'error_message', 'module_name']);
    assert.match(answer.errors[0].error_message, /not a PDF/);
  });

  test('to_formats doctags → "a clear not supported error entry"; the other formats still come (partial_success)', async () => {
    const res = await f.file('/v1/convert/file', [
      { name: 'files', value: await plainPdf(1), filename: 'p.pdf' },
      { name: 'to_formats', value: '["md", "doctags"]' },
    ]);
    const answer = res.json();
    assert.equal(answer.status, 'partial_success', res.body);
    assert.ok(answer.document.md_content.includes('Plain page 1.'));
    assert.equal(answer.document.doctags_content, null);
    assert.match(answer.errors[0].error_message, /does not produce doctags/);
  });

  test('POST /v1/convert/source with file_sources {base64_string, filename} (docs/usage.md "File as base64") → the same answer', async () => {
    const res = await f.json('/v1/convert/source', { options: { to_formats: ['md'], do_ocr: false, page_range: [3, 3] }, file_sources: [{ base64_string: sample.toString('base64'), filename: 'pdf-to-convert.pdf' }] });
    assert.equal(res.statusCode, 200, res.body);
    const answer = res.json();
    assert.equal(answer.status, 'success');
    assert.equal(answer.document.filename, 'pdf-to-convert.pdf');
    assert.ok(answer.document.md_content.includes(SAMPLE.tableHeading), 'page 3 is converted');
    assert.ok(!answer.document.md_content.includes(SAMPLE.title), '"page_range": page 1 is not');
  });

  test('v1 `sources` of kind file with `target: {kind: "zip"}` → a zip (v1alpha\'s return_as_file the same)', async () => {
    const body = { sources: [{ kind: 'file', base64_string: (await plainPdf(1)).toString('base64'), filename: 'a.pdf' }], target: { kind: 'zip' } };
    const res = await f.json('/v1/convert/source', body);
    assert.equal(res.headers['content-type'], 'application/zip', res.body);
    assert.deepEqual(Object.keys(unzipSync(res.rawPayload)), ['a.md']);
    const alpha = await f.json('/v1alpha/convert/source', { options: { return_as_file: true, to_formats: ['md', 'json'] }, file_sources: [{ base64_string: (await plainPdf(1)).toString('base64'), filename: 'b.pdf' }] });
    assert.deepEqual(Object.keys(unzipSync(alpha.rawPayload)).sort(), ['b.json', 'b.md']);
  });

  test('async: /v1/convert/file/async → {task_id, task_status}; /v1/status/poll/{task_id} until success; /v1/result/{task_id} → the answer', async () => {
    const submitted = await f.file('/v1/convert/file/async', [{ name: 'files', value: await plainPdf(2), filename: 'later.pdf' }]);
    assert.equal(submitted.statusCode, 200, submitted.body);
    const task = submitted.json();
    assert.deepEqual(Object.keys(task).sort(), ['error_message', 'task_id', 'task_meta', 'task_position', 'task_status', 'task_type']);
    assert.equal(task.task_type, 'convert');
    assert.ok(['pending', 'started', 'success'].includes(task.task_status));
    let status = task;
    for (let i = 0; i < 100 && status.task_status !== 'success' && status.task_status !== 'failure'; i += 1) status = (await f.get(`/v1/status/poll/${task.task_id}?wait=5`)).json();
    assert.equal(status.task_status, 'success');
    assert.deepEqual(status.task_meta, { num_docs: 1, num_processed: 1, num_succeeded: 1, num_partially_succeeded: 0, num_failed: 0 });
    const result = await f.get(`/v1/result/${task.task_id}`);
    assert.equal(result.statusCode, 200);
    assert.ok(result.json().document.md_content.includes('Plain page 2.'));
    // The same through docling-serve 0.x's paths.
    assert.equal((await f.get(`/v1alpha/status/poll/${task.task_id}`)).json().task_status, 'success');
    assert.equal((await f.get(`/v1alpha/result/${task.task_id}`)).json().status, 'success');
  });

  test('async source: /v1/convert/source/async; another person\'s task_id → 404 {"detail":"Task not found."}', async () => {
    const submitted = (await f.json('/v1/convert/source/async', { file_sources: [{ base64_string: (await plainPdf(1)).toString('base64'), filename: 'x.pdf' }] })).json();
    const theirs = await f.get(`/v1/status/poll/${submitted.task_id}`, { 'x-api-key': f.otherKey });
    assert.equal(theirs.statusCode, 404);
    assert.deepEqual(theirs.json(), { detail: 'Task not found.' });
    assert.equal((await f.get(`/v1/result/${submitted.task_id}`, { 'x-api-key': f.otherKey })).statusCode, 404);
  });

  test('no credential, a wrong key, or only a session cookie → 401 {"detail": …} as docling-serve answers', async () => {
    for (const headers of [{ 'x-api-key': '' }, { 'x-api-key': 'sgk_0123456789abcdef.' + 'A'.repeat(43) }, { 'x-api-key': undefined, cookie: f.cookie } as Record<string, string | undefined>]) {
      const clean = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
      const res = headers['x-api-key'] === undefined
        ? await f.app.inject({ method: 'POST', url: '/v1/convert/source', headers: { host: HOST, 'content-type': 'application/json', ...clean }, payload: '{}' })
        : await f.json('/v1/convert/source', { file_sources: [] }, clean);
      assert.equal(res.statusCode, 401, res.body);
      assert.deepEqual(Object.keys(res.json()), ['detail']);
    }
  });

  test('"http_sources refused with a 400 that says why unless SIGNET_FETCH_SOURCES=on"', async () => {
    const res = await f.json('/v1/convert/source', { http_sources: [{ url: 'https://arxiv.org/pdf/2206.01062' }] });
    assert.equal(res.statusCode, 400);
    assert.match(res.json().detail, /SIGNET_FETCH_SOURCES=on/);
  });

  test('a known option with a wrong value → 422 {"detail":[{type, loc, msg}]} (FastAPI\'s validation answer); unknown options are ignored', async () => {
    const res = await f.file('/v1/convert/file', [{ name: 'files', value: await plainPdf(1), filename: 'p.pdf' }, { name: 'image_export_mode', value: 'sideways' }, { name: 'pipeline', value: 'vlm' }]);
    assert.equal(res.statusCode, 422);
    assert.deepEqual(res.json().detail[0].loc, ['body', 'image_export_mode']);
  });
});

forEachDatabase('docling-serve-compatible conversion, no worker', (open) => {
  test('a synchronous conversion outliving the wait (120 s by the clock) → 504 with docling-serve\'s detail; its task goes on', async () => {
    const f = await fixture(await open(), { worker: false });
    const pending = f.file('/v1/convert/file', [{ name: 'files', value: await plainPdf(1), filename: 'slow.pdf' }]);
    // Once the request waits (its conversion is recorded), move the clock past the limit until it answers.
    let settled = false;
    void pending.finally(() => (settled = true));
    while (!settled) {
      if ((await f.deps.db.selectFrom('conversions').select('id').execute()).length > 0) f.clock.advance(121 * SECOND);
      await new Promise((r) => setTimeout(r, 50));
    }
    const res = await pending;
    assert.equal(res.statusCode, 504, f.logs.filter((l) => l.includes("unexpected")).join("\n").slice(0, 3000));
    assert.match(res.json().detail, /^Conversion is taking too long/);
    const tasks = (await f.get('/api/v1/docparse/tasks')).json().tasks;
    assert.equal(tasks[0].status, 'queued', 'the task is still in the list, waiting for a worker');
  });

  test('"a broken or oversized file is status: failure with an error entry, never a 500": over SIGNET_UPLOAD_MAX_MB, by multipart and by base64', async () => {
    const f = await fixture(await open(), { worker: false, env: { SIGNET_UPLOAD_MAX_MB: '1' } });
    const big = Buffer.concat([await plainPdf(1), Buffer.alloc(1200 * 1024, 0x20)]);
    const multipartAnswer = await f.file('/v1/convert/file', [{ name: 'files', value: big, filename: 'big.pdf' }]);
    assert.equal(multipartAnswer.statusCode, 200, multipartAnswer.body);
    assert.equal(multipartAnswer.json().status, 'failure');
    assert.match(multipartAnswer.json().errors[0].error_message, /larger than 1 MB/);
    const jsonAnswer = await f.json('/v1/convert/source', { file_sources: [{ base64_string: big.toString('base64'), filename: 'big.pdf' }] });
    assert.equal(jsonAnswer.statusCode, 200, jsonAnswer.body);
    assert.match(jsonAnswer.json().errors[0].error_message, /larger than 1 MB/);
    assert.equal((await f.deps.db.selectFrom('tasks').select('id').execute()).length, 0, 'no task, and no object, is left of a refused file');
  });
});
