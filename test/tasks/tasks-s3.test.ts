// Task files on an S3-compatible store (s3rver on loopback): delete-record with the store down is a
// 503 that hides nothing, and after it returns the delete removes every object; /readyz reports it;
// deleting an account removes its tasks' files, or nothing at all while the store is down.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAccount, findAccount } from '../../src/accounts/accounts.ts';
import { createAdminKey } from '../../src/admin/admin-keys.ts';
import { buildAdminApp } from '../../src/admin/app.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { openObjectStore, parseStorageUrl } from '../../src/storage/open.ts';
import { testApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { plainPdf } from '../helpers/pdfs.ts';
import { startS3, type TestS3 } from '../helpers/s3.ts';

const HOST = new URL(TEST_BASE_URL).host;

describe('task files on S3 (s3rver on loopback)', () => {
  let s3: TestS3;
  let objects: ObjectStore;
  let t: TestApp;
  let cookie: string;
  let dispose: () => Promise<void>;

  before(async () => {
    s3 = await startS3();
    objects = openObjectStore(parseStorageUrl(s3.url));
    const database = await sqliteDatabase();
    dispose = database.dispose;
    t = await testApp(database, {}, undefined, { objects });
    const person = await createAccount(database.db, t.clock, { email: 'ada@example.com', password: 'correct horse battery' });
    cookie = `signet_session=${(await startSession(database.db, t.deps.keys.tokenHash, t.clock, { sub: person.sub, origin: TEST_BASE_URL })).id}`;
  });
  after(async () => {
    await t.app.close();
    await objects.close();
    await s3.dispose();
    await dispose();
  });

  const call = (method: 'GET' | 'DELETE', url: string) => t.app.inject({ method, url, headers: { host: HOST, origin: TEST_BASE_URL, cookie } });

  test('spec: "delete-record call while storage is unreachable → 503; nothing hidden"; after storage returns, the delete removes every object', async () => {
    const boundary = '----signet-s3';
    const pdf = await plainPdf(1);
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
      pdf,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/docparse/tasks', headers: { host: HOST, origin: TEST_BASE_URL, cookie, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    // The task finished with two results (as a worker would leave it).
    for (const name of ['document.md', 'document.json']) await objects.put(`tasks/${id}/${name}`, Buffer.from(name));
    await t.deps.db
      .updateTable('tasks')
      .set({ status: 'finished', files: JSON.stringify(['document.md', 'document.json'].map((name) => ({ name, size: name.length, content_type: 'text/plain' }))) })
      .where('id', '=', id)
      .execute();
    assert.equal((await s3.listKeys()).length, 3);

    await s3.stop();
    const refused = await call('DELETE', `/api/v1/docparse/tasks/${id}/record`);
    assert.equal(refused.statusCode, 503, refused.body);
    assert.equal(refused.json().error, 'storage_unavailable');
    assert.ok(Number(refused.headers['retry-after']) > 0, 'Retry-After says when to try again');
    const listed = (await call('GET', '/api/v1/docparse/tasks')).json().tasks as Array<{ id: string; status: string }>;
    assert.deepEqual(listed.map((x) => [x.id, x.status]), [[id, 'finished']], 'the record stays readable and listed');
    const ready = await t.app.inject({ method: 'GET', url: '/readyz', headers: { host: HOST } });
    assert.equal(ready.statusCode, 503, '/readyz reports storage too');
    assert.equal(ready.json().failures.storage, 'unreachable');

    await s3.restart();
    const deleted = await call('DELETE', `/api/v1/docparse/tasks/${id}/record`);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.deepEqual(await s3.listKeys(), [], 'the bucket listing shows none left');
    assert.equal((await call('GET', `/api/v1/docparse/tasks/${id}`)).statusCode, 404);
    assert.equal((await t.app.inject({ method: 'GET', url: '/readyz', headers: { host: HOST } })).statusCode, 200);
  });

  test('deleting an account through the admin API removes its tasks\' files (source and results) from the store; with the store down it is 503 and nothing is deleted — the account, its tasks and files stay, and a retry completes it', async () => {
    const { db, keys, logger } = t.deps;
    const person = await createAccount(db, t.clock, { email: 'grace@example.com', password: 'correct horse battery' });
    const own = `signet_session=${(await startSession(db, keys.tokenHash, t.clock, { sub: person.sub, origin: TEST_BASE_URL })).id}`;
    const boundary = '----signet-s3-account';
    const payload = Buffer.concat([
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="b.pdf"\r\nContent-Type: application/pdf\r\n\r\n`),
      await plainPdf(1),
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/docparse/tasks', headers: { host: HOST, origin: TEST_BASE_URL, cookie: own, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    await objects.put(`tasks/${id}/document.md`, Buffer.from('# b'));
    await db.updateTable('tasks').set({ status: 'finished', files: JSON.stringify([{ name: 'document.md', size: 3, content_type: 'text/markdown' }]) }).where('id', '=', id).execute();
    await objects.put('tasks/someone-else/source.pdf', Buffer.from('%PDF-'));
    const before = await s3.listKeys();
    assert.deepEqual(before.filter((k) => k.startsWith(`tasks/${id}/`)).sort(), [`tasks/${id}/document.md`, `tasks/${id}/source.pdf`]);

    const adminApp = await buildAdminApp({ db, clock: t.clock, keys, objects, logger, trustProxy: false });
    const { key } = await createAdminKey(db, t.clock, keys.tokenHash, 'tests');
    const remove = () => adminApp.inject({ method: 'DELETE', url: `/admin/v1/accounts/${person.sub}`, headers: { authorization: `Bearer ${key}` } });
    await s3.stop();
    const refused = await remove();
    assert.equal(refused.statusCode, 503, refused.body);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.ok(await findAccount(db, person.sub), 'the account stays');
    assert.ok(await db.selectFrom('tasks').select('id').where('id', '=', id).executeTakeFirst(), 'its task stays');

    await s3.restart();
    assert.equal((await remove()).statusCode, 204);
    assert.equal(await findAccount(db, person.sub), undefined);
    assert.deepEqual((await s3.listKeys()).filter((k) => k.startsWith(`tasks/${id}/`)), [], 'no file of the account is left');
    assert.ok((await s3.listKeys()).includes('tasks/someone-else/source.pdf'), "another person's files stay");
    await adminApp.close();
  });
});
