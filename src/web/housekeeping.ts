// Periodic sweeps of expired rows: pending authorization requests, sessions, sign-in counters, codes
// and tokens, account links, settled account mail and its request counters, passkey challenges,
// half-signed-in states, self-registered applications never used (issue 39), device authorizations
// (issue 43). Every process may run them; they are idempotent deletes.
import type { Logger } from 'pino';
import { forgetExpiredAccountTokens } from '../accounts/account-tokens.ts';
import { forgetExpiredPasskeyChallenges } from '../accounts/factors/passkeys.ts';
import { forgetExpiredSecondSteps } from '../accounts/factors/second-step.ts';
import { forgetSettledAccountMail } from '../accounts/mail/outbox.ts';
import { forgetStaleRequestCounters } from '../accounts/request-limits.ts';
import { forgetExpiredSessions } from '../accounts/sessions.ts';
import { forgetExpiredUpstreamStates } from '../accounts/upstream/links.ts';
import { forgetStaleCounters } from '../accounts/throttle.ts';
import { MINUTE, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { forgetExpiredPendingRequests } from '../oauth/authorization-requests.ts';
import { forgetExpiredDeviceAuthorizations } from '../oauth/device/device-authorizations.ts';
import { forgetExpiredCodesAndTokens } from '../oauth/expiry.ts';
import { forgetUnusedRegistrations } from '../oauth/registration/registration.ts';
import { recordAudit } from '../audit/audit.ts';
import { forgetRetiredSigningKeys } from '../oauth/oidc/keys.ts';
import { forgetSilentWorkers } from '../worker/heartbeats.ts';

export const SWEEP_INTERVAL_MS = 10 * MINUTE;

/** Runs every sweep once; returns how many rows each removed. */
export async function sweepExpired(db: Db, clock: Clock): Promise<Record<string, number>> {
  return {
    pendingRequests: await forgetExpiredPendingRequests({ db, clock }),
    sessions: await forgetExpiredSessions(db, clock),
    signinCounters: await forgetStaleCounters(db, clock),
    codesAndTokens: await forgetExpiredCodesAndTokens(db, clock),
    accountLinks: await forgetExpiredAccountTokens(db, clock()),
    accountMail: await forgetSettledAccountMail(db, clock()),
    accountRequestCounters: await forgetStaleRequestCounters(db, clock),
    passkeyChallenges: await forgetExpiredPasskeyChallenges(db, clock),
    secondSteps: await forgetExpiredSecondSteps(db, clock),
    signingKeys: await retireExpiredSigningKeys(db, clock),
    upstreamStates: await forgetExpiredUpstreamStates(db, clock),
    silentWorkers: await forgetSilentWorkers(db, clock),
    unusedRegistrations: await forgetUnusedRegistrations(db, clock),
    // issue 43: RFC 8628 device authorizations a day after they ended
    deviceAuthorizations: await forgetExpiredDeviceAuthorizations(db, clock()),
  };
}

/**
 * issue 28: a rotated-out signing key leaves the JWKS once the longest id_token it signed has expired
 * (audited as signing_key.retired, with no actor: the sweep did it).
 */
async function retireExpiredSigningKeys(db: Db, clock: Clock): Promise<number> {
  const kids = await forgetRetiredSigningKeys(db, clock);
  if (kids.length > 0) await recordAudit(db, clock, { type: 'signing_key.retired', outcome: 'success', detail: { kids: kids.slice(0, 10), reason: 'sweep' } });
  return kids.length;
}

/** Starts the periodic sweep; returns a function that stops it. */
export function startHousekeeping(db: Db, clock: Clock, logger: Logger): () => void {
  const timer = setInterval(() => {
    sweepExpired(db, clock).then(
      (removed) => logger.debug({ removed }, 'expired rows swept'),
      (error: unknown) => logger.warn({ err: error }, 'sweeping expired rows failed; will retry'),
    );
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
