// Grants: remembered per person and application. A later request whose scopes the grant covers
// skips the consent page; prompt=none uses the same check. Withdrawing removes the grant and
// revokes every token of that person for that application.
import { findClient } from '../clients/clients.ts';
import type { Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import { recordNotification } from '../notifications/notifications.ts';
import { revokeAllTokensOf } from '../oauth/codes.ts';
import { formatScope, scopeList, type Scope } from '../oauth/scopes.ts';
import * as store from './grants.store.ts';

export type Grant = {
  sub: string;
  clientId: string;
  scope: Scope[];
  firstAuthorizedAt: number;
  updatedAt: number;
};

function fromRow(row: store.GrantRow): Grant {
  return { sub: row.sub, clientId: row.client_id, scope: scopeList(row.scope), firstAuthorizedAt: row.first_authorized_at, updatedAt: row.updated_at };
}

/** A grant covers a request iff every requested scope is in the granted scope. */
export function covers(granted: readonly Scope[], requested: readonly Scope[]): boolean {
  return requested.every((scope) => granted.includes(scope));
}

export async function findGrant(db: Db, sub: string, clientId: string): Promise<Grant | undefined> {
  const row = await store.findGrant(db, sub, clientId);
  return row && fromRow(row);
}

/** Whether the person's grant for this application covers the requested scope. */
export async function grantCoversRequest(db: Db, sub: string, clientId: string, requested: readonly Scope[]): Promise<boolean> {
  const grant = await findGrant(db, sub, clientId);
  return grant !== undefined && covers(grant.scope, requested);
}

/** What recording a first authorization's notification needs: the database kind and the person's language. */
export type ConsentNotice = { dialect: Dialect; locale: string };

/**
 * Remembers a consent decision. For the scopes this request asked about, the latest decision wins
 * (an unticked scope is removed); scopes granted earlier and not asked about now are kept.
 * An application authorized for the first time (no grant existed) sends its owner a `security`
 * notification, recorded in the same transaction as the grant, naming the application as its source.
 */
export async function recordConsent(
  db: Db,
  clock: Clock,
  sub: string,
  clientId: string,
  requested: readonly Scope[],
  granted: readonly Scope[],
  notice: ConsentNotice,
): Promise<Scope[]> {
  const now = clock();
  return db.transaction().execute(async (trx) => {
    // Written first, so two first authorizations at once record one grant and one notification.
    if (await store.insertGrantIfAbsent(trx, sub, clientId, formatScope(granted), now)) {
      const client = await findClient(trx, clientId);
      await recordNotification(trx, notice.dialect, now, {
        sub,
        locale: notice.locale,
        clientId,
        link: '/account',
        event: { category: 'security', outcome: 'authorized', applicationName: client?.name ?? clientId },
      });
      return scopeList(formatScope(granted));
    }
    const earlier = (await findGrant(trx, sub, clientId))?.scope ?? [];
    const scope = formatScope([...earlier.filter((s) => !requested.includes(s)), ...granted]);
    await store.updateGrantScope(trx, sub, clientId, scope, now);
    return scopeList(scope);
  });
}

export type AuthorizedApplication = Grant & { name: string };

/** The applications a person authorized, for the account page, oldest first. */
export async function listAuthorizedApplications(db: Db, sub: string): Promise<AuthorizedApplication[]> {
  const grants = (await store.listGrantsOf(db, sub)).map(fromRow);
  const named: AuthorizedApplication[] = [];
  for (const grant of grants) {
    const client = await findClient(db, grant.clientId);
    if (client) named.push({ ...grant, name: client.name });
  }
  return named;
}

/**
 * spec: "the user withdraws the application in account settings" → the grant is deleted and every
 * access and refresh token of that person for that application is revoked at once, so the next
 * refresh fails with invalid_grant and a later prompt=none answers consent_required.
 * Returns false when there was no grant to withdraw (tokens are revoked anyway).
 */
export async function withdrawApplication(db: Db, clock: Clock, sub: string, clientId: string): Promise<boolean> {
  // No client_id has a NUL character (and PostgreSQL cannot compare one): nothing to withdraw.
  if (clientId.includes('\u0000')) return false;
  // One transaction: the grant never disappears while its tokens still work, nor the reverse.
  return db.transaction().execute(async (trx) => {
    const deleted = await store.deleteGrant(trx, sub, clientId);
    await revokeAllTokensOf(trx, clock, sub, clientId);
    return deleted;
  });
}
