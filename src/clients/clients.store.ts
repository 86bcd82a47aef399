// The only place with queries on clients.
import { sql } from 'kysely';
import { compiledOnce } from '../db/compiled-query.ts';
import type { Db } from '../db/database.ts';
import type { ClientsTable } from '../db/schema.ts';
import { forgetClient } from './clients.cache.ts';

export type ClientRow = ClientsTable;

export async function insertClient(db: Db, row: ClientRow): Promise<void> {
  await db.insertInto('clients').values(row).execute();
  forgetClient(db, row.client_id);
}

const findClientStatement = compiledOnce(['clientId'], (db, p) => db.selectFrom('clients').selectAll().where('client_id', '=', p.clientId));

export async function findClient(db: Db, clientId: string): Promise<ClientRow | undefined> {
  return (await findClientStatement(db, { clientId })).rows[0];
}

export async function listClients(db: Db): Promise<ClientRow[]> {
  return db.selectFrom('clients').selectAll().orderBy('created_at').orderBy('client_id').execute();
}

export async function updateClient(db: Db, clientId: string, changes: Partial<Omit<ClientRow, 'client_id' | 'created_at'>>): Promise<boolean> {
  const result = await db.updateTable('clients').set(changes).where('client_id', '=', clientId).executeTakeFirst();
  // After the write (a read racing it must not store the old row: the generation moves on here).
  forgetClient(db, clientId);
  return result.numUpdatedRows > 0n;
}

export async function deleteClient(db: Db, clientId: string): Promise<boolean> {
  const result = await db.deleteFrom('clients').where('client_id', '=', clientId).executeTakeFirst();
  forgetClient(db, clientId);
  return result.numDeletedRows > 0n;
}

/** issue 43: the application whose service identity this sub is. */
export async function findClientByServiceSub(db: Db, sub: string): Promise<ClientRow | undefined> {
  return db.selectFrom('clients').selectAll().where('service_sub', '=', sub).executeTakeFirst();
}

/**
 * issue 39: one statement deletes the dynamic applications created before `createdBefore` that no
 * person ever allowed (no grant) and that hold no code or token (no chain, no earlier-format token);
 * returns their client_ids.
 */
export async function deleteUnusedDynamicClients(db: Db, createdBefore: number): Promise<string[]> {
  const rows = await db
    .deleteFrom('clients')
    .where('dynamic', '=', 1)
    .where('created_at', '<', createdBefore)
    .where(sql<boolean>`not exists (select 1 from grants g where g.client_id = clients.client_id)`)
    .where(sql<boolean>`not exists (select 1 from token_chains c where c.client_id = clients.client_id)`)
    .where(sql<boolean>`not exists (select 1 from authorization_codes a where a.client_id = clients.client_id)`)
    .returning('client_id')
    .execute();
  for (const row of rows) forgetClient(db, row.client_id);
  return rows.map((row) => row.client_id);
}
