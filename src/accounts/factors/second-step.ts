// The second step at sign-in (issue 19 item 4). After a correct password, an account with a factor is
// only half signed in: a row here, named by a cookie of its own (32 random bytes, stored as a keyed
// hash bound to the served origin, as sessions are) — and no session. spec: "Until that step is done
// there is no signed-in session: prompt=none answers login_required, /account sends back to sign-in."
// The state lasts 5 minutes. With SIGNET_MFA=required, an account without a factor gets the same state
// with the purpose 'enrol': it sets a factor up before any consent or callback.
import { MINUTE, type Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { keyedHash, newOpaqueToken } from '../../oauth/secrets.ts';
import { blockedUntilFor, recordFailureFor, recordSecondStepSuccess, secondStepKeys } from '../throttle.ts';
import * as store from './factors.store.ts';
import { unusedRecoveryCodes, useRecoveryCode } from './recovery-codes.ts';
import { confirmTotpSetup, verifyTotp } from './totp.ts';

/** spec (issue 19): "the step has its own 5-minute limit". */
export const SECOND_STEP_LIFETIME_MS = 5 * MINUTE;

/** The half-signed-in state's cookie (web/cookies.ts adds `__Host-` on https). */
export const SECOND_STEP_COOKIE = 'signet_second_step';

/** How the second step counts a person's passkeys (issue 19 item 3): passkeys.ts's countPasskeys, given by web/app.ts. */
export type PasskeyDirectory = { count(db: Db, sub: string): Promise<number> };

export type SecondStepContext = {
  db: Db;
  clock: Clock;
  /** keys.tokenHash: the state's id and the recovery codes at rest */
  hashKey: Buffer;
  /** keys.factorSecret: TOTP secrets at rest */
  factorKey: Buffer;
  passkeys: PasskeyDirectory;
  /** SIGNET_MFA */
  mfa: 'optional' | 'required';
};

export type Purpose = 'verify' | 'enrol';

/** What the person must do after a correct password: a code (or passkey), set a factor up, or nothing. */
export async function secondStepDue(ctx: SecondStepContext, sub: string): Promise<Purpose | undefined> {
  if ((await store.countEnabledFactors(ctx.db, sub)) + (await ctx.passkeys.count(ctx.db, sub)) > 0) return 'verify';
  return ctx.mfa === 'required' ? 'enrol' : undefined;
}

/** Whether the person has any second factor (an authenticator app or a passkey). */
export async function hasSecondFactor(ctx: Pick<SecondStepContext, 'db' | 'passkeys'>, sub: string): Promise<boolean> {
  return (await store.countEnabledFactors(ctx.db, sub)) + (await ctx.passkeys.count(ctx.db, sub)) > 0;
}

/**
 * Whether the person can answer with a typed code: an authenticator app, or unused recovery codes (a
 * person whose other factor is a passkey may hold those too).
 */
export async function acceptsCodes(db: Db, sub: string): Promise<boolean> {
  return (await store.countEnabledFactors(db, sub)) > 0 || (await unusedRecoveryCodes(db, sub)) > 0;
}

/** The ids of the person's factors that are on (what a remembered browser is bound to). */
export async function enabledFactorIds(db: Db, sub: string): Promise<string[]> {
  return (await store.listEnabledFactors(db, sub)).map((f) => f.id);
}

function idHash(key: Buffer, origin: string, id: string): string {
  return keyedHash(key, `second-step\n${origin}\n${id}`);
}

/** `firstFactor`: the amr values of the first step (an upstream sign-in, issue 33); undefined: a password. */
export type HalfSignedIn = { sub: string; purpose: Purpose; requestId: string | undefined; returnTo: string | undefined; expiresAt: number; firstFactor?: string[] | undefined };

/** Starts the half-signed-in state after a correct password. Returns the id for its cookie. */
export async function beginSecondStep(
  ctx: SecondStepContext,
  input: { sub: string; purpose: Purpose; origin: string; requestId?: string | undefined; returnTo?: string | undefined; firstFactor?: readonly string[] | undefined },
): Promise<{ id: string; expiresAt: number }> {
  const id = newOpaqueToken();
  const now = ctx.clock();
  const expiresAt = now + SECOND_STEP_LIFETIME_MS;
  await store.insertSecondStep(ctx.db, {
    id_hash: idHash(ctx.hashKey, input.origin, id),
    sub: input.sub,
    purpose: input.purpose,
    request_id: input.requestId || null,
    return_to: input.returnTo || null,
    ...(input.firstFactor ? { first_factor: JSON.stringify(input.firstFactor) } : {}),
    created_at: now,
    expires_at: expiresAt,
  });
  return { id, expiresAt };
}

/** The live half-signed-in state of a cookie on this origin; undefined when unknown or past its 5 minutes. */
export async function findSecondStep(ctx: SecondStepContext, id: unknown, origin: string): Promise<HalfSignedIn | undefined> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 100) return undefined;
  const row = await store.findLiveSecondStep(ctx.db, idHash(ctx.hashKey, origin, id), ctx.clock());
  if (!row) return undefined;
  return { sub: row.sub, purpose: row.purpose, requestId: row.request_id ?? undefined, returnTo: row.return_to ?? undefined, expiresAt: row.expires_at, firstFactor: parseFirstFactor(row.first_factor) };
}

function parseFirstFactor(value: string | null | undefined): string[] | undefined {
  if (!value) return undefined;
  const parsed: unknown = JSON.parse(value);
  return Array.isArray(parsed) && parsed.every((m) => typeof m === 'string') ? parsed : undefined;
}

/** Ends the state; true only for the one request that ended it, so a state turns into a session once. */
export function finishSecondStep(ctx: SecondStepContext, id: string, origin: string): Promise<boolean> {
  return store.deleteSecondStep(ctx.db, idHash(ctx.hashKey, origin, id));
}

export type CodeCheck =
  | { outcome: 'accepted'; via: 'totp' }
  | { outcome: 'accepted'; via: 'recovery_code'; remaining: number }
  /** `retryAt` when the next attempt must wait; `locked` when this failure started a lock */
  | { outcome: 'wrong'; retryAt: number | undefined; locked: boolean }
  | { outcome: 'throttled'; retryAt: number };

/**
 * Checks a code typed at the second step (or to confirm a sensitive change): a 6-digit code from an
 * authenticator app, or a recovery code. spec: "Wrong codes count in the existing throttle (per account
 * and per address: 5 wrong codes → growing waits, never a lockout a stranger can cause at will)".
 */
export async function checkCode(ctx: SecondStepContext, sub: string, code: string, address: string): Promise<CodeCheck> {
  const keys = secondStepKeys(sub, address);
  const blocked = await blockedUntilFor(ctx.db, ctx.clock, keys);
  if (blocked !== undefined) return { outcome: 'throttled', retryAt: blocked };
  if (await verifyTotp(ctx.db, ctx.factorKey, ctx.clock, sub, code)) {
    await recordSecondStepSuccess(ctx.db, sub, address);
    return { outcome: 'accepted', via: 'totp' };
  }
  if (await useRecoveryCode(ctx.db, ctx.hashKey, ctx.clock, sub, code)) {
    await recordSecondStepSuccess(ctx.db, sub, address);
    return { outcome: 'accepted', via: 'recovery_code', remaining: await unusedRecoveryCodes(ctx.db, sub) };
  }
  return { outcome: 'wrong', ...(await recordFailureFor(ctx.db, ctx.clock, keys)) };
}

/**
 * Finishes setting up an authenticator app with its first code. Wrong set-up codes count like wrong
 * second-step codes: with SIGNET_MFA=required the person setting up is only half signed in.
 */
export async function confirmSetupCode(ctx: SecondStepContext, sub: string, code: string, address: string): Promise<'enabled' | 'wrong_code' | 'no_setup' | 'throttled'> {
  const keys = secondStepKeys(sub, address);
  if ((await blockedUntilFor(ctx.db, ctx.clock, keys)) !== undefined) return 'throttled';
  const outcome = await confirmTotpSetup(ctx.db, ctx.factorKey, ctx.clock, sub, code);
  if (outcome === 'wrong_code') await recordFailureFor(ctx.db, ctx.clock, keys);
  if (outcome === 'enabled') await recordSecondStepSuccess(ctx.db, sub, address);
  return outcome;
}

/** An authenticator app set up but never turned on is forgotten after this long. */
export const ABANDONED_SETUP_MS = 24 * 60 * MINUTE;

/**
 * Removes half-signed-in states past their 5 minutes (they are never honoured anyway) and set-ups never
 * finished within a day (for the periodic sweep).
 */
export async function forgetExpiredSecondSteps(db: Db, clock: Clock): Promise<number> {
  const now = clock();
  return (await store.deleteExpiredSecondSteps(db, now)) + (await store.deleteAbandonedSetups(db, now - ABANDONED_SETUP_MS));
}
