// The inbox's live updates as server-sent events (text/event-stream), framed by hand.
// spec: "in-app inbox with an unread badge and live updates (server-sent events, with polling as
// fallback)". Every event carries an id — the sequence number of the person's newest notification
// this stream has sent — so a browser that reconnects with `Last-Event-ID` gets what it missed, once.
//
//   event: notification   data: {"notification": {…}, "unread_count": n}   (id: its sequence number)
//   event: unread         data: {"unread_count": n}                        (id: the last one sent)
//   : heartbeat           a comment every 15 s, so proxies and idle timers keep the connection
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import type { FanoutListener } from './fanout.ts';
import { latestSeq, notificationsAfter, unreadCount, type SequencedNotification } from './inbox.ts';

// Below the server's idle-connection timeout (CONNECTION_LIMITS.idleMs, 20 s), which writes reset.
export const HEARTBEAT_MS = 15_000;
/** The reconnection delay the browser is told to use (the `retry:` field). */
export const RETRY_MS = 3_000;
/** The range of the reconnection delay given by a server that is shutting down (see closingFrame). */
export const CLOSING_RETRY_MS = { min: 1_000, max: 4_000 };
/** Missed notifications are read in batches of this many. */
const REPLAY_BATCH = 100;

/** One event in the text/event-stream framing; `data` is split on line breaks as the format requires. */
export function sseEvent(event: { id?: number; event?: string; data?: string; retry?: number }): string {
  let frame = '';
  if (event.retry !== undefined) frame += `retry: ${event.retry}\n`;
  if (event.id !== undefined) frame += `id: ${event.id}\n`;
  if (event.event !== undefined) frame += `event: ${event.event}\n`;
  if (event.data !== undefined) for (const line of event.data.split(/\r\n|\r|\n/)) frame += `data: ${line}\n`;
  return `${frame}\n`;
}

/**
 * The last frame of a stream the server ends because it is shutting down: a retry hint, so browsers
 * reconnect (through the load balancer, to a process that is still up) and replay by Last-Event-ID.
 * Spread over 1–4 s, so the streams of a stopping process do not all arrive elsewhere at once.
 */
export function closingFrame(random: () => number = Math.random): string {
  return sseEvent({ retry: CLOSING_RETRY_MS.min + Math.floor(random() * (CLOSING_RETRY_MS.max - CLOSING_RETRY_MS.min)) });
}

/** A comment line: ignored by EventSource, but it moves bytes. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]/g, ' ')}\n\n`;
}

/** `Last-Event-ID` as this server writes it (a non-negative integer), or undefined. */
export function parseLastEventId(value: unknown): number | undefined {
  return typeof value === 'string' && /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : undefined;
}

export type NotificationStream = FanoutListener & {
  /** Sends the retry hint, replays what was missed after `lastEventId`, and starts the heartbeat. */
  start(): void;
  /** Stops the heartbeat; later calls write nothing. */
  close(): void;
};

export type StreamOptions = {
  db: Db;
  sub: string;
  /** from `Last-Event-ID` (or the page's `after`): replay the person's notifications after it */
  lastEventId: number | undefined;
  /** writes a frame to the response */
  write(frame: string): void;
  logger: Pick<Logger, 'warn'>;
  heartbeatMs?: number;
};

export function createNotificationStream(options: StreamOptions): NotificationStream {
  const { db, sub, write } = options;
  let lastSeq = 0;
  let lastCount: number | undefined;
  let closed = false;
  let heartbeat: NodeJS.Timeout | undefined;

  // Everything a stream does runs in order: replay, live notifications and counts never interleave.
  let queue: Promise<void> = Promise.resolve();
  const enqueue = (work: () => Promise<void> | void) => {
    queue = queue.then(() => (closed ? undefined : work())).catch((error: unknown) => options.logger.warn({ err: error }, 'a notification stream could not read from the database'));
  };

  const send = (item: SequencedNotification, count: number) => {
    // Announcements come in sequence order; one at or below the last sent was replayed already.
    if (item.seq <= lastSeq) return;
    lastSeq = item.seq;
    lastCount = count;
    write(sseEvent({ id: item.seq, event: 'notification', data: JSON.stringify({ notification: item.view, unread_count: count }) }));
  };

  const sendCount = (count: number) => {
    if (count === lastCount) return;
    lastCount = count;
    write(sseEvent({ id: lastSeq, event: 'unread', data: JSON.stringify({ unread_count: count }) }));
  };

  const catchUp = async () => {
    for (;;) {
      const missed = await notificationsAfter(db, sub, lastSeq, REPLAY_BATCH);
      const count = await unreadCount(db, sub);
      if (closed) return;
      for (const item of missed) send(item, count);
      if (missed.length < REPLAY_BATCH) {
        sendCount(count);
        return;
      }
    }
  };

  // First in the queue, before any live announcement: where this stream starts, and the replay.
  let started = false;
  enqueue(async () => {
    const latest = await latestSeq(db, sub);
    // Without Last-Event-ID the page already shows everything so far. An id above anything this
    // person has (a restored database, a hand-written header) must not hide what comes next.
    lastSeq = options.lastEventId === undefined ? latest : Math.min(options.lastEventId, latest);
  });

  return {
    sub,
    notification: (item, count) => enqueue(() => send(item, count)),
    unread: (count) => enqueue(() => sendCount(count)),
    catchUp: () => enqueue(catchUp),
    start() {
      if (started) return;
      started = true;
      write(sseEvent({ retry: RETRY_MS }));
      enqueue(catchUp);
      heartbeat = setInterval(() => {
        if (!closed) write(sseComment('heartbeat'));
      }, options.heartbeatMs ?? HEARTBEAT_MS);
      heartbeat.unref();
    },
    close() {
      closed = true;
      clearInterval(heartbeat);
    },
  };
}
