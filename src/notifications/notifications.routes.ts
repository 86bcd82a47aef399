// The first-party notification API: the inbox, marking read, the live stream and preferences.
// HTTP in and out only; the rules are in inbox.ts, preferences.ts and stream.ts. Authentication is the
// person's session cookie (request.apiAccount); state changes must come from this host's pages.
import { PassThrough } from 'node:stream';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import type { NotificationFanout } from './fanout.ts';
import { InboxError, listNotifications, markAllRead, markRead } from './inbox.ts';
import { getPreferences, PreferenceError, updatePreferences } from './preferences.ts';
import { closingFrame, createNotificationStream, parseLastEventId } from './stream.ts';

export type NotificationContext = { db: Db; dialect: Dialect; clock: Clock };

type Options = {
  ctx: NotificationContext;
  /** passes committed notifications to this process's streams */
  fanout: NotificationFanout;
};

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A stream that falls this far behind (a client that stopped reading) is closed; it reconnects and replays. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

function queryOf(request: FastifyRequest): Record<string, unknown> {
  return (request.query ?? {}) as Record<string, unknown>;
}

export const notificationRoutes: FastifyPluginAsync<Options> = async (app, { ctx, fanout }) => {
  const { db, dialect, clock } = ctx;

  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof InboxError) {
      if (error.status === 429) reply.header('retry-after', '30');
      return reply.code(error.status).header('cache-control', 'no-store').send({ error: error.code, message: error.message });
    }
    if (error instanceof PreferenceError) return reply.code(400).header('cache-control', 'no-store').send({ error: 'invalid_preferences', message: error.message });
    throw error;
  });

  app.get('/api/v1/notifications', async (request, reply) => {
    const { sub } = await request.apiAccount();
    const query = queryOf(request);
    const cursor = typeof query.cursor === 'string' && query.cursor !== '' ? query.cursor : undefined;
    const limit = typeof query.limit === 'string' && /^\d{1,3}$/.test(query.limit) ? Number(query.limit) : undefined;
    const page = await listNotifications(db, sub, { unreadOnly: query.unread === 'true', cursor, limit });
    return reply.header('cache-control', 'no-store').send({ notifications: page.notifications, unread_count: page.unread_count, next_cursor: page.next_cursor });
  });

  app.post('/api/v1/notifications/read-all', async (request, reply) => {
    const { sub } = await request.apiAccount({ stateChanging: true });
    await markAllRead(db, dialect, clock, sub);
    return reply.code(204).send();
  });

  app.post('/api/v1/notifications/:id/read', async (request, reply) => {
    const { sub } = await request.apiAccount({ stateChanging: true });
    const id = (request.params as { id: string }).id;
    if (!ID.test(id)) throw new InboxError(404, 'not_found', 'No such notification. It may belong to another account.');
    await markRead(db, dialect, clock, sub, id);
    return reply.code(204).send();
  });

  // Streams still open when the server shuts down are ended first, so closing never waits on them;
  // their last frame is a retry hint: browsers reconnect (to another process, or this one once it is
  // back) and replay by Last-Event-ID.
  const open = new Set<PassThrough>();
  app.addHook('preClose', async () => {
    for (const body of open) if (!body.destroyed && !body.writableEnded) body.end(closingFrame());
  });

  app.get('/api/v1/notifications/stream', async (request, reply) => {
    const { sub } = await request.apiAccount();
    const body = new PassThrough();
    const stream = createNotificationStream({
      db,
      sub,
      // EventSource sends Last-Event-ID on reconnect; a page's first connection may say where its list ends.
      lastEventId: parseLastEventId(request.headers['last-event-id']) ?? parseLastEventId(queryOf(request).after),
      logger: request.log,
      write(frame) {
        if (body.destroyed || body.writableEnded) return;
        body.write(frame);
        if (body.writableLength > MAX_BUFFERED_BYTES) body.destroy();
      },
    });
    const unsubscribe = fanout.subscribe(stream);
    if (!unsubscribe) {
      stream.close();
      throw new InboxError(429, 'too_many_streams', 'Too many live connections for this account: close another Signet tab or window and try again.');
    }
    open.add(body);
    body.on('close', () => {
      stream.close();
      unsubscribe();
      open.delete(body);
    });
    stream.start();
    return reply
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      // nginx and similar proxies would otherwise hold events back in their buffers.
      .header('x-accel-buffering', 'no')
      // A stream is not followed by another request on its connection; closing it lets shutdown finish.
      .header('connection', 'close')
      .send(body);
  });

  app.get('/api/v1/notification-preferences', async (request, reply) => {
    const { sub } = await request.apiAccount();
    return reply.header('cache-control', 'no-store').send(await getPreferences(db, sub));
  });

  app.put('/api/v1/notification-preferences', async (request, reply) => {
    const { sub } = await request.apiAccount({ stateChanging: true });
    return reply.header('cache-control', 'no-store').send(await updatePreferences(db, clock, sub, request.body));
  });
};
