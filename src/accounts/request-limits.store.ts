// The only place with queries on the counters that limit requests for account mail.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';

/** Counts one request for a key in one statement; a request after the window starts a new one at 1. Returns the count. */
export async function countRequest(db: Db, key: string, now: number, windowMs: number): Promise<number> {
  const cutoff = now - windowMs;
  const row = await db
    .insertInto('account_request_counters')
    .values({ key, count: 1, window_started_at: now })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`case when account_request_counters.window_started_at <= ${cutoff} then 1 else account_request_counters.count + 1 end`,
        window_started_at: sql<number>`case when account_request_counters.window_started_at <= ${cutoff} then ${now} else account_request_counters.window_started_at end`,
      }),
    )
    .returning(['count', 'window_started_at'])
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** When the window of a key began, if it has one. */
export async function windowStart(db: Db, key: string): Promise<number | undefined> {
  const row = await db.selectFrom('account_request_counters').select('window_started_at').where('key', '=', key).executeTakeFirst();
  return row ? Number(row.window_started_at) : undefined;
}

export async function deleteCountersBefore(db: Db, windowStartedBefore: number): Promise<number> {
  const result = await db.deleteFrom('account_request_counters').where('window_started_at', '<', windowStartedBefore).executeTakeFirst();
  return Number(result.numDeletedRows);
}
