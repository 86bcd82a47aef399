// The consent decision: what happens once a signed-in person reaches a pending authorization request.
import { findClient, type Client } from '../clients/clients.ts';
import { approvePendingRequest, declinePendingRequest, findPendingRequest, type FlowContext, type PendingRequest } from '../oauth/authorization-requests.ts';
import { isKnownScope, type Scope } from '../oauth/scopes.ts';
import type { SignInFacts } from '../oauth/oidc/id-token.ts';
import { grantCoversRequest, recordConsent } from './grants.ts';

export type NextStep =
  /** unknown, finished, expired, or the application was disabled meanwhile */
  | { kind: 'expired' }
  /** send the browser to the application's callback */
  | { kind: 'redirect'; url: string }
  /** show the consent page */
  | { kind: 'ask'; pending: PendingRequest; client: Client };

async function openRequest(ctx: FlowContext, id: string, origin: string): Promise<{ pending: PendingRequest; client: Client } | undefined> {
  const pending = await findPendingRequest(ctx, id, origin);
  if (!pending) return undefined;
  const client = await findClient(ctx.db, pending.clientId);
  if (!client || !client.enabled) return undefined;
  return { pending, client };
}

/**
 * After sign-in: a grant that covers every requested scope skips the consent page and a code is
 * issued at once; otherwise the person is asked.
 */
export async function continueAuthorization(ctx: FlowContext, id: string, origin: string, sub: string, signIn?: SignInFacts): Promise<NextStep> {
  const open = await openRequest(ctx, id, origin);
  if (!open) return { kind: 'expired' };
  // OpenID Connect Core §3.1.2.1: "prompt=consent — the Authorization Server SHOULD prompt the End-User for consent".
  const askAnyway = open.pending.oidc?.prompt?.includes('consent') === true;
  if (!askAnyway && (await grantCoversRequest(ctx.db, sub, open.client.clientId, open.pending.scope))) {
    const url = await approvePendingRequest(ctx, id, origin, sub, open.pending.scope, signIn);
    return url ? { kind: 'redirect', url } : { kind: 'expired' };
  }
  return { kind: 'ask', ...open };
}

/**
 * The granted scope: `openid` is fixed (always granted when requested); the others only when ticked.
 * Ticked values that were not requested are ignored.
 */
export function grantedScope(requested: readonly Scope[], ticked: readonly string[]): Scope[] {
  return requested.filter((scope) => scope === 'openid' || (isKnownScope(scope) && ticked.includes(scope)));
}

export type Decision = { decision: 'allow'; ticked: string[] } | { decision: 'deny' };

export type DecisionResult =
  | NextStep
  | { kind: 'nothing_granted'; pending: PendingRequest; client: Client }
  /** allowed: send the browser to the callback; the person granted `scope` to `clientId` (for the audit trail) */
  | { kind: 'granted'; url: string; clientId: string; scope: Scope[] };

/**
 * Allow: the code is issued for the granted scope (possibly narrower than requested) and the grant
 * remembered (`locale`: the page's language, for the notification of a first authorization). Deny:
 * the callback receives `error=access_denied` and the `state`.
 */
export async function decide(ctx: FlowContext, id: string, origin: string, sub: string, choice: Decision, locale: string, signIn?: SignInFacts): Promise<DecisionResult> {
  const open = await openRequest(ctx, id, origin);
  if (!open) return { kind: 'expired' };
  if (choice.decision === 'deny') {
    const url = await declinePendingRequest(ctx, id, origin);
    return url ? { kind: 'redirect', url } : { kind: 'expired' };
  }
  const granted = grantedScope(open.pending.scope, choice.ticked);
  if (granted.length === 0) return { kind: 'nothing_granted', ...open };
  const url = await approvePendingRequest(ctx, id, origin, sub, granted, signIn);
  if (!url) return { kind: 'expired' };
  await recordConsent(ctx.db, ctx.clock, sub, open.client.clientId, open.pending.scope, granted, { dialect: ctx.dialect, locale });
  return { kind: 'granted', url, clientId: open.client.clientId, scope: granted };
}
