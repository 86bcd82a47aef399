// The only place with queries on worker_heartbeats (migration 0015).
import type { Db } from '../db/database.ts';
import type { WorkerHeartbeatsTable } from '../db/schema.ts';

export type HeartbeatRow = WorkerHeartbeatsTable;

/** Writes the row, or renews it when it exists (a sweep may have removed it after a long pause). */
export async function upsertHeartbeat(db: Db, row: HeartbeatRow): Promise<void> {
  await db
    .insertInto('worker_heartbeats')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ last_seen_at: row.last_seen_at, work: row.work, slots: row.slots }))
    .execute();
}

export async function deleteHeartbeat(db: Db, id: string): Promise<void> {
  await db.deleteFrom('worker_heartbeats').where('id', '=', id).execute();
}

/** Workers seen since `since`, the most recently seen first. */
export function listHeartbeatsSince(db: Db, since: number): Promise<HeartbeatRow[]> {
  return db.selectFrom('worker_heartbeats').selectAll().where('last_seen_at', '>=', since).orderBy('last_seen_at', 'desc').orderBy('id').execute();
}

export async function countHeartbeatsSince(db: Db, since: number): Promise<number> {
  const row = await db.selectFrom('worker_heartbeats').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).where('last_seen_at', '>=', since).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Removes rows of workers not seen since `before` (they died without saying so). */
export async function deleteHeartbeatsBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('worker_heartbeats').where('last_seen_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
