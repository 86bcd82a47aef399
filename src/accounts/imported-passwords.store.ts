// The only place with queries on imported_passwords (migration 0014).
import type { Db } from '../db/database.ts';
import type { ImportedPasswordsTable } from '../db/schema.ts';

export type ImportedPasswordRow = ImportedPasswordsTable;

export async function findImported(db: Db, sub: string): Promise<ImportedPasswordRow | undefined> {
  return db.selectFrom('imported_passwords').selectAll().where('sub', '=', sub).executeTakeFirst();
}

/** The foreign hashes still waiting for their person's next sign-in, for these accounts (export). */
export async function foreignHashesOf(db: Db, subs: readonly string[]): Promise<Map<string, string>> {
  if (subs.length === 0) return new Map();
  const rows = await db.selectFrom('imported_passwords').select(['sub', 'foreign_hash']).where('sub', 'in', subs).where('foreign_hash', 'is not', null).execute();
  return new Map(rows.map((r) => [r.sub, r.foreign_hash!]));
}

export async function upsertImported(db: Db, row: ImportedPasswordRow): Promise<void> {
  const { sub, ...rest } = row;
  await db
    .insertInto('imported_passwords')
    .values(row)
    .onConflict((oc) => oc.column('sub').doUpdateSet(rest))
    .execute();
}

/** After a sign-in replaced the foreign hash (or a new password was set): nothing foreign is kept. */
export async function markReplaced(db: Db, sub: string, now: number): Promise<void> {
  await db.updateTable('imported_passwords').set({ foreign_hash: null, replaced_at: now }).where('sub', '=', sub).where('foreign_hash', 'is not', null).execute();
}

/** The schemes (algorithm and parameters) of the foreign hashes still waiting: what a check may cost. */
export async function schemesInUse(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('imported_passwords').select('scheme').distinct().where('foreign_hash', 'is not', null).execute();
  return rows.map((r) => r.scheme);
}
