// The application records the OAuth hot paths read (token, userinfo, revoke), kept in process for at
// most CLIENT_CACHE_MS (issue 20: "the application record cached in process … a disabled application
// must stop working within a second on every node").
//
// - A write through this process (clients.store.ts: insert, update, delete) forgets the entry at once,
//   so this process sees its own changes at the next request.
// - Another process (a second node, `signet client disable` from the CLI) is seen within
//   CLIENT_CACHE_MS: an entry is used only until CLIENT_CACHE_MS after the read that filled it began.
// - A lookup that was reading while the entry was forgotten does not store what it read (it may be
//   the row from before the write).
// - An unknown client_id is never cached: a new application works at once everywhere.
// Admin and consent paths read the row every time (clients.findClient); only the hot paths use this.
import { performance } from 'node:perf_hooks';
import type { Db } from '../db/database.ts';
import type { ClientsTable } from '../db/schema.ts';

/** How long a cached application record may be used after the read that filled it began. */
export const CLIENT_CACHE_MS = 1000;
/** Entries per database handle; past this the cache starts again empty (there are few applications). */
const CLIENT_CACHE_MAX = 1000;

type Entry = { row: ClientsTable; usableUntil: number };

type Cache = { entries: Map<string, Entry>; /** bumped by every forget: a read begun before it must not fill the cache */ generation: number };

/** One cache per database handle; its transactions share the handle's adapter, and so its cache. */
const caches = new WeakMap<object, Cache>();

function cacheOf(db: Db): Cache {
  const key = db.getExecutor().adapter;
  let cache = caches.get(key);
  if (cache === undefined) caches.set(key, (cache = { entries: new Map(), generation: 0 }));
  return cache;
}

/**
 * The row of an application, from the cache while it is fresh, else from `read` (and then cached).
 * `now` is a monotonic clock in milliseconds (performance.now), injectable for tests.
 */
export async function cachedClientRow(
  db: Db,
  clientId: string,
  read: (db: Db, clientId: string) => Promise<ClientsTable | undefined>,
  now: () => number = () => performance.now(),
): Promise<ClientsTable | undefined> {
  const cache = cacheOf(db);
  const started = now();
  const hit = cache.entries.get(clientId);
  if (hit !== undefined && started < hit.usableUntil) return hit.row;
  const generation = cache.generation;
  const row = await read(db, clientId);
  if (row === undefined) {
    cache.entries.delete(clientId);
  } else if (generation === cache.generation) {
    if (cache.entries.size >= CLIENT_CACHE_MAX) cache.entries.clear();
    cache.entries.set(clientId, { row, usableUntil: started + CLIENT_CACHE_MS });
  }
  return row;
}

/** Forgets an application this process has just changed (or every one, without an id). */
export function forgetClient(db: Db, clientId?: string): void {
  const cache = cacheOf(db);
  cache.generation++;
  if (clientId === undefined) cache.entries.clear();
  else cache.entries.delete(clientId);
}
