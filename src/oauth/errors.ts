// OAuth errors are values carrying their RFC 6749 code, a public description, a log-only detail
// and an HTTP status. One place renders them (errors are rendered by the routes through renderOAuthError).

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'login_required'
  | 'consent_required'
  | 'interaction_required'
  | 'invalid_token'
  | 'server_error'
  | 'temporarily_unavailable'
  /** RFC 8707 §2: a resource this server does not issue tokens for */
  | 'invalid_target'
  /** RFC 7591 §3.2.2: registration errors */
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  // RFC 8628 §3.5 (issue 43): the device grant's answers while the person has not decided yet
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token';

/**
 * Log-only details that other code reads to tell refusals apart: the rate limits (rate-limits.ts) count
 * an unknown client_id per address only, and at userinfo only a missing token or one never issued.
 */
export const DETAIL_UNKNOWN_CLIENT = 'unknown client_id';
export const DETAIL_NO_TOKEN = 'no bearer token';
export const DETAIL_UNKNOWN_TOKEN = 'unknown access token';

/** spec "Errors": exact descriptions, kept as named constants. */
export const DESCRIPTION_REFRESH_TOKEN_EXPIRED = '刷新令牌已过期';
export const DESCRIPTION_CODE_VERIFIER_FAILED = 'code_verifier 验证失败';

const DEFAULT_STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  unsupported_response_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  login_required: 400,
  consent_required: 400,
  interaction_required: 400,
  invalid_token: 401,
  server_error: 500,
  temporarily_unavailable: 503,
  invalid_target: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  // RFC 8628 §3.5: "the authorization server responds with … an error response as defined in Section 5.2 of [RFC6749]" — 400
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
};

/** For the operator's log: which application ran into which of the spec's risky rules. */
export type OperatorWarning = { clientId: string; event: string; message: string };

export class OAuthError extends Error {
  readonly status: number;
  readonly error: OAuthErrorCode;
  /** shown to the client: says what went wrong and what to do */
  readonly description: string;
  constructor(
    error: OAuthErrorCode,
    description: string,
    options: { status?: number; detail?: string; retryAfterSeconds?: number; warning?: OperatorWarning } = {},
  ) {
    super(`${error}: ${description}${options.detail ? ` (${options.detail})` : ''}`);
    this.error = error;
    this.description = description;
    this.name = 'OAuthError';
    this.status = options.status ?? DEFAULT_STATUS[error];
    /** for logs only, never sent */
    this.detail = options.detail;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.warning = options.warning;
  }
  readonly detail: string | undefined;
  /** sent as `Retry-After` (a 429 or 503) */
  readonly retryAfterSeconds: number | undefined;
  /** logged as a warning: the application hit one of the spec's risky rules, and its developers should hear of it */
  readonly warning: OperatorWarning | undefined;

  toJSON(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

/** Anything unexpected becomes a plain server_error, so internals never leak. */
export function asOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  return new OAuthError('server_error', 'The server could not complete the request. Try again later.');
}
