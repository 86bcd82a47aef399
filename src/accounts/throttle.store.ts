// The only place with queries on sign-in throttling counters. Shared by every server process.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** The latest lock end among these keys, or undefined when none is set. */
export async function latestLock(db: Db, keys: readonly string[]): Promise<number | undefined> {
  if (keys.length === 0) return undefined;
  const rows = await db.selectFrom('signin_throttle').select('locked_until').where('key', 'in', keys).execute();
  const locks = rows.map((r) => r.locked_until).filter((t): t is number => t !== null);
  return locks.length === 0 ? undefined : Math.max(...locks);
}

/**
 * Counts one failure for a key, in one statement: a failure after the window has passed starts a new
 * window at 1. Returns the failures counted in the current window.
 */
export async function countFailure(db: Db, key: string, now: number, windowMs: number): Promise<number> {
  return (await countEvent(db, key, now, windowMs)).count;
}

/** Counts one event for a key as countFailure does; also returns when the current window started. */
export async function countEvent(db: Db, key: string, now: number, windowMs: number): Promise<{ count: number; windowStartedAt: number }> {
  const cutoff = now - windowMs;
  const row = await db
    .insertInto('signin_throttle')
    .values({ key, failures: 1, window_started_at: now, locked_until: null })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        failures: sql<number>`case when signin_throttle.window_started_at <= ${cutoff} then 1 else signin_throttle.failures + 1 end`,
        window_started_at: sql<number>`case when signin_throttle.window_started_at <= ${cutoff} then ${now} else signin_throttle.window_started_at end`,
      }),
    )
    .returning(['failures', 'window_started_at'])
    .executeTakeFirstOrThrow();
  return { count: Number(row.failures), windowStartedAt: Number(row.window_started_at) };
}

export async function setLock(db: Db, key: string, until: number): Promise<void> {
  await db.updateTable('signin_throttle').set({ locked_until: until }).where('key', '=', key).execute();
}

/** Removes one counter. Returns how many were removed (0 or 1). */
export async function clearKey(db: Db, key: string): Promise<number> {
  const result = await db.deleteFrom('signin_throttle').where('key', '=', key).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes the counter `exact` and every counter whose key starts with `prefix`. Returns how many. */
export async function clearKeys(db: Db, exact: string, prefix: string): Promise<number> {
  const result = await db
    .deleteFrom('signin_throttle')
    // substr, not LIKE: nothing in the prefix can act as a wildcard.
    .where((eb) => eb.or([eb('key', '=', exact), eb(sql<string>`substr(key, 1, ${sql.lit(prefix.length)})`, '=', prefix)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes counters whose window has passed and which hold no lock. */
export async function deleteStaleCounters(db: Db, windowStartedBefore: number, now: number): Promise<number> {
  const result = await db
    .deleteFrom('signin_throttle')
    .where('window_started_at', '<', windowStartedBefore)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** The counters under a prefix ("account:<sub>:…") and the exact key, for an operator's view. */
export async function countersUnder(db: Db, exact: string, prefix: string): Promise<Array<{ key: string; failures: number; locked_until: number | null; window_started_at: number }>> {
  return db
    .selectFrom('signin_throttle')
    .select(['key', 'failures', 'locked_until', 'window_started_at'])
    .where((eb) => eb.or([eb('key', '=', exact), eb(sql<string>`substr(key, 1, ${sql.lit(prefix.length)})`, '=', prefix)]))
    .orderBy('key')
    .execute();
}

/** Keys beginning with "account:" whose lock lasts past `now`. */
export async function lockedAccountKeys(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('signin_throttle')
    .select('key')
    .where(sql<string>`substr(key, 1, 8)`, '=', 'account:')
    .where('locked_until', '>', now)
    .orderBy('locked_until', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => r.key);
}
