// The only place with queries on notification preferences and on the grants' mute flag.
import type { Db } from '../db/database.ts';
import type { NotificationPreferencesTable } from '../db/schema.ts';

export type PreferenceRow = NotificationPreferencesTable;

export async function preferencesOf(db: Db, sub: string): Promise<PreferenceRow[]> {
  return db.selectFrom('notification_preferences').selectAll().where('sub', '=', sub).execute();
}

export async function upsertPreferences(db: Db, rows: PreferenceRow[]): Promise<void> {
  for (const row of rows) {
    await db
      .insertInto('notification_preferences')
      .values(row)
      .onConflict((oc) => oc.columns(['sub', 'category', 'channel']).doUpdateSet({ enabled: row.enabled, updated_at: row.updated_at }))
      .execute();
  }
}

export async function mutedClientIds(db: Db, sub: string): Promise<string[]> {
  const rows = await db.selectFrom('grants').select('client_id').where('sub', '=', sub).where('muted', '=', 1).orderBy('client_id').execute();
  return rows.map((r) => r.client_id);
}

export async function isMuted(db: Db, sub: string, clientId: string): Promise<boolean> {
  const row = await db.selectFrom('grants').select('muted').where('sub', '=', sub).where('client_id', '=', clientId).executeTakeFirst();
  return row?.muted === 1;
}

/** Sets the mute flag on a grant; false when the person has not authorized that application. */
export async function setMuted(db: Db, sub: string, clientId: string, muted: boolean): Promise<boolean> {
  const result = await db.updateTable('grants').set({ muted: muted ? 1 : 0 }).where('sub', '=', sub).where('client_id', '=', clientId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
