// The only place with queries on device_authorizations (RFC 8628 device codes, migration 0018). Every
// state change is one conditional UPDATE, so two nodes — or two polls — never both win.
import type { Db } from '../../db/database.ts';
import type { DeviceAuthorizationsTable } from '../../db/schema.ts';

export type DeviceAuthorizationRow = DeviceAuthorizationsTable;

export async function insert(db: Db, row: DeviceAuthorizationRow): Promise<void> {
  await db.insertInto('device_authorizations').values(row).execute();
}

export async function findByDeviceCode(db: Db, deviceCodeHash: string): Promise<DeviceAuthorizationRow | undefined> {
  return db.selectFrom('device_authorizations').selectAll().where('device_code_hash', '=', deviceCodeHash).executeTakeFirst();
}

export async function findByUserCode(db: Db, userCodeHash: string): Promise<DeviceAuthorizationRow | undefined> {
  return db.selectFrom('device_authorizations').selectAll().where('user_code_hash', '=', userCodeHash).executeTakeFirst();
}

export async function findByConfirmation(db: Db, confirmHash: string): Promise<DeviceAuthorizationRow | undefined> {
  return db.selectFrom('device_authorizations').selectAll().where('confirm_hash', '=', confirmHash).executeTakeFirst();
}

/** The /device page took the code: binds the pending authorization to this browser's confirmation id. */
export async function bindConfirmation(db: Db, deviceCodeHash: string, confirmHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('device_authorizations')
    .set({ confirm_hash: confirmHash })
    .where('device_code_hash', '=', deviceCodeHash)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The person's decision, once: pending → approved (with who and what scope) or denied. */
export async function decide(db: Db, deviceCodeHash: string, decision: { status: 'approved' | 'denied'; sub: string; grantedScope: string | null }, now: number): Promise<boolean> {
  const result = await db
    .updateTable('device_authorizations')
    .set({ status: decision.status, sub: decision.sub, granted_scope: decision.grantedScope, decided_at: now, confirm_hash: null })
    .where('device_code_hash', '=', deviceCodeHash)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * A poll: records its time if, and only if, the previous poll is the one this poll read (so of two
 * concurrent polls one counts as the poll, the other as too soon); with `interval`, the raised interval
 * of a slow_down. Returns whether this poll was recorded.
 */
export async function recordPoll(db: Db, deviceCodeHash: string, previous: number | null, now: number, interval?: number): Promise<boolean> {
  let update = db
    .updateTable('device_authorizations')
    .set(interval === undefined ? { last_polled_at: now } : { last_polled_at: now, interval_seconds: interval })
    .where('device_code_hash', '=', deviceCodeHash);
  update = previous === null ? update.where('last_polled_at', 'is', null) : update.where('last_polled_at', '=', previous);
  const result = await update.executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Tokens issued: approved → redeemed, once. */
export async function redeem(db: Db, deviceCodeHash: string, clientId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('device_authorizations')
    .set({ status: 'redeemed' })
    .where('device_code_hash', '=', deviceCodeHash)
    .where('client_id', '=', clientId)
    .where('status', '=', 'approved')
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The sweep: device authorizations that ended before `before`. */
export async function deleteExpired(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('device_authorizations').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
