// What every WebAuthn ceremony shares: the relying party of a served host, the ceremony challenge
// (32 random bytes, stored only as a keyed hash, five minutes, single use), the person's user handle,
// and reading the browser's JSON answers at the edge (anything else is `invalid_response`).
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { z } from 'zod';
import { MINUTE, type Clock } from '../../config/clock.ts';
import type { Db, Dialect } from '../../db/database.ts';
import { keyedHash } from '../../oauth/secrets.ts';
import * as store from './passkeys.store.ts';

/** What the passkey functions need: the database, the clock, and keys.tokenHash for the keyed hashes. */
export type PasskeyContext = { db: Db; dialect: Dialect; clock: Clock; hashKey: Buffer };

/** A relying party: the RP ID (a host name), the origin the browser must report, and the name it shows. */
export type RelyingParty = { id: string; origin: string; name: string };

/** Issue 19: a ceremony must finish within five minutes of its options. */
export const CHALLENGE_LIFETIME_MS = 5 * MINUTE;

export type ChallengePurpose = 'registration' | 'authentication';

export type PasskeyErrorCode =
  /** the challenge is unknown, used already, expired, or from another host or person */
  | 'challenge_expired'
  /** no passkey with this credential id (removed, or never registered here) */
  | 'unknown_credential'
  /** the signature, origin, RP ID or counter did not check out */
  | 'not_verified'
  /** the body is not a WebAuthn answer */
  | 'invalid_response'
  | 'invalid_name'
  | 'account_disabled'
  /** a passkey sign-in on its own needs user verification (a PIN or biometric) */
  | 'user_not_verified'
  /** this authenticator's credential is registered already */
  | 'already_registered'
  /** too many ceremonies started from one client address */
  | 'throttled';

export class PasskeyError extends Error {
  readonly code: PasskeyErrorCode;
  /** the account concerned, when known (for the audit trail, never for the answer) */
  readonly sub: string | undefined;
  readonly retryAt: number | undefined;
  constructor(code: PasskeyErrorCode, message: string, extra: { sub?: string | undefined; retryAt?: number | undefined } = {}) {
    super(message);
    this.name = 'PasskeyError';
    this.code = code;
    this.sub = extra.sub;
    this.retryAt = extra.retryAt;
  }
}

/**
 * The relying party of a served origin: its host name is the RP ID, its origin the expected origin.
 * WebAuthn: an RP ID is "a valid domain string" — an IP address is none, so a host served by address
 * has no passkeys (undefined).
 */
export function relyingPartyFor(servedOrigin: URL, productName: string): RelyingParty | undefined {
  const host = servedOrigin.hostname;
  if (isIP(host.replace(/^\[|\]$/g, '')) !== 0) return undefined;
  return { id: host, origin: servedOrigin.origin, name: productName };
}

/**
 * The person's WebAuthn user handle: a keyed hash of the sub (32 bytes), the same for every passkey of
 * the account — so an authenticator replaces rather than piles up its credentials — without handing
 * the authenticator an identifier that means anything elsewhere.
 */
export function userHandleOf(hashKey: Buffer, sub: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(Buffer.from(keyedHash(hashKey, `passkey-user:${sub}`), 'base64url'));
}

function challengeHash(hashKey: Buffer, challenge: string): string {
  // Re-encoded from its bytes, so padding or alphabet differences cannot make two hashes of one value.
  return keyedHash(hashKey, `passkey-challenge:${Buffer.from(challenge, 'base64url').toString('base64url')}`);
}

/** A new challenge for a ceremony, recorded (as its keyed hash) for `CHALLENGE_LIFETIME_MS`. */
export async function newChallenge(ctx: PasskeyContext, purpose: ChallengePurpose, rp: RelyingParty, sub: string | null): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = new Uint8Array(randomBytes(32));
  const now = ctx.clock();
  await store.insertChallenge(ctx.db, {
    challenge_hash: challengeHash(ctx.hashKey, Buffer.from(bytes).toString('base64url')),
    purpose,
    sub,
    rp_id: rp.id,
    created_at: now,
    expires_at: now + CHALLENGE_LIFETIME_MS,
  });
  return bytes;
}

/** The challenge the browser signed, read from its clientDataJSON (undefined when unreadable). */
function signedChallenge(clientDataJSON: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8'));
    const challenge = typeof parsed === 'object' && parsed !== null && 'challenge' in parsed ? parsed.challenge : undefined;
    return typeof challenge === 'string' && challenge.length > 0 && challenge.length <= 512 ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Uses up the challenge a browser's answer signed. Issue 19: challenges are single use (one DELETE …
 * RETURNING: of two answers with one challenge only one gets it) and expire after five minutes (an
 * expired one is deleted and refused). It must be for this purpose, this host, and this person (null:
 * a sign-in that names nobody). Returns the challenge to hand the verifier.
 */
export async function useChallenge(ctx: PasskeyContext, clientDataJSON: string, purpose: ChallengePurpose, rp: RelyingParty, sub: string | null): Promise<string> {
  const expired = () => new PasskeyError('challenge_expired', 'the passkey challenge is unknown, used, expired, or for another host');
  const challenge = signedChallenge(clientDataJSON);
  if (challenge === undefined) throw new PasskeyError('invalid_response', 'clientDataJSON holds no challenge');
  const row = await store.consumeChallenge(ctx.db, challengeHash(ctx.hashKey, challenge), purpose);
  if (!row || row.expires_at <= ctx.clock() || row.rp_id !== rp.id) throw expired();
  if (row.sub !== sub) throw expired();
  return challenge;
}

/** Removes challenges past their five minutes (the periodic sweep). */
export function forgetExpiredPasskeyChallenges(db: Db, clock: Clock): Promise<number> {
  return store.deleteExpiredChallenges(db, clock());
}

// ——— The browser's answers, checked at the edge ———

const base64url = z.string().min(1).max(16384).regex(/^[A-Za-z0-9_-]+={0,2}$/);
const TRANSPORTS = ['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'] as const;
type Transport = (typeof TRANSPORTS)[number];

const registrationSchema = z.object({
  id: base64url,
  rawId: base64url,
  type: z.literal('public-key'),
  response: z.object({ clientDataJSON: base64url, attestationObject: base64url, transports: z.array(z.string().max(32)).max(10).optional() }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
});

const authenticationSchema = z.object({
  id: base64url,
  rawId: base64url,
  type: z.literal('public-key'),
  response: z.object({ clientDataJSON: base64url, authenticatorData: base64url, signature: base64url, userHandle: base64url.optional() }),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
});

/** The transports a browser reported that WebAuthn knows (others are dropped). */
export function knownTransports(reported: readonly string[] | undefined): Transport[] {
  return (reported ?? []).filter((t): t is Transport => (TRANSPORTS as readonly string[]).includes(t));
}

export function parseRegistrationResponse(value: unknown): RegistrationResponseJSON {
  const parsed = registrationSchema.safeParse(value);
  if (!parsed.success) throw new PasskeyError('invalid_response', 'the body is not a WebAuthn registration answer');
  const { response, authenticatorAttachment, ...rest } = parsed.data;
  // Extension outputs are not used, so none are passed on.
  return { ...rest, response: { ...response, transports: knownTransports(response.transports) }, clientExtensionResults: {}, ...(authenticatorAttachment ? { authenticatorAttachment } : {}) };
}

export function parseAuthenticationResponse(value: unknown): AuthenticationResponseJSON {
  const parsed = authenticationSchema.safeParse(value);
  if (!parsed.success) throw new PasskeyError('invalid_response', 'the body is not a WebAuthn authentication answer');
  const { authenticatorAttachment, ...rest } = parsed.data;
  return { ...rest, clientExtensionResults: {}, ...(authenticatorAttachment ? { authenticatorAttachment } : {}) };
}
