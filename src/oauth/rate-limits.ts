// Failure limits at /oauth/token, /oauth/revoke and /oauth/userinfo: a flood of bad requests from one
// address ends in `429` with Retry-After. Only refusals are counted, in the fixed-window counters of the
// database that /oauth/authorize's pending-request limit uses too (countInWindow), so every process adds
// to the same count; a request that succeeds reads and writes no counter.
//
// Two kinds of key, with different consequences (the sign-in throttle's reasoning: nobody who merely
// knows a public name may lock its owner out):
// - per client address: past the limit, every request from that address to the endpoint is refused
//   until the window ends — valid ones too, since that is what stops a flood. The process that counted
//   the failure remembers the verdict in memory, so a refused request costs no database work; other
//   processes learn it from their own next failure from that address.
// - per application (client_id of a registered application, failed client authentications only):
//   past the limit, a request for it that fails authentication gets the 429 instead of `invalid_client`
//   and Retry-After. A request with the right credential is never refused by it: client_ids are public,
//   so a per-application block would let anyone cut an application off.
//
// Why not @fastify/rate-limit: it counts every request before the handler runs and decides from that
// count alone. These limits count only refusals, which are known after the handler (a success must
// cost nothing and never count toward a block), and the per-application limit must let the right
// secret through while refusing the wrong one — neither fits a pre-handler request counter. Its
// shared store would also need Redis or a store of our own; the database's counters are that already.
import { countInWindow } from '../accounts/throttle.ts';
import { MINUTE, SECOND, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { DETAIL_NO_TOKEN, DETAIL_UNKNOWN_CLIENT, DETAIL_UNKNOWN_TOKEN, OAuthError } from './errors.ts';

export type FailureLimit = {
  /** the counter's namespace in the shared table; the address or client_id follows it */
  name: string;
  /** this many refusals in the window are answered as usual; the next is 429 */
  max: number;
  windowMs: number;
};

/**
 * Refused requests (any 4xx) at token and revoke from one address, both endpoints together. A busy
 * server-side application meets some refusals in normal use (a person reloading the callback page
 * replays its code; a refresh race), a few a minute at most; 1,000 in 10 minutes is a flood.
 */
export const CLIENT_ENDPOINT_FAILURES_PER_ADDRESS: FailureLimit = { name: 'oauth-client-failures:address', max: 1000, windowMs: 10 * MINUTE };

/** Failed client authentications (wrong or missing secret, origin not allowlisted) of one registered application, from every address. */
export const CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT: FailureLimit = { name: 'oauth-client-failures:client', max: 100, windowMs: 10 * MINUTE };

/**
 * Requests at userinfo from one address without a token or with a token Signet never issued. Expired
 * and revoked tokens do not count: applications present them in normal use (they refresh on a 401).
 */
export const USERINFO_FAILURES_PER_ADDRESS: FailureLimit = { name: 'oauth-userinfo-failures:address', max: 1000, windowMs: 10 * MINUTE };

/** At most this many address verdicts are remembered per process (expired ones go first, then the oldest). */
const MAX_REMEMBERED_VERDICTS = 10_000;

/**
 * Why `temporarily_unavailable` with `429` and Retry-After, and never a Bearer challenge:
 * - RFC 6749 has no code for "too many requests". `temporarily_unavailable` (§4.1.2.1) means "try again
 *   later", which is what this is, and /oauth/authorize already answers its own limit with it. `slow_down`
 *   (RFC 8628) belongs to device-flow polling: libraries act on it only in that loop.
 * - Client libraries (oauth4webapi, openid-client) raise a JSON OAuth error body of any 4xx as a
 *   response error carrying `error` and the response, so the status and Retry-After reach the caller;
 *   HTTP-level retry logic keys on 429 + Retry-After.
 * - At userinfo a `WWW-Authenticate: Bearer error="invalid_token"` would tell the library the token is
 *   bad (oauth4webapi raises its challenge error before looking at the status), so the application would
 *   drop a valid token and refresh or sign the person out — more requests, not fewer.
 */
function tooMany(description: string, detail: string, retryAfterSeconds: number): OAuthError {
  return new OAuthError('temporarily_unavailable', `${description} Try again in ${retryAfterSeconds} seconds.`, { status: 429, detail, retryAfterSeconds });
}

const FROM_ADDRESS = 'Too many failed requests came from your network address.';
const FOR_CLIENT = 'Too many failed client authentications for this application: check client_id and client_secret (and the allowed origins).';

export type FailureLimits = {
  /** Before any work: throws the 429 while this address is known to be over the limit. Memory only. */
  refuseBlockedAddress(address: string): void;
  /** After a refusal: counts it and returns the error to send — the refusal itself, or the 429 once a limit is passed. */
  afterRefusal(error: unknown, source: { address: string; clientId?: string | undefined }): Promise<unknown>;
};

/**
 * The limits of one endpoint (or of endpoints sharing `perAddress`). `countsAsFailure` picks the
 * refusals that count; `countsForClient` those that count against the application as well.
 */
export function failureLimits(options: {
  db: Db;
  clock: Clock;
  perAddress: FailureLimit;
  countsAsFailure: (error: OAuthError) => boolean;
  perClient?: { limit: FailureLimit; countsForClient: (error: OAuthError) => boolean };
}): FailureLimits {
  const { db, clock, perAddress, perClient } = options;
  /** address → when its window ends */
  const blockedAddresses = new Map<string, number>();
  const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - clock()) / SECOND));

  function rememberBlocked(address: string, until: number): void {
    if (blockedAddresses.size >= MAX_REMEMBERED_VERDICTS) {
      const now = clock();
      for (const [key, end] of blockedAddresses) if (end <= now) blockedAddresses.delete(key);
      if (blockedAddresses.size >= MAX_REMEMBERED_VERDICTS) blockedAddresses.delete(blockedAddresses.keys().next().value!);
    }
    blockedAddresses.set(address, until);
  }

  return {
    refuseBlockedAddress(address) {
      const until = blockedAddresses.get(address);
      if (until === undefined) return;
      if (until <= clock()) {
        blockedAddresses.delete(address);
        return;
      }
      throw tooMany(FROM_ADDRESS, `${perAddress.name} limit reached (remembered)`, secondsUntil(until));
    },

    async afterRefusal(error, { address, clientId }) {
      // Our own failures (server_error, an unreachable database) are not the client's to pay for.
      if (!(error instanceof OAuthError) || error.status >= 500 || !options.countsAsFailure(error)) return error;
      const byAddress = await countInWindow(db, clock, `${perAddress.name}:${address}`, perAddress.windowMs);
      if (byAddress.count > perAddress.max) {
        rememberBlocked(address, byAddress.windowEndsAt);
        return tooMany(FROM_ADDRESS, `${perAddress.name} limit reached after ${error.error}`, secondsUntil(byAddress.windowEndsAt));
      }
      if (perClient && clientId !== undefined && perClient.countsForClient(error)) {
        const byClient = await countInWindow(db, clock, `${perClient.limit.name}:${clientId}`, perClient.limit.windowMs);
        if (byClient.count > perClient.limit.max) {
          return tooMany(FOR_CLIENT, `${perClient.limit.name} limit reached after ${error.error}`, secondsUntil(byClient.windowEndsAt));
        }
      }
      return error;
    },
  };
}

/** Token and revoke: every refusal counts per address; a failed authentication of a registered application counts for it too. */
export function clientEndpointLimits(db: Db, clock: Clock): FailureLimits {
  return failureLimits({
    db,
    clock,
    perAddress: CLIENT_ENDPOINT_FAILURES_PER_ADDRESS,
    // RFC 8628 §3.5: a device polls until the person decides — "authorization_pending" and "slow_down"
    // are the protocol's answers to a well-behaved device, not failures (slow_down is its own limit).
    countsAsFailure: (error) => error.error !== 'authorization_pending' && error.error !== 'slow_down',
    perClient: {
      limit: CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT,
      // An unknown client_id has no application to protect, and must not grow a counter per made-up id.
      countsForClient: (error) => error.error === 'invalid_client' && error.detail !== DETAIL_UNKNOWN_CLIENT,
    },
  });
}

/** Userinfo: a missing token or one Signet never issued counts per address. */
export function userinfoLimits(db: Db, clock: Clock): FailureLimits {
  return failureLimits({
    db,
    clock,
    perAddress: USERINFO_FAILURES_PER_ADDRESS,
    countsAsFailure: (error) => error.error === 'invalid_token' && (error.detail === DETAIL_NO_TOKEN || error.detail === DETAIL_UNKNOWN_TOKEN),
  });
}
