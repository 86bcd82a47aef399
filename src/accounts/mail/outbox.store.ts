// The only place with queries on the account-mail outbox. Claimed as notification deliveries are
// (notifications/deliveries.store.ts): one conditional UPDATE takes a due message under a lease, and
// every later change is conditional on still holding it, so several workers never send one twice.
import { sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Db, Dialect } from '../../db/database.ts';
import type { Database, MailOutboxTable } from '../../db/schema.ts';

export type OutboxRow = MailOutboxTable;

type Held = { id: string; owner: string; now: number };

export async function insertMail(db: Db, row: OutboxRow): Promise<void> {
  await db.insertInto('mail_outbox').values(row).execute();
}

/**
 * Claims the message that has waited longest: pending, due and not under a live lease; its attempt is
 * counted now. PostgreSQL skips rows other workers hold (`FOR UPDATE SKIP LOCKED`); SQLite runs the
 * statement under its single writer lock.
 */
export async function claimDueMail(db: Db, dialect: Dialect, input: { owner: string; now: number; leaseMs: number }): Promise<OutboxRow | undefined> {
  const { owner, now, leaseMs } = input;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const claimable = sql`status = 'pending' and next_attempt_at <= ${now} and (lease_expires_at is null or lease_expires_at < ${now})`;
  const result = await sql<OutboxRow>`
    update mail_outbox
       set lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
     where id = (
         select id from mail_outbox
          where ${claimable}
          order by next_attempt_at, id
          limit 1
          ${lock})
       and ${claimable}
    returning *`.execute(db);
  return result.rows[0];
}

export async function renewLease(db: Db, input: Held & { leaseMs: number }): Promise<boolean> {
  const result = await held(db.updateTable('mail_outbox').set({ lease_expires_at: input.now + input.leaseMs, updated_at: input.now }), input).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function settleMail(db: Db, input: Held & { status: 'sent' | 'failed' | 'suppressed'; reason: string | null }): Promise<boolean> {
  const result = await held(
    db.updateTable('mail_outbox').set({ status: input.status, reason: input.reason, next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: input.now }),
    input,
  ).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function scheduleRetry(db: Db, input: Held & { retryAt: number; reason: string }): Promise<boolean> {
  const result = await held(db.updateTable('mail_outbox').set({ reason: input.reason, next_attempt_at: input.retryAt, lease_owner: null, lease_expires_at: null, updated_at: input.now }), input).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

type OutboxUpdate = UpdateQueryBuilder<Database, 'mail_outbox', 'mail_outbox', UpdateResult>;

function held(query: OutboxUpdate, input: Held): OutboxUpdate {
  return query.where('id', '=', input.id).where('lease_owner', '=', input.owner).where('status', '=', 'pending');
}

/** Removes settled messages last changed before `before`. */
export async function deleteSettledBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('mail_outbox').where('status', '!=', 'pending').where('updated_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
