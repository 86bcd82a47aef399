// Building the callback URL the browser is sent to after the flow: `code` or `error`, then `state`.

export type CallbackOutcome =
  | { code: string }
  /** spec "Errors" 2: the errors redirected to the callback */
  | { error: 'access_denied' | 'login_required' | 'consent_required' | 'interaction_required' };

/**
 * The callback URL for an outcome. A redirect URI that already has a query gets the parameters
 * appended with `&`.
 *
 * `state` (when one was sent): with SIGNET_COMPAT=legacy it is echoed without escaping, byte for byte
 * as the legacy service does (spec: "echoed into the callback URL without escaping"); otherwise it is
 * form-encoded. URL-safe values (hex, unpadded base64url) come out identical either way.
 */
export function callbackUrl(redirectUri: string, outcome: CallbackOutcome, state: string | null, compat: 'legacy' | undefined): string {
  const params = new URLSearchParams('code' in outcome ? { code: outcome.code } : { error: outcome.error });
  let query = params.toString();
  if (state !== null && state !== '') {
    query += compat === 'legacy' ? `&state=${state}` : `&${new URLSearchParams({ state }).toString()}`;
  }
  const separator = redirectUri.includes('?') ? (redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&') : '?';
  return `${redirectUri}${separator}${query}`;
}
