// RP-Initiated Logout 1.0 (issue 28 item 6): what a request to the end-session endpoint may do. The
// rules only — the page that asks for confirmation lives in web/pages/end-session.routes.ts.
import { findClient, type Client } from '../../clients/clients.ts';
import type { Db } from '../../db/database.ts';
import { readIdTokenHint, type IdTokenHint } from './id-token.ts';

/** The request's parameters (RP-Initiated Logout 1.0 §2), each '' when absent. */
export type EndSessionParams = { idTokenHint: string; clientId: string; postLogoutRedirectUri: string; state: string };

export class EndSessionError extends Error {
  override name = 'EndSessionError';
}

export type EndSessionPlan = {
  /** the application that asked (from client_id, or the hint's audience), if known */
  client: Client | undefined;
  /** where to send the browser afterwards, `state` appended; undefined: Signet's own "signed out" page */
  returnTo: string | undefined;
  /** a valid hint naming the person signed in, in this very session: sign out without asking */
  confirmed: boolean;
};

/**
 * §2: `post_logout_redirect_uri` "MUST have been previously registered with the OP" — compared byte for
 * byte with the application's registered ones, like redirect URIs. The application is named by
 * `client_id` or by the hint's `aud`; when both are given they must agree. §2: the OP asks the person
 * to confirm unless the hint shows the logout was requested by the application the person used — here:
 * a hint signed by our keys whose `sub` (and `sid`, when it carries one) is this session's.
 */
export async function planEndSession(db: Db, issuer: string, params: EndSessionParams, session: { sub: string; sid: string | null } | undefined): Promise<EndSessionPlan> {
  const hint: IdTokenHint | undefined = params.idTokenHint ? await readIdTokenHint(db, params.idTokenHint, issuer) : undefined;
  if (params.clientId && hint && hint.aud !== params.clientId) throw new EndSessionError('client_id does not match the id_token_hint');
  const clientId = params.clientId || hint?.aud;
  const client = clientId ? await findClient(db, clientId) : undefined;
  let returnTo: string | undefined;
  if (params.postLogoutRedirectUri) {
    if (!client || !client.oidc || !client.postLogoutRedirectUris.includes(params.postLogoutRedirectUri)) {
      throw new EndSessionError('post_logout_redirect_uri is not registered for this application');
    }
    returnTo = withState(params.postLogoutRedirectUri, params.state);
  }
  const confirmed = session !== undefined && hint !== undefined && hint.sub === session.sub && (hint.sid === undefined || hint.sid === session.sid);
  return { client, returnTo, confirmed };
}

/** §3: "state … the OP passes this value to the RP using the state parameter when redirecting the User Agent back". */
function withState(uri: string, state: string): string {
  if (!state) return uri;
  const separator = uri.includes('?') ? (uri.endsWith('?') || uri.endsWith('&') ? '' : '&') : '?';
  return `${uri}${separator}${new URLSearchParams({ state }).toString()}`;
}
