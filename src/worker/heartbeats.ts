// Workers' heartbeats (issue 36): each `signet worker` says every few seconds, in the database every node
// shares, that it is alive and what it takes (task kinds, e-mail), so the console lists every worker —
// an idle one too, which holds no task lease and was invisible before. Stopping removes the row; a
// worker that died leaves it to age, shown as last seen so long ago, until the daily sweep forgets it.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { DAY, MINUTE, SECOND, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as store from './heartbeats.store.ts';

/** How often a worker renews its row. */
export const HEARTBEAT_INTERVAL_MS = 10 * SECOND;
/** A worker seen within this is alive ("workers seen in the last minute" on the overview). */
export const WORKER_SEEN_MS = MINUTE;
/** How long a silent worker stays listed (as not seen for a while) before the page leaves it out. */
export const WORKER_LISTED_MS = 60 * MINUTE;
/** The sweep forgets a silent worker's row after this. */
export const WORKER_FORGOTTEN_MS = DAY;

export type WorkerIdentity = {
  /** the worker's random id: the lease_owner of the tasks it runs */
  id: string;
  /** task kinds and/or "email" */
  work: readonly string[];
  /** tasks it runs at once (0: e-mail only) */
  slots: number;
  version: string;
};

/** Writes the worker's row now and renews it every HEARTBEAT_INTERVAL_MS; stop() removes it. A failed write is logged and tried again at the next beat. */
export function startHeartbeat(deps: { db: Db; clock: Clock; logger: Logger }, identity: WorkerIdentity, intervalMs = HEARTBEAT_INTERVAL_MS): { stop(): Promise<void> } {
  const startedAt = deps.clock();
  const host = hostname().slice(0, 200);
  const beat = () =>
    store
      .upsertHeartbeat(deps.db, { id: identity.id, host, pid: process.pid, work: JSON.stringify(identity.work), slots: identity.slots, version: identity.version, started_at: startedAt, last_seen_at: deps.clock() })
      .catch((error: unknown) => deps.logger.warn({ err: error }, 'worker heartbeat not recorded; trying again at the next beat'));
  let last = beat();
  const timer = setInterval(() => {
    last = last.then(beat);
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await last;
      await store.deleteHeartbeat(deps.db, identity.id).catch((error: unknown) => deps.logger.warn({ err: error }, 'worker heartbeat row not removed; it ages out'));
    },
  };
}

export type WorkerView = {
  id: string;
  host: string;
  pid: number;
  work: string[];
  slots: number;
  version: string;
  startedAt: number;
  lastSeenAt: number;
  /** seen within WORKER_SEEN_MS */
  alive: boolean;
};

function workOf(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((w): w is string => typeof w === 'string') : [];
  } catch {
    return [];
  }
}

/** Workers seen in the last WORKER_LISTED_MS, the most recently seen first. */
export async function listWorkers(db: Db, clock: Clock): Promise<WorkerView[]> {
  const now = clock();
  const rows = await store.listHeartbeatsSince(db, now - WORKER_LISTED_MS);
  return rows.map((r) => ({
    id: r.id,
    host: r.host,
    pid: Number(r.pid),
    work: workOf(r.work),
    slots: Number(r.slots),
    version: r.version,
    startedAt: Number(r.started_at),
    lastSeenAt: Number(r.last_seen_at),
    alive: Number(r.last_seen_at) >= now - WORKER_SEEN_MS,
  }));
}

/** How many workers were seen in the last minute (the console's overview). */
export function countLiveWorkers(db: Db, clock: Clock): Promise<number> {
  return store.countHeartbeatsSince(db, clock() - WORKER_SEEN_MS);
}

/** The periodic sweep: rows of workers silent for a day. */
export function forgetSilentWorkers(db: Db, clock: Clock): Promise<number> {
  return store.deleteHeartbeatsBefore(db, clock() - WORKER_FORGOTTEN_MS);
}
