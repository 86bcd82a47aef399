// RFC 8628, the device authorization grant (issue 43): the rules of a device authorization from its
// start at POST /oauth/device_authorization, through the person's decision at /device, to the polls at
// the token endpoint. The record in device_authorizations is what the /device page and the protocol
// share (STYLE: "pages talk to the protocol through one record"): the page never mints a token, and
// nothing here renders HTML. All state is in the database, so a code started on one node can be
// entered, approved and redeemed on any other.
import { randomBytes } from 'node:crypto';
import { countInWindow } from '../../accounts/throttle.ts';
import type { Client } from '../../clients/clients.ts';
import { MINUTE, SECOND, type Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { OAuthError } from '../errors.ts';
import { DEFAULT_SCOPE, formatScope, parseScopeParameter, scopeList, type Scope } from '../scopes.ts';
import { keyedHash, newOpaqueToken } from '../secrets.ts';
import * as store from './device-authorizations.store.ts';
import { displayUserCode, newUserCode, normalizeUserCode } from './user-codes.ts';

/** RFC 8628 §3.4: the grant_type of a poll. */
export const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** How long a person has to enter the code and decide (RFC 8628 §3.2 `expires_in`). */
export const DEVICE_CODE_LIFETIME_MS = 15 * MINUTE;
/** RFC 8628 §3.2 `interval`: "If no value is provided, clients MUST use 5 as the default." */
export const POLL_INTERVAL_SECONDS = 5;
/** RFC 8628 §3.5 slow_down: "the interval MUST be increased by 5 seconds for this and all subsequent requests." */
export const SLOW_DOWN_SECONDS = 5;

/** At most this many device authorizations per client address per 10 minutes (each row lives 15 minutes). */
export const DEVICE_AUTHORIZATIONS_PER_ADDRESS = { max: 100, windowMs: 10 * MINUTE };
/**
 * RFC 8628 §5.1 (brute forcing the user code): code entries at /device, counted per client address and
 * per browser. A person types one code, perhaps twice; 20 a window per address leaves room for a
 * household or an office, and bounds a guesser to ~2·10^-9 of the code space per window per live code.
 */
export const USER_CODE_ENTRIES_PER_ADDRESS = { max: 20, windowMs: 10 * MINUTE };
export const USER_CODE_ENTRIES_PER_BROWSER = { max: 10, windowMs: 10 * MINUTE };

export type DeviceContext = { db: Db; hashKey: Buffer; now: number };

const deviceCodeHash = (hashKey: Buffer, code: string) => keyedHash(hashKey, `device-code\n${code}`);
const userCodeHash = (hashKey: Buffer, normalized: string) => keyedHash(hashKey, `user-code\n${normalized}`);
const confirmationHash = (hashKey: Buffer, browserBinding: string, id: string) => keyedHash(hashKey, `device-confirmation\n${browserBinding}\n${id}`);

/** RFC 8628 §3.2, the device authorization response. */
export type DeviceAuthorizationResponse = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
};

/**
 * The scope a device asks for, as at /oauth/authorize: `openid profile` when none is sent, and every
 * scope must be one the application was registered with.
 */
export function deviceScope(client: Client, requested: string | undefined): Scope[] {
  const asked = requested === undefined ? [...DEFAULT_SCOPE] : parseScopeParameter(requested);
  const beyond = asked.filter((s) => !(client.scopes as string[]).includes(s));
  if (beyond.length > 0 || asked.length === 0) {
    throw new OAuthError('invalid_scope', `The application may ask only for the scopes it was registered with (${client.scopes.join(' ')}); ${beyond.join(' ') || 'an empty scope'} is not one of them.`);
  }
  return scopeList(formatScope(asked));
}

/** Starts a device authorization: a device code (kept by the device) and a user code (typed by the person at `{origin}/device`). */
export async function startDeviceAuthorization(
  ctx: DeviceContext & { clock: Clock },
  client: Client,
  scope: readonly Scope[],
  origin: string,
  address: string,
): Promise<DeviceAuthorizationResponse> {
  const { count, windowEndsAt } = await countInWindow(ctx.db, ctx.clock, `device-authorization:${address}`, DEVICE_AUTHORIZATIONS_PER_ADDRESS.windowMs);
  if (count > DEVICE_AUTHORIZATIONS_PER_ADDRESS.max) {
    throw new OAuthError('temporarily_unavailable', 'Too many device sign-ins were started from your network just now. Wait a few minutes, then start again.', {
      status: 429,
      detail: 'device authorizations per address',
      retryAfterSeconds: Math.max(1, Math.ceil((windowEndsAt - ctx.now) / SECOND)),
    });
  }
  const deviceCode = newOpaqueToken();
  // A user code already in use (unique index) is drawn again; with 2.6·10^10 codes that is rare.
  for (let attempt = 0; ; attempt++) {
    const userCode = newUserCode();
    try {
      await store.insert(ctx.db, {
        device_code_hash: deviceCodeHash(ctx.hashKey, deviceCode),
        user_code_hash: userCodeHash(ctx.hashKey, userCode),
        client_id: client.clientId,
        scope: formatScope(scope),
        created_at: ctx.now,
        expires_at: ctx.now + DEVICE_CODE_LIFETIME_MS,
        interval_seconds: POLL_INTERVAL_SECONDS,
        last_polled_at: null,
        status: 'pending',
        sub: null,
        granted_scope: null,
        decided_at: null,
        confirm_hash: null,
      });
      const shown = displayUserCode(userCode);
      return {
        device_code: deviceCode,
        user_code: shown,
        verification_uri: `${origin}/device`,
        // RFC 8628 §3.3.1: the code in the URI, so a QR code or a link needs no typing
        verification_uri_complete: `${origin}/device?user_code=${shown}`,
        expires_in: DEVICE_CODE_LIFETIME_MS / SECOND,
        interval: POLL_INTERVAL_SECONDS,
      };
    } catch (error) {
      if (attempt >= 4) throw error;
    }
  }
}

/** What a poll found: the person approved, so tokens may be issued (for `sub`, with `scope`). */
export type ApprovedDevice = { deviceCodeHash: string; sub: string; scope: string };

const DESCRIPTION_UNKNOWN_DEVICE_CODE = 'The device_code is unknown, was issued to another application, or was already used. Start again at the device authorization endpoint.';

/**
 * RFC 8628 §3.5, a poll at the token endpoint: authorization_pending while the person has not decided,
 * slow_down when the device polls sooner than its interval (which grows by 5 seconds), expired_token
 * after 15 minutes, access_denied when the person chose Deny; the approval when they chose Allow.
 */
export async function pollDeviceAuthorization(ctx: DeviceContext, client: Client, deviceCode: string): Promise<ApprovedDevice> {
  const hash = deviceCodeHash(ctx.hashKey, deviceCode);
  const row = await store.findByDeviceCode(ctx.db, hash);
  if (!row || row.client_id !== client.clientId) throw new OAuthError('invalid_grant', DESCRIPTION_UNKNOWN_DEVICE_CODE, { detail: row ? 'device code of another client' : 'unknown device code' });
  if (row.status === 'redeemed') throw new OAuthError('invalid_grant', DESCRIPTION_UNKNOWN_DEVICE_CODE, { detail: 'device code already redeemed' });
  // RFC 8628 §3.5 expired_token: "The device_code has expired, and the device authorization session has concluded."
  if (row.expires_at <= ctx.now) throw new OAuthError('expired_token', 'The device code has expired. Start again at the device authorization endpoint and show the person the new code.');
  // RFC 8628 §3.5 slow_down: "the interval MUST be increased by 5 seconds for this and all subsequent requests"
  const tooSoon = row.last_polled_at !== null && ctx.now - row.last_polled_at < row.interval_seconds * SECOND;
  const raised = row.interval_seconds + SLOW_DOWN_SECONDS;
  if (tooSoon || !(await store.recordPoll(ctx.db, hash, row.last_polled_at, ctx.now))) {
    // Two polls at once: one is recorded above, the other is too soon.
    await store.recordPoll(ctx.db, hash, tooSoon ? row.last_polled_at : ctx.now, ctx.now, raised).catch(() => false);
    throw new OAuthError('slow_down', `Polling too often: wait at least ${raised} seconds between requests from now on.`);
  }
  // RFC 8628 §3.5 authorization_pending: "The authorization request is still pending as the end user hasn't yet completed the user-interaction steps"
  if (row.status === 'pending') throw new OAuthError('authorization_pending', 'The person has not approved the request yet. Keep polling at the interval.');
  // RFC 8628 §3.5 access_denied: "The authorization request was denied." — at the token endpoint, 400 (RFC 6749 §5.2)
  if (row.status === 'denied') throw new OAuthError('access_denied', 'The person denied the request.', { status: 400 });
  return { deviceCodeHash: hash, sub: row.sub!, scope: row.granted_scope ?? row.scope };
}

/** Tokens for an approval, once: approved → redeemed (one conditional UPDATE). False when another poll won. */
export function redeemDeviceAuthorization(db: Db, approved: ApprovedDevice, clientId: string, now: number): Promise<boolean> {
  return store.redeem(db, approved.deviceCodeHash, clientId, now);
}

// ——— the /device page's side ———

export type CodeEntry =
  | { kind: 'accepted'; confirmationId: string }
  | { kind: 'wrong' }
  | { kind: 'throttled'; retryAt: number; firstRefusal: boolean };

/**
 * A person typed a user code at /device. Every entry counts, per client address and per browser (its
 * binding cookie), before the code is looked up (RFC 8628 §5.1); past either limit the entry is refused
 * unread. A code that names a pending, unexpired authorization is bound to this browser under a new
 * confirmation id — the page's handle on it from then on (the code itself is not carried further).
 */
export async function enterUserCode(ctx: DeviceContext & { clock: Clock }, typed: string, source: { address: string; browserBinding: string }): Promise<CodeEntry> {
  const browserKey = keyedHash(ctx.hashKey, `device-browser\n${source.browserBinding}`);
  for (const [key, limit] of [
    [`device-code:address:${source.address}`, USER_CODE_ENTRIES_PER_ADDRESS],
    [`device-code:browser:${browserKey}`, USER_CODE_ENTRIES_PER_BROWSER],
  ] as const) {
    const { count, windowEndsAt } = await countInWindow(ctx.db, ctx.clock, key, limit.windowMs);
    if (count > limit.max) return { kind: 'throttled', retryAt: windowEndsAt, firstRefusal: count === limit.max + 1 };
  }
  const normalized = normalizeUserCode(typed);
  if (normalized === undefined) return { kind: 'wrong' };
  const row = await store.findByUserCode(ctx.db, userCodeHash(ctx.hashKey, normalized));
  if (!row || row.status !== 'pending' || row.expires_at <= ctx.now) return { kind: 'wrong' };
  const confirmationId = randomBytes(32).toString('base64url');
  if (!(await store.bindConfirmation(ctx.db, row.device_code_hash, confirmationHash(ctx.hashKey, source.browserBinding, confirmationId), ctx.now))) return { kind: 'wrong' };
  return { kind: 'accepted', confirmationId };
}

/** A device authorization the /device page holds (by its confirmation id, in the browser that entered the code). */
export type PendingDevice = { clientId: string; scope: Scope[]; expiresAt: number };

export async function findPendingDevice(ctx: DeviceContext, confirmationId: string, browserBinding: string | undefined): Promise<PendingDevice | undefined> {
  if (browserBinding === undefined || !/^[A-Za-z0-9_-]{43}$/.test(confirmationId)) return undefined;
  const row = await store.findByConfirmation(ctx.db, confirmationHash(ctx.hashKey, browserBinding, confirmationId));
  if (!row || row.status !== 'pending' || row.expires_at <= ctx.now) return undefined;
  return { clientId: row.client_id, scope: scopeList(row.scope), expiresAt: row.expires_at };
}

/**
 * The person's decision: Allow (with the scopes left ticked; `openid` stays) or Deny. Returns false when
 * the authorization is gone meanwhile (expired, decided in another tab).
 */
export async function decideDevice(ctx: DeviceContext, confirmationId: string, browserBinding: string | undefined, sub: string, decision: { allow: true; scope: readonly Scope[] } | { allow: false }): Promise<boolean> {
  if (browserBinding === undefined || !/^[A-Za-z0-9_-]{43}$/.test(confirmationId)) return false;
  const row = await store.findByConfirmation(ctx.db, confirmationHash(ctx.hashKey, browserBinding, confirmationId));
  if (!row) return false;
  return store.decide(ctx.db, row.device_code_hash, decision.allow ? { status: 'approved', sub, grantedScope: formatScope(decision.scope) } : { status: 'denied', sub, grantedScope: null }, ctx.now);
}

/** The sweep: device authorizations that ended a day ago or more. */
export function forgetExpiredDeviceAuthorizations(db: Db, now: number): Promise<number> {
  return store.deleteExpired(db, now - 24 * 60 * MINUTE);
}
