// The only place with queries on second factors, recovery codes and half-signed-in states.
import type { Db } from '../../db/database.ts';
import type { RecoveryCodesTable, SecondFactorsTable, SecondStepsTable } from '../../db/schema.ts';

export type FactorRow = SecondFactorsTable;
export type SecondStepRow = SecondStepsTable;

// ---- factors ----

export async function insertFactor(db: Db, row: FactorRow): Promise<void> {
  await db.insertInto('second_factors').values(row).execute();
}

/** The person's factors that are on (set-up finished), oldest first. */
export function listEnabledFactors(db: Db, sub: string): Promise<FactorRow[]> {
  return db.selectFrom('second_factors').selectAll().where('sub', '=', sub).where('enabled_at', 'is not', null).orderBy('created_at').orderBy('id').execute();
}

export async function countEnabledFactors(db: Db, sub: string): Promise<number> {
  const row = await db.selectFrom('second_factors').select((eb) => eb.fn.countAll<number>().as('n')).where('sub', '=', sub).where('enabled_at', 'is not', null).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The factor of this kind being set up (not yet on), if any. */
export function findPendingFactor(db: Db, sub: string, kind: string): Promise<FactorRow | undefined> {
  return db.selectFrom('second_factors').selectAll().where('sub', '=', sub).where('kind', '=', kind).where('enabled_at', 'is', null).executeTakeFirst();
}

export async function deletePendingFactors(db: Db, sub: string, kind: string): Promise<void> {
  await db.deleteFrom('second_factors').where('sub', '=', sub).where('kind', '=', kind).where('enabled_at', 'is', null).execute();
}

/**
 * Turns a factor being set up on, with the time step of the code that proved it — only if it is still
 * being set up (two tabs finishing at once turn it on once). True when this call turned it on.
 */
export async function enableFactor(db: Db, id: string, sub: string, now: number, step: number): Promise<boolean> {
  const result = await db
    .updateTable('second_factors')
    .set({ enabled_at: now, last_used_at: now, last_step: step })
    .where('id', '=', id)
    .where('sub', '=', sub)
    .where('enabled_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * spec (issue 19): "a code that was accepted once is never accepted again". One conditional UPDATE:
 * the step is recorded only when it is later than every step accepted before, so of two requests with
 * the same code exactly one changes the row.
 */
export async function claimStep(db: Db, id: string, step: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('second_factors')
    .set({ last_step: step, last_used_at: now })
    .where('id', '=', id)
    .where('enabled_at', 'is not', null)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes the person's factors of one kind (or every kind). Returns how many that were on went. */
export async function deleteFactors(db: Db, sub: string, kind?: string): Promise<number> {
  let query = db.deleteFrom('second_factors').where('sub', '=', sub);
  if (kind !== undefined) query = query.where('kind', '=', kind);
  const on = kind === undefined ? await countEnabledFactors(db, sub) : (await listEnabledFactors(db, sub)).filter((f) => f.kind === kind).length;
  await query.execute();
  return on;
}

/** Set-ups never finished, begun before `before`. */
export async function deleteAbandonedSetups(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('second_factors').where('enabled_at', 'is', null).where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- recovery codes ----

/** Replaces the person's recovery codes with a new set (the old set stops working in the same transaction). */
export async function replaceRecoveryCodes(db: Db, sub: string, rows: RecoveryCodesTable[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('recovery_codes').where('sub', '=', sub).execute();
    if (rows.length > 0) await trx.insertInto('recovery_codes').values(rows).execute();
  });
}

/** Marks a code used, only if it is this person's and unused: one conditional UPDATE, so it works once. */
export async function useRecoveryCode(db: Db, sub: string, codeHash: string, now: number): Promise<boolean> {
  const result = await db.updateTable('recovery_codes').set({ used_at: now }).where('code_hash', '=', codeHash).where('sub', '=', sub).where('used_at', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function countUnusedRecoveryCodes(db: Db, sub: string): Promise<number> {
  const row = await db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<number>().as('n')).where('sub', '=', sub).where('used_at', 'is', null).executeTakeFirst();
  return Number(row?.n ?? 0);
}

export async function deleteRecoveryCodes(db: Db, sub: string): Promise<number> {
  const result = await db.deleteFrom('recovery_codes').where('sub', '=', sub).executeTakeFirst();
  return Number(result.numDeletedRows);
}

// ---- half-signed-in states ----

export async function insertSecondStep(db: Db, row: SecondStepRow): Promise<void> {
  await db.insertInto('second_steps').values(row).execute();
}

export function findLiveSecondStep(db: Db, idHash: string, now: number): Promise<SecondStepRow | undefined> {
  return db.selectFrom('second_steps').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
}

/** Ends a half-signed-in state; true only for the one call that removed it (a state finishes once). */
export async function deleteSecondStep(db: Db, idHash: string): Promise<boolean> {
  const result = await db.deleteFrom('second_steps').where('id_hash', '=', idHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function deleteSecondStepsOf(db: Db, sub: string): Promise<void> {
  await db.deleteFrom('second_steps').where('sub', '=', sub).execute();
}

export async function deleteExpiredSecondSteps(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('second_steps').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}

