// The only place with queries on audit events.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../db/database.ts';
import type { AuditEventsTable } from '../db/schema.ts';

export type AuditEventRow = Selectable<AuditEventsTable>;
export type NewAuditEventRow = Omit<AuditEventRow, 'id'>;

export async function insertEvent(db: Db, row: NewAuditEventRow): Promise<AuditEventRow> {
  return db.insertInto('audit_events').values(row).returningAll().executeTakeFirstOrThrow();
}

export type EventQuery = {
  sub?: string | undefined;
  clientId?: string | undefined;
  type?: string | undefined;
  /** types beginning with this (e.g. "account.") */
  typePrefix?: string | undefined;
  /** recorded at or after this time (epoch ms) */
  from?: number | undefined;
  /** recorded before this time (epoch ms) */
  to?: number | undefined;
  /** only events older than this id (the cursor) */
  beforeId?: number | undefined;
  limit: number;
};

/** Newest first: ids only ever grow. */
export async function listEvents(db: Db, query: EventQuery): Promise<AuditEventRow[]> {
  let q = db.selectFrom('audit_events').selectAll();
  if (query.sub !== undefined) q = q.where('sub', '=', query.sub);
  if (query.clientId !== undefined) q = q.where('client_id', '=', query.clientId);
  if (query.type !== undefined) q = q.where('type', '=', query.type);
  // substr, not LIKE: nothing in the prefix can act as a wildcard.
  if (query.typePrefix !== undefined) q = q.where(sql<string>`substr(type, 1, ${sql.lit(query.typePrefix.length)})`, '=', query.typePrefix);
  if (query.from !== undefined) q = q.where('at', '>=', query.from);
  if (query.to !== undefined) q = q.where('at', '<', query.to);
  if (query.beforeId !== undefined) q = q.where('id', '<', query.beforeId);
  return q.orderBy('id', 'desc').limit(query.limit).execute();
}

/** Removes events recorded before `before`. Returns how many. */
export async function deleteEventsBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('audit_events').where('at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Events of these types recorded at or after `since`, by type. */
export async function countEventsSince(db: Db, types: readonly string[], since: number): Promise<Map<string, number>> {
  if (types.length === 0) return new Map();
  const rows = await db
    .selectFrom('audit_events')
    .select(['type', (eb) => eb.fn.countAll<number | string | bigint>().as('n')])
    .where('type', 'in', types)
    .where('at', '>=', since)
    .groupBy('type')
    .execute();
  return new Map(rows.map((r) => [r.type, Number(r.n)]));
}

export async function findEvent(db: Db, id: number): Promise<AuditEventRow | undefined> {
  return db.selectFrom('audit_events').selectAll().where('id', '=', id).executeTakeFirst();
}
