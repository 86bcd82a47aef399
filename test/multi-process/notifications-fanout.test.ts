// Live notifications across processes on one PostgreSQL: two real `signet serve` processes; a stream
// held on process B receives a notification recorded through the shared database (as `signet worker`
// records one) and the unread count after a notification is marked read through process A. When B's
// listening connection is killed, B reconnects and its streams catch up by sequence number.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { systemClock } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { LISTENER_APPLICATION_NAME } from '../../src/notifications/fanout.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { openSse } from '../helpers/sse.ts';
import { startServeAtOwnOrigin, stop, type ServeAtOwnOrigin as Server } from './scale-out-support.ts';

const SECRET = 'multi-process-shared-secret-0123456789abcdef';

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

describe('live notifications across two server processes on one PostgreSQL', { skip: pgSkip }, () => {
  let created: { url: string; drop(): Promise<void> };
  let database: DatabaseHandle;
  let dataDir: string;
  let a: Server;
  let b: Server;
  let sub: string;
  const keys = deriveKeys(SECRET);

  before(async () => {
    created = await createPostgresDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'signet-fanout-'));
    database = openDatabase({ kind: 'postgres', url: created.url, poolSize: 4 });
    await migrate(database.db);
    sub = (await createAccount(database.db, systemClock, { email: 'ada@example.com', name: 'Ada', password: 'analytical-engine' })).sub;
    const serve = (name: string) => startServeAtOwnOrigin(name, { databaseUrl: created.url, secret: SECRET, dataDir: path.join(dataDir, name) });
    [a, b] = await Promise.all([serve('a'), serve('b')]);
  });

  after(async () => {
    await Promise.all([stop(a), stop(b)]);
    await database?.close();
    await created?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const cookieFor = async (server: Server) => `signet_session=${(await startSession(database.db, keys.tokenHash, systemClock, { sub, origin: server.baseUrl })).id}`;
  /** Records a notification through the shared database, as `signet worker` does. */
  const record = (fileName: string) =>
    database.db.transaction().execute((trx) => recordNotification(trx, 'postgres', Date.now(), { sub, locale: 'en', event: { category: 'translation', outcome: 'finished', fileName } }));
  const titleOf = (event: { data: string }) => (JSON.parse(event.data) as { notification: { title: string } }).notification.title;

  test('a notification recorded through the shared database (as a worker records it) reaches a stream held on process B; marking it read on process A updates B\'s unread count', async () => {
    const stream = await openSse(`${b.baseUrl}/api/v1/notifications/stream`, { cookie: await cookieFor(b) });
    assert.equal(stream.status, 200);
    await stream.waitFor((e) => e.event === 'unread');
    const id = await record('from-the-worker.pdf');
    const arrived = await stream.waitFor((e) => e.event === 'notification');
    assert.equal(titleOf(arrived), 'Translation of from-the-worker.pdf finished');
    assert.equal((JSON.parse(arrived.data) as { unread_count: number }).unread_count, 1);

    const res = await fetch(`${a.baseUrl}/api/v1/notifications/${id}/read`, { method: 'POST', headers: { cookie: await cookieFor(a), origin: a.baseUrl } });
    assert.equal(res.status, 204);
    await stream.waitFor((e) => e.event === 'unread' && (JSON.parse(e.data) as { unread_count: number }).unread_count === 0);
    stream.close();
  });

  test('"reconnect the listener with back-off if the connection drops": with every listening connection killed, a notification recorded meanwhile still reaches the open stream, once', async () => {
    const stream = await openSse(`${b.baseUrl}/api/v1/notifications/stream`, { cookie: await cookieFor(b) });
    await stream.waitFor((e) => e.event === 'unread');
    const killed = await sql<{ pid: number }>`select pg_terminate_backend(pid) as pid from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(database.db);
    assert.equal(killed.rows.length, 2, 'one listening connection per server process');
    await record('while-the-listener-was-down.pdf');
    const arrived = await stream.waitFor((e) => e.event === 'notification', 20_000);
    assert.equal(titleOf(arrived), 'Translation of while-the-listener-was-down.pdf finished');
    await record('after-the-reconnect.pdf');
    await stream.waitFor((e) => e.event === 'notification' && titleOf(e).includes('after-the-reconnect'), 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.deepEqual(
      stream.events.filter((e) => e.event === 'notification').map(titleOf),
      ['Translation of while-the-listener-was-down.pdf finished', 'Translation of after-the-reconnect.pdf finished'],
    );
    const listeners = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where application_name = ${LISTENER_APPLICATION_NAME} and datname = current_database()`.execute(database.db);
    assert.equal(listeners.rows[0]!.n, 2, 'both processes listen again');
    stream.close();
  });
});
