// issue 35: "a console page to start an import with a progress bar" — the page's landmarks, and the
// upload answered with progress lines as batches land, then the summary; the CSRF token is required.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { listAuditEvents } from '../../src/audit/audit.ts';
import { adminFixture } from '../admin/admin-fixture.ts';
import { consoleBrowser, createOperator, signInToConsole } from '../admin/console-fixture.ts';
import { sqliteDatabase } from '../helpers/databases.ts';

function multipart(fields: Record<string, string>, file: { name: string; type: string; content: string }): { body: string; type: string } {
  const boundary = '----signet-test-boundary';
  const parts = Object.entries(fields).map(([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
  parts.push(`--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${file.name}"\r\ncontent-type: ${file.type}\r\n\r\n${file.content}\r\n--${boundary}--\r\n`);
  return { body: parts.join(''), type: `multipart/form-data; boundary=${boundary}` };
}

test('the console\'s Import page: a file, a format and a progress bar; the upload answers progress lines, then the summary; audited with the operator', async () => {
  const database = await sqliteDatabase();
  const f = await adminFixture(database);
  after(async () => {
    await f.app.close();
    await f.adminApp.close();
    await database.dispose();
  });
  const { sub, secret } = await createOperator(f);
  const browser = consoleBrowser(f);
  await signInToConsole(f, browser, 'operator@example.com', secret);
  const page = await browser.get('/admin/import');
  assert.equal(page.statusCode, 200);
  assert.match(page.body, /<label for="import-file">File<\/label>/);
  assert.match(page.body, /<label for="import-format">Format<\/label>/);
  assert.match(page.body, /<progress id="import-progress" max="100" value="0">/);
  assert.match(page.body, /<button type="submit" class="primary">Start import<\/button>/);
  assert.match(page.body, /href="\/admin\/import" aria-current="page">Import</, 'the navigation leads to it');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!;

  const rows = ['email,name,email_verified'];
  for (let i = 0; i < 600; i++) rows.push(`person${i}@example.com,Person ${i},true`);
  rows.push('not-an-email,Bad,true');
  const { body, type } = multipart({ format: 'csv', dry_run: 'false' }, { name: 'people.csv', type: 'text/csv', content: rows.join('\n') + '\n' });
  const cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const refused = await f.adminApp.inject({ method: 'POST', url: '/admin/import', headers: { cookie, 'content-type': type }, payload: body });
  assert.equal(refused.statusCode, 403, 'without the CSRF token nothing is imported');

  const res = await f.adminApp.inject({ method: 'POST', url: '/admin/import', headers: { cookie, 'content-type': type, 'x-csrf-token': csrf, accept: 'application/x-ndjson' }, payload: body });
  assert.equal(res.statusCode, 200, res.body);
  const lines = res.body.trim().split('\n').map((l) => JSON.parse(l) as { progress?: { records: number; bytes: number }; summary?: { created: number; errors: unknown[] } });
  const progress = lines.filter((l) => l.progress).map((l) => l.progress!);
  assert.ok(progress.length >= 3, `a progress line per batch (${progress.length})`);
  assert.ok(progress.every((p, i) => i === 0 || (p.records > progress[i - 1]!.records && p.bytes >= progress[i - 1]!.bytes)), 'progress only moves forward');
  const summary = lines.at(-1)!.summary!;
  assert.equal(summary.created, 600);
  assert.deepEqual(summary.errors, [{ line: 602, reason: '"not-an-email" is not an e-mail address' }]);
  const [event] = (await listAuditEvents(f.deps.db, { type: 'accounts.imported' })).events;
  assert.equal(event!.actor, `operator:${sub}`);
});
