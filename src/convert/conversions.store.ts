// The only place with queries on conversions (docling-serve-compatible requests).
import type { Db } from '../db/database.ts';
import type { ConversionsTable } from '../db/schema.ts';

export type ConversionRow = ConversionsTable;

export async function insertConversion(db: Db, row: ConversionRow): Promise<void> {
  await db.insertInto('conversions').values(row).execute();
}

/** A person's conversion; another person's is not found. */
export async function findOwnedConversion(db: Db, sub: string, id: string): Promise<ConversionRow | undefined> {
  return db.selectFrom('conversions').selectAll().where('id', '=', id).where('sub', '=', sub).executeTakeFirst();
}
