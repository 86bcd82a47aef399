// Protected resources (issue 39): RFC 8707 resource indicators — which resource a token is for — and
// RFC 9728 protected resource metadata. This server knows exactly one protected resource: its MCP endpoint, `{origin}/mcp`.
// A request that names no resource keeps today's behaviour exactly (its token has `resource: null`).
// (RFC 8414 authorization server metadata is built beside the discovery document, in discovery.ts.)
import { OAuthError } from './errors.ts';

/** Where the MCP server listens, on every served origin. */
export const MCP_RESOURCE_PATH = '/mcp';

/** RFC 9728 §3: the metadata of the resource at `{origin}/mcp` lives at the well-known path with the resource's path appended. */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
export const MCP_RESOURCE_METADATA_PATH = `${PROTECTED_RESOURCE_METADATA_PATH}${MCP_RESOURCE_PATH}`;
/** RFC 8414 §3 */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** RFC 7591 §3 */
export const REGISTRATION_ENDPOINT_PATH = '/oauth/register';

/** The scope a token needs at /mcp and at the document APIs. */
export const DOCUMENTS_SCOPE = 'documents';

/** The MCP endpoint's resource identifier on a served origin (e.g. `https://signet.example/mcp`): what `resource` must name. */
export function mcpResource(origin: string): string {
  return `${origin}${MCP_RESOURCE_PATH}`;
}

/**
 * The 401 challenge of /mcp (RFC 9728 §5.1, MCP authorization): the value of `WWW-Authenticate`, naming
 * where the client finds the resource's metadata, e.g.
 * `Bearer resource_metadata="https://signet.example/.well-known/oauth-protected-resource/mcp"`.
 * `baseUrl` is the served origin (no trailing slash). For a presented token that was refused, pass the
 * RFC 6750 §3.1 error (`invalid_token`, or `insufficient_scope` with the scope needed).
 */
export function mcpChallenge(baseUrl: string, refusal?: { error: 'invalid_token' | 'insufficient_scope'; description?: string }): string {
  const origin = baseUrl.replace(/\/+$/, '');
  const parts = [`resource_metadata="${origin}${MCP_RESOURCE_METADATA_PATH}"`];
  if (refusal) {
    parts.push(`error="${refusal.error}"`);
    if (refusal.error === 'insufficient_scope') parts.push(`scope="${DOCUMENTS_SCOPE}"`);
    // RFC 6750 §3: the description is a quoted-string of printable ASCII without `"` or `\`.
    if (refusal.description) parts.push(`error_description="${refusal.description.replace(/[^\x20-\x7e]|["\\]/g, '')}"`);
  }
  return `Bearer ${parts.join(', ')}`;
}

/**
 * Whether an access token (as verifyAccessToken returns it) is good at /mcp on `origin`: issued for
 * exactly that resource (RFC 8707) — a token without a resource, or for another origin's, is not.
 * The scope `documents` is checked separately (hasScope), so the two refusals can be told apart.
 */
export function isForMcp(token: { resource: string | null }, origin: string): boolean {
  return token.resource === mcpResource(origin);
}

export const DESCRIPTION_INVALID_TARGET = 'The resource is not one this server issues tokens for. Send resource={origin}/mcp (the MCP endpoint), or no resource at all.';

function invalidTarget(origin: string, detail: string): OAuthError {
  return new OAuthError('invalid_target', DESCRIPTION_INVALID_TARGET.replace('{origin}', origin), { detail });
}

/**
 * RFC 8707 §2 at the authorize endpoint: `resource` "MUST be an absolute URI … MUST NOT include a
 * fragment component"; a value this server does not know is `invalid_target`. It may be sent more than
 * once (one per resource); this server has one, so every value must name it. Returns the resource, or
 * null when none was sent (the request is then exactly as before).
 */
export function requestedResource(values: unknown, origin: string): string | null {
  if (values === undefined) return null;
  const list = Array.isArray(values) ? values : [values];
  const sent = [...new Set(list.filter((v): v is string => typeof v === 'string' && v !== ''))];
  if (list.some((v) => typeof v !== 'string')) throw invalidTarget(origin, 'resource is not a string');
  if (sent.length === 0) return null;
  const known = mcpResource(origin);
  for (const value of sent) {
    if (value.includes('#')) throw new OAuthError('invalid_target', 'The resource must not contain a fragment (#) (RFC 8707 §2).', { detail: 'resource with a fragment' });
    if (!URL.canParse(value)) throw new OAuthError('invalid_target', 'The resource must be an absolute URI (RFC 8707 §2), e.g. ' + known + '.', { detail: 'resource not an absolute URI' });
    if (value !== known) throw invalidTarget(origin, 'unknown resource');
  }
  return known;
}

/**
 * RFC 8707 §2.2 at the token endpoint: a `resource` sent with the code or refresh token must be within
 * what was granted — here, exactly the granted resource; any other (or one where none was granted) is
 * `invalid_target`. Nothing sent: the token is for what was granted.
 */
export function checkTokenResource(sent: string | undefined, granted: string | null): void {
  if (sent === undefined) return;
  if (granted === null || sent !== granted) {
    throw new OAuthError('invalid_target', granted === null
      ? 'The resource was not part of the authorization: send resource at the authorize step too, or leave it out here.'
      : `The resource must be the one authorized (${granted}).`, { detail: 'resource beyond the grant' });
  }
}

/** RFC 9728 §2: the MCP endpoint's protected resource metadata on a served origin. */
export function protectedResourceMetadata(origin: string): Record<string, unknown> {
  return {
    resource: mcpResource(origin),
    authorization_servers: [origin],
    scopes_supported: [DOCUMENTS_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Signet documents (MCP)',
  };
}
