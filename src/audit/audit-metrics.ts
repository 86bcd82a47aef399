// Prometheus counters for the events operators watch: sign-ins by outcome, tokens issued by grant,
// refresh-token replays. One set per process, registered on each metrics registry that wants them
// (startServer registers them on the /metrics registry), so they can be counted from anywhere
// without passing the registry down to the sign-in and token code. With `serve --processes` each
// worker's set is counted in its own registry and the primary's /metrics sums them (counters' default
// aggregation in prom-client's cluster support; see web/metrics.ts).
import { createRequire } from 'node:module';
import type { Counter, Registry } from 'prom-client';
import type { AuditType } from './audit-types.ts';

export type SigninOutcome = 'succeeded' | 'failed' | 'throttled' | 'locked';
/** issue 43: client_credentials and the device grant (RFC 8628's device_code) are counted too. */
export type IssuingGrant = 'authorization_code' | 'refresh_token' | 'client_credentials' | 'device_code';

/**
 * prom-client (with @opentelemetry/api, ~80 modules, ~2 MB of heap) is loaded when metrics are wanted,
 * not by every process that imports this file: with SIGNET_METRICS_ADDR=off a server never loads it
 * (issue 44, memory). CommonJS, so it loads synchronously.
 */
export function promClient(): typeof import('prom-client') {
  return (loaded ??= createRequire(import.meta.url)('prom-client') as typeof import('prom-client'));
}
let loaded: typeof import('prom-client') | undefined;

function makeCounters() {
  const { Counter } = promClient();
  return {
    signins: new Counter({
      name: 'signet_signins_total',
      help: 'Sign-in attempts, by outcome (succeeded, failed, throttled, locked)',
      labelNames: ['outcome'] as const,
      registers: [],
    }),
    tokensIssued: new Counter({
      name: 'signet_tokens_issued_total',
      help: 'Tokens issued at the token endpoint, by grant (client_credentials: an access token alone)',
      labelNames: ['grant'] as const,
      registers: [],
    }),
    idpSignins: new Counter({
      name: 'signet_idp_signins_total',
      help: 'Sign-ins through upstream identity providers, by provider slug and outcome (succeeded, failed)',
      labelNames: ['provider', 'outcome'] as const,
      registers: [],
    }),
    refreshReplays: new Counter({
      name: 'signet_refresh_replays_total',
      help: 'Rotated refresh tokens presented again (every token of that person for that application revoked)',
      registers: [],
    }),
  };
}

/**
 * The counters exist once something reads them: a metrics registry (startServer registers them when
 * metrics are on) or a test. Until then nobody could read a count, so none is kept — and a server with
 * SIGNET_METRICS_ADDR=off never loads prom-client (issue 44, memory).
 */
let counters: ReturnType<typeof makeCounters> | undefined;
const made = () => (counters ??= makeCounters());

export const auditCounters = {
  get signins() {
    return made().signins;
  },
  get tokensIssued() {
    return made().tokensIssued;
  },
  get idpSignins() {
    return made().idpSignins;
  },
  get refreshReplays() {
    return made().refreshReplays;
  },
};

/** Adds the counters to a registry (each registry once). */
export function registerAuditCounters(registry: Registry): void {
  const { signins, tokensIssued, refreshReplays, idpSignins } = auditCounters;
  for (const [name, counter] of [
    ['signet_signins_total', signins],
    ['signet_idp_signins_total', idpSignins],
    ['signet_tokens_issued_total', tokensIssued],
    ['signet_refresh_replays_total', refreshReplays],
  ] as const) {
    if (!registry.getSingleMetric(name)) registry.registerMetric(counter as Counter<string>);
  }
}

/** Counts an audit event if a counter follows its type (recordAudit calls this). */
export function countAuditEvent(type: AuditType): void {
  if (type.startsWith('signin.')) counters?.signins.inc({ outcome: type.slice('signin.'.length) as SigninOutcome });
  else if (type === 'token.replay_detected') counters?.refreshReplays.inc();
}

/** issue 33: "sign-ins by provider in /metrics" — one per finished upstream sign-in attempt. */
export function countIdpSignIn(provider: string, outcome: 'succeeded' | 'failed'): void {
  counters?.idpSignins.inc({ provider, outcome });
}

/** Call once per successful token response with its grant_type. */
export function countTokensIssued(grant: IssuingGrant): void {
  counters?.tokensIssued.inc({ grant });
}
