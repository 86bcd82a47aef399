// Building the callback URL the browser is sent to after the flow: `code` or `error`, then `state`,
// then (by default) `iss`.

export type CallbackOutcome =
  | { code: string }
  /** spec "Errors" 2: the errors redirected to the callback */
  | { error: 'access_denied' | 'login_required' | 'consent_required' | 'interaction_required' };

export type CallbackOptions = {
  /** as sent to /oauth/authorize; null or '' when none was sent */
  state: string | null;
  compat: 'legacy' | undefined;
  /** the issuer that answers: the served origin that received /oauth/authorize */
  issuer: string;
};

/**
 * The callback URL for an outcome. A redirect URI that already has a query gets the parameters
 * appended with `&`.
 *
 * `state` (when one was sent): with SIGNET_COMPAT=legacy it is echoed without escaping, byte for byte
 * as the legacy service does (spec: "echoed into the callback URL without escaping"); otherwise it is
 * form-encoded. URL-safe values (hex, unpadded base64url) come out identical either way.
 *
 * `iss` (RFC 9207, mix-up defence): by default every callback — code or error — names the issuer, so a
 * client talking to several providers can tell which one answered. Legacy mode stays byte-identical to
 * the legacy service, which sends none.
 */
export function callbackUrl(redirectUri: string, outcome: CallbackOutcome, { state, compat, issuer }: CallbackOptions): string {
  const params = new URLSearchParams('code' in outcome ? { code: outcome.code } : { error: outcome.error });
  let query = params.toString();
  if (state !== null && state !== '') {
    query += compat === 'legacy' ? `&state=${state}` : `&${new URLSearchParams({ state }).toString()}`;
  }
  if (compat !== 'legacy') query += `&${new URLSearchParams({ iss: issuer }).toString()}`;
  const separator = redirectUri.includes('?') ? (redirectUri.endsWith('?') || redirectUri.endsWith('&') ? '' : '&') : '?';
  return `${redirectUri}${separator}${query}`;
}
