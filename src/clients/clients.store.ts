// The only place with queries on clients.
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
