// A person's second factors as a whole: the list (for /account, the admin API and the CLI — kinds,
// names and dates, never secrets), turning the authenticator app off, an operator's reset, and the
// security notification each change sends (issue 19 item 6).
import { SqliteAdapter } from 'kysely';
import type { Clock } from '../../config/clock.ts';
import type { Db, Dialect } from '../../db/database.ts';
import { recordNotification } from '../../notifications/notifications.ts';
import type { NotificationEvent } from '../../notifications/messages.ts';
import * as sessionStore from '../sessions.store.ts';
import * as store from './factors.store.ts';
import { listPasskeys } from './passkeys.ts';
import * as passkeyStore from './passkeys.store.ts';
import { TOTP_KIND } from './totp.ts';

/** One factor as listed: never its secret. Times are epoch milliseconds. */
export type FactorListing = { id: string; kind: string; name: string; createdAt: number; lastUsedAt: number | null };

/** Where factors come from: the authenticator apps (factors.store.ts) and the passkeys (passkeys.store.ts). */
export type FactorSource = (db: Db, sub: string) => Promise<FactorListing[]>;
/** Removes every factor of one kind for a person; returns how many went. */
export type FactorRemover = (db: Db, sub: string) => Promise<number>;

export const authenticatorApps: FactorSource = async (db, sub) =>
  (await store.listEnabledFactors(db, sub)).map((f) => ({ id: f.id, kind: f.kind, name: f.name, createdAt: f.created_at, lastUsedAt: f.last_used_at }));

export const PASSKEY_KIND = 'passkey';

/** Passkeys as factors (kind `passkey`): a passkey is two factors on its own, and a second step after a password. */
export const passkeyFactors: FactorSource = async (db, sub) =>
  (await listPasskeys(db, sub)).map((p) => ({ id: p.id, kind: PASSKEY_KIND, name: p.name, createdAt: p.createdAt, lastUsedAt: p.lastUsedAt }));

export const FACTOR_SOURCES: FactorSource[] = [authenticatorApps, passkeyFactors];
export const FACTOR_REMOVERS: FactorRemover[] = [(db, sub) => store.deleteFactors(db, sub), (db, sub) => passkeyStore.deletePasskeysOf(db, sub)];

export type FactorSummary = { factors: FactorListing[]; recoveryCodesLeft: number };

/** Every factor of the person, oldest first, and how many unused recovery codes they hold. */
export async function listFactors(db: Db, sub: string, sources: readonly FactorSource[] = FACTOR_SOURCES): Promise<FactorSummary> {
  const factors = (await Promise.all(sources.map((source) => source(db, sub)))).flat().sort((a, b) => a.createdAt - b.createdAt);
  return { factors, recoveryCodesLeft: await store.countUnusedRecoveryCodes(db, sub) };
}

/** The contract's shape of one listed factor (admin API, CLI): snake_case, ISO times. */
export function factorView(f: FactorListing): { id: string; kind: string; name: string; created_at: string; last_used_at: string | null } {
  return { id: f.id, kind: f.kind, name: f.name, created_at: new Date(f.createdAt).toISOString(), last_used_at: f.lastUsedAt === null ? null : new Date(f.lastUsedAt).toISOString() };
}

export function dialectOf(db: Db): Dialect {
  return db.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
}

/** Sends the person a `security` notification (in-app, and e-mail when they opted in). */
export async function notifySecurity(db: Db, clock: Clock, sub: string, locale: string, event: NotificationEvent): Promise<void> {
  await db.transaction().execute((trx) => recordNotification(trx, dialectOf(db), clock(), { sub, locale, event, link: '/account#two-step-heading' }).then(() => undefined));
}

/**
 * Turns the authenticator app off. When no factor is left, the recovery codes go too (they stand in
 * for a factor that no longer exists). `othersLeft`: whether another factor (a passkey) remains.
 */
export async function turnOffAuthenticatorApp(db: Db, sub: string, othersLeft: boolean): Promise<number> {
  const removed = await store.deleteFactors(db, sub, TOTP_KIND);
  if (!othersLeft) await store.deleteRecoveryCodes(db, sub);
  return removed;
}

export type FactorsReset = { factorsRemoved: number; recoveryCodesRemoved: number; sessionsEnded: number };

/**
 * An operator's reset (issue 19 item 6): "every factor and recovery code removed, sessions ended" — and
 * any half-signed-in state, so a person midway through the second step starts again.
 */
export async function resetFactors(db: Db, sub: string, removers: readonly FactorRemover[] = FACTOR_REMOVERS): Promise<FactorsReset> {
  return db.transaction().execute(async (trx) => {
    let factorsRemoved = 0;
    for (const remove of removers) factorsRemoved += await remove(trx, sub);
    const recoveryCodesRemoved = await store.deleteRecoveryCodes(trx, sub);
    await store.deleteSecondStepsOf(trx, sub);
    const sessionsEnded = await sessionStore.deleteSessionsOf(trx, sub);
    return { factorsRemoved, recoveryCodesRemoved, sessionsEnded };
  });
}
