// Live delivery across processes: every server process learns of each committed notification (and of
// read-state changes) and passes it to the streams of that person it holds. Whichever process — a
// server handling a request, or `signet worker` finishing a task — recorded the notification.
//
// PostgreSQL: one dedicated connection per process (not from the pool: a pooled connection would lose
// its LISTEN when handed back) LISTENs on the channel insertNotification and markRead announce on.
// If it drops, it reconnects with back-off and every local stream catches up by sequence number.
// SQLite: there is no NOTIFY, so a short poll reads what is new since the last sequence number seen.
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Settings } from '../config/settings.ts';
import { loadPg, type Db } from '../db/database.ts';
import { findNotification, unreadCount, unreadCounts, type SequencedNotification } from './inbox.ts';
import { announcementsAfter, maxSeq, NOTIFY_CHANNEL } from './notifications.store.ts';

/** A local stream, as the fan-out sees it. Calls come in sequence order; the stream drops repeats. */
export type FanoutListener = {
  readonly sub: string;
  /** a committed notification of this person, and the person's unread count after it */
  notification(item: SequencedNotification, unreadCount: number): void;
  /** the person's unread count (it may not have changed) */
  unread(count: number): void;
  /** announcements may have been missed (the listener reconnected): read what is after your last one */
  catchUp(): void;
};

export type NotificationFanout = {
  /** Adds a local stream; undefined when the person already holds `maxStreamsPerPerson` here. */
  subscribe(listener: FanoutListener): (() => void) | undefined;
  /** Starts listening (or polling). Idempotent; also started by the first subscription. */
  start(): Promise<void>;
  /** Stops listening. Idempotent. */
  stop(): Promise<void>;
};

/** Streams one person may hold open on one server process; more are refused (HTTP 429). */
export const MAX_STREAMS_PER_PERSON = 5;
/** PostgreSQL: how the listening connection shows in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'signet-notifications';
/** SQLite: how often other processes' notifications and read changes are looked for. */
export const POLL_INTERVAL_MS = 1000;
/** PostgreSQL: the listener's reconnect back-off, doubling from the first to the last. */
export const RECONNECT_DELAYS_MS = { first: 250, max: 15_000 };

export type FanoutOptions = {
  db: Db;
  /** the database settings: the PostgreSQL URL for the listening connection */
  database: Settings['database'];
  logger: Pick<Logger, 'info' | 'warn' | 'debug'>;
  maxStreamsPerPerson?: number;
  pollIntervalMs?: number;
  reconnectDelaysMs?: { first: number; max: number };
};

type Announcement = { kind: 'notification'; id: string; sub: string; seq: number } | { kind: 'read'; sub: string };

/** The NOTIFY payload, narrowed: `{id, sub, seq}` for a new notification, `{sub, read: true}` after marking read. */
export function parseAnnouncement(payload: string | undefined): Announcement | undefined {
  let value: unknown;
  try {
    value = JSON.parse(payload ?? '');
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { id, sub, seq, read } = value as Record<string, unknown>;
  if (typeof sub !== 'string') return undefined;
  if (typeof id === 'string' && typeof seq === 'number' && Number.isSafeInteger(seq)) return { kind: 'notification', id, sub, seq };
  if (read === true) return { kind: 'read', sub };
  return undefined;
}

export function createFanout(options: FanoutOptions): NotificationFanout {
  const { db, logger } = options;
  const cap = options.maxStreamsPerPerson ?? MAX_STREAMS_PER_PERSON;
  const listeners = new Map<string, Set<FanoutListener>>();
  let started: Promise<void> | undefined;
  let stopped = false;
  let stopSource: (() => Promise<void>) | undefined;

  // Announcements are handled one at a time, so each stream sees its person's notifications in order.
  let queue: Promise<void> = Promise.resolve();
  function enqueue(work: () => Promise<void>): void {
    queue = queue.then(work).catch((error: unknown) => logger.warn({ err: error }, 'passing a notification to live streams failed; streams catch up on their next event'));
  }

  function catchUpAll(): void {
    for (const set of listeners.values()) for (const listener of set) listener.catchUp();
  }

  function announce(announcement: Announcement): void {
    if (!listeners.has(announcement.sub)) return; // nobody here is watching: nothing to read
    enqueue(async () => {
      const set = listeners.get(announcement.sub);
      if (!set) return;
      if (announcement.kind === 'read') {
        const count = await unreadCount(db, announcement.sub);
        for (const listener of set) listener.unread(count);
        return;
      }
      const item = await findNotification(db, announcement.id);
      if (!item || item.sub !== announcement.sub) return;
      const count = await unreadCount(db, announcement.sub);
      for (const listener of set) listener.notification(item, count);
    });
  }

  async function listenOnPostgres(url: string): Promise<() => Promise<void>> {
    const delays = options.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
    let client: pg.Client | undefined;
    let failures = 0;
    let timer: NodeJS.Timeout | undefined;

    const retryLater = () => {
      if (stopped) return;
      const delay = Math.min(delays.first * 2 ** failures, delays.max);
      failures += 1;
      timer = setTimeout(() => void connect(), delay);
      timer.unref();
    };

    const connect = async (): Promise<void> => {
      if (stopped) return;
      const candidate = new (loadPg().Client)({ connectionString: url, keepAlive: true, application_name: LISTENER_APPLICATION_NAME });
      let dropped = false;
      const onDrop = (error?: Error) => {
        if (dropped) return;
        dropped = true;
        if (client === candidate) client = undefined;
        candidate.removeAllListeners('notification');
        candidate.end().catch(() => {});
        if (stopped) return;
        logger.warn({ err: error }, 'the notification listener lost its database connection; reconnecting');
        retryLater();
      };
      candidate.on('error', onDrop);
      candidate.on('end', () => onDrop());
      candidate.on('notification', (message) => {
        if (message.channel !== NOTIFY_CHANNEL) return;
        const announcement = parseAnnouncement(message.payload);
        if (announcement) announce(announcement);
      });
      try {
        await candidate.connect();
        await candidate.query(`LISTEN ${NOTIFY_CHANNEL}`);
      } catch (error) {
        onDrop(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      if (stopped) {
        await candidate.end().catch(() => {});
        return;
      }
      if (failures > 0) logger.info({}, 'the notification listener is connected again');
      client = candidate;
      failures = 0;
      // Whatever was committed before LISTEN took effect (or while it was down) is read by sequence.
      catchUpAll();
    };

    await connect();
    return async () => {
      clearTimeout(timer);
      const current = client;
      client = undefined;
      if (current) {
        current.removeAllListeners('notification');
        await current.end().catch(() => {});
      }
    };
  }

  async function pollSqlite(intervalMs: number): Promise<() => Promise<void>> {
    let lastSeq = await maxSeq(db);
    let running = false;
    const poll = async () => {
      if (running || stopped) return;
      running = true;
      try {
        for (;;) {
          const batch = await announcementsAfter(db, lastSeq, 200);
          for (const row of batch) announce({ kind: 'notification', ...row });
          if (batch.length > 0) lastSeq = batch.at(-1)!.seq;
          if (batch.length < 200) break;
        }
        // Read changes: the unread count of everyone watched here (streams skip unchanged counts).
        const subs = [...listeners.keys()];
        if (subs.length > 0) {
          enqueue(async () => {
            const counts = await unreadCounts(db, subs);
            for (const sub of subs) for (const listener of listeners.get(sub) ?? []) listener.unread(counts.get(sub) ?? 0);
          });
        }
      } catch (error) {
        logger.warn({ err: error }, 'polling for new notifications failed; will retry');
      } finally {
        running = false;
      }
    };
    const timer = setInterval(() => void poll(), intervalMs);
    timer.unref();
    catchUpAll();
    return async () => clearInterval(timer);
  }

  const fanout: NotificationFanout = {
    subscribe(listener) {
      let set = listeners.get(listener.sub);
      if (set && set.size >= cap) return undefined;
      if (!set) listeners.set(listener.sub, (set = new Set()));
      set.add(listener);
      void fanout.start();
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(listener.sub) === set) listeners.delete(listener.sub);
      };
    },
    start() {
      started ??= (async () => {
        if (stopped) return;
        try {
          stopSource = options.database.kind === 'postgres' ? await listenOnPostgres(options.database.url) : await pollSqlite(options.pollIntervalMs ?? POLL_INTERVAL_MS);
        } catch (error) {
          logger.warn({ err: error }, 'live notifications could not start; pages fall back to polling');
        }
      })();
      return started;
    },
    async stop() {
      stopped = true;
      await started;
      await stopSource?.();
      stopSource = undefined;
      listeners.clear();
    },
  };
  return fanout;
}
