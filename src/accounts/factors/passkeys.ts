// Passkeys (issue 19 item 3, WebAuthn Level 2 through @simplewebauthn/server): adding one to a
// signed-in account (discoverable — "residentKey required" — with user verification preferred),
// listing and removing them, and checking a sign-in with one. A passkey sign-in is complete by itself,
// so on its own it needs the authenticator to have verified the person (PIN or biometric); as a second
// step after a password, presence is enough. Challenges: passkey-ceremony.ts.
import { randomUUID } from 'node:crypto';
import type { PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import { MINUTE } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { recordNotification } from '../../notifications/notifications.ts';
import { constantTimeEqual } from '../../oauth/secrets.ts';
import { findAccount } from '../accounts.ts';
import { countAndCheck, type RequestLimit } from '../request-limits.ts';
import {
  CHALLENGE_LIFETIME_MS,
  knownTransports,
  newChallenge,
  parseAuthenticationResponse,
  parseRegistrationResponse,
  PasskeyError,
  useChallenge,
  userHandleOf,
  type PasskeyContext,
  type RelyingParty,
} from './passkey-ceremony.ts';
import * as store from './passkeys.store.ts';

/**
 * @simplewebauthn/server, loaded at the first passkey ceremony: with its certificate and ASN.1
 * libraries it is ~300 modules that a server nobody adds or uses a passkey on never needs (issue 20,
 * memory: ~5 MB of heap and more resident code at start).
 */
let webauthn: Promise<typeof import('@simplewebauthn/server')> | undefined;
const loadWebAuthn = () => (webauthn ??= import('@simplewebauthn/server'));

export { forgetExpiredPasskeyChallenges, PasskeyError, relyingPartyFor, type PasskeyContext, type PasskeyErrorCode, type RelyingParty } from './passkey-ceremony.ts';

export const MAX_PASSKEY_NAME_LENGTH = 60;

/** Sign-in ceremonies (each stores a challenge) one client address may start: 200 in 10 minutes. */
export const PASSKEY_SIGNIN_PER_CLIENT: RequestLimit = { max: 200, windowMs: 10 * MINUTE };

/** What the account page and the operators' factor listing show of a passkey: never its key. */
export type PasskeySummary = {
  id: string;
  kind: 'passkey';
  name: string;
  /** the host it works on */
  rpId: string;
  createdAt: number;
  lastUsedAt: number | null;
};

function summary(row: store.PasskeyRow): PasskeySummary {
  return { id: row.id, kind: 'passkey', name: row.name, rpId: row.rp_id, createdAt: row.created_at, lastUsedAt: row.last_used_at };
}

/** The person's passkeys, oldest first (kinds, names, dates; never keys). */
export async function listPasskeys(db: Db, sub: string): Promise<PasskeySummary[]> {
  return (await store.listPasskeysOf(db, sub)).map(summary);
}

export function countPasskeys(db: Db, sub: string): Promise<number> {
  return store.countPasskeysOf(db, sub);
}

/** Whether the person has a passkey for this relying party (host): one a ceremony on it can use. */
export async function hasPasskeyOn(db: Db, sub: string, rpId: string): Promise<boolean> {
  return (await store.listPasskeysOf(db, sub)).some((p) => p.rp_id === rpId);
}

/** The name a person gave: control characters dropped, spaces trimmed, 1–60 characters. */
export function checkedPasskeyName(value: unknown): string {
  const name = (typeof value === 'string' ? value : '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  if (name.length === 0 || name.length > MAX_PASSKEY_NAME_LENGTH) throw new PasskeyError('invalid_name', `a passkey needs a name of 1 to ${MAX_PASSKEY_NAME_LENGTH} characters`);
  return name;
}

// ——— Adding a passkey ———

/** The person the authenticator shows: the e-mail or phone as the user name, the display name. */
export type PasskeyUser = { sub: string; userName: string; displayName: string };

/**
 * Options for navigator.credentials.create: a discoverable credential (issue 19: "discoverable
 * credentials, no e-mail typed" at sign-in needs one), user verification preferred, no attestation,
 * and the passkeys the person has on this host excluded so one authenticator is not added twice.
 */
export async function startPasskeyRegistration(ctx: PasskeyContext, rp: RelyingParty, user: PasskeyUser): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const existing = (await store.listPasskeysOf(ctx.db, user.sub)).filter((p) => p.rp_id === rp.id);
  const challenge = await newChallenge(ctx, 'registration', rp, user.sub);
  return (await loadWebAuthn()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.userName,
    userDisplayName: user.displayName,
    userID: userHandleOf(ctx.hashKey, user.sub),
    challenge,
    timeout: CHALLENGE_LIFETIME_MS,
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'preferred' },
  });
}

function transportsOf(row: store.PasskeyRow): string[] {
  if (row.transports === null) return [];
  const parsed: unknown = JSON.parse(row.transports);
  return Array.isArray(parsed) ? knownTransports(parsed.filter((t): t is string => typeof t === 'string')) : [];
}

/**
 * Checks the browser's answer to startPasskeyRegistration and keeps the passkey under the given name.
 * The challenge must be the person's own, unused and under five minutes old; origin and RP ID must be
 * this host's. Recorded with a `security` notification to the person in the same transaction
 * (issue 19: "Security notifications … when a factor is added or removed").
 */
export async function finishPasskeyRegistration(ctx: PasskeyContext, rp: RelyingParty, sub: string, input: { name: unknown; response: unknown; locale: string }): Promise<PasskeySummary> {
  const name = checkedPasskeyName(input.name);
  const response = parseRegistrationResponse(input.response);
  const challenge = await useChallenge(ctx, response.response.clientDataJSON, 'registration', rp, sub);
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await (await loadWebAuthn()).verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rp.id, requireUserVerification: false });
  } catch (error) {
    // The library's message may quote the challenge: never passed on.
    throw new PasskeyError('not_verified', `the registration did not verify (${errorKind(error)})`, { sub });
  }
  if (!verification.verified) throw new PasskeyError('not_verified', 'the registration did not verify', { sub });
  const { credential } = verification.registrationInfo;
  const now = ctx.clock();
  const row: store.PasskeyRow = {
    id: randomUUID(),
    sub,
    credential_id: credential.id,
    public_key: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: JSON.stringify(knownTransports(credential.transports ?? response.response.transports)),
    rp_id: rp.id,
    name,
    created_at: now,
    last_used_at: null,
  };
  try {
    await ctx.db.transaction().execute(async (trx) => {
      await store.insertPasskey(trx, row);
      await recordNotification(trx, ctx.dialect, now, { sub, locale: input.locale, link: '/account#passkeys-heading', event: { category: 'security', outcome: 'passkey_added', passkeyName: name } });
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new PasskeyError('already_registered', 'this passkey is registered already', { sub });
    throw error;
  }
  return summary(row);
}

/** Removes one of the person's passkeys, with a `security` notification; undefined when it is not theirs. */
export async function removePasskey(ctx: PasskeyContext, sub: string, id: string, locale: string): Promise<PasskeySummary | undefined> {
  // Our ids are UUIDs: anything else names no passkey (and PostgreSQL cannot compare a NUL).
  if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
  return ctx.db.transaction().execute(async (trx) => {
    const removed = await store.deletePasskey(trx, sub, id);
    if (!removed) return undefined;
    await recordNotification(trx, ctx.dialect, ctx.clock(), { sub, locale, link: '/account#passkeys-heading', event: { category: 'security', outcome: 'passkey_removed', passkeyName: removed.name } });
    return summary(removed);
  });
}

// ——— Signing in with a passkey ———

/**
 * Options for navigator.credentials.get. Without `sub`: a sign-in with a discoverable credential (no
 * allow list — the authenticator offers this host's passkeys). With `sub`: a second step for that
 * person, listing their passkeys on this host. `address`: the client address, whose ceremonies are
 * limited (each stores a challenge).
 */
export async function startPasskeyAuthentication(ctx: PasskeyContext, rp: RelyingParty, options: { sub?: string; address?: string } = {}): Promise<PublicKeyCredentialRequestOptionsJSON> {
  if (options.address !== undefined) {
    const limit = await countAndCheck(ctx.db, ctx.clock, `passkey:address:${options.address}`, PASSKEY_SIGNIN_PER_CLIENT);
    if (!limit.allowed) throw new PasskeyError('throttled', 'too many passkey sign-ins started from this address', { retryAt: limit.retryAt });
  }
  const mine = options.sub === undefined ? undefined : (await store.listPasskeysOf(ctx.db, options.sub)).filter((p) => p.rp_id === rp.id);
  const challenge = await newChallenge(ctx, 'authentication', rp, options.sub ?? null);
  return (await loadWebAuthn()).generateAuthenticationOptions({
    rpID: rp.id,
    challenge,
    timeout: CHALLENGE_LIFETIME_MS,
    userVerification: 'preferred',
    ...(mine ? { allowCredentials: mine.map((p) => ({ id: p.credential_id, transports: transportsOf(p) })) } : {}),
  });
}

/** `amr`: RFC 8176's method for it — `swk` for a synced (multi-device) passkey, `hwk` for one bound to its authenticator. */
export type PasskeyAssertion = { sub: string; passkey: PasskeySummary; userVerified: boolean; amr: 'hwk' | 'swk' };

/**
 * Checks the browser's answer to startPasskeyAuthentication and returns whose passkey signed it. In
 * order: the challenge is used up (unused, under five minutes, this host's, and made for the same
 * person — or for nobody, without `sub`); the credential is a passkey registered on this host (and
 * the person's); the signature, origin ("expected origin checked"), RP ID and counter verify; the
 * user handle, when sent, is the person's; with `requireUserVerification` the authenticator verified
 * the person; the account is not disabled. Then its counter and last-used time are recorded.
 *
 * Used by the passkey sign-in (no `sub`, user verification required) and, by the second step after a
 * password, with the person's `sub`.
 */
export async function verifyPasskeyAssertion(
  ctx: PasskeyContext,
  rp: RelyingParty,
  answer: unknown,
  options: { sub?: string; requireUserVerification?: boolean } = {},
): Promise<PasskeyAssertion> {
  const response = parseAuthenticationResponse(answer);
  const challenge = await useChallenge(ctx, response.response.clientDataJSON, 'authentication', rp, options.sub ?? null);
  const row = await store.findPasskeyByCredentialId(ctx.db, response.id);
  if (!row || row.rp_id !== rp.id || (options.sub !== undefined && row.sub !== options.sub)) {
    throw new PasskeyError('unknown_credential', 'no passkey with this credential is registered on this host', { sub: options.sub });
  }
  const sub = row.sub;
  let verification: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verification = await (await loadWebAuthn()).verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.id,
      credential: { id: row.credential_id, publicKey: new Uint8Array(Buffer.from(row.public_key, 'base64url')), counter: row.counter, transports: transportsOf(row) },
      requireUserVerification: false,
    });
  } catch (error) {
    throw new PasskeyError('not_verified', `the passkey answer did not verify (${errorKind(error)})`, { sub });
  }
  if (!verification.verified) throw new PasskeyError('not_verified', 'the passkey answer did not verify', { sub });
  const handle = response.response.userHandle;
  if (handle !== undefined && !constantTimeEqual(handle.replace(/=+$/, ''), Buffer.from(userHandleOf(ctx.hashKey, sub)).toString('base64url'))) {
    throw new PasskeyError('not_verified', 'the user handle is not the passkey owner’s', { sub });
  }
  const { newCounter, userVerified, credentialDeviceType } = verification.authenticationInfo;
  if (options.requireUserVerification && !userVerified) throw new PasskeyError('user_not_verified', 'the authenticator did not verify the person', { sub });
  const account = await findAccount(ctx.db, sub);
  if (!account || account.disabled) throw new PasskeyError('account_disabled', 'the account is disabled', { sub });
  const now = ctx.clock();
  // A use racing this one with the same counter: only one counts (the counter must grow, or stay 0).
  if (!(await store.recordUse(ctx.db, row.id, row.counter, newCounter, now))) throw new PasskeyError('not_verified', 'the passkey was used at the same moment elsewhere', { sub });
  return { sub, passkey: summary({ ...row, counter: newCounter, last_used_at: now }), userVerified, amr: credentialDeviceType === 'multiDevice' ? 'swk' : 'hwk' };
}

/** A short, secret-free description of a verifier failure for logs (the library's messages can quote the challenge). */
function errorKind(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/counter/i.test(message)) return 'counter';
  if (/origin/i.test(message)) return 'origin';
  if (/RP ID|rpID/i.test(message)) return 'rp_id';
  if (/signature/i.test(message)) return 'signature';
  if (/challenge/i.test(message)) return 'challenge';
  if (/user verification|user present|user not present/i.test(message)) return 'user_presence';
  return 'malformed';
}
