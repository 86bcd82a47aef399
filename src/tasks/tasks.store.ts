// The only place with queries on tasks. Every state change is one conditional UPDATE, so two workers
// (or a worker and a person cancelling) can never both win.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { TaskKind, TasksTable, TaskStatus } from '../db/schema.ts';

export type TaskRow = TasksTable;

const IN_FLIGHT: TaskStatus[] = ['queued', 'running'];

export async function insertTask(db: Db, row: TaskRow): Promise<void> {
  await db.insertInto('tasks').values(row).execute();
}

export async function findTask(db: Db, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findOwnedTask(db: Db, sub: string, kind: TaskKind, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).where('sub', '=', sub).where('kind', '=', kind).executeTakeFirst();
}

/** A person's tasks of one kind, newest first, after the (created_at, id) position of `before`. */
export async function listTasks(db: Db, sub: string, kind: TaskKind, limit: number, before?: { createdAt: number; id: string }): Promise<TaskRow[]> {
  let query = db.selectFrom('tasks').selectAll().where('sub', '=', sub).where('kind', '=', kind);
  if (before) {
    query = query.where((eb) => eb.or([eb('created_at', '<', before.createdAt), eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)])]));
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** queued | running → cancelled. False when the task had already ended. */
export async function cancelTask(db: Db, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({ status: 'cancelled', lease_owner: null, lease_expires_at: null, finished_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', 'in', IN_FLIGHT)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes a terminal task's row. False when it is (again) in flight or gone. */
export async function deleteTerminalTask(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('tasks').where('id', '=', id).where('status', 'not in', IN_FLIGHT).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Every task of a person, with what names its files (for removing them with the account). */
export async function listTaskFilesOf(db: Db, sub: string): Promise<Array<Pick<TaskRow, 'id' | 'files'>>> {
  return db.selectFrom('tasks').select(['id', 'files']).where('sub', '=', sub).execute();
}

/**
 * Claims the oldest task that is queued (and past its retry back-off), or running under a lease that expired (its worker died), and
 * has attempts left. One statement: on PostgreSQL the inner SELECT skips rows other workers hold
 * (`FOR UPDATE SKIP LOCKED`); SQLite runs a statement under its single writer lock.
 */
export async function claimTask(db: Db, dialect: 'sqlite' | 'postgres', input: { owner: string; now: number; leaseMs: number; maxAttempts: number; kinds: TaskKind[] }): Promise<TaskRow | undefined> {
  const { owner, now, leaseMs, maxAttempts, kinds } = input;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const kindList = sql.join(kinds.map((k) => sql`${k}`));
  const result = await sql<TaskRow>`
    update tasks
       set status = 'running', lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, attempts = attempts + 1,
           started_at = coalesce(started_at, ${now}), updated_at = ${now}, error = null
     where id = (
       select id from tasks
        where kind in (${kindList})
          and attempts < ${maxAttempts}
          and ((status = 'queued' and (lease_expires_at is null or lease_expires_at < ${now})) or (status = 'running' and lease_expires_at < ${now}))
        order by created_at, id
        limit 1
        ${lock})
       and ((status = 'queued' and (lease_expires_at is null or lease_expires_at < ${now})) or (status = 'running' and lease_expires_at < ${now}))
    returning *`.execute(db);
  return result.rows[0];
}

/**
 * Tasks whose worker died on their last allowed attempt: failed, with a message. Returns them, so the
 * caller can record their notifications.
 */
export async function failAbandonedTasks(db: Db, input: { now: number; maxAttempts: number; error: string }): Promise<TaskRow[]> {
  return db
    .updateTable('tasks')
    .set({ status: 'failed', error: input.error, lease_owner: null, lease_expires_at: null, finished_at: input.now, updated_at: input.now })
    .where('status', '=', 'running')
    .where('lease_expires_at', '<', input.now)
    .where('attempts', '>=', input.maxAttempts)
    .returningAll()
    .execute();
}

/**
 * Extends the lease and records progress. False when this worker no longer holds the task (cancelled,
 * or its lease expired and another worker took it): the caller stops its work.
 */
export async function heartbeat(db: Db, input: { id: string; owner: string; now: number; leaseMs: number; progress?: { done: number; total: number } }): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set({
      lease_expires_at: input.now + input.leaseMs,
      updated_at: input.now,
      ...(input.progress ? { progress_done: input.progress.done, progress_total: input.progress.total } : {}),
    })
    .where('id', '=', input.id)
    .where('lease_owner', '=', input.owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** running (held by owner) → finished | failed | queued (given back). False when the task was taken from this worker. */
export async function endRun(
  db: Db,
  input: {
    id: string;
    owner: string;
    now: number;
    status: 'finished' | 'failed' | 'queued';
    error?: string | null;
    files?: string;
    notes?: string | null;
    progress?: { done: number; total: number };
    retryAt?: number;
    /** a translation asked for without its source language: the one told from its text */
    sourceLang?: string;
  },
): Promise<boolean> {
  const terminal = input.status !== 'queued';
  // A task given back (the worker is shutting down, or storage was unreachable) is retried later; a
  // shutdown is no fault of the task, so the caller may also refund the attempt (see giveBack).
  const result = await db
    .updateTable('tasks')
    .set({
      status: input.status,
      error: input.error ?? null,
      lease_owner: null,
      // On a queued task the lease time means "not before": a retry waits out its back-off.
      lease_expires_at: input.retryAt ?? null,
      updated_at: input.now,
      ...(terminal ? { finished_at: input.now } : {}),
      ...(input.files !== undefined ? { files: input.files } : {}),
      ...(input.notes !== undefined ? { notes: input.notes } : {}),
      ...(input.sourceLang !== undefined ? { source_lang: input.sourceLang } : {}),
      ...(input.progress ? { progress_done: input.progress.done, progress_total: input.progress.total } : {}),
    })
    .where('id', '=', input.id)
    .where('lease_owner', '=', input.owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** running (held by owner) → queued, the claim's attempt refunded: the worker is stopping, not the task failing. */
export async function giveBack(db: Db, input: { id: string; owner: string; now: number }): Promise<boolean> {
  const result = await db
    .updateTable('tasks')
    .set((eb) => ({ status: 'queued', lease_owner: null, lease_expires_at: null, updated_at: input.now, attempts: eb('attempts', '-', 1) }))
    .where('id', '=', input.id)
    .where('lease_owner', '=', input.owner)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** How many tasks are in each state. */
export async function countByStatus(db: Db): Promise<Map<TaskStatus, number>> {
  const rows = await db.selectFrom('tasks').select(['status', (eb) => eb.fn.countAll<number | string | bigint>().as('n')]).groupBy('status').execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

/** When the oldest queued task was created, or undefined when none waits. */
export async function oldestQueuedAt(db: Db): Promise<number | undefined> {
  const row = await db.selectFrom('tasks').select((eb) => eb.fn.min<number | string | null>('created_at').as('at')).where('status', '=', 'queued').executeTakeFirst();
  return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
}

/** Running tasks with the worker that holds each (the console's Tasks page: what each worker runs). */
export async function runningTasksWithOwner(db: Db): Promise<Array<{ id: string; kind: TaskKind; source_name: string; lease_owner: string }>> {
  const rows = await db.selectFrom('tasks').select(['id', 'kind', 'source_name', 'lease_owner']).where('status', '=', 'running').where('lease_owner', 'is not', null).orderBy('started_at').limit(500).execute();
  return rows.map((r) => ({ id: r.id, kind: r.kind, source_name: r.source_name, lease_owner: r.lease_owner ?? '' }));
}

/** Every person's tasks, newest first, by kind and state when given (the operator's queue). */
export async function listAnyTasks(db: Db, filter: { kind?: TaskKind | undefined; status?: TaskStatus | undefined }, limit: number, before?: { createdAt: number; id: string }): Promise<TaskRow[]> {
  let q = db.selectFrom('tasks').selectAll();
  if (filter.kind !== undefined) q = q.where('kind', '=', filter.kind);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (before) q = q.where((eb) => eb.or([eb('created_at', '<', before.createdAt), eb.and([eb('created_at', '=', before.createdAt), eb('id', '<', before.id)])]));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

