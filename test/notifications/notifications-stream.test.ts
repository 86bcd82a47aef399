// The inbox's live stream (GET /api/v1/notifications/stream) against a real listening Signet:
// server-sent events with ids, replay by Last-Event-ID, heartbeats, the per-person cap, and a stream
// that outlives the request timeout. Notifications are recorded straight into the database, as
// `signet worker` does, so they reach the stream through NOTIFY (PostgreSQL) or the poll (SQLite).
import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { CLOSING_RETRY_MS, closingFrame, HEARTBEAT_MS, parseLastEventId, RETRY_MS, sseComment, sseEvent } from '../../src/notifications/stream.ts';
import { MAX_STREAMS_PER_PERSON } from '../../src/notifications/fanout.ts';
import { CONNECTION_LIMITS } from '../../src/web/app.ts';
import { testApp } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { freePort, startSignet } from '../helpers/live-server.ts';
import { openSse, type SseConnection } from '../helpers/sse.ts';

type Live = {
  baseUrl: string;
  cookie: string;
  /** records a finished-parsing notification for the person, as the worker would; returns its id */
  notify(fileName: string): Promise<string>;
  stream(headers?: Record<string, string>): Promise<SseConnection>;
  close(): Promise<void>;
};

async function signedIn(database: TestDatabase, signet: { baseUrl: string; deps: { clock: () => number; keys: { tokenHash: Buffer } } }): Promise<Omit<Live, 'close'>> {
  const { clock, keys } = signet.deps;
  const person = await createAccount(database.db, clock, { email: 'live@example.com', password: 'a long enough password' });
  const session = await startSession(database.db, keys.tokenHash, clock, { sub: person.sub, origin: signet.baseUrl });
  const cookie = `signet_session=${session.id}`;
  return {
    baseUrl: signet.baseUrl,
    cookie,
    notify: (fileName) =>
      database.db.transaction().execute((trx) =>
        recordNotification(trx, database.dialect, clock(), { sub: person.sub, locale: 'en', event: { category: 'docparse', outcome: 'finished', fileName }, link: '/tasks' }),
      ),
    stream: (headers = {}) => openSse(`${signet.baseUrl}/api/v1/notifications/stream`, { cookie, ...headers }),
  };
}

async function live(database: TestDatabase): Promise<Live> {
  const signet = await startSignet(database);
  return { ...(await signedIn(database, signet)), close: () => signet.close() };
}

const titleOf = (event: { data: string }) => (JSON.parse(event.data) as { notification: { title: string } }).notification.title;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('framing: "every event has an id"; data lines are split; a heartbeat is a comment line; Last-Event-ID is a non-negative integer', () => {
  assert.equal(sseEvent({ id: 7, event: 'unread', data: '{"unread_count":1}' }), 'id: 7\nevent: unread\ndata: {"unread_count":1}\n\n');
  assert.equal(sseEvent({ data: 'a\nb\r\nc' }), 'data: a\ndata: b\ndata: c\n\n');
  assert.equal(sseEvent({ retry: 3000 }), 'retry: 3000\n\n');
  assert.equal(sseComment('heartbeat'), ': heartbeat\n\n');
  assert.equal(parseLastEventId('42'), 42);
  assert.equal(parseLastEventId(' 0 '), 0);
  for (const bad of ['-1', '1.5', 'abc', '', undefined, '9'.repeat(16)]) assert.equal(parseLastEventId(bad), undefined);
});

test('heartbeat: "a stream must write more often than" the idle-connection timeout', () => {
  assert.ok(HEARTBEAT_MS < CONNECTION_LIMITS.idleMs, `heartbeat ${HEARTBEAT_MS} ms < idle timeout ${CONNECTION_LIMITS.idleMs} ms`);
});

forEachDatabase('notification stream', (open) => {
  test('GET /api/v1/notifications/stream is text/event-stream with Cache-Control: no-cache, X-Accel-Buffering: no and a retry: hint; it starts with the unread count', async () => {
    const l = await live(await open());
    try {
      await l.notify('first.pdf');
      const stream = await l.stream();
      assert.equal(stream.status, 200);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream');
      assert.equal(stream.headers.get('cache-control'), 'no-cache');
      assert.equal(stream.headers.get('x-accel-buffering'), 'no');
      const first = await stream.waitFor((e) => e.event === 'unread');
      assert.deepEqual(JSON.parse(first.data), { unread_count: 1 });
      assert.match(first.id ?? '', /^\d+$/, 'every event has an id');
      assert.deepEqual(stream.retries, [RETRY_MS]);
      stream.close();
    } finally {
      await l.close();
    }
  });

  test('"a reconnect with Last-Event-ID replays what was missed, once": disconnect, two notifications, reconnect → both arrive, once each, then live ones', async () => {
    const l = await live(await open());
    try {
      const before = await l.stream();
      await before.waitFor((e) => e.event === 'unread');
      await l.notify('seen.pdf');
      const seen = await before.waitFor((e) => e.event === 'notification');
      assert.equal(titleOf(seen), 'Document parsing of seen.pdf finished');
      before.close();

      await l.notify('missed-1.pdf');
      await l.notify('missed-2.pdf');
      const after = await l.stream({ 'last-event-id': seen.id! });
      await after.waitFor((e) => e.event === 'notification' && titleOf(e).includes('missed-2'));
      await l.notify('live.pdf');
      await after.waitFor((e) => e.event === 'notification' && titleOf(e).includes('live'));
      // Long enough for a duplicate to show (the SQLite poll runs every second).
      await sleep(2500);
      const notifications = after.events.filter((e) => e.event === 'notification');
      assert.deepEqual(
        notifications.map(titleOf),
        ['Document parsing of missed-1.pdf finished', 'Document parsing of missed-2.pdf finished', 'Document parsing of live.pdf finished'],
      );
      const ids = notifications.map((e) => Number(e.id));
      assert.ok(ids.every((id, i) => id > Number(seen.id) && (i === 0 || id > ids[i - 1]!)), `ids rise after Last-Event-ID: ${ids.join(' ')}`);
      assert.ok(
        after.events.every((e) => e.id !== undefined && /^\d+$/.test(e.id)),
        'every event has an id',
      );
      const last = JSON.parse(notifications.at(-1)!.data) as { unread_count: number; notification: Record<string, unknown> };
      assert.equal(last.unread_count, 4);
      assert.deepEqual(Object.keys(last.notification).sort(), ['body', 'category', 'client_id', 'created_at', 'deliveries', 'id', 'link', 'read_at', 'title']);
      after.close();
    } finally {
      await l.close();
    }
  });

  test('unread-count changes arrive on the stream: marking read elsewhere sends an `unread` event', async () => {
    const l = await live(await open());
    try {
      const id = await l.notify('to-read.pdf');
      const stream = await l.stream();
      await stream.waitFor((e) => e.event === 'unread' && JSON.parse(e.data).unread_count === 1);
      const res = await fetch(`${l.baseUrl}/api/v1/notifications/${id}/read`, { method: 'POST', headers: { cookie: l.cookie, origin: l.baseUrl } });
      assert.equal(res.status, 204);
      await stream.waitFor((e) => e.event === 'unread' && JSON.parse(e.data).unread_count === 0);
      stream.close();
    } finally {
      await l.close();
    }
  });

  test(`a cap on streams per person: stream ${MAX_STREAMS_PER_PERSON + 1} of one person is 429; closing one makes room`, async () => {
    const l = await live(await open());
    try {
      const streams = await Promise.all(Array.from({ length: MAX_STREAMS_PER_PERSON }, () => l.stream()));
      assert.deepEqual(
        streams.map((s) => s.status),
        Array(MAX_STREAMS_PER_PERSON).fill(200),
      );
      const refused = await l.stream();
      assert.equal(refused.status, 429);
      assert.equal((JSON.parse(refused.text) as { error: string }).error, 'too_many_streams');
      assert.ok(refused.headers.get('retry-after'));
      streams[0]!.close();
      let again: SseConnection | undefined;
      for (let i = 0; i < 50 && again?.status !== 200; i++) {
        await sleep(100);
        again = await l.stream();
      }
      assert.equal(again?.status, 200);
      for (const s of [...streams, again!]) s.close();
    } finally {
      await l.close();
    }
  });

  test('a server that shuts down ends its open streams, the last frame a retry hint of 1–4 s, so browsers reconnect elsewhere', async () => {
    const database = await open();
    const signet = await startSignet(database);
    const l = await signedIn(database, signet);
    const stream = await l.stream();
    await stream.waitFor((e) => e.event === 'unread');
    await signet.close();
    await stream.ended;
    assert.equal(stream.retries.length, 2, `the opening hint and the closing one: ${stream.retries.join(' ')}`);
    assert.equal(stream.retries[0], RETRY_MS);
    assert.ok(stream.retries[1]! >= CLOSING_RETRY_MS.min && stream.retries[1]! < CLOSING_RETRY_MS.max, `retry: ${stream.retries[1]}`);
    assert.equal(closingFrame(() => 0), `retry: ${CLOSING_RETRY_MS.min}\n\n`);
  });

  test('the stream needs the session cookie (401 without one)', async () => {
    const l = await live(await open());
    try {
      const res = await fetch(`${l.baseUrl}/api/v1/notifications/stream`);
      assert.equal(res.status, 401);
      assert.equal(((await res.json()) as { error: string }).error, 'unauthenticated');
    } finally {
      await l.close();
    }
  });
});

forEachDatabase('notification stream and the server timeouts', (open) => {
  test('the request timeout "bounds receiving the request" and does not cut a stream; heartbeats keep it past the idle timeout', { timeout: 120_000 }, async () => {
    const database = await open();
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const t = await testApp(database, { SIGNET_BASE_URL: baseUrl, SIGNET_LOG_LEVEL: 'warn' }, (app) => {
      // A request timeout of 1 s, checked every 200 ms: far shorter than the stream is held below.
      app.server.headersTimeout = 1000;
      app.server.requestTimeout = 1000;
      // A public property of http.Server, read when it starts listening (@types/node lacks it).
      (app.server as http.Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = 200;
    });
    await t.app.listen({ host: '127.0.0.1', port });
    const l = await signedIn(database, { baseUrl, deps: t.deps });
    try {
      // The timeout is in force: a request whose body never finishes is cut.
      const cut = await new Promise<number>((resolve) => {
        const started = Date.now();
        const req = http.request(`${baseUrl}/api/v1/notification-preferences`, { method: 'PUT', headers: { 'content-type': 'application/json', 'content-length': '100', cookie: l.cookie, origin: baseUrl } });
        req.on('response', (res) => {
          res.resume();
          res.on('close', () => resolve(Date.now() - started));
        });
        req.on('error', () => resolve(Date.now() - started));
        req.write('{"categories":');
      });
      assert.ok(cut < 5000, `a stalled request is cut (after ${cut} ms)`);

      const stream = await l.stream();
      await stream.waitFor((e) => e.event === 'unread');
      // Past the request timeout many times over, and past the 20 s idle timeout.
      await sleep(CONNECTION_LIMITS.idleMs + 3000);
      assert.ok(stream.comments.includes('heartbeat'), 'a heartbeat comment arrived');
      await l.notify('late.pdf');
      const late = await stream.waitFor((e) => e.event === 'notification');
      assert.equal(titleOf(late), 'Document parsing of late.pdf finished');
      stream.close();
    } finally {
      await t.app.close();
    }
  });
});
