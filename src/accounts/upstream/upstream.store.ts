// The only Kysely queries of upstream identity providers (issue 33): providers, linked identities,
// sign-in states and pending links. Exported for the portability domain (export and import) too.
import type { Db } from '../../db/database.ts';
import type { UpstreamLinksTable, UpstreamPendingLinksTable, UpstreamProvidersTable, UpstreamStatesTable } from '../../db/schema.ts';

export type ProviderRow = UpstreamProvidersTable;
export type LinkRow = UpstreamLinksTable;
export type StateRow = UpstreamStatesTable;
export type PendingLinkRow = UpstreamPendingLinksTable;

// ---- providers ----

export async function insertProvider(db: Db, row: ProviderRow): Promise<void> {
  await db.insertInto('upstream_providers').values(row).execute();
}

export function findProvider(db: Db, slug: string): Promise<ProviderRow | undefined> {
  return db.selectFrom('upstream_providers').selectAll().where('slug', '=', slug).executeTakeFirst();
}

/** Every provider with its sealed secret, by slug. */
export function listProviderRows(db: Db): Promise<ProviderRow[]> {
  return db.selectFrom('upstream_providers').selectAll().orderBy('slug').execute();
}

export async function updateProvider(db: Db, slug: string, changes: Partial<Omit<ProviderRow, 'slug' | 'created_at'>>): Promise<boolean> {
  const result = await db.updateTable('upstream_providers').set(changes).where('slug', '=', slug).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Removes the provider; its links, states and pending links go with it (foreign keys cascade). */
export async function deleteProvider(db: Db, slug: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    // SQLite enforces the cascades only with foreign keys on: removed here explicitly, on both.
    await trx.deleteFrom('upstream_links').where('provider_slug', '=', slug).execute();
    await trx.deleteFrom('upstream_states').where('provider_slug', '=', slug).execute();
    await trx.deleteFrom('upstream_pending_links').where('provider_slug', '=', slug).execute();
    const result = await trx.deleteFrom('upstream_providers').where('slug', '=', slug).executeTakeFirst();
    return result.numDeletedRows > 0n;
  });
}

// ---- links ----

export async function insertLink(db: Db, row: LinkRow): Promise<void> {
  await db.insertInto('upstream_links').values(row).execute();
}

export function findLink(db: Db, slug: string, upstreamSub: string): Promise<LinkRow | undefined> {
  return db.selectFrom('upstream_links').selectAll().where('provider_slug', '=', slug).where('upstream_sub', '=', upstreamSub).executeTakeFirst();
}

export function linksOf(db: Db, sub: string): Promise<LinkRow[]> {
  return db.selectFrom('upstream_links').selectAll().where('sub', '=', sub).orderBy('linked_at').execute();
}

/** Every link of every account (for export), by provider and upstream sub. */
export function listLinkRows(db: Db): Promise<LinkRow[]> {
  return db.selectFrom('upstream_links').selectAll().orderBy('provider_slug').orderBy('upstream_sub').execute();
}

export async function deleteLink(db: Db, sub: string, slug: string): Promise<boolean> {
  const result = await db.deleteFrom('upstream_links').where('sub', '=', sub).where('provider_slug', '=', slug).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function touchLink(db: Db, slug: string, upstreamSub: string, now: number): Promise<void> {
  await db.updateTable('upstream_links').set({ last_used_at: now }).where('provider_slug', '=', slug).where('upstream_sub', '=', upstreamSub).execute();
}

// ---- sign-in states (single use) ----

export async function insertState(db: Db, row: StateRow): Promise<void> {
  await db.insertInto('upstream_states').values(row).execute();
}

/**
 * Takes the live state out: the one request that deletes the row gets it, so a replayed callback
 * finds nothing. One statement (DELETE … RETURNING) on both databases.
 */
export function takeState(db: Db, stateHash: string, now: number): Promise<StateRow | undefined> {
  return db.deleteFrom('upstream_states').where('state_hash', '=', stateHash).where('expires_at', '>', now).returningAll().executeTakeFirst();
}

// ---- pending links ----

export async function insertPendingLink(db: Db, row: PendingLinkRow): Promise<void> {
  await db.insertInto('upstream_pending_links').values(row).execute();
}

export function findPendingLink(db: Db, idHash: string, now: number): Promise<PendingLinkRow | undefined> {
  return db.selectFrom('upstream_pending_links').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
}

export async function deletePendingLink(db: Db, idHash: string): Promise<boolean> {
  const result = await db.deleteFrom('upstream_pending_links').where('id_hash', '=', idHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Sweeps states and pending links past their time. */
export async function deleteExpired(db: Db, now: number): Promise<number> {
  const states = await db.deleteFrom('upstream_states').where('expires_at', '<=', now).executeTakeFirst();
  const pending = await db.deleteFrom('upstream_pending_links').where('expires_at', '<=', now).executeTakeFirst();
  return Number(states.numDeletedRows + pending.numDeletedRows);
}
