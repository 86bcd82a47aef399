// Authenticator apps (issue 19 item 1): TOTP as RFC 6238 defines it — SHA-1, 6 digits, 30-second
// steps — through the maintained `otpauth` package. The secret is 20 random bytes (RFC 4226 §4's
// recommended 160 bits), shown once as base32 and as an otpauth:// URI, and stored only encrypted
// (AES-256-GCM under keys.factorSecret, derived from SIGNET_SECRET); it is never logged.
import { randomBytes, randomUUID } from 'node:crypto';
import { seal, unseal } from '../../config/sealing.ts';
import { Secret, TOTP } from 'otpauth';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import * as store from './factors.store.ts';

export const TOTP_KIND = 'totp';
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** spec (issue 19): "A code is accepted in the current step and one step either side". */
export const TOTP_WINDOW = 1;

// ---- the secret at rest ----

/** Encrypts a secret (config/sealing.ts); the sub is bound as associated data. */
export function sealSecret(key: Buffer, sub: string, secret: Buffer): string {
  return seal(key, `totp\n${sub}`, secret);
}

/** Decrypts a sealed secret; throws when it was changed, or sealed for another account or under another key. */
export function openSecret(key: Buffer, sub: string, sealed: string): Buffer {
  return unseal(key, `totp\n${sub}`, sealed);
}

function totpOf(secret: Buffer, issuer = 'Signet', label = 'account'): TOTP {
  return new TOTP({ issuer, label, algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS, secret: new Secret({ buffer: new Uint8Array(secret).buffer }) });
}

/** The 30-second time step a moment falls in (RFC 6238's T). */
export function timeStep(now: number): number {
  return Math.floor(now / (TOTP_PERIOD_SECONDS * 1000));
}

/** The code an authenticator shows at `now` (tests and the e2e test play the app with it). */
export function totpCode(secretBase32: string, now: number): string {
  return new TOTP({ algorithm: 'SHA1', digits: TOTP_DIGITS, period: TOTP_PERIOD_SECONDS, secret: Secret.fromBase32(secretBase32) }).generate({ timestamp: now });
}

/** The time step a code belongs to, within the window around `now`; undefined when it matches none. */
export function matchingStep(secret: Buffer, code: string, now: number): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = totpOf(secret).validate({ token: code, timestamp: now, window: TOTP_WINDOW });
  return delta === null ? undefined : timeStep(now) + delta;
}

/** A 6-digit code as people type it: spaces and dashes dropped. */
export function normalizeCode(input: string): string {
  return input.replace(/[\s-]/g, '');
}

// ---- setting up ----

export type TotpSetup = {
  /** base32, as authenticator apps take it when typed */
  secretBase32: string;
  /** otpauth://totp/… for the QR code */
  uri: string;
};

/**
 * Starts (or continues) setting up an authenticator app: one factor being set up per person, its secret
 * made once and kept encrypted, so reloading the page shows the same QR code as the app already scanned.
 * `issuer`: the product name; `label`: the account's e-mail or phone.
 */
export async function beginTotpSetup(db: Db, key: Buffer, clock: Clock, input: { sub: string; issuer: string; label: string }): Promise<TotpSetup> {
  let pending = await store.findPendingFactor(db, input.sub, TOTP_KIND);
  if (!pending) {
    const secret = randomBytes(20);
    pending = { id: randomUUID(), sub: input.sub, kind: TOTP_KIND, name: 'Authenticator app', secret_enc: sealSecret(key, input.sub, secret), enabled_at: null, created_at: clock(), last_used_at: null, last_step: null };
    await store.insertFactor(db, pending);
  }
  const secret = openSecret(key, input.sub, pending.secret_enc);
  const totp = totpOf(secret, input.issuer, input.label);
  return { secretBase32: totp.secret.base32, uri: totp.toString() };
}

/**
 * Finishes setting up: the first code from the app must match (so the person's app really holds the
 * secret). Its step is recorded, so the same code cannot be used again at sign-in.
 */
export async function confirmTotpSetup(db: Db, key: Buffer, clock: Clock, sub: string, input: string): Promise<'enabled' | 'wrong_code' | 'no_setup'> {
  const pending = await store.findPendingFactor(db, sub, TOTP_KIND);
  if (!pending) return 'no_setup';
  const now = clock();
  const step = matchingStep(openSecret(key, sub, pending.secret_enc), normalizeCode(input), now);
  if (step === undefined) return 'wrong_code';
  return (await store.enableFactor(db, pending.id, sub, now, step)) ? 'enabled' : 'no_setup';
}

/**
 * Checks a code against the person's authenticator apps. spec (issue 19): accepted in the current step
 * and one either side; a code accepted once is never accepted again — the step is claimed in one
 * conditional UPDATE (factors.store.ts claimStep).
 */
export async function verifyTotp(db: Db, key: Buffer, clock: Clock, sub: string, input: string): Promise<boolean> {
  const code = normalizeCode(input);
  if (!/^\d{6}$/.test(code)) return false;
  const now = clock();
  for (const factor of await store.listEnabledFactors(db, sub)) {
    if (factor.kind !== TOTP_KIND) continue;
    const step = matchingStep(openSecret(key, sub, factor.secret_enc), code, now);
    if (step !== undefined && (await store.claimStep(db, factor.id, step, now))) return true;
  }
  return false;
}

/** Whether the person has an authenticator app turned on. */
export async function hasTotp(db: Db, sub: string): Promise<boolean> {
  return (await store.listEnabledFactors(db, sub)).some((f) => f.kind === TOTP_KIND);
}
